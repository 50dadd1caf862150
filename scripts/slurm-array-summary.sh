#!/bin/bash
# slurm-array-summary.sh SHEET [STATUS_DIR] -- how the tasks of a seqshard job array
# (slurm/seqshard-array.sbatch) ended: one line per task that did not succeed, a count,
# and the sbatch line that reruns just those tasks.
#
# Reads the per-task status files the array writes (STATUS_DIR, default SHEET.status, or
# $SEQSHARD_STATUS_DIR), so it works without Slurm's accounting database (sacct) and
# after the jobs have left squeue. Runs anywhere: on the login node by hand, or as a
# follow-up job (`sbatch --dependency=afterany:<array job id> scripts/slurm-array-summary.sh
# SHEET`; `bash slurm/seqshard-array.sbatch --submit ...` submits that job for you).
#
# Exit status: 0 when every sample succeeded, 1 when any failed, was killed or left no
# status (never started, or killed before it could write one), 2 on bad usage.
#
#SBATCH --job-name=seqshard-summary
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=1
#SBATCH --time=00:05:00
set -u

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: $0 SHEET [STATUS_DIR]" >&2
    exit 2
fi
sheet=$1
status_dir=${2:-${SEQSHARD_STATUS_DIR:-$sheet.status}}
if [ ! -r "$sheet" ]; then
    echo "slurm-array-summary: $sheet: cannot read the sample sheet" >&2
    exit 2
fi

# value KEY FILE: the value of "KEY=..." in a status file.
value() { sed -n "s/^$1=//p" "$2" | head -1; }

n=0 ok=0 bad=0 rerun=""
# The samples as the array numbers them: blank lines and # comments do not count.
while IFS= read -r line; do
    n=$((n + 1))
    f=$status_dir/task-$n.status
    if [ ! -f "$f" ]; then
        msg="no status: never started, or killed before it began ($line)"
    else
        state=$(value state "$f")
        case "$state" in
            ok)
                ok=$((ok + 1))
                continue
                ;;
            running)
                msg="started $(value start "$f") on $(value host "$f") and never finished"
                msg+=" (still running, or killed without warning: node failure, SIGKILL)"
                ;;
            *)
                msg="$state, exit $(value exit "$f") on $(value host "$f") after"
                msg+=" $(value seconds "$f") s [job $(value job "$f")]: $(value why "$f")"
                ;;
        esac
    fi
    bad=$((bad + 1))
    rerun+="${rerun:+,}$n"
    printf 'task %d  %s\n        %s\n' "$n" "$(printf '%s' "$line" | tr -s '[:space:]' ' ')" \
        "$msg"
done < <(awk '!/^[[:space:]]*(#|$)/' "$sheet")

echo "seqshard array summary for $sheet: $n samples, $ok ok, $bad failed or missing" \
    "(status files in $status_dir)"
if [ "$bad" != 0 ]; then
    echo "rerun only those: sbatch --array=$rerun slurm/seqshard-array.sbatch $sheet ..." \
        "(same options as before); logs: seqshard-array-<job>_<task>.log"
    exit 1
fi
exit 0
