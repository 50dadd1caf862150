#!/usr/bin/env bash
# mpileup_call.sh -- seqshard mpileup's gVCF blocks (-g) and calling in the same pass
# (--call) give the bytes of bcftools 1.16, with shard edges everywhere:
#   - `bcftools mpileup --no-version -g BOUNDS ARGS` against seqshard with the same,
#     blocks crossing shard edges (2k, 1k), one sample and three;
#   - `bcftools mpileup --no-version -Ou ARGS | bcftools call --no-version OPTS` against
#     `seqshard mpileup --no-version ARGS --call OPTS`: -mv, -m (every site), -c, -cv,
#     -mv -a GQ,GP, --ploidy 1, -G - (with -a AD,QS), -mv -A, -Oz after --call (decompressed,
#     with --write-index's .csi as bcftools index makes it), the deep contig;
#   - what --call refuses before any work (-g on either side, -C trio), one line, exit 2.
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
# call_vs NAME "CALL OPTS" LAYOUTS MPILEUP ARGS...
call_vs() {
    local name=$1 copts=$2 layouts=$3
    shift 3
    ss_case_no=$((ss_case_no + 1))
    local exp=$W/call.exp.$ss_case_no layout got
    # shellcheck disable=SC2086 # copts is a word list
    if ! "$BCFTOOLS" mpileup --no-version -Ou "$@" 2>/dev/null |
        "$BCFTOOLS" call --no-version $copts >"$exp" 2>"$exp.err"; then
        ss_bad "$name" "the bcftools pipe itself failed: the test is wrong" "$(head -2 "$exp.err")"
        return 0
    fi
    for layout in $layouts; do
        got=$W/call.got.$ss_case_no.${layout//:/.}
        # shellcheck disable=SC2086
        timeout "$SS_TIMEOUT" "$SEQSHARD" mpileup --no-version --quiet -@ "${layout%%:*}" \
            --shard-size "${layout#*:}" "$@" --call $copts >"$got" 2>"$got.err" </dev/null
        local rc=$?
        if [ $rc != 0 ]; then
            ss_bad "$name [-@${layout%%:*} ${layout#*:}]" "exit status $rc" "$(head -2 "$got.err")"
        elif ! cmp -s "$exp" "$got"; then
            ss_bad "$name [-@${layout%%:*} ${layout#*:}]" "differs from bcftools mpileup | call"
            ss_show_diff "$exp" "$got"
        else
            ss_ok "$name [-@${layout%%:*} ${layout#*:}] ($(grep -vc '^#' "$got") records)"
            rm -f "$got" "$got.err"
        fi
    done
}

call_vs "--call -mv"                "-mv"            "$L" "${R[@]}" "$TD/s1.bam"
call_vs "--call -m, three samples"  "-m"             "$L" "${R[@]}" "$TD/s1.bam" "$TD/s2.bam" "$TD/edge.bam"
call_vs "--call -c"                 "-c"             "$L" "${R[@]}" "$TD/s1.bam" "$TD/s2.bam"
call_vs "--call -cv"                "-cv"            "$L" "${R[@]}" "$TD/s1.bam" "$TD/s2.bam"
call_vs "--call -mv -a GQ,GP"       "-mv -a GQ,GP"   "$L" "${R[@]}" "$TD/s1.bam" "$TD/s2.bam"
call_vs "--call -mv -A"             "-mv -A"         "$L" "${R[@]}" "$TD/edge.bam" "$TD/s2.bam"
call_vs "--call -m --ploidy 1"      "-m --ploidy 1"  "$L" "${R[@]}" "$TD/s1.bam"
call_vs "--call -mv -G -"           "-mv -G -"       "$L" -a AD,QS "${R[@]}" "$TD/s1.bam" "$TD/s2.bam"
call_vs "--call -mv, deep contig"   "-mv"            "$L" -d 10000 -f "$AMP" "$TD/amp.bam"

# -Oz after --call names the output; --write-index gives bcftools index's .csi of it
exp=$W/calls.vcf.gz got=$W/ss.calls.vcf.gz
"$BCFTOOLS" mpileup --no-version -Ou "${R[@]}" "$TD/s1.bam" 2>/dev/null |
    "$BCFTOOLS" call --no-version -mv -Oz -o "$exp" 2>/dev/null
if ! "$SEQSHARD" mpileup --no-version --quiet -@ 2 --shard-size 2k "${R[@]}" "$TD/s1.bam" \
    --call -mv -Oz -o "$got" --write-index 2>"$W/oz.err"; then
    ss_bad "--call -mv -Oz --write-index" "failed" "$(head -2 "$W/oz.err")"
elif ! cmp -s <(gzip -dc "$exp") <(gzip -dc "$got"); then
    ss_bad "--call -mv -Oz --write-index" "decompressed output differs from the pipe's"
else
    cp "$got" "$W/copy.vcf.gz"
    "$BCFTOOLS" index "$W/copy.vcf.gz"
    if cmp -s "$W/copy.vcf.gz.csi" "$got.csi"; then
        ss_ok "--call -mv -Oz --write-index (.csi as bcftools index)"
    else
        ss_bad "--call -mv -Oz --write-index" "the .csi differs from bcftools index's"
    fi
fi

# ---- refusals: one line, exit 2, nothing written -------------------------------------------
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
refuse "--call -g"           "-g"     "${R[@]}" "$TD/s1.bam" --call -mv -g 5
refuse "-g with --call"      "-g with --call" -g 5 -a DP "${R[@]}" "$TD/s1.bam" --call -mv
refuse "--call -C trio"      "trio"   "${R[@]}" "$TD/s1.bam" --call -mv -C trio

ss_summary
exit $?
