#!/usr/bin/env bash
# mpi_depth.sh -- seqshard depth under mpirun: samtools depth's bytes at 1-3 ranks,
# 1-2 threads and shard sizes 2k, 7k and whole contigs, with -a, -aa, -s and several
# inputs; .gz output and its index the same whatever the ranks.
#
# The defaults run the full threads x shard-size matrix at two ranks; at three ranks
# (a middle rank) the small shards at both thread counts and whole contigs; at one rank
# one cell, the launch itself (one rank runs its shards as one process does, and
# depth_vs_samtools.sh runs that matrix). The other option sets run one cell each in make
# test, taken in turn, and the whole matrix in make test-long (SS_SWEEP=full).
#
# Skipped (status 77) in a build without MPI (SS_MPI=0).
set -u
. "$(dirname "$0")/lib.sh"
ss_mpi_setup
W=$SS_WORK
S1=$TD/s1.bam S2=$TD/s2.bam

check() { # NAME EXPECTED NP ARGS...
    local name=$1 exp=$2 np=$3
    shift 3
    timeout "$SS_TIMEOUT" "${MPIRUN[@]}" -np "$np" "$SEQSHARD" depth --bind none --quiet \
        -o "$W/got.txt" "$@" </dev/null >"$W/log" 2>"$W/err"
    local rc=$?
    if [ $rc != 0 ]; then
        ss_bad "$name" "exit status $rc" "$(head -3 "$W/err")"
    elif ! cmp -s "$exp" "$W/got.txt"; then
        ss_bad "$name" "output differs from samtools depth"
        ss_show_diff "$exp" "$W/got.txt"
    else
        ss_ok "$name"
    fi
    rm -f "$W/got.txt"
}

for opts in "" "-a" "-aa -s" "-a -J -q 20 -Q 10"; do
    # shellcheck disable=SC2086  # options split on purpose
    "$SAMTOOLS" depth $opts "$S1" "$S2" "$TD/edge.bam" >"$W/exp.txt"
    # the whole matrix for the defaults; make test takes one cell per other option set
    # (make test-long all of them)
    cells="1/2:7k 2/1:2k 2/1:7k 2/1:1g 2/2:2k 2/2:7k 2/2:1g 3/1:2k 3/2:2k 3/1:1g"
    if [ -z "$opts" ]; then ss_sweep "every $cells"; else ss_sweep "$cells"; fi
    for run in $SWEEP; do
        np=${run%%/*} t=${run#*/} t=${t%%:*} s=${run#*:}
        # shellcheck disable=SC2086
        check "np=$np -@$t $s [$opts]" "$W/exp.txt" "$np" -@ "$t" --shard-size "$s" \
            $opts "$S1" "$S2" "$TD/edge.bam"
    done
done
"$SAMTOOLS" depth -a -r ctgB:20000-40000 -b "$TD/regions.bed" "$S1" >"$W/exp.txt"
check "np=3 -r -b" "$W/exp.txt" 3 -@ 1 --shard-size 2k -a -r ctgB:20000-40000 \
    -b "$TD/regions.bed" "$S1"

# .gz: one file and one index whatever the ranks
"$SEQSHARD" depth -@ 2 --shard-size 5k --quiet -a -o "$W/one.gz" "$S1" "$S2"
timeout "$SS_TIMEOUT" "${MPIRUN[@]}" -np 3 "$SEQSHARD" depth --bind none -@ 1 --shard-size 5k \
    --quiet -a -o "$W/three.gz" "$S1" "$S2" </dev/null >/dev/null 2>"$W/err"
if cmp -s "$W/one.gz" "$W/three.gz" && cmp -s "$W/one.gz.tbi" "$W/three.gz.tbi"; then
    ss_ok ".gz and .tbi the same with 1 and 3 ranks"
else
    ss_bad ".gz" "differs between 1 process and 3 ranks" "$(head -2 "$W/err")"
fi
ss_summary
exit $?
