#!/usr/bin/env bash
# mpi_markdup.sh -- seqshard markdup under mpirun: 2 and 3 ranks, shards of
# 2 kb, give samtools markdup's records and -f statistics, with -S (the
# duplicates' names travel between ranks before the run) and without.
#
# Skipped (status 77) in a build without MPI (SS_MPI=0).
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_markdup.sh"
ss_mpi_setup
W=$SS_WORK
md_input "$W" || { ss_bad input "cannot make the input"; ss_summary; exit 1; }

for opts in "-S -t -d 100" "-r"; do
    # shellcheck disable=SC2086  # the options are words
    "$SAMTOOLS" markdup $opts -f "$W/ref.stats" "$W/in.bam" "$W/ref.bam" 2>/dev/null
    for np in 2 3; do
        # shellcheck disable=SC2086
        timeout "$SS_TIMEOUT" "${MPIRUN[@]}" -np $np "$SEQSHARD" markdup --quiet -@ 2 \
            --shard-size 2k $opts -f "$W/out.stats" "$W/in.bam" "$W/out.bam" \
            </dev/null >/dev/null 2>"$W/err" ||
            { ss_bad "$opts -np $np" "exit status $?" "$(head -2 "$W/err")"; continue; }
        md_same "markdup $opts, $np ranks" "$W/ref.bam" "$W/ref.stats" "$W/out.bam" "$W/out.stats"
        rm -f "$W/out.bam" "$W/out.stats"
    done
done
ss_summary
exit $?
