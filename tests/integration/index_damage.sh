#!/usr/bin/env bash
# index_damage.sh -- a whole-file run accounts for every record, whatever its
# index says; and inputs the index checks once got wrong.
#   - damaged indexes of intact files: a .bai and a .csi with bits flipped in
#     bins, chunks, the linear index and the pseudo-bins' counts, a .crai with
#     lines dropped or changed (index_patch.py), through every kernel: view -c,
#     view, pileup, depth, depth --mosdepth, realign. Each run gives the bytes it
#     gives with the sound index, or exits 1 with one line and leaves nothing;
#     never fewer records with exit 0 (view -c counted 14,300 of 17,038).
#   - a CRAM whose slice header is damaged: one "cannot decode" line, exit 1
#     (the failed handle was read again: SIGSEGV in htslib);
#   - a valid BAM of unplaced unmapped reads only reads as samtools reads it
#     (its unplaced shard read the header as records: "read error"), also
#     streamed in batches past the first (fewer descriptors than inputs).
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_inputs.sh"
ss_setup
W=$SS_WORK
PATCH=$SS_SRC/tests/integration/index_patch.py
export REF_PATH=: # no downloads of references
SHARDS=(--shard-size 20k -@ 2)

# kernels KIND FILE: the runs each damaged index goes through, one per line: NAME|ARGS.
kernels() {
    local ref=(-f "$REF")
    [ "$1" = cram ] && ref=(--reference "$REF")
    echo "view-c|view -c -T $REF"
    echo "view|view -T $REF"
    echo "pileup|pileup -f $REF"
    echo "depth|depth --reference $REF"
    echo "realign|realign -f $REF"
    echo "mosdepth|depth --reference $REF --mosdepth"
}

# run_kernel DIR NAME ARGS... FILE: seqshard into DIR/out; sets rc; DIR/got is what it made.
run_kernel() {
    local d=$1 name=$2
    shift 2
    rm -rf "$d/out"
    mkdir -p "$d/out"
    local file=${*: -1} args=("${@:1:$#-1}")
    case $name in
    mosdepth)
        timeout "$SS_TIMEOUT" "$SEQSHARD" "${args[@]}" "$d/out/md" "${SHARDS[@]}" --quiet "$file" \
            </dev/null >"$d/stdout" 2>"$d/stderr"
        rc=$?
        # the text, not the blocks: a damaged index may cut other shards (plan.c), and a
        # compressed file's blocks follow the shards (DESIGN.md, contract 1)
        [ $rc = 0 ] && for f in "$d"/out/md.*; do
            case $f in *.csi) ;; *.gz) gzip -dc "$f" ;; *) cat "$f" ;; esac
        done >"$d/got" 2>/dev/null ;;
    view-c)
        timeout "$SS_TIMEOUT" "$SEQSHARD" "${args[@]}" "${SHARDS[@]}" --quiet "$file" \
            </dev/null >"$d/out/got" 2>"$d/stderr"
        rc=$?
        [ -s "$d/out/got" ] || rm -f "$d/out/got"
        [ $rc = 0 ] && mv "$d/out/got" "$d/got" ;;
    *)
        local o=out.txt
        [ "$name" = realign ] && o=out.bam
        timeout "$SS_TIMEOUT" "$SEQSHARD" "${args[@]}" "${SHARDS[@]}" --quiet -o "$d/out/$o" "$file" \
            </dev/null >"$d/stdout" 2>"$d/stderr"
        rc=$?
        if [ $rc = 0 ] && [ "$name" = realign ]; then
            "$SAMTOOLS" view "$d/out/$o" >"$d/got"
        elif [ $rc = 0 ]; then
            cp "$d/out/$o" "$d/got"
        fi ;;
    esac
}

# expect_all KIND FILE: each kernel's output with FILE's sound index, into $W/exp.KIND.NAME.
expect_all() {
    local line name args
    while IFS='|' read -r name args; do
        # shellcheck disable=SC2086
        run_kernel "$W/e" "$name" $args "$2"
        [ $rc = 0 ] || { echo "FAIL setup: $name on $2 with its sound index: exit $rc"; exit 1; }
        mv "$W/e/got" "$W/exp.$1.$name"
    done < <(kernels "$1")
}

