#!/usr/bin/env bash
# mpileup_errors.sh -- seqshard mpileup's refusals and failures: usage errors
# (no reference and no --no-reference, an unknown -a tag, -O x, a -R line with a
# negative start) exit 2; bad inputs (a missing file, a damaged or unreadable
# index, a BAM damaged in the middle, a missing reference) exit 1. Each prints
# one line on stderr that names the option or the file, nothing on standard
# output, and leaves nothing in the output's directory: no VCF/BCF, no .csi, no
# temporary file; an existing output file survives a failed run untouched.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_inputs.sh"
ss_setup
W=$SS_WORK
S1=$TD/s1.bam
PATCH=$SS_SRC/tests/integration/index_patch.py

# mp_fails NAME STATUS MENTION OUTNAME ARGS...
#   `seqshard mpileup --quiet -o DIR/OUTNAME ARGS` (DIR fresh and empty) exits with
#   STATUS, prints exactly one line on stderr matching MENTION (an extended regular
#   expression), nothing on stdout, and leaves DIR empty.
mp_fails() {
    local name=$1 want=$2 mention=$3 outname=$4
    shift 4
    ss_case_no=$((ss_case_no + 1))
    local d=$W/fail.$ss_case_no
    mkdir -p "$d/out"
    local cmd=("$SEQSHARD" mpileup --quiet -o "$d/out/$outname" "$@")
    timeout "$SS_TIMEOUT" "${cmd[@]}" </dev/null >"$d/stdout" 2>"$d/stderr"
    local rc=$? left shown
    left=$(find "$d/out" -mindepth 1 -maxdepth 1 -printf '%f ')
    shown=$(ss_quote "${cmd[@]}")
    if [ $rc = 124 ]; then
        ss_bad "$name" "timed out after ${SS_TIMEOUT}s (hang?)" "$shown"
    elif [ $rc != "$want" ]; then
        ss_bad "$name" "exit status $rc, want $want" "$shown" \
            "stderr: $(head -3 "$d/stderr" | cut -c1-240)"
    elif [ "$(ss_lines "$d/stderr")" != 1 ]; then
        ss_bad "$name" "$(ss_lines "$d/stderr") lines on stderr, want exactly one" "$shown" \
            "stderr: $(head -5 "$d/stderr" | cut -c1-240)"
    elif ! grep -qE -- "$mention" "$d/stderr"; then
        ss_bad "$name" "the message does not mention '$mention'" "$shown" \
            "stderr: $(cut -c1-240 "$d/stderr")"
    elif [ -s "$d/stdout" ]; then
        ss_bad "$name" "printed $(wc -c <"$d/stdout") bytes on stdout although -o was given" \
            "$shown"
    elif [ -n "$left" ]; then
        ss_bad "$name" "left files in the output directory: $left" "$shown" \
            "stderr: $(cut -c1-240 "$d/stderr")"
    else
        ss_ok "$name"
        [ "$SS_VERBOSE" = 1 ] && echo "     $(cut -c1-240 "$d/stderr")"
        rm -rf "$d"
    fi
}

# ---- usage: exit 2, before any work ------------------------------------------------------
mp_fails "no -f and no --no-reference" 2 'fasta-ref.*--no-reference|--no-reference.*fasta-ref' \
    out.vcf "$S1"
mp_fails "unknown -a tag"               2 'FOO'       out.vcf -f "$REF" -a AD,FOO "$S1"
mp_fails "unknown -a tag INFO/"         2 'INFO/XYZ'  out.vcf -f "$REF" -a INFO/XYZ "$S1"
mp_fails "-O x"                         2 '-O.*"?x"?' out.vcf -f "$REF" -O x "$S1"
mp_fails "-O x, -Oz output name"        2 '-O.*"?x"?' out.vcf.gz -f "$REF" -O x "$S1"

# ---- inputs: exit 1 ----------------------------------------------------------------------
mp_fails "missing input"                1 'nope\.bam' out.vcf -f "$REF" "$W/no-such-dir/nope.bam"
mp_fails "missing second input"         1 'nope\.bam' out.vcf -f "$REF" "$S1" "$W/nope.bam"
mp_fails "missing -f reference"         1 'nope\.fa'  out.vcf -f "$W/nope.fa" "$S1"
mp_fails "missing index"                1 'noindex\.bam' out.vcf -f "$REF" "$TD/noindex.bam"
mp_fails "garbled BAM -@3 2k"           1 'garbled\.bam' out.vcf -@ 3 --shard-size 2k \
    -f "$REF" "$TD/garbled.bam"
mp_fails "garbled BAM -Oz --write-index" 1 'garbled\.bam' out.vcf.gz -Oz --write-index \
    -@ 2 --shard-size 2k -f "$REF" "$TD/garbled.bam"

