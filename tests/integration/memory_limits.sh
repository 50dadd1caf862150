#!/usr/bin/env bash
# memory_limits.sh -- under an address-space limit (ulimit -v) an allocation that fails
# is an error that says so, never a different answer: at each limit, from one where the
# run cannot start to the first where it runs through, every run must either print the
# unlimited bytes (samtools' where samtools has the command) with exit 0, or exit 1 with
# one line (besides warnings and tcmalloc's own "allocation failed" lines) that says
# out of memory. Never exit 0 with other bytes (a reference that failed to load printing
# as N), never a false cause ("truncated or corrupt", "no index", "run samtools
# faidx"), never a crash or a hang.
# Not under sanitizers: ASan reserves terabytes of address space and aborts on a failed
# allocation.
set -u
. "$(dirname "$0")/lib.sh"
ss_setup
if ldd "$SEQSHARD" 2>/dev/null | grep -q libasan; then
    echo "SKIP: an AddressSanitizer build"
    exit 77
fi
W=$SS_WORK
S1=$TD/s1.bam
STEPS=${SS_MEM_STEPS:-12}

# limited KB ARGS...: seqshard ARGS under ulimit -v KB, into $W/got and $W/err (the
# shell's own "Aborted" line for a killed child goes to /dev/null).
limited() {
    local kb=$1
    shift
    { (ulimit -v "$kb" && exec timeout "$SS_TIMEOUT" "$SEQSHARD" "$@" </dev/null \
        >"$W/got" 2>"$W/err"); } 2>/dev/null
}

# The smallest limit (kB, doubling) at which the program starts at all: below it the
# loader cannot map the libraries, or tcmalloc its first metadata.
FLOOR=4000
while ! limited "$FLOOR" --version; do
    FLOOR=$((FLOOR * 2))
    [ "$FLOOR" -gt 1000000 ] && { echo "FAIL setup: seqshard --version fails at any limit"; exit 1; }
done

# expect NAME EXPECTED_FILE ARGS...: the sweep for one seqshard command.
expect() {
    local name=$1 exp=$2
    shift 2
    # the smallest limit (doubling from the floor) the run passes at: the sweep's top
    local top=$FLOOR rc
    while :; do
        limited "$top" "$@"
        rc=$?
        [ "$rc" = 0 ] && cmp -s "$exp" "$W/got" && break
        if [ "$top" -gt 4000000 ]; then
            ss_bad "$name" "fails even at ulimit -v $top (status $rc)" "$(head -3 "$W/err")"
            return
        fi
        top=$((top * 2))
    done
    local lim step=$(((top - FLOOR) / STEPS + 1)) n_oom=0 bad=0
    for ((lim = FLOOR; lim < top; lim += step)); do
        limited "$lim" "$@"
        rc=$?
        grep -v -e 'tcmalloc: allocation failed' -e '^seqshard: warning: ' "$W/err" >"$W/errs"
        local shown="ulimit -v $lim; $(ss_quote "$SEQSHARD" "$@")"
        if [ "$rc" = 0 ]; then
            cmp -s "$exp" "$W/got" && continue
            ss_bad "$name at $lim kB" "exit 0 with other bytes" "$shown" \
                "stderr: $(head -2 "$W/err" | cut -c1-200)"
            ss_show_diff "$exp" "$W/got"
        elif [ "$rc" = 134 ] && grep -q 'FATAL ERROR: Out of memory.*tcmalloc' "$W/err"; then
            n_oom=$((n_oom + 1)) # gperftools aborts when its own metadata cannot be had
            continue
        elif [ "$rc" -ge 124 ]; then
            ss_bad "$name at $lim kB" "status $rc (a crash or a hang)" "$shown" \
                "stderr: $(head -3 "$W/err" | cut -c1-200)"
        elif [ "$rc" != 1 ] || [ "$(wc -l <"$W/errs")" != 1 ] ||
            ! grep -q 'out of memory' "$W/errs"; then
            ss_bad "$name at $lim kB" "status $rc without one line saying out of memory" \
                "$shown" "stderr: $(head -3 "$W/errs" | cut -c1-200)"
        else
            n_oom=$((n_oom + 1))
            continue
        fi
        bad=1
    done
    if [ "$bad" = 0 ] && [ "$n_oom" = 0 ]; then
        ss_bad "$name" "no limit below $top kB failed: the sweep tested nothing"
    elif [ "$bad" = 0 ]; then
        ss_ok "$name ($n_oom out-of-memory failures below $top kB, none wrong)"
    fi
}

"$SAMTOOLS" mpileup -f "$REF" "$S1" >"$W/pileup.exp" 2>/dev/null
expect "pileup BAM" "$W/pileup.exp" pileup -@ 2 --quiet -f "$REF" "$S1"
expect "pileup BAM -@1 2k shards" "$W/pileup.exp" pileup -@ 1 --shard-size 2k --quiet -f "$REF" "$S1"
"$SAMTOOLS" mpileup -f "$REF" "$TD/s1.cram" >"$W/cram.exp" 2>/dev/null
expect "pileup CRAM" "$W/cram.exp" pileup -@ 2 --quiet -f "$REF" "$TD/s1.cram"
"$SAMTOOLS" view -T "$REF" "$TD/s1.cram" >"$W/view.exp"
expect "view CRAM" "$W/view.exp" view -@ 2 --quiet -T "$REF" "$TD/s1.cram"
"$SAMTOOLS" depth "$S1" >"$W/depth.exp"
expect "depth" "$W/depth.exp" depth -@ 2 --quiet "$S1"
# realign has no samtools twin: the unlimited run's bytes
"$SEQSHARD" realign --quiet -f "$REF" -O sam "$S1" >"$W/realign.exp" ||
    ss_bad "realign" "the unlimited run failed"
expect "realign" "$W/realign.exp" realign -@ 2 --quiet -f "$REF" -O sam "$S1"
"$SEQSHARD" pileup --realign --quiet -f "$REF" "$S1" >"$W/prl.exp" ||
    ss_bad "pileup --realign" "the unlimited run failed"
expect "pileup --realign" "$W/prl.exp" pileup --realign -@ 2 --quiet -f "$REF" "$S1"

ss_summary
exit $?
