# shellcheck shell=bash
# lib_inputs.sh -- helpers for the tests of damaged inputs; source after lib.sh.

BAM_PATCH=${BAM_PATCH:-$SS_SRC/tests/integration/bam_patch.py}

# ss_lines FILE: lines in FILE, a last line without newline counted too.
ss_lines() {
    local n
    n=$(wc -l <"$1")
    [ -s "$1" ] && [ "$(tail -c1 "$1" | od -An -c | tr -d ' ')" != '\n' ] && n=$((n + 1))
    echo "$n"
}

# ss_fails_with NAME MENTION OUTNAME KERNEL ARGS...
#   `seqshard KERNEL --quiet -o DIR/OUTNAME ARGS` must exit 1 with one line on
#   stderr matching MENTION (extended regex), nothing on stdout, and leave DIR
#   empty (no output, no temporary file).
ss_fails_with() {
    local name=$1 mention=$2 outname=$3
    shift 3
    ss_case_no=$((ss_case_no + 1))
    local d=$SS_WORK/failw.$ss_case_no
    mkdir -p "$d/out"
    local kernel=$1
    shift
    local cmd=("$kernel" --quiet -o "$d/out/$outname" "$@")
    timeout "$SS_TIMEOUT" "$SEQSHARD" "${cmd[@]}" </dev/null >"$d/stdout" 2>"$d/stderr"
    local rc=$? left shown
    left=$(find "$d/out" -mindepth 1 -maxdepth 1 -printf '%f ')
    shown=$(ss_quote "$SEQSHARD" "${cmd[@]}")
    if [ $rc != 1 ]; then
        ss_bad "$name" "exit status $rc, want 1" "$shown" \
            "stderr: $(head -3 "$d/stderr" | cut -c1-300)"
    elif [ "$(ss_lines "$d/stderr")" != 1 ]; then
        ss_bad "$name" "$(ss_lines "$d/stderr") lines on stderr, want one" "$shown" \
            "stderr: $(head -4 "$d/stderr" | cut -c1-300)"
    elif ! grep -qE -- "$mention" "$d/stderr"; then
        ss_bad "$name" "the message does not say '$mention'" "$shown" \
            "stderr: $(cut -c1-300 "$d/stderr")"
    elif [ -s "$d/stdout" ] || [ -n "$left" ]; then
        ss_bad "$name" "left output: stdout $(wc -c <"$d/stdout") bytes, files: $left" "$shown"
    else
        ss_ok "$name"
        [ "$SS_VERBOSE" = 1 ] && echo "     $(cut -c1-300 "$d/stderr")"
        rm -rf "$d"
    fi
}

# ss_level0 IN OUT: OUT is IN as BGZF level 0 (stored blocks, patchable in place), indexed.
ss_level0() {
    "$SAMTOOLS" view -u -o "$2" "$1" && "$SAMTOOLS" index "$2"
}

# ss_patched NAME K FIELD VALUE: $SS_WORK/NAME.bam is $SS_WORK/u.bam with record K's
# FIELD set to VALUE, beside u.bam's index (copied after it, so it is not older).
ss_patched() {
    python3 "$BAM_PATCH" set "$SS_WORK/u.bam" "$SS_WORK/$1.bam" "$2" "$3" "$4" &&
        cp "$SS_WORK/u.bam.bai" "$SS_WORK/$1.bam.bai"
}