# Damaged indexes of an intact s1.bam (index_damage.sh has more): one whose first
# contig's widest chunk ends where it begins (a run that trusted it would read fewer
# records), and one cut in half (htslib cannot load it).
cp "$S1" "$W/bd.bam"
python3 "$PATCH" bai chunk-end "$S1.bai" "$W/bd.bam.bai" 0 >/dev/null ||
    { echo "FAIL setup: index_patch.py bai chunk-end"; exit 1; }
mp_fails "damaged .bai (chunk end)"     1 'bd\.bam'   out.vcf -f "$REF" "$W/bd.bam"
mp_fails "damaged .bai (chunk end) -Ob --write-index -@2 2k" 1 'bd\.bam' out.bcf -Ob \
    --write-index -@ 2 --shard-size 2k -f "$REF" "$W/bd.bam"
cp "$S1" "$W/bt.bam"
head -c $(($(stat -c %s "$S1.bai") / 2)) "$S1.bai" >"$W/bt.bam.bai"
mp_fails "truncated .bai"               1 'bt\.bam.*index' out.vcf -f "$REF" "$W/bt.bam"

# A -R BED line with a negative start: bcftools refuses to parse it; htslib's region list
# would read it as starting at 1. The message names the file and the line.
printf 'ctgA\t100\t200\n# a comment\nctgA\t-5\t300\n' >"$W/negative.bed"
printf 'ctgA\t-5\t300\n' >"$W/negative.txt"
mp_fails "-R BED negative start"        2 'negative\.bed:3:.*-5' out.vcf -f "$REF" \
    -R "$W/negative.bed" "$S1"
mp_fails "-R BED negative start -@2 2k -Oz --write-index" 2 'negative\.bed:3:' out.vcf.gz \
    -Oz --write-index -@ 2 --shard-size 2k -f "$REF" -R "$W/negative.bed" "$S1"
mp_fails "-R tab file negative start"   2 'negative\.txt:1:.*-5' out.vcf -f "$REF" \
    -R "$W/negative.txt" "$S1"
# An interval that is no interval (reversed, empty, a start with a letter in it: the end
# then parses as the next column): bcftools walks or drops whole contigs, the other lines'
# intervals among them, by regidx's internals; refused with the file and line, -R and -T.
printf 'ctgA\t100\t200\nctgB\t5000\t4000\nctgB\t30000\t30010\n' >"$W/reversed.bed"
printf 'ctgA\t2000\t2000\nctgB\t30000\t30010\n' >"$W/empty.bed"
printf 'ctgA\t100\t200\nctgB\t10000b\t0\t+\n' >"$W/letter.bed"
printf 'ctgA\t300\t200\n' >"$W/reversed.txt"
mp_fails "-R BED reversed interval"     2 'reversed\.bed:2:.*ends \(4000\)' out.vcf -f "$REF" \
    -R "$W/reversed.bed" "$S1"
mp_fails "-R tab file reversed"         2 'reversed\.txt:1:.*ends \(200\) before .*\(300\)' \
    out.vcf -f "$REF" -R "$W/reversed.txt" "$S1"
mp_fails "-T BED empty interval"        1 'empty\.bed:1:' out.vcf -f "$REF" \
    -T "$W/empty.bed" "$S1"
mp_fails "-T BED start with a letter -@2 2k" 1 'letter\.bed:2:' out.vcf -@ 2 --shard-size 2k \
    -f "$REF" -T "$W/letter.bed" "$S1"

# An existing output survives a failed run: untouched, nothing added beside it.
mkdir -p "$W/keep"
printf 'precious results\n' >"$W/keep/out.vcf.gz"
cp -p "$W/keep/out.vcf.gz" "$W/keep.orig"
timeout "$SS_TIMEOUT" "$SEQSHARD" mpileup --quiet -Oz --write-index -@ 2 --shard-size 2k \
    -f "$REF" -o "$W/keep/out.vcf.gz" "$TD/garbled.bam" </dev/null >/dev/null 2>"$W/keep.err"
rc=$?
left=$(find "$W/keep" -mindepth 1 -maxdepth 1 ! -name out.vcf.gz -printf '%f ')
if [ $rc = 0 ] || [ $rc = 124 ]; then
    ss_bad "existing -o kept: garbled input" "exit status $rc, want a failure"
elif ! cmp -s "$W/keep.orig" "$W/keep/out.vcf.gz"; then
    ss_bad "existing -o kept: garbled input" "the existing output file was changed or removed"
elif [ -n "$left" ]; then
    ss_bad "existing -o kept: garbled input" "left files next to the output: $left"
else
    ss_ok "existing -o kept: garbled input"
fi

ss_summary
exit $?
