#!/usr/bin/env bash
# slurm_jobs.sh -- the scripts in slurm/ on a real (single-node) Slurm cluster.
#
# Starts munged + slurmctld + slurmd with scripts/slurm-cluster.sh, submits
#   slurm/seqshard.sbatch         (srun --mpi=pmix)
#   slurm/seqshard-mpirun.sbatch  (mpirun)
#   slurm/seqshard-array.sbatch   (a 3-sample array, one sample missing, plus the
#                                  summary job scripts/slurm-array-summary.sh)
#   slurm/seqshard.sbatch         on a missing input (must fail)
#   slurm/seqshard.sbatch         requeued part way (the second attempt must resume)
# with a time limit each, waits for them (at most SS_SLURM_WAIT seconds, default 180),
# and checks: outputs byte-identical to a single-process `seqshard pileup` and to
# `samtools mpileup`; reports beside the outputs; node-local scratch left empty; the
# failing job and task have a non-zero exit code and their logs say why; the summary
# names the failed task. The daemons are stopped in every outcome (trap). Runs from
# several checkouts on one machine take turns (a lock beside SS_SLURM_DIR).
#
# Jobs run 2 MPI ranks when `srun --mpi=pmix -n 2 seqshard --version` works and reports
# MPI, otherwise 1 (a build without MPI). On a machine with fewer sockets than ranks the
# ranks share a socket (--ntasks-per-socket overridden); each gets CPUs/ranks CPUs.
#
# Needs root and Debian's slurmctld slurmd slurm-client munge (scripts/install-deps.sh
# --test installs them). Not root, or the packages missing and not installable: prints
# "SKIP: ..." with the reason and exits 77 (ctest: skipped).
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_markdup.sh"

SLURM_PKGS=(slurmctld slurmd slurm-client munge)
# the daemons live in /usr/sbin, which a user's PATH often leaves out
PATH=$PATH:/usr/sbin:/sbin
SS_SLURM_WAIT=${SS_SLURM_WAIT:-180}

have_slurm() {
    local t
    for t in munged munge slurmctld slurmd sbatch srun squeue scontrol sinfo scancel; do
        command -v "$t" >/dev/null 2>&1 || return 1
    done
}

# ---- root, and the packages: install when missing (root), SKIP when that is impossible ----
if [ "$(id -u)" != 0 ]; then
    if have_slurm; then
        echo "SKIP: starting munged/slurmctld/slurmd needs root (the Slurm packages are" \
            "installed); as root: make test, or ctest -R integration_slurm_jobs"
    else
        echo "SKIP: starting munged/slurmctld/slurmd needs root, and Slurm is not installed" \
            "(as root: apt-get install --no-install-recommends ${SLURM_PKGS[*]})"
    fi
    exit 77
fi
if ! have_slurm; then
    if command -v apt-get >/dev/null 2>&1; then
        echo "slurm_jobs: installing ${SLURM_PKGS[*]} (apt-get, --no-install-recommends)"
        export DEBIAN_FRONTEND=noninteractive
        timeout 300 apt-get install -y -q --no-install-recommends "${SLURM_PKGS[@]}" \
            </dev/null >/dev/null 2>&1 \
            || { timeout 300 apt-get update -q </dev/null >/dev/null 2>&1 \
                && timeout 300 apt-get install -y -q --no-install-recommends "${SLURM_PKGS[@]}" \
                    </dev/null >/dev/null 2>&1; }
    fi
    if ! have_slurm; then
        echo "SKIP: Slurm is not installed and apt-get could not install it" \
            "(apt-get install --no-install-recommends ${SLURM_PKGS[*]})"
        exit 77
    fi
fi

ss_setup
CLUSTER=$SS_SRC/scripts/slurm-cluster.sh
SLURM_DIR_SRC=$SS_SRC/slurm

