#!/usr/bin/env bash
# mpi_cohort.sh -- a thousand inputs (lib_cohort.sh) under mpirun -np 2, one thread per
# rank, unbound: samtools mpileup's bytes, at the default limit and at ulimit -n 64.
#
# Skipped (status 77) in a build without MPI (SS_MPI=0).
set -u
. "$(dirname "$0")/lib.sh"
if [ "${SS_MPI:-1}" = 0 ]; then
    echo "SKIP: built without MPI"
    exit 77
fi
ss_setup
command -v mpirun >/dev/null || { echo "FAIL setup: mpirun not found"; exit 1; }
. "$(dirname "$0")/lib_cohort.sh"
cohort_make || { ss_summary; exit 1; }

MPIRUN=(mpirun --oversubscribe --bind-to none)
[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
export OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
W=$SS_WORK

# run NAME LIMIT: two ranks on the cohort, shards of 4 MB of output so both get some.
run() {
    local name=$1 limit=$2
    (ulimit -n "$limit" && exec timeout "$SS_TIMEOUT" "${MPIRUN[@]}" -x SEQSHARD_SHARD_OUTPUT=4m \
        -np 2 "$SEQSHARD" pileup --quiet --bind none -@ 1 "${COHORT_ARGS[@]}" \
        -b "$COHORT_LIST" -o "$W/got.txt") </dev/null >"$W/log" 2>"$W/err"
    ss_rc=$?
    cohort_check "$name" "$W/got.txt" "$W/err"
}

run "np=2 -@1, $COHORT_N inputs" 4096
run "np=2 -@1, $COHORT_N inputs at ulimit -n 64" 64

ss_summary
exit $?
