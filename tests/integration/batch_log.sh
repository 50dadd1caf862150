#!/usr/bin/env bash
# batch_log.sh -- what a job log (stderr not a terminal) shows: a timestamped
# start line saying what runs, timestamped progress lines, and always a final
# line (done, with totals, or failed, with the error); --quiet prints only a
# failure's own message. (Several ranks: mpi_report_log.sh.)
set -u
. "$(dirname "$0")/lib.sh"
ss_setup

S1=$TD/s1.bam
TS='[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z'
START="^seqshard: $TS pileup started: 2 inputs, 2 threads x 1 rank, [0-9]+ shards\$"
DONE="^seqshard: $TS done in [0-9.]+ s: [0-9]+ shards, [0-9.]+( [kMG])? reads, [0-9.]+ [kMG]?B written, peak RSS [0-9.]+ [kMG]?B\$"

run() { # NAME COMMAND...: sets ss_rc; stderr in $SS_WORK/NAME.err
    local name=$1
    shift
    timeout "$SS_TIMEOUT" "$@" </dev/null >"$SS_WORK/$name.out" 2>"$SS_WORK/$name.err"
    ss_rc=$?
}

expect_lines() { # NAME FILE WANT_RC: every line of FILE shown on failure
    local name=$1 f=$2 want=$3
    if [ "$ss_rc" != "$want" ]; then
        ss_bad "$name" "exit status $ss_rc, want $want" "$(head -3 "$f")"
        return 1
    fi
}

# ---- a run that works: start, progress, done -------------------------------------------
run ok env SEQSHARD_PROGRESS_INTERVAL=0.01 "$SEQSHARD" pileup -@ 2 --shard-size 3k -f "$REF" \
    -o "$SS_WORK/ok.txt" "$S1" "$TD/s2.bam"
err=$SS_WORK/ok.err
if expect_lines "start/progress/done" "$err" 0; then
    n_start=$(grep -cE "$START" "$err")
    last=$(tail -1 "$err")
    n_prog=$(grep -cE "^seqshard: $TS [0-9]+/[0-9]+ shards, " "$err")
    unstamped=$(grep -vE "^seqshard: $TS " "$err" | head -1)
    bytes=$(stat -c %s "$SS_WORK/ok.txt")
    [ "$n_start" = 1 ] && [ "$(head -1 "$err" | grep -cE "$START")" = 1 ] &&
        ss_ok "start line first, once" ||
        ss_bad "start line first, once" "$n_start start lines" "$(head -2 "$err")"
    [[ $last =~ $DONE ]] && ss_ok "done line last" ||
        ss_bad "done line last" "last line: $last"
    [ "$n_prog" -ge 1 ] && ss_ok "progress lines timestamped" ||
        ss_bad "progress lines timestamped" "no timestamped progress line" "$(head -3 "$err")"
    [ -z "$unstamped" ] && ss_ok "every line timestamped" ||
        ss_bad "every line timestamped" "$unstamped"
    # the totals: every shard of the plan, the bytes of the file (6.56 MB and the like)
    shards=$(grep -oE '[0-9]+ shards$' <<<"$(head -1 "$err")" | cut -d' ' -f1)
    [[ $last == *": $shards shards,"* ]] && ss_ok "done line: shards of the plan" ||
        ss_bad "done line: shards of the plan" "start says $shards; $last"
    mb=$(awk -v b="$bytes" 'BEGIN { v = b / 1e6; printf "%.*f MB", v < 10 ? 2 : v < 100 ? 1 : 0, v }')
    [[ $last == *"$mb written"* ]] && ss_ok "done line: bytes written" ||
        ss_bad "done line: bytes written" "file has $bytes bytes ($mb); $last"
fi

