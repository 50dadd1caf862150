#!/usr/bin/env bash
# slurm-status.sh JOBID -- snakemake 7's --cluster-status for Slurm: prints running,
# success or failed. Asks sacct (the accounting database) first, then scontrol (a job
# slurmctld still remembers), so it works on clusters without slurmdbd too. Without a
# status command snakemake would wait forever for a job that Slurm killed (time limit,
# out of memory, node failure).
set -u
id=${1%%;*}
state=$(sacct -n -X -P -j "$id" -o State 2>/dev/null | head -1)
if [ -z "$state" ]; then
    state=$(scontrol show job "$id" 2>/dev/null | tr ' ' '\n' | sed -n 's/^JobState=//p')
fi
case ${state%% *} in
COMPLETED) echo success ;;
PENDING | RUNNING | COMPLETING | CONFIGURING | SUSPENDED | REQUEUED | RESIZING | STAGE_OUT | "")
    # "": a job just submitted may not be visible yet
    echo running ;;
*) echo failed ;;
esac