# Our cluster only: no variables from a Slurm job this test may itself be running in.
while read -r v; do unset "$v"; done < <(compgen -e | grep -E '^(SLURM|SBATCH|SRUN|SALLOC)_')
# Its own folder and ports, apart from a cluster started by hand (16817/16818).
export SS_SLURM_DIR=${SS_SLURM_DIR:-/tmp/seqshard-slurm-test}
export SS_SLURM_PORT=${SS_SLURM_PORT:-16827}
eval "$("$CLUSTER" env)"
export SEQSHARD
# mpirun as root, and more ranks than cores (ctest sets these; a run by hand may not).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1

# shellcheck disable=SC2317  # run by the trap
cleanup() {
    local rc=$?
    # Every outcome: jobs cancelled, daemons stopped, state removed.
    if [ "$ss_failed" != 0 ] || [ "$rc" != 0 ]; then
        cp "$SS_SLURM_DIR"/*.log "$SS_WORK/" 2>/dev/null
    fi
    timeout 120 "$CLUSTER" stop 9>&-
    if [ "$ss_failed" = 0 ] && [ "$rc" = 0 ]; then
        rm -rf "$SS_WORK"
    else
        echo "(kept $SS_WORK: job logs, outputs and the daemons' logs)"
    fi
}
trap 'exit 130' INT TERM

cd "$SS_WORK" || exit 1
mkdir -p scratch
# One test cluster per machine at a time (several checkouts may run their tests at once):
# the lock is held until this shell exits. Only then may this run stop a cluster.
exec 9>"$SS_SLURM_DIR.lock"
if ! flock -w 300 9; then
    ss_bad "cluster start" "another slurm_jobs.sh has held $SS_SLURM_DIR.lock for 300 s"
    ss_summary
    exit 1
fi
trap cleanup EXIT
# A fresh start each time: whatever a killed earlier run left behind goes first.
T_START=$SECONDS
timeout 60 "$CLUSTER" stop >/dev/null 2>&1 9>&-
if ! timeout 60 "$CLUSTER" start 9>&-; then
    ss_bad "cluster start" "scripts/slurm-cluster.sh start failed (messages above)"
    ss_summary
    exit 1
fi
T_UP=$SECONDS
ss_ok "cluster start"

# squeue/scontrol/sbatch, never for long.
sq() { timeout 30 "$@"; }

# ---- shape: ranks, CPUs per rank, sockets --------------------------------------------
read -r node_cpus node_sockets < <(sq sinfo -h -N -o '%c %X' | head -1)
ntasks=1
probe=$(sq srun --mpi=pmix -n 2 -t 1 "$SEQSHARD" --version 2>&1)
probe_rc=$?
# `seqshard --version` prints "mpi: Open MPI v4.1.4", or "mpi: none (built without MPI)".
if [ $probe_rc = 0 ] && printf '%s\n' "$probe" | grep -iE '^mpi:' \
    | grep -qviE '^mpi: *(no|none|off|disabled)'; then
    ntasks=2
else
    echo "note: jobs run 1 task: 'srun --mpi=pmix -n 2 seqshard --version' gave status" \
        "$probe_rc, $(printf '%s\n' "$probe" | grep -iE '^mpi:|error' | head -1)"
fi
cpus=$((node_cpus / ntasks))
[ "$cpus" -ge 1 ] || cpus=1
shape=(-t 3 --ntasks-per-node="$ntasks" --cpus-per-task="$cpus")
# More ranks than sockets (a 1-socket test machine): let them share one.
[ "$node_sockets" -lt "$ntasks" ] && shape+=(--ntasks-per-socket="$ntasks")
echo "slurm_jobs: node with $node_cpus CPUs, $node_sockets socket(s): jobs run" \
    "$ntasks rank(s) x $cpus CPU(s)"

# ---- expected output -----------------------------------------------------------------
# -B: BAQ is pileup_vs_samtools.sh's business; here it would only slow the jobs down
# (several fold under ASan). Several shards per contig, so both ranks get work.
ARGS=(-B -f "$REF" --shard-size 50k)
timeout 120 "$SAMTOOLS" mpileup -B -f "$REF" "$TD/s1.bam" >exp.s1 2>/dev/null
timeout 120 "$SAMTOOLS" mpileup -B -f "$REF" "$TD/s2.bam" >exp.s2 2>/dev/null
ss_run_seqshard single.s1 single.err pileup "${ARGS[@]}" --quiet "$TD/s1.bam"
if [ "$ss_rc" != 0 ]; then
    ss_bad "single-process run" "seqshard pileup failed outside Slurm (status $ss_rc)" \
        "$(head -3 single.err)"
elif ! cmp -s exp.s1 single.s1; then
    ss_bad "single-process run" "differs from samtools mpileup outside Slurm"
    ss_show_diff exp.s1 single.s1
else
    ss_ok "single-process run"
fi

# ---- no cluster needed: usage errors of the scripts ----------------------------------
out=$(timeout 30 bash "$SLURM_DIR_SRC/seqshard.sbatch" pileup "$TD/s1.bam" 2>&1)
rc=$?
if [ $rc = 2 ] && printf '%s' "$out" | grep -q -- '-o FILE'; then
    ss_ok "sbatch script refuses a run without -o"
else
    ss_bad "sbatch script refuses a run without -o" "status $rc, said: $out"
fi

if [ "$ntasks" = 1 ] && printf '%s\n' "$probe" | grep -qiE '^mpi: *none'; then
    out=$(SLURM_NTASKS=2 timeout 30 bash "$SLURM_DIR_SRC/seqshard.sbatch" pileup -o x \
        "$TD/s1.bam" 2>&1)
    rc=$?
    if [ $rc = 2 ] && printf '%s' "$out" | grep -q 'built without MPI'; then
        ss_ok "sbatch script refuses 2 tasks of a seqshard without MPI"
    else
        ss_bad "sbatch script refuses 2 tasks of a seqshard without MPI" "status $rc: $out"
    fi
fi

# ---- submit --------------------------------------------------------------------------
# submit VAR NAME SBATCH-ARGS...: sets VAR to the job id ("" when sbatch refused).
submit() {
    local var=$1 name=$2 id
    shift 2
    if id=$(sq sbatch --parsable "$@" 2>sbatch.err); then
        printf -v "$var" '%s' "${id%%;*}"
    else
        printf -v "$var" '%s' ""
        ss_bad "submit $name" "sbatch refused it: $(cat sbatch.err)" "sbatch $(ss_quote "$@")"
    fi
}
# TMPDIR in the jobs' environment: the scripts must put seqshard's scratch there.
TMPDIR=$SS_WORK/scratch submit j_srun srun "${shape[@]}" -J ss-srun \
    "$SLURM_DIR_SRC/seqshard.sbatch" pileup "${ARGS[@]}" -o out.srun "$TD/s1.bam"
TMPDIR=$SS_WORK/scratch submit j_mpirun mpirun "${shape[@]}" -J ss-mpirun \
    "$SLURM_DIR_SRC/seqshard-mpirun.sbatch" pileup "${ARGS[@]}" -o out.mpirun "$TD/s1.bam"
# mosdepth mode names its files by --mosdepth PREFIX (no -o): the script takes the prefix
submit j_md mosdepth "${shape[@]}" -J ss-mosdepth \
    "$SLURM_DIR_SRC/seqshard.sbatch" depth --mosdepth md.srun --by 1000 "$TD/s1.bam"
# markdup, a record kernel, on samtools fixmate -m's output: samtools markdup's records
md_input "$SS_WORK" && submit j_dup markdup "${shape[@]}" -J ss-markdup \
    "$SLURM_DIR_SRC/seqshard.sbatch" markdup -d 100 -o out.markdup "$SS_WORK/in.bam"
submit j_fail failing "${shape[@]}" -J ss-fail \
    "$SLURM_DIR_SRC/seqshard.sbatch" pileup "${ARGS[@]}" -o out.fail "$SS_WORK/missing.bam"
printf '%s\t%s\n' "$TD/s1.bam" arr.s1 "$TD/s2.bam" arr.s2 "$SS_WORK/absent.bam" arr.absent \
    >samples.txt
sed -i '1i # sample sheet of the test: blank lines and comments do not count\n' samples.txt
arr_out=$(SEQSHARD_SBATCH_ARGS="-t 3 -c 1" SEQSHARD_ARGS="--shard-size 50k" \
    timeout 60 bash "$SLURM_DIR_SRC/seqshard-array.sbatch" --submit samples.txt -B -f "$REF" 2>&1)
arr_rc=$?
j_arr=$(printf '%s' "$arr_out" | sed -n 's/^array job \([0-9]*\) .*/\1/p')
j_sum=$(printf '%s' "$arr_out" | sed -n 's/.*summary job \([0-9]*\) .*/\1/p')
if [ $arr_rc != 0 ] || [ -z "$j_arr" ] || [ -z "$j_sum" ]; then
    ss_bad "submit array" "seqshard-array.sbatch --submit failed (status $arr_rc): $arr_out"
fi
# Requeued part way (scontrol requeue, as a node failure or a preemption would do it): the
# second attempt runs with --resume (SLURM_RESTART_COUNT=1) and finishes the first's output.
# The test hook slows the shards so that the job is surely running when it is requeued.
SEQSHARD_TEST_SHARD_DELAY_MS=300 submit j_req requeue "${shape[@]}" -J ss-requeue \
    "$SLURM_DIR_SRC/seqshard.sbatch" pileup -B -f "$REF" --shard-size 5k -o out.requeue \
    "$TD/s1.bam"
# Shard records in the requeued job's manifests (past each header's "end CRC" line).
req_records() {
    local f at n=0
    for f in .out.requeue.resume .out.requeue.resume.rank*; do
        [ -f "$f" ] || continue
        at=$(grep -abo -m1 $'^end [0-9a-f]\\{8\\}$' "$f" | cut -d: -f1)
        [ -n "$at" ] && n=$((n + ($(stat -c %s "$f") - at - 13) / SS_RESUME_REC))
    done
    echo "$n"
}
if [ -n "$j_req" ]; then
    (
        for _ in $(seq 600); do [ "$(req_records)" -ge 6 ] && break; sleep 0.1; done
        echo "requeued at $(req_records) records" >requeue.out
        sq scontrol requeue "$j_req" >>requeue.out 2>&1
        # slurmctld holds a requeued job back for a while (its begin time moves on): now
        sleep 1
        sq scontrol update JobId="$j_req" StartTime=now >>requeue.out 2>&1
    ) &
fi
# shellcheck disable=SC2086  # the empty ones (refused) drop out
jobs=$(printf '%s ' $j_srun $j_mpirun $j_md $j_dup $j_fail $j_arr $j_sum $j_req)
echo "slurm_jobs: submitted jobs $jobs"

# ---- wait, bounded -------------------------------------------------------------------
deadline=$((SECONDS + SS_SLURM_WAIT))
waiting=$jobs
while [ -n "${waiting// /}" ]; do
    # shellcheck disable=SC2086
    waiting=$(sq squeue -h -t PD,R,CG,S,CF -j "$(echo $jobs | tr ' ' ',')" -o %A 2>/dev/null \
        | sort -u | tr '\n' ' ')
    [ -z "${waiting// /}" ] && break
    if [ $SECONDS -ge $deadline ]; then
        ss_bad "jobs finish in time" "still queued or running after ${SS_SLURM_WAIT}s: $waiting" \
            "$(sq squeue -l 2>&1 | head -12)"
        # shellcheck disable=SC2086
        sq scancel $jobs >/dev/null 2>&1
        break
    fi
    sleep 0.5
done
T_DONE=$SECONDS
[ $SECONDS -lt $deadline ] && ss_ok "jobs finish in time"

# "State ExitCode" of a job (or array task, 123_4) from slurmctld (no slurmdbd here).
job_end() {
    sq scontrol show job "$1" 2>/dev/null | tr ' ' '\n' \
        | awk -F= '$1=="JobState"{s=$2} $1=="ExitCode"{e=$2} END{print s, e}'
}

# check_ok NAME JOBID OUTPUT EXPECTED LOG
check_ok() {
    local name=$1 id=$2 out=$3 exp=$4 log=$5 end
    [ -n "$id" ] || return 0
    end=$(job_end "$id")
    if [ "$end" != "COMPLETED 0:0" ]; then
        ss_bad "$name" "job $id ended as '$end', expected 'COMPLETED 0:0'" \
            "log $log:" "$(tail -n 8 "$log" 2>/dev/null)"
    elif ! cmp -s "$exp" "$out"; then
        ss_bad "$name" "output $out differs from $exp" "log $log:" "$(tail -n 5 "$log")"
        ss_show_diff "$exp" "$out"
    elif [ ! -s "$out.report.json" ]; then
        ss_bad "$name" "no report beside the output ($out.report.json)" \
            "$(grep running "$log")"
    else
        ss_ok "$name"
    fi
}
check_ok "srun job = samtools" "$j_srun" out.srun exp.s1 "ss-srun-$j_srun.log"
check_ok "mpirun job = samtools" "$j_mpirun" out.mpirun exp.s1 "ss-mpirun-$j_mpirun.log"
# The mosdepth job's files: those of a single-process run, and a report beside them.
if [ -n "$j_md" ]; then
    "$SEQSHARD" depth --mosdepth md.single --by 1000 --quiet "$TD/s1.bam"
    end=$(job_end "$j_md") md_bad=""
    for f in mosdepth.summary.txt mosdepth.global.dist.txt mosdepth.region.dist.txt; do
        cmp -s "md.single.$f" "md.srun.$f" || md_bad="$md_bad $f"
    done
    for f in per-base.bed.gz regions.bed.gz; do
        cmp -s <(gzip -dc "md.single.$f") <(gzip -dc "md.srun.$f" 2>/dev/null) || md_bad="$md_bad $f"
    done
    if [ "$end" = "COMPLETED 0:0" ] && [ -z "$md_bad" ] && [ -s md.srun.report.json ]; then
        ss_ok "mosdepth-mode job = single-process run"
    else
        ss_bad "mosdepth-mode job = single-process run" "job $j_md ended as '$end';" \
            "differs or missing:${md_bad:- none}; report: $(ls md.srun.report.json 2>&1)" \
            "$(tail -n 5 "ss-mosdepth-$j_md.log" 2>/dev/null)"
    fi
fi
if [ -n "${j_dup:-}" ]; then
    "$SAMTOOLS" markdup -d 100 "$SS_WORK/in.bam" exp.markdup.bam 2>/dev/null
    end=$(job_end "$j_dup")
    if [ "$end" = "COMPLETED 0:0" ] &&
        cmp -s <("$SAMTOOLS" view exp.markdup.bam) <("$SAMTOOLS" view out.markdup 2>/dev/null); then
        ss_ok "markdup job = samtools markdup"
    else
        ss_bad "markdup job = samtools markdup" "job $j_dup ended as '$end', or its records differ" \
            "$(tail -n 5 "ss-markdup-$j_dup.log" 2>/dev/null)"
    fi
fi
if [ -n "$j_srun" ]; then
    if cmp -s single.s1 out.srun; then
        ss_ok "srun job = single-process run"
    else
        ss_bad "srun job = single-process run" "out.srun missing or differs from single.s1"
    fi
fi
if [ -n "$j_srun" ] && grep -q -- "--tmp-dir $SS_WORK/scratch" "ss-srun-$j_srun.log" \
    && [ -z "$(ls -A scratch)" ]; then
    ss_ok "scratch on TMPDIR, left empty"
else
    ss_bad "scratch on TMPDIR, left empty" "launch line: $(grep running "ss-srun-$j_srun.log")" \
        "left in scratch: $(ls -A scratch | head -5 | tr '\n' ' ')"
fi

# The requeued job: the same output as samtools, and its second attempt resumed.
if [ -n "$j_req" ]; then
    check_ok "requeued job = samtools" "$j_req" out.requeue exp.s1 "ss-requeue-$j_req.log"
    reused=$(grep -o '"reused_shards": [0-9]*' out.requeue.report.json 2>/dev/null |
        grep -o '[0-9]*$')
    if grep -q 'restart 1 of job .*resuming with --resume' "ss-requeue-$j_req.log" &&
        [ "${reused:-0}" -gt 0 ]; then
        ss_ok "requeued job resumed ($reused shards reused; $(head -1 requeue.out))"
    else
        ss_bad "requeued job resumed" \
            "reused ${reused:-no} shards; $(cat requeue.out 2>/dev/null)" \
            "$(grep -E 'restart|running' "ss-requeue-$j_req.log" 2>/dev/null | head -3)"
    fi
fi

# The failing job: non-zero exit code, and the log names the missing file.
if [ -n "$j_fail" ]; then
    end=$(job_end "$j_fail")
    log=ss-fail-$j_fail.log
    if [ "${end#FAILED }" = "$end" ] || [ "${end##* }" = "0:0" ]; then
        ss_bad "failing job fails" "job $j_fail ended as '$end'" "$(tail -n 5 "$log")"
    elif ! grep -q '^seqshard.*missing\.bam' "$log" || ! grep -q 'FAILED with exit status' "$log"
    then
        ss_bad "failing job's log says why" "no seqshard line naming missing.bam in $log" \
            "$(tail -n 6 "$log")"
    elif [ -e out.fail ]; then
        ss_bad "failing job fails" "left an output file out.fail"
    else
        ss_ok "failing job fails (${end#FAILED }), log says why"
    fi
fi

# The array: tasks 1 and 2 right, task 3 failed with a reason, the summary says so.
if [ -n "$j_arr" ]; then
    check_ok "array task 1 = samtools" "${j_arr}_1" arr.s1 exp.s1 "seqshard-array-${j_arr}_1.log"
    check_ok "array task 2 = samtools" "${j_arr}_2" arr.s2 exp.s2 "seqshard-array-${j_arr}_2.log"
    end=$(job_end "${j_arr}_3")
    st=samples.txt.status/task-3.status
    if [ "${end#FAILED }" = "$end" ] || [ "${end##* }" = "0:0" ]; then
        ss_bad "array task 3 fails" "ended as '$end'" \
            "$(tail -n 5 "seqshard-array-${j_arr}_3.log" 2>/dev/null)"
    elif ! grep -q '^state=failed' "$st" 2>/dev/null || ! grep -q '^why=.*absent\.bam' "$st"; then
        ss_bad "array task 3 fails" "status file $st lacks state=failed / why naming absent.bam" \
            "$(cat "$st" 2>/dev/null)"
    else
        ss_ok "array task 3 fails (${end#FAILED }), status says why"
    fi
    end=$(job_end "$j_sum")
    slog=seqshard-summary-$j_arr.log
    if [ "$end" != "FAILED 1:0" ]; then
        ss_bad "array summary job" "ended as '$end', expected 'FAILED 1:0'" "$(cat "$slog")"
    elif ! grep -q '^task 3 .*absent\.bam' "$slog" || ! grep -q '1 failed or missing' "$slog" \
        || grep -q '^task [12] ' "$slog" || ! grep -q -- '--array=3 ' "$slog"; then
        ss_bad "array summary job" "does not list exactly task 3 as failed" "$(cat "$slog")"
    else
        ss_ok "array summary job lists the failed task"
    fi
fi

# ---- stop ------------------------------------------------------------------------------
trap - EXIT
[ "$ss_failed" != 0 ] && cp "$SS_SLURM_DIR"/*.log "$SS_WORK/" 2>/dev/null
T_STOP0=$SECONDS
if timeout 120 "$CLUSTER" stop 9>&- && [ ! -e "$SS_SLURM_DIR" ]; then
    ss_ok "cluster stop"
else
    ss_bad "cluster stop" "scripts/slurm-cluster.sh stop failed or left $SS_SLURM_DIR"
fi
T_END=$SECONDS
echo "slurm_jobs: cluster up in $((T_UP - T_START)) s, jobs done in $((T_DONE - T_UP)) s," \
    "stopped in $((T_END - T_STOP0)) s"
if [ "$ss_failed" = 0 ]; then rm -rf "$SS_WORK"; else echo "(kept $SS_WORK)"; fi
ss_summary
exit $?
