#!/usr/bin/env bash
# mpileup_homopolymer.sh -- two homopolymer indels where seqshard's alignment HMM once
# gave other numbers than htslib's probaln_glocal (its gap probabilities are floats, so
# its transitions are partly single precision), kept as a regression test on the reads
# around them (tests/data/homopolymer-indels: E. coli 536 windows hp1 = chrA:304348-305747,
# hp2 = chrA:466605-468004, dwgsim 2x150 at 30x/15x/15x, bwa mem):
#   - hp1:700 CTTTT>CTTT, three samples: the second sample's PL 0,36,245 (was 0,36,246);
#   - hp2:700 ATT>AT, one sample, -B: QS=0.0173482,0.982652 (was 0.0173697,0.98263);
#   - every record of `bcftools mpileup --no-version` (one sample, three; BAQ on and -B;
#     -a every tag) and of `bcftools mpileup | bcftools call -m` / `-mv`, at one shard and
#     at two per contig; `seqshard pileup` against `samtools mpileup` (BAQ on).
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_mpileup.sh"
ss_setup
mp_setup
W=$SS_WORK
H=$SS_SRC/tests/data/homopolymer-indels
R=(-f "$H/ref.fa")
S1=$H/s1.bam
ALL=("$H/s1.bam" "$H/s2.bam" "$H/s3.bam")
# one shard per contig; two (the smallest shard is 1 kb), on two threads
L="every 1:1g 2:1k"

# ---- the two records, pinned -----------------------------------------------------------------
# pinned NAME PATTERN ARGS...: seqshard mpileup's text has a line matching PATTERN
pinned() {
    local name=$1 pattern=$2
    shift 2
    ss_case_no=$((ss_case_no + 1))
    local got=$W/pin.$ss_case_no
    timeout "$SS_TIMEOUT" "$SEQSHARD" mpileup --quiet --no-version "$@" >"$got" 2>"$got.err" \
        </dev/null
    if grep -qE "$pattern" "$got"; then
        ss_ok "$name"
    else
        ss_bad "$name" "no line matches $pattern" "$(grep -E '^hp[12]	700	' "$got" | cut -c1-240)"
    fi
}
pinned "hp1:700 CTTTT>CTTT PL, three samples" \
    '^hp1	700	.	CTTTT	CTTT	.*PL	182,0,87	0,36,245	0,45,255$' "${R[@]}" "${ALL[@]}"
pinned "hp2:700 ATT>AT QS, one sample, -B" \
    '^hp2	700	.	ATT	AT	.*QS=0\.0173482,0\.982652;' -B "${R[@]}" "$S1"

# ---- every record against bcftools -----------------------------------------------------------
mp_vs "one sample"                   "$L" "${R[@]}" "$S1"
mp_vs "one sample, -B"               "$L" -B "${R[@]}" "$S1"
mp_vs "three samples"                "$L" "${R[@]}" "${ALL[@]}"
mp_vs "three samples, -B"            "$L" -B "${R[@]}" "${ALL[@]}"
mp_vs "three samples, every tag"     "$L" -a AD,ADF,ADR,DP,SP,SCR,QS,NMBZ "${R[@]}" "${ALL[@]}"

# ---- --call against the pipe -------------------------------------------------------------------
call_vs() { # NAME "CALL OPTS" MPILEUP ARGS...
    local name=$1 copts=$2
    shift 2
    ss_case_no=$((ss_case_no + 1))
    local exp=$W/call.exp.$ss_case_no got=$W/call.got.$ss_case_no
    # shellcheck disable=SC2086 # copts is a word list
    "$BCFTOOLS" mpileup --no-version -Ou "$@" 2>/dev/null |
        "$BCFTOOLS" call --no-version $copts >"$exp" 2>/dev/null
    # shellcheck disable=SC2086
    timeout "$SS_TIMEOUT" "$SEQSHARD" mpileup --no-version --quiet "$@" --call $copts \
        >"$got" 2>"$got.err" </dev/null
    if ! cmp -s "$exp" "$got"; then
        ss_bad "$name" "differs from bcftools mpileup | call"
        ss_show_diff "$exp" "$got"
    else
        ss_ok "$name"
    fi
}
call_vs "--call -m, three samples"   "-m"  "${R[@]}" "${ALL[@]}"
call_vs "--call -mv, three samples"  "-mv" "${R[@]}" "${ALL[@]}"
call_vs "--call -m, one sample, -B"  "-m"  -B "${R[@]}" "$S1"

# ---- pileup with BAQ against samtools mpileup ----------------------------------------------
ss_case_no=$((ss_case_no + 1))
exp=$W/pileup.exp got=$W/pileup.got
"$SAMTOOLS" mpileup "${R[@]}" "${ALL[@]}" >"$exp" 2>/dev/null
timeout "$SS_TIMEOUT" "$SEQSHARD" pileup --quiet "${R[@]}" -o "$got" "${ALL[@]}" </dev/null
if cmp -s "$exp" "$got"; then ss_ok "pileup, BAQ, three samples"; else
    ss_bad "pileup, BAQ, three samples" "differs from samtools mpileup"
    ss_show_diff "$exp" "$got"
fi

ss_summary
