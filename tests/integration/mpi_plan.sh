#!/usr/bin/env bash
# mpi_plan.sh -- one plan under mpirun: rank 0 plans and every rank works from
# the shards it sent, so ranks whose environment would cut the genome
# otherwise (SEQSHARD_SHARD_OUTPUT, launched with their own -x through
# mpirun's MPMD form) still give one process's bytes, without a hang; and a
# plan rank 0 cannot make (SEQSHARD_FAIL_PLAN) stops every rank with its line.
#
# Skipped (status 77) in a build without MPI (SS_MPI=0).
set -u
. "$(dirname "$0")/lib.sh"
ss_mpi_setup
W=$SS_WORK
S1=$TD/s1.bam

# mixed NAME ARGS...: one process, then rank 0 with the default cut and ranks 1-2 with
# shards cut at 100 kB of output; the two outputs must be the same bytes.
mixed() {
    local name=$1
    shift
    # the same -o in both: a BAM header's @PG line names it
    "$SEQSHARD" "$@" --quiet -o "$W/x.out" </dev/null 2>"$W/err" ||
        { ss_bad "$name" "one process: exit status $?" "$(head -2 "$W/err")"; return; }
    mv "$W/x.out" "$W/one.out"
    timeout "$SS_TIMEOUT" "${MPIRUN[@]}" -np 1 "$SEQSHARD" "$@" --quiet -o "$W/x.out" : \
        -np 2 -x SEQSHARD_SHARD_OUTPUT=100k "$SEQSHARD" "$@" --quiet -o "$W/x.out" \
        </dev/null >/dev/null 2>"$W/err"
    local rc=$?
    if [ $rc != 0 ]; then
        ss_bad "$name" "exit status $rc (124: a hang)" "$(head -2 "$W/err")"
    elif ! cmp -s "$W/one.out" "$W/x.out"; then
        ss_bad "$name" "the output differs from one process's"
    else
        ss_ok "$name: one process's bytes"
    fi
    rm -f "$W/one.out" "$W/x.out"
}

# The variable changes the plan: else the cases below would prove nothing.
SEQSHARD_SHARD_OUTPUT=100k "$SEQSHARD" pileup -a --quiet -f "$TD/ref.fa" --report "$W/a.json" \
    -o "$W/a.txt" "$S1" && "$SEQSHARD" pileup -a --quiet -f "$TD/ref.fa" --report "$W/b.json" \
    -o "$W/b.txt" "$S1"
na=$(grep -o '"shards": [0-9]*' "$W/a.json" | head -1 | grep -o '[0-9]*$')
nb=$(grep -o '"shards": [0-9]*' "$W/b.json" | head -1 | grep -o '[0-9]*$')
if [ -n "$na" ] && [ -n "$nb" ] && [ "$na" != "$nb" ]; then
    ss_ok "SEQSHARD_SHARD_OUTPUT=100k cuts $na shards where the default cuts $nb"
else
    ss_bad "the variable changes the plan" "shards: $na with it, $nb without"
fi

mixed "pileup -a, ranks planning otherwise" pileup -a -f "$TD/ref.fa" "$S1"
mixed "view -b, ranks planning otherwise" view -b "$S1"
mixed "depth -a, ranks planning otherwise" depth -a "$S1"

# A plan rank 0 cannot make: every rank stops, with rank 0's one line, and no output.
timeout "$SS_TIMEOUT" env SEQSHARD_FAIL_PLAN=1 "${MPIRUN[@]}" -np 3 "$SEQSHARD" pileup --quiet \
    -f "$TD/ref.fa" -o "$W/bad.txt" "$S1" </dev/null >/dev/null 2>"$W/err"
rc=$?
if [ $rc = 124 ]; then
    ss_bad "a plan rank 0 cannot make" "a hang"
elif [ $rc = 0 ] || [ -e "$W/bad.txt" ]; then
    ss_bad "a plan rank 0 cannot make" "status $rc; output: $(ls "$W"/bad.txt 2>/dev/null)"
elif ! grep -q "rank 0: .*planning failed as SEQSHARD_FAIL_PLAN asked" "$W/err"; then
    ss_bad "a plan rank 0 cannot make" "status $rc, not rank 0's line" "$(head -2 "$W/err")"
else
    ss_ok "a plan rank 0 cannot make stops every rank (status $rc)"
fi

ss_summary
exit $?
