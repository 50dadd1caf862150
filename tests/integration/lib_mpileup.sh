# shellcheck shell=bash
# lib_mpileup.sh -- helpers for the tests of seqshard mpileup against bcftools
# mpileup 1.16; source it after lib.sh, then call mp_setup after ss_setup (or
# ss_mpi_setup).
#
#   BCFTOOLS     the reference bcftools [bcftools]
#
# mp_vs runs one case: bcftools once, seqshard at each layout, byte for byte.

BCFTOOLS=${BCFTOOLS:-bcftools}
# The layouts a comparison runs at: T:S is -@T --shard-size S, NP/T:S the same under
# `mpirun -np NP` (MPIRUN from ss_mpi_setup). These: one shard, then shard edges
# everywhere at two sizes and thread counts.
# shellcheck disable=SC2034  # used by the scripts that source this file
MP_LAYOUTS="1:1g 2:2k 3:7k"
# 1: seqshard writes with -o FILE (standard output must stay empty) instead of to stdout.
mp_to_file=0
# The expected output of the last mp_vs case (bcftools'), kept until the next one.
MP_EXP=

# mp_setup: fails the test (exit 1) when bcftools is missing or is not 1.16, whose
# bytes seqshard gives.
mp_setup() {
    command -v "$BCFTOOLS" >/dev/null || { echo "FAIL setup: $BCFTOOLS not found"; exit 1; }
    local v
    v=$("$BCFTOOLS" --version | head -1)
    [ "$v" = "bcftools 1.16" ] ||
        { echo "FAIL setup: $BCFTOOLS is '$v'; seqshard mpileup gives bcftools 1.16's bytes"; exit 1; }
    # the deep amplicon contig's reference
    # shellcheck disable=SC2034  # used by the scripts that source this file
    AMP=$TD/amp.fa
}

# mp_short ARGS...: ARGS as one line, the data folder left out, for case names and messages
mp_short() {
    local a
    a=$(ss_quote "$@")
    printf '%s' "${a//$TD\//}"
}

# mp_bcftools OUT ARGS...: `bcftools mpileup --no-version ARGS` into OUT; on failure
# reports the case (the test is wrong, not seqshard) and returns 1.
mp_bcftools() {
    local out=$1
    shift
    timeout "$SS_TIMEOUT" "$BCFTOOLS" mpileup --no-version "$@" </dev/null >"$out" 2>"$out.err"
    local rc=$?
    if [ $rc != 0 ]; then
        ss_bad "bcftools $(mp_short "$@")" "bcftools itself failed (status $rc): the test is wrong" \
            "$(ss_quote "$BCFTOOLS" mpileup --no-version "$@")" "$(head -3 "$out.err")"
        return 1
    fi
    rm -f "$out.err"
}

# mp_seqshard OUT LAYOUT ARGS...: `seqshard mpileup --no-version --quiet -@T --shard-size S
# ARGS` at LAYOUT ([NP/]T:S), its output in OUT (through -o OUT when mp_to_file=1);
# sets ss_rc and mp_cmd (the command, for messages), and mp_why when the run failed.
mp_seqshard() {
    local out=$1 layout=$2 launch=()
    shift 2
    if [ "${layout#*/}" != "$layout" ]; then
        launch=("${MPIRUN[@]}" -np "${layout%%/*}")
        layout=${layout#*/}
    fi
    mp_cmd=("${launch[@]}" "$SEQSHARD" mpileup --no-version --quiet -@ "${layout%%:*}" \
        --shard-size "${layout#*:}" "$@")
    mp_why=
    if [ "$mp_to_file" = 1 ]; then
        mp_cmd+=(-o "$out")
        timeout "$SS_TIMEOUT" "${mp_cmd[@]}" </dev/null >"$out.stdout" 2>"$out.err"
    else
        timeout "$SS_TIMEOUT" "${mp_cmd[@]}" </dev/null >"$out" 2>"$out.err"
    fi
    ss_rc=$?
    if [ $ss_rc = 124 ]; then
        mp_why="timed out after ${SS_TIMEOUT}s (hang?)"
    elif [ $ss_rc != 0 ]; then
        mp_why="exit status $ss_rc"
    elif [ "$mp_to_file" = 1 ] && [ -s "$out.stdout" ]; then
        mp_why="wrote $(wc -c <"$out.stdout") bytes to standard output although -o was given"
    elif [ "$mp_to_file" = 1 ] && [ ! -f "$out" ]; then
        mp_why="no output file written"
    fi
    [ -z "$mp_why" ]
}

# mp_layout_name LAYOUT: how a layout shows in case names, e.g. "-np 2 -@1 2k -o FILE"
mp_layout_name() {
    local n="" l=$1
    [ "${l#*/}" != "$l" ] && n="-np ${l%%/*} " && l=${l#*/}
    n+="-@${l%%:*} ${l#*:}"
    [ "$mp_to_file" = 1 ] && n+=" -o FILE"
    printf '%s' "$n"
}

# mp_vs NAME LAYOUTS ARGS...
#   `bcftools mpileup --no-version ARGS` once, then seqshard mpileup with the same ARGS at
#   each [NP/]T:S of LAYOUTS (space separated): status 0 and the same bytes (cmp). The
#   expected output stays in $MP_EXP until the next case.
mp_vs() {
    local name=$1 layouts=$2
    shift 2
    ss_case_no=$((ss_case_no + 1))
    [ -n "$MP_EXP" ] && rm -f "$MP_EXP"
    MP_EXP=$SS_WORK/exp.$ss_case_no
    mp_bcftools "$MP_EXP" "$@" || return 0
    local layout got what
    ss_sweep "$layouts"
    for layout in $SWEEP; do
        got=$SS_WORK/got.$ss_case_no.${layout//[\/:]/.}
        what="$name [$(mp_layout_name "$layout")]"
        if ! mp_seqshard "$got" "$layout" "$@"; then
            ss_bad "$what" "$mp_why" "seqshard: $(ss_quote "${mp_cmd[@]}")" \
                "stderr: $(head -3 "$got.err" | cut -c1-240)"
        elif ! cmp -s "$MP_EXP" "$got"; then
            ss_bad "$what" "output differs from bcftools mpileup" \
                "seqshard: $(ss_quote "${mp_cmd[@]}")" \
                "bcftools: $(ss_quote "$BCFTOOLS" mpileup --no-version "$@")"
            ss_show_diff "$MP_EXP" "$got"
        else
            ss_ok "$what"
            rm -f "$got" "$got.err" "$got.stdout"
        fi
    done
}
