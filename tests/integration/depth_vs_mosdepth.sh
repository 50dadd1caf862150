#!/usr/bin/env bash
# depth_vs_mosdepth.sh -- seqshard depth --mosdepth writes the files mosdepth
# 0.3.3 writes, with the same decompressed content, for its options alone and
# combined (default, -x, -n, --by BED with and without names, --by WINDOW,
# --thresholds, --quantize, -m, -Q, -F, -i, -c, -R, -t, CRAM with -f, MOSDEPTH_PRECISION),
# on the test data and on hand-made edge cases (deletions and skips,
# overlapping and contained mates, supplementary reads, contigs without reads,
# regions at contig ends, BED intervals on contigs without reads), at threads
# 1-3 and shard sizes from 2 kb to a whole contig. Each of mosdepth 0.3.3's
# four known bugs has a case of its own that asserts seqshard's documented
# answer; every other comparison is byte for byte. Failures leave no file.
# The MPI cases are in mpi_mosdepth.sh.
set -u
. "$(dirname "$0")/lib.sh"
ss_setup
W=$SS_WORK
MOSDEPTH=${MOSDEPTH:-mosdepth}
command -v "$MOSDEPTH" >/dev/null || { echo "SKIP: no mosdepth"; exit 77; }
COMBOS=${MOSDEPTH_COMBOS:-"1:1g 1:2k 2:7k 3:2k"}
FILES="per-base.bed.gz regions.bed.gz thresholds.bed.gz quantized.bed.gz
mosdepth.global.dist.txt mosdepth.region.dist.txt mosdepth.summary.txt"

# The file's text: decompressed for .gz; with DROP (a regex of contigs) set, the
# summary and dist lines of those contigs and the total rows removed. In a summary, the
# min of the total rows and of the first <chrom>_region row reads 0, as mosdepth 0.3.3
# prints it (bug 3 below shows seqshard's).
text_of() { # file drop
    local f=$1 drop=${2:-}
    case $f in
    *.gz) gzip -dc "$f" ;;
    *.summary.txt)
        awk -F'\t' -v OFS='\t' '($1 ~ /_region$/ && !r++) || $1 == "total" ||
            $1 == "total_region" { $5 = 0 } { print }' "$f" | text_of_drop "$drop" ;;
    *.txt) text_of_drop "$drop" <"$f" ;;
    esac
}
text_of_drop() {
    if [ -n "$1" ]; then grep -Ev "^(($1)(_region)?|total|total_region)"$'\t'; else cat; fi
}

# same_files NAME EXP_PREFIX GOT_PREFIX [DROP]: the same set of files, the same text, and a
# .csi beside every .gz of ours.
same_files() {
    local name=$1 e=$2 g=$3 drop=${4:-} f bad=0
    for f in $FILES; do
        if [ -e "$e.$f" ] && [ ! -e "$g.$f" ]; then
            ss_bad "$name" "mosdepth wrote $f, seqshard did not"; bad=1; continue
        fi
        if [ ! -e "$e.$f" ] && [ -e "$g.$f" ]; then
            ss_bad "$name" "seqshard wrote $f, mosdepth did not"; bad=1; continue
        fi
        [ -e "$e.$f" ] || continue
        if ! cmp -s <(text_of "$e.$f" "$drop") <(text_of "$g.$f" "$drop"); then
            ss_bad "$name" "$f differs from mosdepth's"
            text_of "$e.$f" "$drop" >"$W/e.txt"
            text_of "$g.$f" "$drop" >"$W/g.txt"
            ss_show_diff "$W/e.txt" "$W/g.txt"
            bad=1
        fi
        case $f in *.gz)
            [ -s "$g.$f.csi" ] || { ss_bad "$name" "no $f.csi"; bad=1; } ;;
        esac
    done
    [ $bad = 0 ] && ss_ok "$name"
}

