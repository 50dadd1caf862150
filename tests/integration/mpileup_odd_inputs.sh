#!/usr/bin/env bash
# mpileup_odd_inputs.sh -- inputs on which bcftools mpileup 1.16 aborts or crashes, and
# what seqshard mpileup writes instead (the user guide's deliberate differences):
#   - reads without a sequence (SEQ '*', valid BAM; bcftools aborts): left out, so the
#     records are bcftools' on the same file without them (seqstar_reads.py), at one
#     shard and with shard edges everywhere, with every tag, with -B and with -Q 0;
#   - an empty -R file, or one of comments and blank lines only (bcftools crashes): it
#     selects nothing, so the output is the header alone (-Ov, and -Oz decompressed).
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_mpileup.sh"
ss_setup
mp_setup
W=$SS_WORK

# ---- reads without a sequence ------------------------------------------------------------
python3 "$SS_SRC/tests/integration/seqstar_reads.py" "$REF" "$W/with.sam" "$W/without.sam" ||
    { echo "FAIL setup: seqstar_reads.py"; exit 1; }
for n in with without; do
    "$SAMTOOLS" sort -o "$W/$n.bam" "$W/$n.sam" 2>/dev/null && "$SAMTOOLS" index "$W/$n.bam" ||
        { echo "FAIL setup: samtools sort/index $n.sam"; exit 1; }
done

# seqstar NAME ARGS...: seqshard mpileup ARGS with.bam gives bcftools' ARGS without.bam
seqstar() {
    local name=$1 layout got what
    shift
    ss_case_no=$((ss_case_no + 1))
    local exp=$W/exp.$ss_case_no
    mp_bcftools "$exp" "$@" "$W/without.bam" || return 0
    for layout in 1:1g 2:1k; do
        got=$W/got.$ss_case_no.${layout//:/.}
        what="SEQ * reads left out: $name [$(mp_layout_name "$layout")]"
        if ! mp_seqshard "$got" "$layout" "$@" "$W/with.bam"; then
            ss_bad "$what" "$mp_why" "seqshard: $(ss_quote "${mp_cmd[@]}")" \
                "stderr: $(head -3 "$got.err" | cut -c1-240)"
        elif ! cmp -s "$exp" "$got"; then
            ss_bad "$what" "output differs from bcftools on the file without them" \
                "seqshard: $(ss_quote "${mp_cmd[@]}")"
            ss_show_diff "$exp" "$got"
        else
            ss_ok "$what"
        fi
    done
}
TAGS=AD,ADF,ADR,DP,SP,SCR,NMBZ,INFO/AD,INFO/ADF,INFO/ADR,INFO/SCR
seqstar "default" -f "$REF"
seqstar "-a every tag" -f "$REF" -a "$TAGS"
seqstar "-B -Q 0 -a every tag" -f "$REF" -B -Q 0 -a "$TAGS"
seqstar "--no-reference" --no-reference -a "$TAGS"

# ---- an -R file that names no region -----------------------------------------------------
S1=$TD/s1.bam
: >"$W/empty.txt"
printf '# no regions here\n\n#ctgA\t100\t200\n' >"$W/comments.bed"
# the header alone: bcftools' output for a contig without reads, its records dropped
mp_bcftools "$W/header.vcf" -f "$REF" -r ctgEmpty "$S1" || true
for f in empty.txt comments.bed; do
    for layout in 1:1g 2:2k; do
        got=$W/got.$f.${layout//:/.}
        what="-R $f: the header alone [$(mp_layout_name "$layout")]"
        if ! mp_seqshard "$got" "$layout" -f "$REF" -R "$W/$f" "$S1"; then
            ss_bad "$what" "$mp_why" "seqshard: $(ss_quote "${mp_cmd[@]}")" \
                "stderr: $(head -3 "$got.err" | cut -c1-240)"
        elif ! cmp -s "$W/header.vcf" "$got"; then
            ss_bad "$what" "not the header alone" "seqshard: $(ss_quote "${mp_cmd[@]}")"
            ss_show_diff "$W/header.vcf" "$got"
        else
            ss_ok "$what"
        fi
    done
done
got=$W/got.empty.vcf.gz
if ! mp_seqshard "$got" 2:2k -Oz -f "$REF" -R "$W/empty.txt" "$S1"; then
    ss_bad "-R empty.txt -Oz" "$mp_why" "seqshard: $(ss_quote "${mp_cmd[@]}")"
elif ! gzip -dc "$got" | cmp -s "$W/header.vcf" -; then
    ss_bad "-R empty.txt -Oz" "does not decompress to the header alone" \
        "seqshard: $(ss_quote "${mp_cmd[@]}")"
else
    ss_ok "-R empty.txt -Oz"
fi

ss_summary
exit $?
