#!/usr/bin/env bash
# depth_vs_samtools.sh -- seqshard depth gives the bytes samtools depth 1.16
# gives, for every option alone and combined, on the test data and on
# hand-made edge cases (deletions and skips, overlapping and contained mates,
# supplementary reads, contigs without reads, reads past a contig's end,
# regions at contig ends), at threads 1-3 and shard sizes from 2 kb to a
# whole contig. The MPI cases are in mpi_depth.sh.
set -u
. "$(dirname "$0")/lib.sh"
ss_setup
W=$SS_WORK
SEQSHARD=$(realpath "$SEQSHARD")
COMBOS=${DEPTH_COMBOS:-"1:1g 1:2k 2:7k 3:2k"}

# dp_case NAME ARGS...: samtools depth ARGS once, seqshard depth ARGS for each
# thread:shard-size combination; same exit status (0) and the same bytes.
dp_case() {
    local name=$1
    shift
    ss_case_no=$((ss_case_no + 1))
    local exp=$W/exp.$ss_case_no
    if ! "$SAMTOOLS" depth "$@" >"$exp" 2>"$exp.err"; then
        ss_bad "$name" "samtools itself failed: the test is wrong" \
            "$(ss_quote "$SAMTOOLS" depth "$@")" "$(head -2 "$exp.err")"
        return
    fi
    local combo t s got cmd
    ss_sweep "$COMBOS"
    for combo in $SWEEP; do
        t=${combo%%:*} s=${combo#*:}
        got=$W/got.$ss_case_no.$t.$s
        cmd=(depth -@ "$t" --shard-size "$s" --quiet "$@")
        ss_run_seqshard "$got" "$got.err" "${cmd[@]}"
        if [ "$ss_rc" != 0 ]; then
            ss_bad "$name [-@$t $s]" "exit status $ss_rc" \
                "seqshard: $(ss_quote "$SEQSHARD" "${cmd[@]}")" "$(head -2 "$got.err")"
        elif ! cmp -s "$exp" "$got"; then
            ss_bad "$name [-@$t $s]" "output differs from samtools depth" \
                "seqshard: $(ss_quote "$SEQSHARD" "${cmd[@]}")" \
                "samtools: $(ss_quote "$SAMTOOLS" depth "$@")"
            ss_show_diff "$exp" "$got"
        else
            ss_ok "$name [-@$t $s]"
            rm -f "$got" "$got.err"
        fi
    done
}

# ---- hand-made edge cases ----------------------------------------------------------------
# Contigs: c1 9000 bp (reads across the 2k/7k shard boundaries), c2 (no reads), c3 1000 bp
# (reads hanging over and placed past its end), c4 (only MAPQ 0 reads).
python3 - "$W/edge.sam" "$W/star.sam" <<'PY'
import sys
def rec(name, flag, ctg, pos, mapq, cigar, rnext="*", pnext=0, qual=None, seq=None):
    import re
    qlen = sum(int(n) for n, op in re.findall(r"(\d+)([MIS=X])", cigar))
    if seq is None:
        seq = "ACGT" * (qlen // 4) + "ACGT"[: qlen % 4]
    if qual is None:
        qual = "".join(chr(33 + 10 + (i * 7) % 31) for i in range(qlen))  # Q10..Q40
    if seq == "*":
        qual = "*"
    return "\t".join(map(str, [name, flag, ctg, pos, mapq, cigar, rnext, pnext, 0, seq, qual]))
hdr = ["@HD\tVN:1.6\tSO:coordinate", "@SQ\tSN:c1\tLN:9000", "@SQ\tSN:c2\tLN:300",
       "@SQ\tSN:c3\tLN:1000", "@SQ\tSN:c4\tLN:500"]
r = []
r += [rec("del", 0, "c1", 100, 60, "50M20D50M")]
r += [rec("delend", 0, "c1", 150, 60, "40M5D")]            # deletion at the read's end
r += [rec("skip", 16, "c1", 300, 60, "30M500N30M")]
r += [rec("ins", 0, "c1", 320, 60, "10S20M5I20M")]
r += [rec("hclip", 0, "c1", 330, 60, "5H10S40M")]          # -l: clips behind H stay
r += [rec("lowdel", 0, "c1", 400, 60, "10M10D10M", qual="I" * 10 + "#" + "I" * 9)]
# overlapping mates, one pair crossing 2000, a contained mate
r += [rec("pa", 99, "c1", 1000, 60, "100M", "=", 1050),
      rec("pa", 147, "c1", 1050, 60, "100M", "=", 1000)]
r += [rec("pc", 99, "c1", 1990, 60, "150M", "=", 2010),
      rec("pc", 147, "c1", 2010, 60, "50M", "=", 1990)]
r += [rec("pd", 99, "c1", 1995, 60, "20M30D20M", "=", 2000),
      rec("pd", 147, "c1", 2000, 60, "60M", "=", 1995)]
# three alignments of a name: supplementary, primary, mate
r += [rec("sx", 2048 + 65, "c1", 3000, 60, "60M90H", "=", 3100),
      rec("sx", 97, "c1", 3050, 60, "90S60M", "=", 3100),
      rec("sx", 145, "c1", 3100, 60, "100M", "=", 3050)]
# mate on another contig (not stored), mate position unknown (stored)
r += [rec("mo", 65, "c1", 3500, 60, "100M", "c3", 10), rec("mu", 65, "c1", 3600, 60, "100M"),
      rec("mu", 129, "c1", 3650, 60, "100M")]
# an unmapped read placed at its mate's position; flags for -g/-G
r += [rec("um", 73, "c1", 4000, 60, "100M", "=", 4000),
      rec("um", 133, "c1", 4000, 0, "*", "=", 4000)]
r += [rec("dup", 1024, "c1", 4050, 60, "100M"), rec("qc", 512, "c1", 4060, 60, "100M"),
      rec("sec", 256, "c1", 4070, 60, "100M"), rec("mq0", 0, "c1", 4080, 0, "100M"),
      rec("short", 0, "c1", 4090, 60, "20M")]
# reads across 6000/7000 and a pile
r += [rec("b%02d" % i, 0, "c1", 6950 + 3 * i, 30 + i, "100M") for i in range(20)]
r += [rec("tail", 0, "c1", 8950, 60, "100M")]              # past c1's end
# c3: a read over the end, then one placed past the end with a gap before it
r += [rec("over", 0, "c3", 950, 60, "100M"), rec("past", 0, "c3", 1060, 60, "50M")]
r += [rec("z%d" % i, 0, "c4", 100 + i, 0, "50M") for i in range(3)]
r.sort(key=lambda l: (["c1", "c2", "c3", "c4"].index(l.split("\t")[2]), int(l.split("\t")[3])))
open(sys.argv[1], "w").write("\n".join(hdr + r) + "\n")
# no SEQ (samtools reads past the record for -q with it, so only without -q)
s = [rec("n1", 0, "c1", 100, 60, "50M10D50M", seq="*"), rec("n2", 0, "c1", 120, 60, "30M", seq="*")]
open(sys.argv[2], "w").write("\n".join(hdr + s) + "\n")
PY
for f in edge star; do
    "$SAMTOOLS" sort -o "$W/$f.bam" "$W/$f.sam" 2>/dev/null && "$SAMTOOLS" index "$W/$f.bam" ||
        { ss_bad "setup" "cannot make $f.bam"; ss_summary; exit 1; }
done
E=$W/edge.bam

dp_case "edge default" "$E"
for opt in -a -aa "-a -a" -J -s "-q 20" "-Q 35" "-l 45" -H "-g 4" "-g UNMAP,DUP" "-G 2048" \
    "-g 0x700" "-d 5" "-m 5"; do
    # shellcheck disable=SC2086  # options split on purpose
    dp_case "edge $opt" $opt "$E"
done
dp_case "edge -s -J" -s -J "$E"
dp_case "edge -a -s -J -q 30" -a -s -J -q 30 "$E"
dp_case "edge -aa -Q 1 (c4 all MAPQ 0)" -aa -Q 1 "$E"
dp_case "edge -a -Q 1 (c4 all MAPQ 0)" -a -Q 1 "$E"
dp_case "edge -g 4 -s -a" -g 4 -s -a "$E"
dp_case "edge -J -q 30 (deletion before a low base)" -J -q 30 "$E"
dp_case "edge -l 40 -Q 30 -G 1024" -l 40 -Q 30 -G 1024 "$E"
# (not c3:1001-1100: a region wholly past its contig's end prints nothing; docs/user-guide.md)
for reg in c1 c1:1-50 c1:1950-2100 c1:8900-9000 c1:8990-9100 c3 c3:990-1200 c2 c4:1-100; do
    dp_case "edge -r $reg" -r "$reg" "$E"
    dp_case "edge -a -r $reg" -a -r "$reg" "$E"
    dp_case "edge -aa -s -r $reg" -aa -s -r "$reg" "$E"
done
printf 'c1\t0\t120\nc1\t1995\t2005\nc1\t6990\t7100\nc2\t10\t20\nc3\t990\t1100\n' >"$W/e.bed"
dp_case "edge -b" -b "$W/e.bed" "$E"
dp_case "edge -a -b" -a -b "$W/e.bed" "$E"
dp_case "edge -aa -b -s" -aa -b "$W/e.bed" -s "$E"
dp_case "edge -b -r" -b "$W/e.bed" -r c1:100-7000 "$E"
dp_case "no SEQ" "$W/star.bam"
dp_case "no SEQ -a -J" -a -J "$W/star.bam"
dp_case "two inputs edge+star -a" -a "$E" "$W/star.bam"

# ---- the test data ---------------------------------------------------------------------------
S1=$TD/s1.bam S2=$TD/s2.bam
for opt in "" -a -aa -s -J "-q 20" "-Q 30" "-l 140" -H "-G 2" "-g DUP"; do
    # shellcheck disable=SC2086
    dp_case "s1 s2 $opt" $opt "$S1" "$S2"
done
dp_case "s1 -a -s -J -q 13 -Q 20" -a -s -J -q 13 -Q 20 "$S1"
dp_case "s1 s2 edge -aa -H" -aa -H "$S1" "$S2" "$TD/edge.bam"
dp_case "edge.bam -a -s" -a -s "$TD/edge.bam"
dp_case "edge.bam -J -q 10" -J -q 10 "$TD/edge.bam"
dp_case "s1 -r ctgB:29000-31000" -r ctgB:29000-31000 "$S1"
dp_case "s1 -a -r ctgA:59900-60000" -a -r ctgA:59900-60000 "$S1"
dp_case "s1 -aa -r ctgEmpty" -aa -r ctgEmpty "$S1"
dp_case "s1 -a -r ctgEmpty" -a -r ctgEmpty "$S1"
dp_case "s1 -b regions.bed" -b "$TD/regions.bed" "$S1" "$S2"
dp_case "s1 -a -b positions.txt" -a -b "$TD/positions.txt" "$S1"
dp_case "s1 -aa -b regions.bed -s" -aa -b "$TD/regions.bed" -s "$S1"
dp_case "cram" --reference "$REF" "$TD/s1.cram"
dp_case "cram -a -s -J -Q 20" --reference "$REF" -a -s -J -Q 20 "$TD/s1.cram"
dp_case "cram + bam -aa" --reference "$REF" -aa "$TD/s1.cram" "$S2"
dp_case "-X" -X -r ctgA "$S1" "$S2" "$S1.bai" "$S2.bai"
printf '%s\n%s\n' "$S2" "$S1" >"$W/list.txt"
dp_case "-f" -f "$W/list.txt"
dp_case "-f -H -a" -H -a -f "$W/list.txt"

# ---- -o ----------------------------------------------------------------------------------------
"$SAMTOOLS" depth -a -o "$W/exp.o.txt" "$S1" 2>/dev/null
"$SEQSHARD" depth -@ 2 --shard-size 7k --quiet -a -o "$W/got.o.txt" -o "$W/ignored.txt" "$S1"
if cmp -s "$W/exp.o.txt" "$W/got.o.txt" && [ ! -e "$W/ignored.txt" ]; then ss_ok "-o FILE"
else ss_bad "-o FILE" "differs from samtools -o (or the second -o was used)"; fi
# samtools writes a file named '-' for -o -; its manual (and seqshard) mean standard output
(cd "$W" && "$SEQSHARD" depth --quiet -o - "$S1" >"$W/got.dash.txt")
"$SAMTOOLS" depth "$S1" >"$W/exp.dash.txt"
if cmp -s "$W/exp.dash.txt" "$W/got.dash.txt" && [ ! -e "$W/-" ]; then ss_ok "-o - is stdout"
else ss_bad "-o -" "not written to standard output"; fi
"$SEQSHARD" depth --quiet -a -o "$W/got.txt.gz" "$S1"
gzip -dc "$W/got.txt.gz" >"$W/got.gz.txt" 2>/dev/null
if cmp -s "$W/exp.o.txt" "$W/got.gz.txt" && [ -s "$W/got.txt.gz.tbi" ]; then ss_ok "-o .gz"
else ss_bad "-o .gz" "not the same lines as BGZF with a .tbi"; fi

# ---- usage and errors ------------------------------------------------------------------------
if "$SEQSHARD" depth --help | grep -q -- '-aa'; then ss_ok "--help"
else ss_bad "--help" "no -aa"; fi
"$SEQSHARD" depth --quiet "$TD/noindex.bam" >/dev/null 2>"$W/err"
rc=$?
if [ $rc != 0 ] && grep -q noindex "$W/err"; then ss_ok "no index: fails naming the file"
else ss_bad "no index" "status $rc: $(head -1 "$W/err")"; fi
"$SEQSHARD" depth --quiet -Z "$S1" >/dev/null 2>"$W/err"
[ $? = 2 ] && ss_ok "bad option: status 2" || ss_bad "bad option" "$(head -1 "$W/err")"

ss_summary
exit $?
