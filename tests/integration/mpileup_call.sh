#!/usr/bin/env bash
# mpileup_call.sh -- seqshard mpileup's gVCF blocks (-g) and calling in the same pass
# (--call) give the bytes of bcftools 1.16, with shard edges everywhere:
#   - `bcftools mpileup --no-version -g BOUNDS ARGS` against seqshard with the same,
#     blocks crossing shard edges (2k, 1k), one sample and three;
#   - `bcftools mpileup --no-version -Ou ARGS | bcftools call --no-version OPTS` against
#     `seqshard mpileup --no-version ARGS --call OPTS`: -mv, -m (every site), -c, -cv,
#     -mv -a GQ,GP, --ploidy 1, -G - (with -a AD,QS), -mv -A, -Oz after --call (decompressed,
#     with --write-index's .csi as bcftools index makes it, and --write-index=tbi's .tbi as
#     bcftools index -t makes it), the deep contig;
#   - what --call refuses before any work (mpileup's -g with --call, call's -g without
#     FORMAT/DP or with -c or -v, -C trio, -C alleles without -T or with -c or without an
#     alleles column, -i without -C alleles or with -g, a targets file that cannot be opened
#     or read), one line, exit 2; -i with --write-index, with a targets contig the header
#     lacks, or with a call at POS 1, one line, exit 1;
# (-T, -t and -C alleles, the sites and alleles to call: mpileup_call_targets.sh.)
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_mpileup.sh"
ss_setup
mp_setup
W=$SS_WORK
L="1:1g 3:1k"
R=(-f "$REF")

# ---- gVCF blocks -------------------------------------------------------------------------
mp_vs "-g 0,5,10 s1.bam"              "$L" -g 0,5,10 "${R[@]}" "$TD/s1.bam"
mp_vs "-g 1,3,20,50 three samples"    "$L" -g 1,3,20,50 "${R[@]}" "$TD/s1.bam" "$TD/s2.bam" "$TD/edge.bam"
mp_vs "-g 10 -r ctgA:1500-9000"       "$L" -g 10 -r ctgA:1500-9000 "${R[@]}" "$TD/s1.bam" "$TD/edge.bam"
# a block that closes past a shard's end where the closing record starts another block
mp_vs "-g 5,10 edge.bam -Ou"          "1:1g 2:2k 1:14k" -g 5,10 -Ou "${R[@]}" "$TD/edge.bam"

# ---- --call against the pipe ---------------------------------------------------------------
. "$(dirname "$0")/lib_call.sh"


call_vs "--call -mv"                "-mv"            "$L" "${R[@]}" "$TD/s1.bam"
call_vs "--call -m, three samples"  "-m"             "$L" "${R[@]}" "$TD/s1.bam" "$TD/s2.bam" "$TD/edge.bam"
call_vs "--call -c"                 "-c"             "$L" "${R[@]}" "$TD/s1.bam" "$TD/s2.bam"
call_vs "--call -cv"                "-cv"            "$L" "${R[@]}" "$TD/s1.bam" "$TD/s2.bam"
call_vs "--call -mv -a GQ,GP"       "-mv -a GQ,GP"   "$L" "${R[@]}" "$TD/s1.bam" "$TD/s2.bam"
call_vs "--call -mv -A"             "-mv -A"         "$L" "${R[@]}" "$TD/edge.bam" "$TD/s2.bam"
call_vs "--call -m --ploidy 1"      "-m --ploidy 1"  "$L" "${R[@]}" "$TD/s1.bam"
call_vs "--call -mv -G -"           "-mv -G -"       "$L" -a AD,QS "${R[@]}" "$TD/s1.bam" "$TD/s2.bam"
call_vs "--call -mv, deep contig"   "-mv"            "$L" -d 10000 -f "$AMP" "$TD/amp.bam"
# the caller's gVCF blocks (--call -g): reference calls with their GT, blocks across shard
# edges (1k, 1.5k, 2k), haploid and three samples, within a region and at -T's sites
LG="1:1g 3:1k 2:2k 1:1500"
call_vs "--call -m -g 5,10,20"      "-m -g 5,10,20"  "$LG" -a DP "${R[@]}" "$TD/s1.bam" "$TD/s2.bam"
call_vs "--call -m -g 0,5,10 edge"  "-m -g 0,5,10"   "$LG" -a DP "${R[@]}" "$TD/edge.bam"
call_vs "--call -m -g -A, three"    "-m -g 1,3,20,50 -A" "$LG" -a DP,AD "${R[@]}" "$TD/s1.bam" "$TD/s2.bam" "$TD/edge.bam"
call_vs "--call -m -g --ploidy 1 -a GQ" "-m -g 3 --ploidy 1 -a GQ" "$LG" -a FORMAT/DP "${R[@]}" "$TD/s1.bam" "$TD/edge.bam"
call_vs "--call -m -g, -r"          "-m -g 10"       "$LG" -a DP -r ctgA:1500-9000 "${R[@]}" "$TD/s1.bam"
call_vs "--call -m -g, deep contig" "-m -g 100,1000" "1:1g 2:1k" -a DP -d 10000 -f "$AMP" "$TD/amp.bam"