# ---- --quiet: nothing on success, the error alone on failure -----------------------------
run quiet "$SEQSHARD" pileup --quiet -@ 2 -f "$REF" -o "$SS_WORK/q.txt" "$S1" "$TD/s2.bam"
expect_lines "--quiet success" "$SS_WORK/quiet.err" 0 &&
    { [ ! -s "$SS_WORK/quiet.err" ] && ss_ok "--quiet success: stderr empty" ||
        ss_bad "--quiet success: stderr empty" "$(head -2 "$SS_WORK/quiet.err")"; }
run quietfail env SEQSHARD_FAIL_SHARD=1 "$SEQSHARD" pileup --quiet -@ 2 --shard-size 3k \
    -o "$SS_WORK/qf.txt" "$S1"
if expect_lines "--quiet failure" "$SS_WORK/quietfail.err" 1; then
    n=$(wc -l <"$SS_WORK/quietfail.err")
    [ "$n" = 1 ] && grep -q 'SEQSHARD_FAIL_SHARD' "$SS_WORK/quietfail.err" &&
        ss_ok "--quiet failure: the error alone" ||
        ss_bad "--quiet failure: the error alone" "$n lines" "$(head -3 "$SS_WORK/quietfail.err")"
fi

# ---- failures: the error once, then the final line that points to it --------------------
# fails_once NAME ERR PATTERN: the error line matches PATTERN and is not printed again
fails_once() {
    local last prev
    last=$(tail -1 "$2") prev=$(tail -2 "$2" | head -1)
    if [[ $last =~ ^seqshard:\ $TS\ pileup\ failed\ after\ [0-9.]+\ s:\ the\ reason\ is\ the\ line\ above ]] &&
        [[ $prev =~ $3 ]] && [ "$(grep -cE -- "$3" "$2")" = 1 ]; then
        ss_ok "$1: the error once, then the final line"
    else
        ss_bad "$1: the error once, then the final line" "$(tail -3 "$2")"
    fi
}
run fail env SEQSHARD_FAIL_SHARD=1 "$SEQSHARD" pileup -@ 2 --shard-size 3k -o "$SS_WORK/f.txt" "$S1"
if expect_lines "failure in a shard" "$SS_WORK/fail.err" 1; then
    fails_once "failure in a shard" "$SS_WORK/fail.err" 'shard 1 .*SEQSHARD_FAIL_SHARD'
fi
run setupfail "$SEQSHARD" pileup -o "$SS_WORK/s.txt" "$SS_WORK/nope.bam"
if expect_lines "failure at open" "$SS_WORK/setupfail.err" 1; then
    fails_once "failure at open" "$SS_WORK/setupfail.err" 'nope\.bam'

fi
# usage errors are not runs: one line, as before
run usage "$SEQSHARD" pileup --no-such-option "$S1"
[ "$ss_rc" = 2 ] && [ "$(wc -l <"$SS_WORK/usage.err")" = 1 ] && ss_ok "usage error: one line" ||
    ss_bad "usage error: one line" "status $ss_rc" "$(head -3 "$SS_WORK/usage.err")"

# ---- a terminal gets the live line and the final line, not the started line -------------
if command -v script >/dev/null; then
    script -qec "$(ss_quote "$SEQSHARD" pileup -@ 2 -f "$REF" -o "$SS_WORK/t.txt" "$S1")" \
        /dev/null </dev/null >"$SS_WORK/tty.log" 2>&1
    grep -qE "$TS pileup started" "$SS_WORK/tty.log" &&
        ss_bad "terminal: no started line" "$(tr '\r' '\n' <"$SS_WORK/tty.log" | head -3)" ||
        ss_ok "terminal: no started line"
    tr '\r' '\n' <"$SS_WORK/tty.log" | grep -qE "^seqshard: $TS done in [0-9.]+ s: " &&
        ss_ok "terminal: the final line, on a line of its own" ||
        ss_bad "terminal: the final line" "$(tr '\r' '\n' <"$SS_WORK/tty.log" | tail -3)"
fi

ss_summary
exit $?
