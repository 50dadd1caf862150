#!/usr/bin/env bash
# mpi_stdout_faults.sh -- standard output failing under mpirun (framework/out/funnel.c): to
# /dev/full, with standard output closed (>&-), or to a reader that goes away part way, at 2,
# 3 and 4 ranks, every rank exits promptly with a non-zero status, the full and closed cases
# with one line that says what is wrong and what to do, and nothing is left behind (no
# process, no file in --tmp-dir). SIGINT to mpirun while rank 0 streams ends every rank too.
# One process with standard output closed says so too.
#
# The deep amplicon panel twice over makes 3 shards of 5.7 MB at --shard-size 1k: more than
# one 4 MiB message each, so rank 0 can stop taking a piece half way while its sender is still
# in a send MPI cannot cancel (before the fix, most such runs hung at 3 and 4 ranks); s1.bam
# at 2k makes 58 small shards, several per rank, for the reader that goes away mid-stream.
#
# Skipped (status 77) in a build without MPI (SS_MPI=0).
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_output.sh"
ss_mpi_setup
W=$SS_WORK
AMP=(--shard-size 1k -f "$TD/amp.fa" "$TD/amp.bam" "$TD/amp.bam")
S1=(--shard-size 2k -f "$TD/ref.fa" "$TD/s1.bam")
LIMIT=25 # seconds for one run: past it, a hang

# fault NAME MODE NP ARGS...: seqshard pileup ARGS on NP ranks, standard output per MODE
# (full: /dev/full; closed: >&-; reader: a pipe whose reader leaves after 3 MB). Sets rc and
# d (the run's directory, its --tmp-dir, with err: the standard error).
fault() {
    local name=$1 mode=$2 np=$3
    shift 3
    d=$W/$mode.$np.$RANDOM
    mkdir -p "$d"
    local cmd=(timeout -k 5 "$LIMIT" "${MPIRUN[@]}" -np "$np" "$SEQSHARD" pileup --quiet -@ 1
        --tmp-dir "$d" "$@")
    case $mode in
    full) "${cmd[@]}" </dev/null >/dev/full 2>"$d/err" ;;
    closed) "${cmd[@]}" </dev/null >&- 2>"$d/err" ;;
    reader) (
        "${cmd[@]}" </dev/null 2>"$d/err" | head -c 3000000 >/dev/null
        exit "${PIPESTATUS[0]}"
    ) ;;
    esac
    rc=$?
}

# after NAME: no seqshard of the run in $d still alive, no file but err in it; 0 when so.
after() {
    local live left
    sleep 0.2
    live=$(pgrep -f -- "--tmp-dir $d( |$)" | tr '\n' ' ')
    left=$(ss_left "$d" err)
    if [ -n "$live" ]; then
        ss_bad "$1" "seqshard processes still running after mpirun ended: $live"
        kill -KILL $live 2>/dev/null
    elif [ -n "$left" ]; then
        ss_bad "$1" "left in --tmp-dir: $left"
    else
        return 0
    fi
    return 1
}

# fails NAME MODE NP MENTION ARGS...: a non-zero status in time, MENTION (an extended regular
# expression; empty: none wanted) in the only line seqshard printed, nothing left.
fails() {
    local name=$1 mode=$2 np=$3 mention=$4
    shift 4
    fault "$name" "$mode" "$np" "$@"
    local lines
    lines=$(grep -c '^seqshard' "$d/err")
    if [ $rc = 0 ] || [ $rc = 124 ] || [ $rc = 137 ]; then
        ss_bad "$name" "exit status $rc (124, 137: a hang, ended by timeout)" \
            "$(grep '^seqshard' "$d/err" | head -2)"
    elif [ -n "$mention" ] && { [ "$lines" != 1 ] || ! grep -qE "^seqshard: .*$mention" "$d/err"; }; then
        ss_bad "$name" "want one line matching '$mention', got $lines" \
            "$(grep '^seqshard' "$d/err" | head -3)"
    elif after "$name"; then
        ss_ok "$name"
    fi
}

FULL='standard output: write failed: No space left on device; check free space'
CLOSED="standard output: mpirun's standard output is closed or not open for writing.*-o FILE"
for np in 2 3 4; do
    fails "np=$np > /dev/full, 5.7 MB shards" full "$np" "$FULL" "${AMP[@]}"
    fails "np=$np >&-, 5.7 MB shards" closed "$np" "$CLOSED" "${AMP[@]}"
    fails "np=$np | reader gone after 3 MB, 58 shards" reader "$np" "" "${S1[@]}"
done

# One process with standard output closed: refused before any work, with the same advice.
"$SEQSHARD" pileup --quiet "${S1[@]}" </dev/null >&- 2>"$W/one.err"
rc=$?
if [ $rc = 1 ] && [ "$(wc -l <"$W/one.err")" = 1 ] &&
    grep -qE '^seqshard: standard output: is closed or not open for writing.*-o FILE' "$W/one.err"; then
    ss_ok "one process >&-"
else
    ss_bad "one process >&-" "status $rc" "$(head -2 "$W/one.err")"
fi

# SIGINT to mpirun while rank 0 streams into a pipe: every process gone within 5 s.
for np in 3; do
    name="np=$np: SIGINT to mpirun while streaming"
    d=$W/int.$np
    mkdir -p "$d"
    SEQSHARD_TEST_SHARD_DELAY_MS=100 "${MPIRUN[@]}" -np "$np" "$SEQSHARD" pileup --quiet -@ 1 \
        --tmp-dir "$d" "${S1[@]}" </dev/null 2>"$d/err" | cat >/dev/null &
    sleep 1
    mpirun_pid=$(pgrep -x mpirun -P $$)
    if [ -z "$mpirun_pid" ]; then
        ss_bad "$name" "mpirun had ended before the signal" "$(head -2 "$d/err")"
        wait
        continue
    fi
    kill -INT "$mpirun_pid"
    for _ in $(seq 50); do kill -0 "$mpirun_pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$mpirun_pid" 2>/dev/null; then
        ss_bad "$name" "mpirun still running 5 s after SIGINT"
        kill -KILL "$mpirun_pid"
    fi
    wait
    after "$name" && ss_ok "$name"
done

ss_summary
exit $?