tbi_vs() { # name seqshard-args...
    local name=$1 got=$W/tbi.vcf.gz
    shift
    rm -f "$got" "$got.tbi" "$W/tbi.copy.vcf.gz"*
    if ! "$SEQSHARD" mpileup --no-version --quiet -@ 3 --shard-size 1k "$@" -o "$got" \
        2>"$W/tbi.err"; then
        ss_bad "$name" "failed" "$(head -2 "$W/tbi.err")"
        return
    fi
    cp "$got" "$W/tbi.copy.vcf.gz"
    "$BCFTOOLS" index -t "$W/tbi.copy.vcf.gz"
    if [ -e "$got.csi" ] || ! cmp -s "$W/tbi.copy.vcf.gz.tbi" "$got.tbi"; then
        ss_bad "$name" "want only a .tbi, the one bcftools index -t makes"
    else
        ss_ok "$name (.tbi as bcftools index -t)"
    fi
}
tbi_vs "--call -mv -Oz --write-index=tbi" "${R[@]}" "$TD/s1.bam" --call -mv -Oz --write-index=tbi
tbi_vs "-Oz --write-index=tbi"            --write-index=tbi -Oz "${R[@]}" "$TD/s1.bam" "$TD/s2.bam"

# ---- refusals: one line, exit 2, nothing written -------------------------------------------
# the sites (CHROM POS) and alleles (CHROM POS REF,ALT) of dwgsim's variants
TGT=$W/targets.tsv TAL=$W/alleles.tsv
awk '!/^#/ {print $1 "\t" $2}' "$TD/s1.bam.mutations.vcf" >"$TGT"
awk '!/^#/ {print $1 "\t" $2 "\t" $4 "," $5}' "$TD/s1.bam.mutations.vcf" >"$TAL"
refuse() { # name expected-text args...
    local name=$1 want=$2
    shift 2
    "$SEQSHARD" mpileup "$@" -o "$W/refused.vcf" >"$W/r.out" 2>"$W/r.err"
    local rc=$?
    if [ $rc != 2 ]; then
        ss_bad "$name" "exit status $rc, want 2" "$(head -2 "$W/r.err")"
    elif ! grep -q -- "$want" "$W/r.err" || [ "$(wc -l <"$W/r.err")" != 1 ]; then
        ss_bad "$name" "want one line mentioning '$want'" "$(head -3 "$W/r.err")"
    elif [ -e "$W/refused.vcf" ]; then
        ss_bad "$name" "an output file was left"
    else
        ss_ok "$name"
    fi
}
refuse "--call -g without FORMAT/DP" "FORMAT/DP" "${R[@]}" "$TD/s1.bam" --call -m -g 5
refuse "--call -c -g"        "-c calling mode" -a DP "${R[@]}" "$TD/s1.bam" --call -c -g 5
refuse "--call -v -g"        "--variants-only and --gvcf" -a DP "${R[@]}" "$TD/s1.bam" --call -mv -g 5
refuse "--call -g 5,x"       "could not parse --gvcf" -a DP "${R[@]}" "$TD/s1.bam" --call -m -g 5,x
refuse "-g with --call"      "-g with --call" -g 5 -a DP "${R[@]}" "$TD/s1.bam" --call -mv
refuse "--call -C trio"      "trio"   "${R[@]}" "$TD/s1.bam" --call -mv -C trio
refuse "--call -C alleles without -T" "expected -t or -T" "${R[@]}" "$TD/s1.bam" --call -m -C alleles
refuse "--call -c -C alleles" "requires -m" "${R[@]}" "$TD/s1.bam" --call -c -C alleles -T "$TAL"
refuse "--call -C alleles, no alleles column" "third column" "${R[@]}" "$TD/s1.bam" \
    --call -m -C alleles -T "$TGT"
