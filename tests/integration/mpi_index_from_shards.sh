#!/usr/bin/env bash
# mpi_index_from_shards.sh -- index_from_shards.sh's cases (BAM, SAM.gz, text .gz, CRAM
# .crai, mpileup's BCF/VCF.gz) on 2 and 3 ranks, SAM.gz also spilled: each rank's
# pieces travel to rank 0, which merges them in shard order at the offsets the ranks
# wrote the shards at; the index has the tools' bytes whichever rank wrote a shard.
# One rank merges its own pieces as one process does: index_from_shards.sh covers that.
#
# Skipped (status 77) in a build without MPI (SS_MPI=0).
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_index.sh"
ss_mpi_setup

# Two ranks: every kind at 1-2 threads, 2 kb shards and whole contigs.
LAUNCH=("${MPIRUN[@]}" -np 2)
idx_matrix np2 "1 2" "2000 1m"
# Three ranks put a middle rank between the first and the last; 2 kb shards cross ranks
# most often, so that is where a hand-off could slip. Threads and whole contigs change
# nothing in how the pieces travel: the two-rank matrix has them.
LAUNCH=("${MPIRUN[@]}" -np 3)
idx_matrix np3 "2" "2000"

# SAM.gz shards that leave memory mid-line on each rank before their pieces travel.
W=$SS_WORK
export SEQSHARD_SPILL_AT=64k
for np in 2 3; do
    LAUNCH=("${MPIRUN[@]}" -x SEQSHARD_SPILL_AT -np "$np")
    idx_check "spill_view_samgz_csi.np$np" csi "$W/s.sam.gz" "$W/s.sam.gz.csi" \
        view -@ 2 --write-index -o "$W/s.sam.gz" "$TD/s1.bam"
done
unset SEQSHARD_SPILL_AT

# Rank 0 refuses a piece (a read past a .bai's 2^29): every rank fails, nothing is left.
idx_big_bam "$W/big.bam"
timeout "$SS_TIMEOUT" "${MPIRUN[@]}" -np 3 "$SEQSHARD" view -b --write-index --quiet \
    --shard-size 1m -o "$W/bigout.bam##idx##$W/bigout.bai" "$W/big.bam" </dev/null \
    >/dev/null 2>"$W/big.err"
rc=$?
if [ $rc = 1 ] && grep -q '2^29' "$W/big.err" && [ ! -e "$W/bigout.bam" ] &&
    [ ! -e "$W/bigout.bai" ]; then
    ss_ok mpi_bai_limit
else
    ss_bad mpi_bai_limit "status $rc" "$(head -3 "$W/big.err")"
fi

ss_summary
exit $?
