#!/usr/bin/env bash
# cohort_vs_samtools.sh -- a thousand inputs (two BAMs to a CRAM, lib_cohort.sh) give
# samtools mpileup's bytes at -@1 and -@2, with shards cut by their output (a few
# hundred bases each, under the 1 kb minimum of work-cut shards) and at ulimit -n 64,
# where most inputs are streamed and the CRAMs are read by window. About a minute.
set -u
. "$(dirname "$0")/lib.sh"
ss_setup
. "$(dirname "$0")/lib_cohort.sh"
cohort_make || { ss_summary; exit 1; }

W=$SS_WORK
# run NAME LIMIT ENV ARGS...: seqshard pileup on the cohort under ulimit -n LIMIT.
run() {
    local name=$1 limit=$2 env=$3
    shift 3
    (ulimit -n "$limit" && exec env $env timeout "$SS_TIMEOUT" "$SEQSHARD" pileup --quiet \
        "${COHORT_ARGS[@]}" -b "$COHORT_LIST" -o "$W/got.txt" "$@") </dev/null >"$W/log" 2>"$W/err"
    ss_rc=$?
    cohort_check "$name" "$W/got.txt" "$W/err"
}

# The default cut makes one shard of the 500 bp region (under the 1 kb minimum) at any -@:
# -@2 would run what -@1 runs; more threads meet the cohort in the output-cut runs.
run "$COHORT_N inputs -@1" 4096 "" -@ 1
run "$COHORT_N inputs -@2, shards of 4 MB of output" 4096 SEQSHARD_SHARD_OUTPUT=4m -@ 2
run "$COHORT_N inputs -@2 at ulimit -n 64" 64 SEQSHARD_SHARD_OUTPUT=4m -@ 2
run "$COHORT_N inputs -@1 at ulimit -n 64" 64 "" -@ 1

ss_summary
exit $?