refuse "--call -i without -C alleles" "requires -C alleles" "${R[@]}" "$TD/s1.bam" --call -m -T "$TAL" -i
refuse "--call -i -g"        "-i with -g" -a DP "${R[@]}" "$TD/s1.bam" --call -m -C alleles -T "$TAL" -i -g 5
# -i refused once the inputs are known: --write-index (the end is out of order), a targets
# contig the header lacks (bcftools fails writing it), a call at POS 1 (bcftools' window
# before it wraps around); one line, a non-zero exit, no output
at1_sam() { # three reads of ctgA from POS 1, one with a C at POS 1
    local seq
    seq=$("$SAMTOOLS" faidx "$REF" ctgA:1-50 | tail -n +2 | tr -d '\n')
    "$SAMTOOLS" view -H "$TD/s1.bam"
    for i in 1 2 3; do
        printf 'r%d\t0\tctgA\t1\t60\t50M\t*\t0\t0\t%s\t%s\n' "$i" \
            "$([ $i = 1 ] && echo "C${seq:1}" || echo "$seq")" "$(printf 'I%.0s' $(seq 50))"
    done
}
at1_sam | "$SAMTOOLS" sort -o "$W/at1.bam" - 2>/dev/null && "$SAMTOOLS" index "$W/at1.bam"
printf 'ctgA\t1\t%s,C\n' "$("$SAMTOOLS" faidx "$REF" ctgA:1-1 | tail -1)" >"$W/at1.tsv"
printf 'ctgA\t500\tT,G\nctgNone\t5\tA,C\n' >"$W/none.tsv"
# refuse_late NAME WANT LINES ARGS...: seqshard mpileup ARGS fails naming WANT in LINES lines
# (a caller's stop: its line and the run's, as for a wrong REF), leaving no output
refuse_late() {
    local name=$1 want=$2 lines=$3
    shift 3
    rm -f "$W/refused.vcf.gz" "$W/refused.vcf.gz.csi"
    "$SEQSHARD" mpileup --quiet "${R[@]}" -o "$W/refused.vcf.gz" "$@" 2>"$W/r.err"
    local rc=$?
    if [ $rc = 0 ] || ! grep -q -- "$want" "$W/r.err" || [ "$(grep -vc '^Note:' "$W/r.err")" != "$lines" ] ||
        [ -e "$W/refused.vcf.gz" ]; then
        ss_bad "$name" "want a non-zero exit, $lines line(s) naming '$want', no output (rc $rc)" \
            "$(head -3 "$W/r.err")"
    else
        ss_ok "$name"
    fi
}
refuse_late "--call -i --write-index" "--write-index" 1 --write-index "$TD/s1.bam" \
    --call -m -C alleles -T "$TAL" -i -Oz
refuse_late "--call -i, a contig not in the header" "ctgNone" 1 "$TD/s1.bam" \
    --call -m -C alleles -T "$W/none.tsv" -i
refuse_late "--call -i, a call at POS 1" "POS 1" 2 "$W/at1.bam" --call -m -C alleles -T "$W/at1.tsv" -i
# a target whose REF is not the reference's stops the run, as bcftools stops
printf 'ctgA\t446\tG,T\n' >"$W/badref.tsv"
"$SEQSHARD" mpileup --quiet "${R[@]}" "$TD/s1.bam" -o "$W/refused.vcf" \
    --call -m -C alleles -T "$W/badref.tsv" 2>"$W/r.err"
rc=$?
if [ $rc = 0 ] || ! grep -q "not compatible at ctgA:446" "$W/r.err" || [ -e "$W/refused.vcf" ]; then
    ss_bad "--call -C alleles, a wrong REF" "want exit 1 naming ctgA:446, no output (rc $rc)" \
        "$(head -2 "$W/r.err")"
else
    ss_ok "--call -C alleles, a wrong REF"
fi
if "$SEQSHARD" mpileup "${R[@]}" "$TD/s1.bam" --call -mv -Ob -o "$W/refused.bcf" \
    --write-index=tbi 2>"$W/r.err" || ! grep -q "needs -Oz" "$W/r.err" || [ -e "$W/refused.bcf" ]; then
    ss_bad "--write-index=tbi -Ob" "want a refusal naming -Oz, no output" "$(head -2 "$W/r.err")"
else
    ss_ok "--write-index=tbi -Ob"
fi
refuse "--write-index=bai"   "give csi or tbi" "${R[@]}" "$TD/s1.bam" --call -mv -Oz --write-index=bai
refuse "--call -t REGION"    "cannot open the targets file ctgA:100" "${R[@]}" "$TD/s1.bam" \
    --call -m -t ctgA:100
printf 'ctgA\t100\nctgA\n' >"$W/bad.tsv"
refuse "--call -T, a line without POS" "line 2" "${R[@]}" "$TD/s1.bam" --call -m -T "$W/bad.tsv"

ss_summary
exit $?
