#!/usr/bin/env bash
# mpi_messages.sh -- under mpirun -np 2, a full disk in depth --mosdepth fails the run
# (exit 1, no file left) and every rank's line names the file and its rank once:
# "seqshard: rank N: PREFIX.per-base.bed.gz: ...", never "rank N: rank N:", also from the
# rank whose own writes went through and learned of the failure from the other.
# Which rank's write meets the full disk varies from run to run: each case runs at a few
# amounts of free space. Skipped without MPI; the full disk needs root (a tmpfs).
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_output.sh"
ss_mpi_setup
S1=$TD/s1.bam
FULL=$SS_WORK/full
ss_full_fs "$FULL" 1m || exit 77

for free in 15 20 25 30; do
    rounds="1 2 3"
    [ "$free" = 30 ] && rounds=1 # the summary does not fit: rank 0's alone
    for round in $rounds; do
        name="np=2 --mosdepth, $free pages free (round $round)"
        rm -rf "${FULL:?}"/* "$FULL"/.[!.]*
        ss_fill "$FULL" "$free"
        err=$SS_WORK/err.$free.$round
        timeout "$SS_TIMEOUT" "${MPIRUN[@]}" -np 2 "$SEQSHARD" depth --mosdepth "$FULL/x" --quiet \
            --bind none -@ 1 --shard-size 5k "$S1" </dev/null >/dev/null 2>"$err"
        rc=$?
        # mpirun ends the other rank with SIGTERM once one failed: its signal line is apart
        lines=$(grep '^seqshard: ' "$err" | grep -v '^seqshard: interrupted by SIG')
        left=$(ss_left "$FULL" filler)
        if [ $rc != 1 ]; then
            ss_bad "$name" "exit status $rc, want 1" "stderr: $(head -3 "$err" | cut -c1-240)"
        elif [ -z "$lines" ]; then
            ss_bad "$name" "no seqshard line" "stderr: $(head -3 "$err" | cut -c1-240)"
        elif echo "$lines" | grep -qE 'rank [0-9]+: rank [0-9]+:'; then
            ss_bad "$name" "a line names its rank twice" "$(echo "$lines" | cut -c1-240)"
        elif echo "$lines" | grep -vqE "^seqshard: rank [01]: [^ ]*/x\\.[a-z.-]+: .*(space|full|rerun)"; then
            ss_bad "$name" "a line does not name the file and the fix" "$(echo "$lines" | cut -c1-240)"
        elif [ -n "$left" ]; then
            ss_bad "$name" "left: $left"
        else
            ss_ok "$name"
            [ "$SS_VERBOSE" = 1 ] && echo "$lines" | sed 's/^/     /' | cut -c1-240
        fi
    done
done

ss_summary
exit $?