# check_damaged KIND FILE WHAT [ONLY]: every kernel on FILE (whose index WHAT damaged), or
# those whose names match the regex ONLY, gives the sound index's output, or exit 1 with one
# line and nothing left behind.
n_refused=0
check_damaged() {
    local kind=$1 file=$2 what=$3 only=${4:-.*} name args d=$W/d
    while IFS='|' read -r name args; do
        [[ $name =~ ^($only)$ ]] || continue
        # shellcheck disable=SC2086
        run_kernel "$d" "$name" $args "$file"
        local case="$what: $name" left
        left=$(find "$d/out" -mindepth 1 -printf '%f ')
        if [ $rc -ge 124 ]; then
            ss_bad "$case" "exit $rc (hang or signal)" "$(head -2 "$d/stderr" | cut -c1-200)"
        elif [ $rc = 1 ]; then
            if [ "$(ss_lines "$d/stderr")" != 1 ]; then
                ss_bad "$case" "exit 1 with $(ss_lines "$d/stderr") lines on stderr, want one" \
                    "$(head -3 "$d/stderr" | cut -c1-200)"
            elif [ -n "$left" ]; then
                ss_bad "$case" "exit 1 but left: $left"
            else
                n_refused=$((n_refused + 1))
                ss_ok "$case"
            fi
        elif [ $rc != 0 ]; then
            ss_bad "$case" "exit $rc, want 0 or 1" "$(head -2 "$d/stderr" | cut -c1-200)"
        elif cmp -s "$W/exp.$kind.$name" "$d/got"; then
            ss_ok "$case"
        else
            ss_bad "$case" "exit 0 but the output differs from the sound index's" \
                "$(wc -l <"$d/got") lines, want $(wc -l <"$W/exp.$kind.$name")"
        fi
    done < <(kernels "$kind")
}

# ---- damaged .bai, .csi and .crai -----------------------------------------------------
cp "$TD/s1.bam" "$W/b.bam" && cp "$TD/s1.bam.bai" "$W/b.bam.bai"
cp "$TD/s1.bam" "$W/c.bam" && "$SAMTOOLS" index -c "$W/c.bam"
cp "$TD/s1.small.cram" "$W/r.cram" && cp "$TD/s1.small.cram.crai" "$W/r.cram.crai"
"$SAMTOOLS" view "$W/b.bam" >"$W/sam.txt"
expect_all bam "$W/b.bam"
cmp -s "$W/sam.txt" "$W/exp.bam.view" && ss_ok "sound index: view as samtools view" ||
    ss_bad "sound index: view as samtools view" "differs"
[ "$(cat "$W/exp.bam.view-c")" = "$(wc -l <"$W/sam.txt")" ] && ss_ok "sound index: view -c" ||
    ss_bad "sound index: view -c" "$(cat "$W/exp.bam.view-c") records, want $(wc -l <"$W/sam.txt")"
expect_all cram "$W/r.cram"

# damage FMT KIND SEED SRC DST: DST is SRC's index damaged, not older than its data.
damage() {
    python3 "$PATCH" "$1" "$2" "$4" "$5" "$3" >/dev/null || { echo "FAIL setup: $*"; exit 1; }
}
SEEDS=${INDEX_SEEDS:-1 2 3 4}
# Every kernel meets each kind of damage at the first seed. The other seeds damage other
# entries of the same kind; they go through view -c (counts, the run that once came up
# short), view (prints every record) and pileup (piles them, as depth, --mosdepth and
# realign do with the records the same reader gives them).
later_seeds() { [ "$1" = "${SEEDS%% *}" ] && echo '.*' || echo 'view-c|view|pileup'; }
cp "$W/b.bam" "$W/bd.bam"
damage bai chunk-end 0 "$W/b.bam.bai" "$W/bd.bam.bai"
check_damaged bam "$W/bd.bam" "bai chunk-end"
for kind in chunk bin linear pseudo; do
    for s in $SEEDS; do
        damage bai $kind "$s" "$W/b.bam.bai" "$W/bd.bam.bai"
        check_damaged bam "$W/bd.bam" "bai $kind $s" "$(later_seeds "$s")"
    done
done
cp "$W/c.bam" "$W/cd.bam"
for kind in chunk-end chunk bin pseudo; do
    for s in ${SEEDS%% *}; do
        damage csi $kind "$s" "$W/c.bam.csi" "$W/cd.bam.csi"
        check_damaged bam "$W/cd.bam" "csi $kind $s"
    done
done
cp "$W/r.cram" "$W/rd.cram"
damage crai drop-unplaced 0 "$W/r.cram.crai" "$W/rd.cram.crai"
check_damaged cram "$W/rd.cram" "crai drop-unplaced"
for kind in drop field; do
    for s in $SEEDS; do
        damage crai $kind "$s" "$W/r.cram.crai" "$W/rd.cram.crai"
        check_damaged cram "$W/rd.cram" "crai $kind $s" "$(later_seeds "$s")"
    done
done
# the lost records are named: contig, what was read, what the index counts
damage bai chunk-end 0 "$W/b.bam.bai" "$W/bd.bam.bai"
ss_fails_with "bai chunk-end: the message" \
    "bd\\.bam: its index .*bd\\.bam\\.bai does not describe the file \\(contig ctgA: [0-9,]+ records read, the index counts 10,002\\); re-index it with samtools index" \
    out.txt view "$W/bd.bam"
damage crai drop-unplaced 0 "$W/r.cram.crai" "$W/rd.cram.crai"
ss_fails_with "crai drop-unplaced: view '*'" "rd\\.cram: its index .* does not match the file" \
    out.txt view -T "$REF" "$W/rd.cram" '*'
