# shellcheck shell=bash
# lib.sh -- helpers for the integration tests; source it, do not run it.
#
# Environment (set by ctest, defaults for running by hand from the repo):
#   SEQSHARD     the seqshard binary           [<repo>/build/seqshard]
#   SS_TESTDATA  data from make-testdata.sh    [<repo>/build/testdata]
#   SS_SRC       the repository                [two levels above this file]
#   SAMTOOLS     the reference samtools        [samtools]
#   SS_TIMEOUT   seconds before one seqshard run counts as hung [120]
#   SS_VERBOSE=1 print every passing case too
#   SS_SWEEP     quick: each case at one layout of its list [quick]; full: at all of them
#
# Each check prints one line "FAIL name ..." (with details) or, with
# SS_VERBOSE=1, "ok name". ss_summary prints "N passed, M failed" and
# returns non-zero when anything failed; end every test with
# `ss_summary; exit $?`.

SS_SRC=${SS_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
SEQSHARD=${SEQSHARD:-$SS_SRC/build/seqshard}
# The size of one --resume manifest record (SS_RESUME_REC_SIZE, framework/resume.h):
# its fields, then SS_KERNEL_COUNTERS counters and SS_SUMMARY_N sums of 8 bytes.
ss_def() { sed -n "s/^#define $1 \([0-9]*\).*/\1/p" "$SS_SRC/framework/ss_framework.h"; }
SS_RESUME_REC=$((48 + 8 * $(ss_def SS_KERNEL_COUNTERS) + 8 * $(ss_def SS_SUMMARY_N)))
SS_TESTDATA=${SS_TESTDATA:-$SS_SRC/build/testdata}
SAMTOOLS=${SAMTOOLS:-samtools}
SS_TIMEOUT=${SS_TIMEOUT:-120}
SS_VERBOSE=${SS_VERBOSE:-0}
SS_SWEEP=${SS_SWEEP:-quick}

ss_passed=0
ss_failed=0
ss_failed_names=()
SS_T0=$SECONDS

# Fail fast (exit 1) when the binary or the data set is missing: a test
# that silently checks nothing is worse than a red one.
# ss_mpi_setup: ss_setup for a test that runs mpirun: skips (77) when the build has no
# MPI, fails when mpirun is missing, and sets MPIRUN to the launcher line every MPI test
# uses (oversubscribed on 2 cores, unbound, root allowed, loopback transports only).
ss_mpi_setup() {
    if [ "${SS_MPI:-1}" = 0 ]; then
        echo "SKIP: built without MPI"
        exit 77
    fi
    ss_setup
    command -v mpirun >/dev/null || { echo "FAIL setup: mpirun not found"; exit 1; }
    MPIRUN=(mpirun --oversubscribe --bind-to none)
    [ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
    export OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
}

ss_setup() {
    if [ ! -x "$SEQSHARD" ]; then
        echo "FAIL setup: SEQSHARD=$SEQSHARD is not an executable; build it first" >&2
        exit 1
    fi
    if [ ! -f "$SS_TESTDATA/.stamp" ]; then
        echo "FAIL setup: no test data in SS_TESTDATA=$SS_TESTDATA;" \
            "run scripts/make-testdata.sh $SS_TESTDATA" >&2
        exit 1
    fi
    command -v "$SAMTOOLS" >/dev/null || { echo "FAIL setup: $SAMTOOLS not found" >&2; exit 1; }
    TD=$SS_TESTDATA
    # shellcheck disable=SC2034  # used by the scripts that source this file
    REF=$TD/ref.fa
    SS_WORK=$(mktemp -d "${TMPDIR:-/tmp}/ss-it.XXXXXX")
    # Keep the work directory when something failed, for a look afterwards.
    trap 'if [ "$ss_failed" = 0 ]; then rm -rf "$SS_WORK"; else echo "(kept $SS_WORK)"; fi' EXIT
}

# The lines of stderr file FILE that are not the job log's timestamped start, progress and
# final lines (stderr is not a terminal here, so runs without --quiet print those too).
SS_LOG_LINE='^seqshard: [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z '
ss_error_lines() {
    grep -vE "$SS_LOG_LINE" "$1"
}

# A command as one copy-pasteable line.
ss_quote() {
    local out="" a
    for a in "$@"; do out+="$(printf '%q' "$a") "; done
    printf '%s' "${out% }"
}

ss_ok() {
    ss_passed=$((ss_passed + 1))
    [ "$SS_VERBOSE" = 1 ] && echo "ok   $1"
    return 0
}

# ss_bad NAME MESSAGE [DETAIL LINES...]
ss_bad() {
    local name=$1
    shift
    ss_failed=$((ss_failed + 1))
    ss_failed_names+=("$name")
    echo "FAIL $name: $1"
    shift
    local l
    for l in "$@"; do echo "     $l"; done
}

# Show where two files part: the first differing line numbers and a short
# unified diff.
ss_show_diff() { # expected got
    local c
    c=$(cmp "$1" "$2" 2>&1 | head -1)
    echo "     cmp: $c"
    echo "     sizes: expected $(wc -c <"$1") bytes / $(wc -l <"$1") lines," \
        "got $(wc -c <"$2") bytes / $(wc -l <"$2") lines"
    diff "$1" "$2" | head -n 12 | cut -c1-240 | sed 's/^/     | /'
}

# ss_run_seqshard OUT ERR ARGS...: run with a timeout; sets ss_rc.
ss_run_seqshard() {
    local out=$1 err=$2
    shift 2
    timeout "$SS_TIMEOUT" "$SEQSHARD" "$@" </dev/null >"$out" 2>"$err"
    ss_rc=$?
    if [ $ss_rc = 124 ]; then
        echo "seqshard: timed out after ${SS_TIMEOUT}s (hang?)" >>"$err"
    fi
}

ss_case_no=0

# ss_sweep LAYOUTS...: sets SWEEP to the layouts (T:S, NP/T:S or any words) a case runs
# at. With SS_SWEEP=full (make test-long) all of them; otherwise one, taken in turn from
# case to case, so that a test still runs every thread count and shard size of its lists
# (the shard edges inside reads, piles and indels among them) but each case once: make
# test keeps to its time and the whole matrix runs in CI's long pass. The picks are the
# same on every run, so a failure repeats. A list that starts with the word `every` runs
# whole in both modes (a case that needs its layouts together, e.g. shards continuing one
# random stream). Call it in the test's shell, not in $(...), which would lose the count.
ss_sweep_no=0
SWEEP=
ss_sweep() {
    local all
    read -r -a all <<<"$*"
    if [ "${all[0]:-}" = every ]; then
        SWEEP="${all[*]:1}"
    elif [ "$SS_SWEEP" = full ] || [ ${#all[@]} -le 1 ]; then
        SWEEP="${all[*]}"
    else
        SWEEP="${all[$((ss_sweep_no % ${#all[@]}))]}"
    fi
    ss_sweep_no=$((ss_sweep_no + 1))
}

# ss_pileup NAME COMBOS ARGS...
#   Run `samtools mpileup ARGS` once and `seqshard pileup -@T --shard-size S
#   --quiet ARGS` for each T:S in COMBOS (space separated, e.g. "1:1m 3:2k"),
#   and require the same exit status and byte-identical standard output.
ss_pileup() {
    local name=$1 combos=$2
    shift 2
    ss_case_no=$((ss_case_no + 1))
    local exp=$SS_WORK/exp.$ss_case_no experr=$SS_WORK/exp.$ss_case_no.err
    "$SAMTOOLS" mpileup "$@" >"$exp" 2>"$experr"
    local exprc=$?
    if [ $exprc != 0 ]; then
        ss_bad "$name" "samtools itself failed (status $exprc): the test is wrong" \
            "$(ss_quote "$SAMTOOLS" mpileup "$@")" "$(head -3 "$experr")"
        return 1
    fi
    local combo t s got goterr cmd before=$ss_failed
    ss_sweep "$combos"
    for combo in $SWEEP; do
        t=${combo%%:*}
        s=${combo#*:}
        got=$SS_WORK/got.$ss_case_no.$t.$s
        goterr=$got.err
        cmd=(pileup -@ "$t" --shard-size "$s" --quiet "$@")
        ss_run_seqshard "$got" "$goterr" "${cmd[@]}"
        if [ $ss_rc != $exprc ]; then
            ss_bad "$name [-@$t --shard-size $s]" "exit status $ss_rc, samtools $exprc" \
                "seqshard: $(ss_quote "$SEQSHARD" "${cmd[@]}")" \
                "samtools: $(ss_quote "$SAMTOOLS" mpileup "$@")" \
                "stderr: $(head -3 "$goterr")"
        elif ! cmp -s "$exp" "$got"; then
            ss_bad "$name [-@$t --shard-size $s]" "output differs from samtools" \
                "seqshard: $(ss_quote "$SEQSHARD" "${cmd[@]}")" \
                "samtools: $(ss_quote "$SAMTOOLS" mpileup "$@")"
            ss_show_diff "$exp" "$got"
        else
            ss_ok "$name [-@$t --shard-size $s]"
            rm -f "$got" "$goterr"
        fi
    done
    # Keep the expected output only when a failure may need it.
    [ "$ss_failed" = "$before" ] && rm -f "$exp" "$experr"
    return 0
}

# ss_pileup_outfile NAME T S ARGS...: the same, but both write with -o FILE;
# also checks that nothing but FILE is left in its directory.
ss_pileup_outfile() {
    local name=$1 t=$2 s=$3
    shift 3
    ss_case_no=$((ss_case_no + 1))
    local d=$SS_WORK/outfile.$ss_case_no
    mkdir -p "$d/exp" "$d/got"
    "$SAMTOOLS" mpileup -o "$d/exp/out.txt" "$@" 2>"$d/exp.err"
    local exprc=$?
    local cmd=(pileup -@ "$t" --shard-size "$s" --quiet -o "$d/got/out.txt" "$@")
    ss_run_seqshard "$d/stdout" "$d/got.err" "${cmd[@]}"
    local left
    left=$(find "$d/got" -mindepth 1 -maxdepth 1 ! -name out.txt -printf '%f ')
    if [ $ss_rc != $exprc ]; then
        ss_bad "$name" "exit status $ss_rc, samtools $exprc" \
            "seqshard: $(ss_quote "$SEQSHARD" "${cmd[@]}")" "stderr: $(head -3 "$d/got.err")"
    elif [ ! -f "$d/got/out.txt" ]; then
        ss_bad "$name" "no output file written" "seqshard: $(ss_quote "$SEQSHARD" "${cmd[@]}")"
    elif [ -s "$d/stdout" ]; then
        ss_bad "$name" "wrote to stdout although -o was given" \
            "seqshard: $(ss_quote "$SEQSHARD" "${cmd[@]}")"
    elif [ -n "$left" ]; then
        ss_bad "$name" "left other files next to the output: $left" \
            "seqshard: $(ss_quote "$SEQSHARD" "${cmd[@]}")"
    elif ! cmp -s "$d/exp/out.txt" "$d/got/out.txt"; then
        ss_bad "$name" "output file differs from samtools -o" \
            "seqshard: $(ss_quote "$SEQSHARD" "${cmd[@]}")" \
            "samtools: $(ss_quote "$SAMTOOLS" mpileup -o "$d/exp/out.txt" "$@")"
        ss_show_diff "$d/exp/out.txt" "$d/got/out.txt"
    else
        ss_ok "$name"
        rm -rf "$d"
    fi
}

# ss_same NAME ARGS_A -- ARGS_B: two seqshard runs must give the same bytes.
ss_same() {
    local name=$1
    shift
    local a=() b=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do a+=("$1"); shift; done
    shift
    b=("$@")
    ss_case_no=$((ss_case_no + 1))
    local fa=$SS_WORK/same.$ss_case_no.a fb=$SS_WORK/same.$ss_case_no.b ra rb
    ss_run_seqshard "$fa" "$fa.err" "${a[@]}"
    ra=$ss_rc
    ss_run_seqshard "$fb" "$fb.err" "${b[@]}"
    rb=$ss_rc
    if [ $ra != 0 ] || [ $rb != 0 ]; then
        ss_bad "$name" "exit status $ra / $rb" "A: $(ss_quote "$SEQSHARD" "${a[@]}")" \
            "B: $(ss_quote "$SEQSHARD" "${b[@]}")" "stderr A: $(head -2 "$fa.err")" \
            "stderr B: $(head -2 "$fb.err")"
    elif ! cmp -s "$fa" "$fb"; then
        ss_bad "$name" "output depends on threads/shard size" \
            "A: $(ss_quote "$SEQSHARD" "${a[@]}")" "B: $(ss_quote "$SEQSHARD" "${b[@]}")"
        ss_show_diff "$fa" "$fb"
    else
        ss_ok "$name"
        rm -f "$fa" "$fb" "$fa.err" "$fb.err"
    fi
}

# ss_summary: "N passed, M failed"; returns 1 if anything failed.
ss_summary() {
    echo "$(basename "$0"): $ss_passed passed, $ss_failed failed ($((SECONDS - SS_T0)) s)"
    if [ "$ss_failed" != 0 ]; then
        local n
        for n in "${ss_failed_names[@]}"; do echo "  failed: $n"; done
        return 1
    fi
    return 0
}

# Environment assignments (NAME=VALUE) or `-u NAME` words for ss_fails,
# passed to env(1); reset by the caller.
ss_env=()

# ss_fails NAME STATUS MENTION ARGS...
#   `seqshard pileup --quiet -o DIR/out.txt ARGS` (DIR fresh and empty) must
#   exit with STATUS, print exactly one line on stderr that matches MENTION
#   (an extended regular expression, e.g. the file name), print nothing on
#   stdout, and leave DIR empty: no output file, no temporary files.
ss_fails() {
    local name=$1 want=$2 mention=$3
    shift 3
    ss_case_no=$((ss_case_no + 1))
    local d=$SS_WORK/fail.$ss_case_no
    mkdir -p "$d/out"
    local cmd=(pileup --quiet -o "$d/out/out.txt" "$@")
    timeout "$SS_TIMEOUT" env "${ss_env[@]}" "$SEQSHARD" "${cmd[@]}" </dev/null \
        >"$d/stdout" 2>"$d/stderr"
    local rc=$? nlines left shown
    nlines=$(wc -l <"$d/stderr")
    # A last line without a newline still counts as a line.
    [ -s "$d/stderr" ] && [ "$(tail -c1 "$d/stderr" | od -An -c | tr -d ' ')" != '\n' ] &&
        nlines=$((nlines + 1))
    left=$(find "$d/out" -mindepth 1 -maxdepth 1 -printf '%f ')
    shown=$(ss_quote "$SEQSHARD" "${cmd[@]}")
    [ ${#ss_env[@]} -gt 0 ] && shown="env $(ss_quote "${ss_env[@]}") $shown"
    if [ $rc = 124 ]; then
        ss_bad "$name" "timed out after ${SS_TIMEOUT}s (hang?)" "$shown"
    elif [ $rc != "$want" ]; then
        ss_bad "$name" "exit status $rc, want $want" "$shown" \
            "stderr: $(head -3 "$d/stderr" | cut -c1-200)"
    elif [ "$nlines" != 1 ]; then
        ss_bad "$name" "$nlines lines on stderr, want exactly one" "$shown" \
            "stderr: $(head -5 "$d/stderr" | cut -c1-200)"
    elif ! grep -qE -- "$mention" "$d/stderr"; then
        ss_bad "$name" "the message does not mention '$mention'" "$shown" \
            "stderr: $(head -3 "$d/stderr" | cut -c1-200)"
    elif [ -s "$d/stdout" ]; then
        ss_bad "$name" "printed on stdout although -o was given" "$shown"
    elif [ -n "$left" ]; then
        ss_bad "$name" "left files in the output directory: $left" "$shown" \
            "stderr: $(head -1 "$d/stderr" | cut -c1-200)"
    else
        ss_ok "$name"
        [ "$SS_VERBOSE" = 1 ] && echo "     $(cut -c1-200 "$d/stderr")"
        rm -rf "$d"
    fi
}

# ss_keeps_target NAME ARGS...: with an existing -o target, a failing run
# must leave it byte for byte as it was and add nothing next to it.
ss_keeps_target() {
    local name=$1
    shift
    ss_case_no=$((ss_case_no + 1))
    local d=$SS_WORK/keep.$ss_case_no
    mkdir -p "$d/out"
    printf 'precious results\nline 2\n' >"$d/out/out.txt"
    cp -p "$d/out/out.txt" "$d/orig.txt"
    local cmd=(pileup --quiet -o "$d/out/out.txt" "$@")
    timeout "$SS_TIMEOUT" env "${ss_env[@]}" "$SEQSHARD" "${cmd[@]}" </dev/null \
        >"$d/stdout" 2>"$d/stderr"
    local rc=$? left shown
    left=$(find "$d/out" -mindepth 1 -maxdepth 1 ! -name out.txt -printf '%f ')
    shown=$(ss_quote "$SEQSHARD" "${cmd[@]}")
    [ ${#ss_env[@]} -gt 0 ] && shown="env $(ss_quote "${ss_env[@]}") $shown"
    if [ $rc = 0 ] || [ $rc = 124 ]; then
        ss_bad "$name" "exit status $rc, want a failure" "$shown"
    elif ! cmp -s "$d/orig.txt" "$d/out/out.txt"; then
        ss_bad "$name" "the existing output file was changed or removed" "$shown" \
            "stderr: $(head -1 "$d/stderr" | cut -c1-200)"
    elif [ -n "$left" ]; then
        ss_bad "$name" "left files next to the output: $left" "$shown"
    else
        ss_ok "$name"
        rm -rf "$d"
    fi
}
