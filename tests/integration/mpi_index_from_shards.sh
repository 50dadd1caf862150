#!/usr/bin/env bash
# mpi_index_from_shards.sh -- index_from_shards.sh's cases on 1-3 ranks: each rank's
# pieces travel to rank 0, which merges them in shard order at the offsets the ranks
# wrote the shards at; the index has the tools' bytes whichever rank wrote a shard.
#
# Skipped (status 77) in a build without MPI (SS_MPI=0).
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_index.sh"
ss_mpi_setup

for np in 1 2 3; do
    LAUNCH=("${MPIRUN[@]}" -np "$np")
    idx_matrix "np$np" "1 2" "2000 1m"
done

ss_summary
exit $?