echo "damaged-index runs refused (exit 1, one line): $n_refused"

# ---- a CRAM with a damaged slice header: one line, no signal ---------------------------
# overwrite 5 bytes 10 into the slice header of the crai's line K (bytes from seed K)
slice_damage() {
    python3 - "$TD/s1.small.cram" "$TD/s1.small.cram.crai" "$1" "$2" <<'EOF'
import gzip, random, sys
d = bytearray(open(sys.argv[1], "rb").read())
line = gzip.open(sys.argv[2], "rt").read().splitlines()[int(sys.argv[3])].split("\t")
at = int(line[3]) + int(line[4]) + 10
rnd = random.Random(int(sys.argv[3]))
d[at:at + 5] = bytes(rnd.randrange(256) for _ in range(5))
if sys.argv[3] == "10":  # the bytes that made htslib dereference NULL
    d[at:at + 5] = bytes([0o74, 0o237, 0o22, 0o42, 0o105])
open(sys.argv[4], "wb").write(d)
EOF
}
for k in 8 9 10 11 12; do
    slice_damage "$k" "$W/sd.cram" && cp "$TD/s1.small.cram.crai" "$W/sd.cram.crai" ||
        { ss_bad "slice $k" "cannot damage"; continue; }
    check_damaged cram "$W/sd.cram" "CRAM slice header $k"
done
slice_damage 10 "$W/sd.cram" && cp "$TD/s1.small.cram.crai" "$W/sd.cram.crai"
ss_fails_with "CRAM slice header 10: pileup says it cannot decode" \
    "sd\\.cram: cannot decode CRAM records in shard" out.txt pileup -f "$REF" --shard-size 20k "$W/sd.cram"

# ---- unplaced unmapped reads only ------------------------------------------------------
"$SAMTOOLS" view -h "$TD/s1.bam" | awk '/^@/ || $3 == "*"' | "$SAMTOOLS" view -b -o "$W/un.bam" - &&
    "$SAMTOOLS" index "$W/un.bam" || { echo "FAIL setup: un.bam"; exit 1; }
"$SAMTOOLS" view "$W/un.bam" >"$W/un.sam"
for args in "" "-@ 2 --shard-size 1k"; do
    # shellcheck disable=SC2086
    "$SEQSHARD" view --quiet $args -o "$W/got.sam" "$W/un.bam" 2>"$W/err" &&
        cmp -s "$W/un.sam" "$W/got.sam" && ss_ok "unplaced only: view $args" ||
        ss_bad "unplaced only: view $args" "differs or failed" "$(head -1 "$W/err" | cut -c1-200)"
    # shellcheck disable=SC2086
    got=$("$SEQSHARD" view -c --quiet $args "$W/un.bam" 2>&1)
    [ "$got" = "$(wc -l <"$W/un.sam")" ] && ss_ok "unplaced only: view -c $args" ||
        ss_bad "unplaced only: view -c $args" "got '$got'"
done
ss_pileup "unplaced only: pileup" "1:1m 2:1k" "$W/un.bam"
"$SEQSHARD" realign -f "$REF" --quiet -o "$W/un.out.bam" "$W/un.bam" 2>"$W/err" &&
    "$SAMTOOLS" view "$W/un.out.bam" | cmp -s "$W/un.sam" - && ss_ok "unplaced only: realign" ||
    ss_bad "unplaced only: realign" "differs or failed" "$(head -1 "$W/err" | cut -c1-200)"
# several inputs, fewer descriptors: read in batches, each resuming where the last ended
"$SAMTOOLS" view -h "$TD/s1.bam" | awk 'BEGIN { OFS = "\t" } /^@/ { print; next } { print }
    NR % 3 == 0 { $1 = $1 "_u"; $2 = 4; $3 = "*"; $4 = 0; $5 = 0; $6 = "*"; $7 = "*"; $8 = 0;
                  $9 = 0; u[n++] = $0 } END { for (i = 0; i < n; i++) print u[i] }' |
    "$SAMTOOLS" view -b -o "$W/mu.bam" - && "$SAMTOOLS" index "$W/mu.bam" &&
    cp "$W/mu.bam" "$W/mu2.bam" && "$SAMTOOLS" index "$W/mu2.bam" || { echo "FAIL setup: mu.bam"; exit 1; }
"$SAMTOOLS" mpileup "$W/mu.bam" "$W/mu2.bam" >"$W/mu.exp" 2>/dev/null
SEQSHARD_MAX_OPEN_FILES=0 "$SEQSHARD" pileup --quiet -o "$W/mu.got" "$W/mu.bam" "$W/mu2.bam" \
    2>"$W/err" && cmp -s "$W/mu.exp" "$W/mu.got" && ss_ok "unplaced reads in batches: pileup" ||
    ss_bad "unplaced reads in batches: pileup" "differs or failed" "$(head -1 "$W/err" | cut -c1-200)"

ss_summary
exit $?
