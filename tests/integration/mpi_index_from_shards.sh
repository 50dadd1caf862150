#!/usr/bin/env bash
# mpi_index_from_shards.sh -- index_from_shards.sh's cases (BAM, SAM.gz, text .gz, CRAM
# .crai, mpileup's BCF/VCF.gz) on 1-3 ranks, SAM.gz also spilled: each rank's
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
