#!/usr/bin/env bash
# output_signals.sh -- a terminating signal ends a run that writes -o FILE
# with status 128 + the signal, one line naming it ("seqshard: interrupted
# by SIGTERM; no output written; rerun the same command with --resume to
# continue"; nothing for SIGPIPE), no final file, and only the resumable
# temporary and its manifest beside it, which a --resume run then finishes
# from. Writing to standard output, the line says the output is incomplete;
# a closed pipe ends the run quietly, 141.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_output.sh"
ss_setup
S1=$TD/s1.bam

# Shard 2 never finishes (SEQSHARD_STALL_SHARD), so the run is surely going when
# the signal comes. env --default-signal: a background job of a script starts
# with SIGINT and SIGQUIT ignored, and seqshard keeps ignored signals ignored.
signal_run() { # SIGNAL DIR OUT ARGS...: start, wait for the temporary file, signal; sets rc
    local sig=$1 d=$2 out=$3 pid i
    shift 3
    SEQSHARD_STALL_SHARD=2 timeout "$SS_TIMEOUT" env --default-signal "$SEQSHARD" pileup \
        --quiet -@ 2 --shard-size 2k "$@" "$S1" </dev/null >"$out" 2>"$d.err" &
    pid=$!
    for i in $(seq 200); do [ -n "$(ss_left "$d")" ] && break; sleep 0.05; done
    sleep 0.2
    # timeout(1) runs seqshard as its child: signal seqshard itself
    kill -"$sig" "$(pgrep -P "$pid")"
    wait "$pid" 2>/dev/null # no "Hangup" note from the shell
    rc=$?
}

for sig in HUP INT QUIT TERM USR1 USR2 ALRM PIPE XCPU XFSZ; do
    name="SIG$sig on pileup -o FILE"
    d=$SS_WORK/sig.$sig
    mkdir -p "$d"
    signal_run "$sig" "$d" "$SS_WORK/sig.$sig.stdout" -o "$d/out.txt"
    want=$((128 + $(kill -l "$sig")))
    want_err="seqshard: interrupted by SIG$sig; no output written; rerun the same command"
    want_err+=" with --resume to continue"
    [ "$sig" = PIPE ] && want_err=""
    left=$(ss_left "$d" .out.txt.tmp.seqshard .out.txt.resume)
    if [ "$rc" != "$want" ]; then
        ss_bad "$name" "exit status $rc, want $want" "stderr: $(head -2 "$d.err")"
    elif [ "$(cat "$d.err")" != "$want_err" ]; then
        ss_bad "$name" "stderr is not '$want_err'" "stderr: $(head -3 "$d.err")"
    elif [ -n "$left" ]; then
        ss_bad "$name" "left files in the output directory: $left"
    elif [ ! -f "$d/.out.txt.tmp.seqshard" ] || [ ! -f "$d/.out.txt.resume" ]; then
        ss_bad "$name" "the temporary and its manifest are not kept for --resume" \
            "left: $(ss_left "$d")"
    else
        ss_ok "$name"
    fi
done

# What the signal left is finished by --resume: the final file alone, the whole output.
name="SIGTERM, then --resume"
d=$SS_WORK/sig.TERM
"$SEQSHARD" pileup --quiet -@ 2 --shard-size 2k -o "$SS_WORK/plain.txt" "$S1"
"$SEQSHARD" pileup --quiet -@ 2 --shard-size 2k --resume -o "$d/out.txt" "$S1" 2>"$d.err2"
if ! cmp -s "$SS_WORK/plain.txt" "$d/out.txt"; then
    ss_bad "$name" "the output differs from an uninterrupted run's" "stderr: $(head -2 "$d.err2")"
elif [ -n "$(ss_left "$d" out.txt)" ]; then
    ss_bad "$name" "left files in the output directory: $(ss_left "$d" out.txt)"
else
    ss_ok "$name"
fi

# Straight to standard output: nothing to remove, and the line says so.
d=$SS_WORK/sig.stdout
mkdir -p "$d"
signal_run TERM "$d" "$d/stdout.txt"
if [ "$rc" = 143 ] &&
    [ "$(cat "$d.err")" = "seqshard: interrupted by SIGTERM; the output is incomplete" ]; then
    ss_ok "SIGTERM writing to standard output"
else
    ss_bad "SIGTERM writing to standard output" "status $rc, stderr: $(head -2 "$d.err")"
fi

# The reader of our pipe goes away: quiet, 141, as `samtools ... | head` is.
set -o pipefail
"$SEQSHARD" pileup --quiet -B -r ctgA "$S1" 2>"$SS_WORK/pipe.err" | head -c 100 >/dev/null
rc=$?
set +o pipefail
if [ "$rc" = 141 ] && [ ! -s "$SS_WORK/pipe.err" ]; then
    ss_ok "closed pipe: quiet, status 141"
else
    ss_bad "closed pipe: quiet, status 141" "status $rc, stderr: $(head -2 "$SS_WORK/pipe.err")"
fi

ss_summary
exit $?
