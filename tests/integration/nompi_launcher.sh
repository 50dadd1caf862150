#!/usr/bin/env bash
# nompi_launcher.sh -- a seqshard built without MPI that a launcher starts as one of
# several processes (mpirun -np 2, srun -n 2) refuses at once, with one line from the
# launcher's rank 0 that says why and what to do, exit 2, and writes nothing: every copy
# would otherwise run the whole job as rank 0 and race the others for one output. One
# process (and a launcher's single rank) runs as usual. Builds with MPI skip (77).
set -u
. "$(dirname "$0")/lib.sh"
if [ "${SS_MPI:-1}" != 0 ]; then
    echo "SKIP: built with MPI (this checks the build without it)"
    exit 77
fi
ss_setup
cd "$SS_WORK" || exit 1

# refused NAME VAR=VALUE...: exit 2, the advice on stderr, no output file.
refused() {
    local name=$1 rc
    shift
    env "$@" "$SEQSHARD" pileup -o out.txt "$TD/s1.bam" >/dev/null 2>err.txt
    rc=$?
    if [ $rc = 2 ] && grep -q 'built without MPI.*one of 2 processes.*cmake -DSEQSHARD_MPI=ON' err.txt &&
        [ "$(wc -l <err.txt)" = 1 ] && [ ! -e out.txt ]; then
        ss_ok "$name"
    else
        ss_bad "$name" "exit $rc, expected 2 with one line of advice" "$(head -3 err.txt)" \
            "$(ls -A | tr '\n' ' ')"
    fi
    rm -f out.txt
}
refused "Open MPI's rank 0 of 2" OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=0
refused "srun --mpi=pmix rank 0 of 2" SLURM_STEP_NUM_TASKS=2 PMIX_RANK=0
refused "PMI rank 0 of 2" PMI_SIZE=2 PMI_RANK=0

# the other ranks stay quiet: rank 0 says it once for all
OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=1 "$SEQSHARD" pileup -o out.txt "$TD/s1.bam" \
    >/dev/null 2>err.txt
rc=$?
if [ $rc = 2 ] && [ ! -s err.txt ] && [ ! -e out.txt ]; then
    ss_ok "rank 1 of 2 exits 2 in silence"
else
    ss_bad "rank 1 of 2 exits 2 in silence" "exit $rc" "$(head -2 err.txt)"
fi

# one process, and a launcher's only rank, run as usual
"$SAMTOOLS" mpileup "$TD/s1.bam" 2>/dev/null >exp.txt
for envs in "X=1" "OMPI_COMM_WORLD_SIZE=1 OMPI_COMM_WORLD_RANK=0" "SLURM_NTASKS=4 SLURM_PROCID=0"; do
    # shellcheck disable=SC2086
    env $envs "$SEQSHARD" pileup --quiet -o got.txt "$TD/s1.bam" 2>err.txt
    if cmp -s exp.txt got.txt; then
        ss_ok "runs with $envs"
    else
        ss_bad "runs with $envs" "output differs from samtools mpileup" "$(head -2 err.txt)"
    fi
    rm -f got.txt
done

# a real launcher, when there is one
if command -v mpirun >/dev/null; then
    MPIRUN=(mpirun --oversubscribe -np 2)
    [ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
    timeout 60 "${MPIRUN[@]}" "$SEQSHARD" pileup -o out.txt "$TD/s1.bam" >/dev/null 2>err.txt
    if grep -q 'built without MPI' err.txt && [ "$(grep -c 'built without MPI' err.txt)" = 1 ] &&
        [ ! -e out.txt ]; then
        ss_ok "mpirun -np 2: refused once, nothing written"
    else
        ss_bad "mpirun -np 2: refused once, nothing written" "$(head -3 err.txt)"
    fi
fi
ss_summary
exit $?
