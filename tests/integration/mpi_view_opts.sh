#!/usr/bin/env bash
# mpi_view_opts.sh -- view -c under mpirun adds up every rank's shards into the one
# number samtools view -c prints; -e, -s and -x give samtools' records across ranks.
#
# Skipped (status 77) in a build without MPI (SS_MPI=0).
set -u
. "$(dirname "$0")/lib.sh"
ss_mpi_setup
S1=$TD/s1.bam
W=$SS_WORK

ranks() { # NAME NP ARGS...: samtools view ARGS vs seqshard view under mpirun -np NP -o FILE
    local name=$1 np=$2
    shift 2
    "$SAMTOOLS" view "$@" "$S1" >"$W/exp"
    timeout "$SS_TIMEOUT" "${MPIRUN[@]}" -np "$np" "$SEQSHARD" view --quiet --bind none -@ 1 \
        --shard-size 3k -o "$W/got" "$@" "$S1" </dev/null >/dev/null 2>"$W/err"
    local rc=$?
    if [ $rc != 0 ]; then
        ss_bad "$name np=$np" "exit status $rc" "$(head -3 "$W/err")"
    elif ! cmp -s "$W/exp" "$W/got"; then
        ss_bad "$name np=$np" "differs from samtools view $(ss_quote "$@")"
        ss_show_diff "$W/exp" "$W/got"
    else
        ss_ok "$name np=$np"
    fi
}

for np in 2 3; do
    ranks "-c" "$np" -c
    ranks "-c -q 30 -e" "$np" -c -q 30 -e 'flag.paired'
done
ranks "-s 1.25 -x MD" 2 -s 1.25 -x MD

ss_summary
exit $?