# md_case NAME [VAR=VALUE...] -- ARGS... INPUT: mosdepth ARGS once, seqshard for each
# thread:shard-size combination; the same files with the same text. DROP as above.
md_case() {
    local name=$1 envs=() drop=${DROP:-}
    shift
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    ss_case_no=$((ss_case_no + 1))
    local exp=$W/exp$ss_case_no/x
    mkdir -p "${exp%/*}"
    if ! env "${envs[@]}" "$MOSDEPTH" "$@" "$exp" "${MD_INPUT}" >"$exp.out" 2>"$exp.err"; then
        ss_bad "$name" "mosdepth itself failed: the test is wrong" \
            "$(ss_quote "$MOSDEPTH" "$@" "$exp" "$MD_INPUT")" "$(head -2 "$exp.err")"
        return
    fi
    local combo t s got
    ss_sweep "$COMBOS"
    for combo in $SWEEP; do
        t=${combo%%:*} s=${combo#*:}
        got=$W/got$ss_case_no.$t.$s/x
        mkdir -p "${got%/*}"
        local cmd=(depth --mosdepth "$got" -@ "$t" --shard-size "$s" --quiet "$@" "$MD_INPUT")
        env "${envs[@]}" timeout "$SS_TIMEOUT" "$SEQSHARD" "${cmd[@]}" >"$got.out" 2>"$got.err"
        local rc=$?
        if [ $rc != 0 ]; then
            ss_bad "$name [-@$t $s]" "exit status $rc" \
                "seqshard: $(ss_quote "$SEQSHARD" "${cmd[@]}")" "$(head -2 "$got.err")"
            continue
        fi
        same_files "$name [-@$t $s]" "$exp" "$got" "$drop"
    done
}

# ---- the test data, without its contig that has no reads ----------------------------------
# (mosdepth 0.3.3 leaves such contigs out of the summary and dist files; the edge cases
# below show seqshard's rows for them)
"$SAMTOOLS" view -h "$TD/s1.bam" | grep -v 'SN:ctgEmpty' |
    "$SAMTOOLS" view -b -o "$W/s1n.bam" - && "$SAMTOOLS" index "$W/s1n.bam" &&
    "$SAMTOOLS" view -C -T "$REF" -o "$W/s1n.cram" "$W/s1n.bam" &&
    "$SAMTOOLS" index "$W/s1n.cram" || { ss_bad setup "cannot make s1n.bam"; ss_summary; exit 1; }
printf 'ctgA\t0\t500\tfirst\nctgA\t450\t2000\tsecond\nctgA\t30000\t30100\tthird\nctgB\t29950\t30050\tgap\nctgB\t39000\t40000\tend\nctgTiny\t0\t1200\twhole\n' >"$W/named.bed"
cut -f1-3 "$W/named.bed" >"$W/plain.bed"
printf 'ctgB\t100\t5000\nctgA\t5000\t9000\n' >"$W/unsorted.bed"

MD_INPUT=$W/s1n.bam
md_case "default" --
md_case "-x" -- -x
md_case "-n" -- -n
md_case "--by BED with names" -- --by "$W/named.bed"
md_case "--by BED without names" -- --by "$W/plain.bed"
md_case "--by BED unsorted, two contigs" -- --by "$W/unsorted.bed"
md_case "-n --by BED (contigs the BED skips)" -- -n --by "$W/plain.bed"
md_case "--by 500" -- --by 500
md_case "--by 10000 -x" -- --by 10000 -x
md_case "--thresholds --by 500" -- --thresholds 1,10,20 --by 500
md_case "--thresholds --by BED names" -- -T 20,1,10 --by "$W/named.bed"
md_case "--quantize 0:1:10:" -- --quantize 0:1:10:
md_case "--quantize 5:20 labels" MOSDEPTH_Q0=LOW MOSDEPTH_Q1=HIGH -- -q 5:20:30
md_case "-m --by 500" -- -m --by 500
md_case "-m --by BED" -- -m --by "$W/named.bed"
md_case "-Q 20" -- -Q 20
md_case "-F 0" -- -F 0
md_case "-F 1028 -i 2" -- -F 1028 -i 2
md_case "-i 16" -- -i 16
md_case "MOSDEPTH_PRECISION=4 --by 777" MOSDEPTH_PRECISION=4 -- --by 777
md_case "MOSDEPTH_PRECISION=0 --by BED" MOSDEPTH_PRECISION=0 -- --by "$W/plain.bed"
md_case "everything -n -x" -- -n -x -Q 10 --by 1000 -T 0,5,25 -q 0:3:30: -m
# mosdepth's -c, -R and -t, on two read groups (s1's and s2's reads in one file)
"$SAMTOOLS" view -h "$TD/s2.bam" | grep -v 'SN:ctgEmpty' | "$SAMTOOLS" view -b -o "$W/s2n.bam" - &&
    "$SAMTOOLS" merge -f -o "$W/rg2.bam" "$W/s1n.bam" "$W/s2n.bam" && "$SAMTOOLS" index "$W/rg2.bam" ||
    { ss_bad setup "cannot make rg2.bam"; ss_summary; exit 1; }
MD_INPUT=$W/rg2.bam
md_case "-c ctgB" -- -c ctgB
md_case "--chrom ctgTiny --by 100" -- --chrom ctgTiny --by 100
md_case "-R s2" -- -R s2
md_case "--read-groups s1,s2" -- --read-groups s1,s2
md_case "-R of no read group" -- -R nope
md_case "-c ctgA -R s2 --by 1000 -T 1,5" -- -c ctgA -R s2 --by 1000 -T 1,5
md_case "-c ctgB -n --by BED" -- -c ctgB -n --by "$W/plain.bed"
md_case "-t 2 -x" -- -t 2 -x
MD_INPUT=$W/s1n.cram
md_case "CRAM -R s1 -f" -- -R s1 -f "$REF"
md_case "CRAM -f" -- -f "$REF"
md_case "CRAM -f --by 500 -T 5 -q 10:" -- -f "$REF" --by 500 -T 5 -q 10:

# ---- hand-made edge cases -------------------------------------------------------------------
# e1 9000 bp (reads across shard boundaries, deletions, skips, mates), e2 300 bp without reads,
# e3 1000 bp (a read to its end; BED intervals at its end).
python3 - "$W" <<'PY'
import sys, re
W = sys.argv[1]
def rec(name, flag, ctg, pos, mapq, cigar, rnext="*", pnext=0):
    qlen = sum(int(n) for n, op in re.findall(r"(\d+)([MIS=X])", cigar))
    seq = ("ACGT" * qlen)[:qlen] or "*"
    return "\t".join(map(str, [name, flag, ctg, pos, mapq, cigar, rnext, pnext, 0, seq,
                               "I" * qlen if qlen else "*"]))
def write(path, sq, r):
    order = [s for s, _ in sq]
    r.sort(key=lambda l: (order.index(l.split("\t")[2]), int(l.split("\t")[3])))
    hdr = ["@HD\tVN:1.6\tSO:coordinate"] + ["@SQ\tSN:%s\tLN:%d" % x for x in sq]
    open(path, "w").write("\n".join(hdr + r) + "\n")
r = [rec("del", 0, "e1", 100, 60, "50M20D50M"), rec("skip", 16, "e1", 300, 60, "30M500N30M"),
     rec("ins", 0, "e1", 320, 60, "10S20M5I20M"), rec("eq", 0, "e1", 330, 60, "20=5X20=")]
# proper pairs overlapping: plain, across 2000, a deletion in the overlap, equal POS
r += [rec("pa", 99, "e1", 1000, 60, "100M", "=", 1050), rec("pa", 147, "e1", 1050, 60, "100M", "=", 1000)]
r += [rec("pc", 99, "e1", 1990, 60, "150M", "=", 2010), rec("pc", 147, "e1", 2010, 60, "40M10D40M", "=", 1990)]
r += [rec("pd", 99, "e1", 1995, 60, "20M30D20M", "=", 2000), rec("pd", 147, "e1", 2000, 60, "60M", "=", 1995)]
r += [rec("pe", 99, "e1", 2500, 60, "80M", "=", 2500), rec("pe", 147, "e1", 2500, 60, "80M", "=", 2500)]
# a contained mate with a two-operation CIGAR (mosdepth's general path: right)
r += [rec("pf", 99, "e1", 2700, 60, "100M", "=", 2720), rec("pf", 147, "e1", 2720, 60, "10S40M", "=", 2700)]
# supplementary (counted, no overlap correction), a not-proper pair, an unmapped placed mate
r += [rec("sx", 2048 + 67, "e1", 3000, 60, "60M90H", "=", 3050),
      rec("sx", 99, "e1", 3050, 60, "90S60M", "=", 3100), rec("sx", 147, "e1", 3100, 60, "100M", "=", 3050)]
r += [rec("np", 97, "e1", 3500, 60, "100M", "=", 3550), rec("np", 145, "e1", 3550, 60, "100M", "=", 3500)]
r += [rec("um", 73, "e1", 4000, 60, "100M", "=", 4000), rec("um", 133, "e1", 4000, 0, "*", "=", 4000)]
r += [rec("dup", 1024, "e1", 4050, 60, "100M"), rec("qc", 512, "e1", 4060, 60, "100M"),
      rec("sec", 256, "e1", 4070, 60, "100M"), rec("mq0", 0, "e1", 4080, 0, "100M")]
r += [rec("b%02d" % i, 0, "e1", 6950 + 3 * i, 30 + i, "100M") for i in range(20)]
r += [rec("tail", 0, "e1", 8801, 60, "200M")]            # to e1's last base
r += [rec("over", 0, "e3", 900, 60, "101M")]
write(W + "/edge.sam", [("e1", 9000), ("e2", 300), ("e3", 1000)], r)
# mosdepth's bugs, one file each
write(W + "/contained.sam", [("k1", 2000)],
      [rec("pk", 99, "k1", 1001, 60, "100M", "=", 1021), rec("pk", 147, "k1", 1021, 60, "50M", "=", 1001)])
write(W + "/full.sam", [("f1", 200)],
      [rec("a", 0, "f1", 1, 60, "100M"), rec("b", 0, "f1", 51, 60, "100M"), rec("c", 0, "f1", 101, 60, "100M")])
PY
for f in edge contained full; do
    "$SAMTOOLS" sort -o "$W/$f.bam" "$W/$f.sam" 2>/dev/null && "$SAMTOOLS" index "$W/$f.bam" ||
        { ss_bad "setup" "cannot make $f.bam"; ss_summary; exit 1; }
done
printf 'e1\t0\t150\tstart\ne1\t8990\t9000\tlast\ne2\t0\t300\tempty\ne2\t10\t20\ne3\t990\t1000\tend\ne3\t0\t1000\n' >"$W/edge.bed"

# e2 has no reads: compare every line but e2's and the totals here, then e2's rows below
MD_INPUT=$W/edge.bam
DROP=e2
md_case "edge default" --
md_case "edge -x" -- -x
md_case "edge --by BED (ends, a contig without reads)" -- --by "$W/edge.bed" -T 1,2,3
md_case "edge --by 1000 -q 0:1:2:" -- --by 1000 -q 0:1:2:
md_case "edge --by 7 -m -T 1" -- --by 7 -m -T 1
md_case "edge -F 0 -x" -- -F 0 -x
md_case "edge -F 0 -i 2048" -- -F 0 -i 2048
md_case "edge -n --by BED" -- -n --by "$W/edge.bed"
md_case "edge -Q 40 -q 1:" -- -Q 40 -q 1:
DROP=

# ---- the four documented differences from mosdepth 0.3.3 ------------------------------------
# expect_line NAME FILE LINE: FILE (decompressed) holds LINE.
expect_line() {
    if gzip -cdf "$2" | grep -qxF "$3"; then ss_ok "$1"; else
        ss_bad "$1" "no line '$3' in ${2##*/}" "$(gzip -cdf "$2" | head -5)"; fi
}
run_ss() { # prefix args...
    local p=$1
    shift
    "$SEQSHARD" depth --mosdepth "$p" --quiet "$@" 2>"$p.err" || ss_bad "run $*" "exit $?" "$(head -2 "$p.err")"
}
mkdir -p "$W/bug"
B=$W/bug

# 1. a mate contained in the first (single-operation CIGARs): mosdepth subtracts to the
# first mate's end, seqshard counts the pair once over [1000, 1100)
"$MOSDEPTH" "$B/m1" "$W/contained.bam" && run_ss "$B/s1" --shard-size 2k -@2 "$W/contained.bam"
expect_line "bug 1: mosdepth under-counts the contained mate" "$B/m1.per-base.bed.gz" $'k1\t1070\t2000\t0'
expect_line "bug 1: seqshard counts it once" "$B/s1.per-base.bed.gz" $'k1\t1000\t1100\t1'
"$MOSDEPTH" -x "$B/m1x" "$W/contained.bam" && run_ss "$B/s1x" -x "$W/contained.bam"
same_files "bug 1: -x equal" "$B/m1x" "$B/s1x"

# 2. contigs without reads: in the summary and dist files, as depth 0
"$MOSDEPTH" --by "$W/edge.bed" "$B/m2" "$W/edge.bam" &&
    run_ss "$B/s2" --by "$W/edge.bed" -@3 --shard-size 2k "$W/edge.bam"
if grep -q '^e2' "$B/m2.mosdepth.summary.txt"; then
    ss_bad "bug 2: mosdepth 0.3.3 leaves e2 out" "it has e2 rows: the test is wrong"
else ss_ok "bug 2: mosdepth 0.3.3 leaves e2 out"; fi
expect_line "bug 2: e2 summary row" "$B/s2.mosdepth.summary.txt" $'e2\t300\t0\t0.00\t0\t0'
expect_line "bug 2: e2_region row" "$B/s2.mosdepth.summary.txt" $'e2_region\t310\t0\t0.00\t0\t0'
expect_line "bug 2: e2 global dist" "$B/s2.mosdepth.global.dist.txt" $'e2\t0\t1.00'
expect_line "bug 2: e2 region dist" "$B/s2.mosdepth.region.dist.txt" $'e2\t0\t1.00'
expect_line "bug 2: e2 regions lines as mosdepth" "$B/s2.regions.bed.gz" $'e2\t0\t300\tempty\t0.00'
same_files "bug 2: everything else equal" "$B/m2" "$B/s2" e2

# 3. the min of total, total_region and the first <chrom>_region row: mosdepth prints 0
"$MOSDEPTH" --by 100 "$B/m3" "$W/full.bam" && run_ss "$B/s3" --by 100 "$W/full.bam"
expect_line "bug 3: mosdepth's total min is 0" "$B/m3.mosdepth.summary.txt" $'total\t200\t300\t1.50\t0\t2'
expect_line "bug 3: total min" "$B/s3.mosdepth.summary.txt" $'total\t200\t300\t1.50\t1\t2'
expect_line "bug 3: f1_region min" "$B/s3.mosdepth.summary.txt" $'f1_region\t200\t300\t1.50\t1\t2'
expect_line "bug 3: total_region min" "$B/s3.mosdepth.summary.txt" $'total_region\t200\t300\t1.50\t1\t2'
expect_line "bug 3: f1 row as mosdepth" "$B/s3.mosdepth.summary.txt" $'f1\t200\t300\t1.50\t1\t2'
DROP_ROWS='f1_region|total'
same_files "bug 3: everything else equal" "$B/m3" "$B/s3" "$DROP_ROWS"

# 4. a BED interval past its contig's end: mosdepth crashes; seqshard counts the part inside
printf 'e3\t900\t1200\tpast\ne3\t1100\t1300\n' >"$W/past.bed"
if "$MOSDEPTH" --by "$W/past.bed" "$B/m4" "$W/edge.bam" 2>/dev/null; then
    ss_bad "bug 4: mosdepth 0.3.3 fails" "it worked: the test is wrong"
else ss_ok "bug 4: mosdepth 0.3.3 fails"; fi
run_ss "$B/s4" --by "$W/past.bed" -T 1 --shard-size 2k "$W/edge.bam"
# e3 900-1000 has depth 1 (one read to the end): 100 bases / 300 = 0.33
expect_line "bug 4: region past the end" "$B/s4.regions.bed.gz" $'e3\t900\t1200\tpast\t0.33'
expect_line "bug 4: region wholly past the end" "$B/s4.regions.bed.gz" $'e3\t1100\t1300\t0.00'
expect_line "bug 4: thresholds inside the contig" "$B/s4.thresholds.bed.gz" $'e3\t900\t1200\tpast\t100'
expect_line "bug 4: e3_region counts the bases inside" "$B/s4.mosdepth.summary.txt" $'e3_region\t100\t100\t1.00\t1\t1'

# ---- the .csi indexes are tabix's ---------------------------------------------------------
mkdir -p "$W/csi"
"$SEQSHARD" depth --mosdepth "$W/csi/x" -@3 --shard-size 3k --quiet --by 500 -T 1,5 -q 0:1:10: \
    "$TD/s1.bam"
for f in per-base regions thresholds quantized; do
    cp "$W/csi/x.$f.bed.gz" "$W/csi/t.$f.bed.gz"
    tabix -f -p bed --csi "$W/csi/t.$f.bed.gz"
    if cmp -s "$W/csi/x.$f.bed.gz.csi" "$W/csi/t.$f.bed.gz.csi"; then ss_ok "$f.csi is tabix's"
    else ss_bad "$f.csi" "differs from tabix -p bed --csi of the same file"; fi
done

# ---- failures leave no file -------------------------------------------------------------------
mkdir -p "$W/fail"
"$SEQSHARD" depth --mosdepth "$W/fail/no/such/dir/x" --quiet "$TD/s1.bam" 2>"$W/fail.err"
rc=$?
if [ $rc = 0 ] || [ "$(wc -l <"$W/fail.err")" != 1 ]; then
    ss_bad "unwritable prefix" "exit $rc, $(wc -l <"$W/fail.err") lines" "$(head -3 "$W/fail.err")"
else ss_ok "unwritable prefix"; fi
chmod 555 "$W/fail"
if [ "$(id -u)" != 0 ]; then
    "$SEQSHARD" depth --mosdepth "$W/fail/x" --quiet "$TD/s1.bam" 2>"$W/fail.err"
    rc=$?
    if [ $rc = 0 ] || [ -n "$(ls -A "$W/fail")" ]; then ss_bad "read-only dir" "exit $rc"
    else ss_ok "read-only dir"; fi
fi
chmod 755 "$W/fail"
for shard in 0 5 15; do
    SEQSHARD_FAIL_SHARD=$shard "$SEQSHARD" depth --mosdepth "$W/fail/x" --by 500 -T 1 -q 0:1: \
        -@2 --shard-size 5k --quiet "$TD/s1.bam" 2>"$W/fail.err"
    rc=$?
    if [ $rc = 0 ] || [ -n "$(ls -A "$W/fail")" ] || [ "$(wc -l <"$W/fail.err")" != 1 ]; then
        ss_bad "failure at shard $shard" "exit $rc; left: $(ls -A "$W/fail" | head -3)" \
            "$(head -3 "$W/fail.err")"
    else ss_ok "failure at shard $shard leaves nothing"; fi
done
# a signal mid-run (the run stalls at shard 6, SEQSHARD_STALL_SHARD): nothing is left
SEQSHARD_STALL_SHARD=6 "$SEQSHARD" depth --mosdepth "$W/fail/x" --by 500 -T 1 -@2 \
    --shard-size 5k --quiet "$TD/s1.bam" 2>"$W/fail.err" &
pid=$!
sleep 1
kill -TERM $pid
wait $pid
rc=$?
if [ $rc = 0 ] || [ -n "$(ls -A "$W/fail")" ]; then
    ss_bad "SIGTERM mid-run" "exit $rc, left: $(ls -A "$W/fail" | tr '\n' ' ')"
else ss_ok "SIGTERM mid-run leaves nothing"; fi
"$SEQSHARD" depth --mosdepth "$W/fail/x" --by "$W/nonexistent.bed" --quiet "$TD/s1.bam" 2>"$W/fail.err"
rc=$?
if [ $rc = 0 ] || [ -n "$(ls -A "$W/fail")" ]; then ss_bad "missing BED" "exit $rc"
else ss_ok "missing BED leaves nothing"; fi

ss_summary
exit $?
