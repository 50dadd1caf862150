#!/usr/bin/env bash
# resume.sh -- --resume after a kill: a run killed (SIGKILL, SIGTERM) when
# its manifest shows about half of the shards, rerun with --resume, gives the
# bytes of an uninterrupted run (pileup text, pileup .gz with its .tbi, view
# BAM with --write-index's .csi, view CRAM, view -c's count), recomputes at
# most 60% of the shards (--report's "resume") and takes at most 60% of a full
# run's time. A resume whose options, inputs or shard size changed is refused
# with a message saying what changed, and keeps the files for a corrected
# rerun; a damaged shard in the temporary is recomputed, not trusted; a
# manifest copied from another output is refused.
#
# Shards are slowed by the test hook SEQSHARD_TEST_SHARD_DELAY_MS, so that a
# run on the small test data takes a few seconds and can be stopped part way.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_output.sh"
ss_setup
S1=$TD/s1.bam
W=$SS_WORK
DELAY=150                          # ms per shard: 28 shards of 5k take about 4 s
FW=(--quiet -@ 1 --shard-size 5k)  # one worker: shards finish in order, at an even pace

# records MANIFEST: how many shard records it holds (past the "end CRC" line).
records() {
    local m=$1 at size
    [ -f "$m" ] || { echo 0; return; }
    at=$(grep -abo -m1 $'^end [0-9a-f]\\{8\\}$' "$m" | cut -d: -f1)
    size=$(stat -c %s "$m")
    [ -n "$at" ] || { echo 0; return; }
    echo $(( (size - at - 13) / SS_RESUME_REC ))
}

# interrupt SIGNAL WANT DIR OUT ARGS...: run seqshard ARGS -o DIR/OUT slowly, send SIGNAL once
# the manifest holds WANT records; sets rc (the run's status).
interrupt() {
    local sig=$1 want=$2 d=$3 out=$4 pid i
    shift 4
    SEQSHARD_TEST_SHARD_DELAY_MS=$DELAY timeout "$SS_TIMEOUT" "$SEQSHARD" "$@" -o "$d/$out" \
        </dev/null >/dev/null 2>"$d/killed.err" &
    pid=$!
    for i in $(seq 600); do
        [ "$(records "$d/.$out.resume")" -ge "$want" ] && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
    done
    kill -"$sig" "$(pgrep -P "$pid")" 2>/dev/null
    wait "$pid" 2>/dev/null
    rc=$?
}

# json FILE KEY: the number after "KEY": in the report.
json() {
    grep -o "\"$2\": [0-9]*" "$1" | head -1 | grep -o '[0-9]*$'
}

