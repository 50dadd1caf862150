# lib_call.sh -- sourced by the --call tests (mpileup_call*.sh): seqshard mpileup --call
# against the bcftools mpileup | bcftools call pipe, at several -@ and --shard-size. Needs
# lib.sh, lib_mpileup.sh and W (the work directory) set by the caller.

# verdict NAME RC EXP GOT: seqshard's run (exit status RC, output GOT, its stderr GOT.err)
# against the pipe's EXP. 0 when they match.
verdict() {
    local name=$1 rc=$2 exp=$3 got=$4
    if [ "$rc" != 0 ]; then
        ss_bad "$name" "exit status $rc" "$(head -2 "$got.err")"
    elif ! cmp -s "$exp" "$got"; then
        ss_bad "$name" "differs from bcftools mpileup | call"
        ss_show_diff "$exp" "$got"
    else
        ss_ok "$name ($(grep -vc '^#' "$got") records)"
        return 0
    fi
    return 1
}

# call_vs NAME "CALL OPTS" LAYOUTS MPILEUP ARGS...
call_vs() {
    local name=$1 copts=$2 layouts=$3
    shift 3
    ss_case_no=$((ss_case_no + 1))
    local exp=$W/call.exp.$ss_case_no layout got
    # shellcheck disable=SC2086 # copts is a word list
    if ! "$BCFTOOLS" mpileup --no-version -Ou "$@" 2>/dev/null |
        "$BCFTOOLS" call --no-version $copts >"$exp" 2>"$exp.err"; then
        ss_bad "$name" "the bcftools pipe itself failed: the test is wrong" "$(head -2 "$exp.err")"
        return 0
    fi
    ss_sweep "$layouts"
    for layout in $SWEEP; do
        got=$W/call.got.$ss_case_no.${layout//:/.}
        # shellcheck disable=SC2086
        timeout "$SS_TIMEOUT" "$SEQSHARD" mpileup --no-version --quiet -@ "${layout%%:*}" \
            --shard-size "${layout#*:}" "$@" --call $copts >"$got" 2>"$got.err" </dev/null
        verdict "$name [-@${layout%%:*} ${layout#*:}]" $? "$exp" "$got" && rm -f "$got" "$got.err"
    done
}
