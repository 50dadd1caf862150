#!/usr/bin/env bash
# mpi_pileup_realign.sh -- `seqshard pileup --realign` gives exactly the bytes of
# the two-step pipeline: `seqshard realign` of each input to a BAM, then
# `samtools mpileup` of those BAMs, for pileup's option sets (BAQ on and off, -a,
# -aa, -l, -r, -d, -x, extra columns), BAM and CRAM, several inputs, at threads
# 1-3, shard sizes 2k to a whole contig, and ranks 1-3.
set -u
. "$(dirname "$0")/lib.sh"
ss_setup
W=$SS_WORK
S1=$TD/s1.bam S2=$TD/s2.bam CRAM=$TD/s1.cram

# The realigned BAMs the two-step pipeline reads (realign's output is the same at any scale)
for in in s1 s2; do
    "$SEQSHARD" realign --quiet -f "$REF" -o "$W/$in.r.bam" "$TD/$in.bam" ||
        { echo "FAIL setup: seqshard realign $in failed"; exit 1; }
    "$SAMTOOLS" index "$W/$in.r.bam"
done

# same NAME "MPILEUP OPTIONS" INPUT_SET "RUN OPTIONS" [LAUNCHER...]: one pass against two
# steps; LAUNCHER (mpirun ...) goes before the program, RUN OPTIONS after "pileup"
same() {
    local name=$1 opts=$2 set=$3 run=$4
    shift 4
    local ins=("$S1") rins=("$W/s1.r.bam")
    [ "$set" = two ] && ins=("$S1" "$S2") rins=("$W/s1.r.bam" "$W/s2.r.bam")
    [ "$set" = cram ] && ins=("$CRAM")
    ss_case_no=$((ss_case_no + 1))
    # samtools' side depends on the options and inputs alone: made once for all scales
    local exp got=$W/got.$ss_case_no
    exp=$W/exp.$(printf '%s' "$set.$opts" | tr -c 'A-Za-z0-9.' _)
    if [ ! -f "$exp" ]; then
        # shellcheck disable=SC2086 # opts is a word list
        if ! "$SAMTOOLS" mpileup $opts "${rins[@]}" >"$exp.tmp" 2>"$W/exp.err"; then
            ss_bad "$name" "samtools mpileup failed: the test is wrong" "$(head -2 "$W/exp.err")"
            return
        fi
        mv "$exp.tmp" "$exp"
    fi
    # shellcheck disable=SC2086
    timeout "$SS_TIMEOUT" "$@" "$SEQSHARD" pileup --quiet $run --realign -f "$REF" $opts \
        -o "$got" "${ins[@]}" 2>"$W/err" </dev/null
    local rc=$?
    if [ $rc != 0 ]; then
        ss_bad "$name" "exit status $rc" "$(head -2 "$W/err")"
    elif cmp -s "$exp" "$got"; then
        ss_ok "$name"
    else
        ss_bad "$name" "differs from seqshard realign + samtools mpileup"
        ss_show_diff "$exp" "$got"
    fi
}

SETS=("-B" "" "-B -a" "-B -aa" "-B -l $TD/regions.bed" "-B -r ctgA:1500-9000" "-d 50 -B"
    "-x -B" "-B -s -O --output-QNAME --output-extra FLAG,POS,NM" "-B -Q 20 -q 30")
for opts in "${SETS[@]}"; do
    for t in 1 3; do
        for s in 2k 50k 1g; do
            same "'$opts' -@$t --shard-size $s" "-f $REF $opts" one "-@ $t --shard-size $s"
        done
    done
done
# two inputs, each realigned on its own; CRAM input
same "two inputs -B -@2 7k" "-f $REF -B" two "-@ 2 --shard-size 7k"
same "two inputs BAQ -@3 2k" "-f $REF" two "-@ 3 --shard-size 2k"
same "CRAM -B -@2 7k" "-f $REF -B" cram "-@ 2 --shard-size 7k"

if [ "${SS_MPI:-1}" != 0 ] && command -v mpirun >/dev/null; then
    MPIRUN=(mpirun --oversubscribe --bind-to none)
    [ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
    export OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
    for np in 1 2 3; do
        same "mpirun -np $np -B 7k" "-f $REF -B" two "--bind none -@ 1 --shard-size 7k" \
            "${MPIRUN[@]}" -np "$np"
    done
fi
ss_summary
exit $?