# case NAME SIGNAL OUT EXTS ARGS...: the reference run, the interrupted run and the resumed one;
# the output and each index extension in EXTS (comma separated, "" for none) must be equal.
resume_case() {
    local name=$1 sig=$2 out=$3 exts=$4 d t0 t1 ext reused total keep
    shift 4
    keep=(ref "$out" r.json killed.err resume.err)
    for ext in ${exts//,/ }; do keep+=("$out$ext"); done
    d=$W/case.$((++n_case))
    mkdir -p "$d/ref"
    # under the same -o name: view's @PG CL holds it
    if ! "$SEQSHARD" "$@" "${FW[@]}" -o "$d/$out"; then
        ss_bad "$name" "the reference run failed"
        return
    fi
    mv "$d/$out" "$d/ref/"
    for ext in ${exts//,/ }; do mv "$d/$out$ext" "$d/ref/"; done
    interrupt "$sig" 14 "$d" "$out" "$@" "${FW[@]}"
    want=$((128 + $(kill -l "$sig")))
    if [ "$rc" != "$want" ]; then
        ss_bad "$name" "interrupted run: status $rc, want $want" "$(head -2 "$d/killed.err")"
        return
    fi
    if [ -e "$d/$out" ]; then
        ss_bad "$name" "the interrupted run left $out in place"
        return
    fi
    t0=$(date +%s.%N)
    SEQSHARD_TEST_SHARD_DELAY_MS=$DELAY "$SEQSHARD" "$@" "${FW[@]}" --resume --report "$d/r.json" \
        -o "$d/$out" 2>"$d/resume.err"
    rc=$?
    t1=$(date +%s.%N)
    resumed_s=$(echo "$t1 - $t0" | bc)
    reused=$(json "$d/r.json" reused_shards)
    total=$(json "$d/r.json" shards)
    if [ "$rc" != 0 ]; then
        ss_bad "$name" "--resume: status $rc" "$(head -3 "$d/resume.err")"
        return
    fi
    if ! cmp -s "$d/ref/$out" "$d/$out"; then
        ss_bad "$name" "the resumed output differs from an uninterrupted run's"
        return
    fi
    for ext in ${exts//,/ }; do
        if ! cmp -s "$d/ref/$out$ext" "$d/$out$ext"; then
            ss_bad "$name" "the resumed $ext differs from an uninterrupted run's"
            return
        fi
    done
    if [ -n "$(ss_left "$d" "${keep[@]}")" ]; then
        ss_bad "$name" "left files: $(ss_left "$d" "${keep[@]}")"
        return
    fi
    if [ -z "$reused" ] || [ $(( (total - reused) * 100 )) -gt $(( total * 60 )) ]; then
        ss_bad "$name" "recomputed $((total - ${reused:-0})) of $total shards, want at most 60%"
        return
    fi
    ss_ok "$name (reused $reused of $total shards, resumed in ${resumed_s}s)"
    [ "$SS_VERBOSE" = 1 ] ||
        echo "     $name: reused $reused of $total shards, resumed in ${resumed_s}s"
}
n_case=0

resume_case "pileup text, SIGKILL" KILL out.txt "" pileup -B "$S1"
resume_case "pileup .gz + .tbi, SIGKILL" KILL out.txt.gz ".tbi" pileup -B "$S1"
resume_case "view BAM --write-index, SIGKILL" KILL out.bam ".csi" view -b --write-index "$S1"
resume_case "view CRAM, SIGKILL" KILL out.cram "" view -C -T "$REF" "$S1"
resume_case "pileup text, SIGTERM" TERM out.txt "" pileup -B "$S1"
resume_case "view -c, SIGKILL" KILL count.txt "" view -c "$S1"

# The SIGTERM line says the run can be resumed.
d=$W/case.5
want='seqshard: interrupted by SIGTERM; no output written; rerun the same command with --resume'
if grep -qx "$want to continue" "$d/killed.err"; then
    ss_ok "SIGTERM: the line says to rerun with --resume"
else
    ss_bad "SIGTERM: the line says to rerun with --resume" "stderr: $(head -2 "$d/killed.err")"
fi

# view -c: the count and --report's kernel counts of a resumed run are a full run's.
d=$W/case.6
"$SEQSHARD" view -c "${FW[@]}" --report "$d/full.json" -o "$d/full.txt" "$S1"
if [ "$(grep -o '"kernel_counts": {[^}]*}' "$d/full.json")" = \
    "$(grep -o '"kernel_counts": {[^}]*}' "$d/r.json")" ]; then
    ss_ok "view -c: kernel_counts after --resume equal a full run's"
else
    ss_bad "view -c: kernel_counts after --resume equal a full run's" \
        "full: $(grep -o '"kernel_counts": {[^}]*}' "$d/full.json")" \
        "resumed: $(grep -o '"kernel_counts": {[^}]*}' "$d/r.json")"
fi

# Time: the resumed run takes at most 60% of a full run's (same slowed shards).
d=$W/case.1
t0=$(date +%s.%N)
SEQSHARD_TEST_SHARD_DELAY_MS=$DELAY "$SEQSHARD" pileup -B "${FW[@]}" -o "$d/timed.txt" "$S1"
t1=$(date +%s.%N)
full_s=$(echo "$t1 - $t0" | bc)
"$SEQSHARD" pileup -B "${FW[@]}" -o "$d/out.txt" "$S1" 2>/dev/null # (re)make case 1's files
interrupt KILL 14 "$d" out.txt pileup -B "$S1" "${FW[@]}"
t0=$(date +%s.%N)
SEQSHARD_TEST_SHARD_DELAY_MS=$DELAY "$SEQSHARD" pileup -B "${FW[@]}" --resume -o "$d/out.txt" "$S1"
t1=$(date +%s.%N)
res_s=$(echo "$t1 - $t0" | bc)
if [ "$(echo "$res_s <= 0.6 * $full_s" | bc)" = 1 ]; then
    ss_ok "resumed run ${res_s}s <= 60% of a full run's ${full_s}s"
else
    ss_bad "resumed run takes at most 60% of a full run" "resumed ${res_s}s, full ${full_s}s"
fi
echo "     times: full run ${full_s}s, resumed after a kill at half ${res_s}s"

# ---- refusals: what changed is named, and the earlier run's files stay -----------------------
# refused NAME MENTION DIR ARGS...: --resume must fail with status 1 and a line matching MENTION,
# and leave the temporary and the manifest in DIR.
refused() {
    local name=$1 mention=$2 d=$3
    shift 3
    "$SEQSHARD" "$@" --resume </dev/null >/dev/null 2>"$d/refused.err"
    local rc=$?
    if [ "$rc" != 1 ]; then
        ss_bad "$name" "status $rc, want 1" "$(head -2 "$d/refused.err")"
    elif ! ss_error_lines "$d/refused.err" | grep -qE "$mention"; then
        ss_bad "$name" "no line matches '$mention'" "stderr: $(head -2 "$d/refused.err")"
    elif [ ! -f "$d/.out.txt.tmp.seqshard" ] || [ ! -f "$d/.out.txt.resume" ]; then
        ss_bad "$name" "the earlier run's files were removed"
    else
        ss_ok "$name"
    fi
}
d=$W/refuse
mkdir -p "$d"
cp "$S1" "$d/in.bam"
cp "$S1.bai" "$d/in.bam.bai"
touch -r "$S1" "$d/in.bam" "$d/in.bam.bai"
interrupt KILL 5 "$d" out.txt pileup -B "$d/in.bam" "${FW[@]}"
refused "changed option -Q: refused" 'cannot resume: options changed.*rerun without --resume' \
    "$d" pileup -B -Q 20 "${FW[@]}" -o "$d/out.txt" "$d/in.bam"
refused "other --shard-size: refused" 'cannot resume: the shard plan changed' \
    "$d" pileup -B --quiet -@ 1 --shard-size 7k -o "$d/out.txt" "$d/in.bam"
touch "$d/in.bam.bai" "$d/in.bam"
refused "touched input: refused" 'cannot resume: inputs changed \(input .*in\.bam' \
    "$d" pileup -B "${FW[@]}" -o "$d/out.txt" "$d/in.bam"

# A manifest (and temporary) copied beside another output name: refused.
interrupt KILL 5 "$d" out.txt pileup -B "$d/in.bam" "${FW[@]}"
cp "$d/.out.txt.resume" "$d/.other.txt.resume"
cp "$d/.out.txt.tmp.seqshard" "$d/.other.txt.tmp.seqshard"
"$SEQSHARD" pileup -B "${FW[@]}" --resume -o "$d/other.txt" "$d/in.bam" 2>"$d/other.err"
rc=$?
if [ "$rc" = 1 ] && grep -q 'cannot resume: the manifest belongs to another output' \
    "$d/other.err"; then
    ss_ok "a manifest from another output: refused"
else
    ss_bad "a manifest from another output: refused" "status $rc, stderr: $(head -2 "$d/other.err")"
fi

# Without --resume, an earlier run's files are overwritten, with a warning.
"$SEQSHARD" pileup -B "${FW[@]}" -o "$d/out.txt" "$d/in.bam" 2>"$d/fresh.err"
"$SEQSHARD" pileup -B "${FW[@]}" -o "$d/plain.txt" "$d/in.bam"
if grep -q 'partial output is beside it; starting from scratch' "$d/fresh.err" &&
    cmp -s "$d/out.txt" "$d/plain.txt" && [ ! -e "$d/.out.txt.resume" ] &&
    [ ! -e "$d/.out.txt.tmp.seqshard" ]; then
    ss_ok "no --resume: starts again, says so, leaves nothing"
else
    ss_bad "no --resume: starts again, says so, leaves nothing" \
        "stderr: $(head -2 "$d/fresh.err")" "left: $(ss_left "$d")"
fi

# A damaged shard in the temporary is recomputed, not trusted.
interrupt KILL 14 "$d" out.txt pileup -B "$d/in.bam" "${FW[@]}"
off=$(( $(stat -c %s "$d/.out.txt.tmp.seqshard") / 4 ))
printf 'X' | dd of="$d/.out.txt.tmp.seqshard" bs=1 seek="$off" conv=notrunc status=none
kept=$(records "$d/.out.txt.resume")
"$SEQSHARD" pileup -B "${FW[@]}" --resume --report "$d/r.json" -o "$d/out.txt" "$d/in.bam"
reused=$(json "$d/r.json" reused_shards)
if cmp -s "$d/out.txt" "$d/plain.txt" && [ "${reused:-0}" -lt "$kept" ] &&
    [ "${reused:-0}" -gt 0 ]; then
    ss_ok "a flipped byte: that shard recomputed ($reused of $kept recorded reused), output right"
else
    ss_bad "a flipped byte: that shard recomputed" "reused ${reused:-?} of $kept recorded" \
        "$(cmp "$d/out.txt" "$d/plain.txt" 2>&1)"
fi

# --resume where nothing can be resumed: standard output is refused; no earlier run is a note.
"$SEQSHARD" pileup -B "${FW[@]}" --resume "$S1" >/dev/null 2>"$d/stdout.err"
rc=$?
if [ "$rc" = 1 ] && grep -q -- '--resume needs -o FILE' "$d/stdout.err"; then
    ss_ok "--resume to standard output: refused"
else
    ss_bad "--resume to standard output: refused" "status $rc, stderr: $(head -2 "$d/stdout.err")"
fi
mkdir -p "$d/new"
"$SEQSHARD" pileup -B "${FW[@]}" --resume -o "$d/new/out.txt" "$S1" 2>"$d/new.err"
if [ $? = 0 ] && cmp -s "$d/new/out.txt" "$d/plain.txt" &&
    grep -q 'no earlier run of this command to resume' "$d/new.err"; then
    ss_ok "--resume with no earlier run: a note, then a whole run"
else
    ss_bad "--resume with no earlier run: a note, then a whole run" "$(head -2 "$d/new.err")"
fi

# Two runs writing the same FILE at once: the second is refused (the temporary is locked).
mkdir -p "$d/lock"
SEQSHARD_STALL_SHARD=2 timeout "$SS_TIMEOUT" "$SEQSHARD" pileup -B "${FW[@]}" \
    -o "$d/lock/out.txt" "$S1" 2>/dev/null &
pid=$!
for i in $(seq 200); do [ -e "$d/lock/.out.txt.resume" ] && break; sleep 0.05; done
"$SEQSHARD" pileup -B "${FW[@]}" -o "$d/lock/out.txt" "$S1" 2>"$d/lock.err"
rc=$?
kill -TERM "$(pgrep -P "$pid")" 2>/dev/null
wait "$pid" 2>/dev/null
if [ "$rc" = 1 ] && grep -q 'another seqshard run is writing it' "$d/lock.err"; then
    ss_ok "a second run on the same -o: refused while the first runs"
else
    ss_bad "a second run on the same -o: refused" "status $rc, stderr: $(head -2 "$d/lock.err")"
fi

ss_summary
exit $?
