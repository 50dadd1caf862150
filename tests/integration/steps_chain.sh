#!/usr/bin/env bash
# steps_chain.sh -- contract 8: a chain of record steps in front of a kernel
# gives the bytes of its steps run one by one, each step's output written,
# indexed and read by the next. The steps are realign (real realignment) and
# the test step shift (tests/kernels/shift.c) of the test program; the chains
# run realign nearer the file whatever the command-line order. References:
# R = realign(in), S = shift(in), RS = shift(R), made by the commands
# `seqshard-test realign` and `shift` at -@1; S is checked against
# shift_expect.py + samtools sort. Then view, pileup (BAQ on and off, -r, -l),
# depth -a (-r) and depth --mosdepth with --realign, --shift and both (either
# order) must give what the kernel gives on R, S or RS, at threads 1-3, shard
# sizes 2k to the default, and under mpirun -np 2 and 3; BAM output of a chain
# and a step command with a step behind it give the reference's records; the
# refusals (a step's option without the step, no reference, standard input)
# are one line with the right status; --report's realign counters do not
# depend on the scale.
set -u
. "$(dirname "$0")/lib.sh"
ss_setup
SEQSHARD_TEST=${SEQSHARD_TEST:-$SS_SRC/build/tests/seqshard-test}
[ -x "$SEQSHARD_TEST" ] || { echo "FAIL setup: no test program $SEQSHARD_TEST"; exit 1; }
ST=$SEQSHARD_TEST
W=$SS_WORK

# ---- the one-by-one references ---------------------------------------------------------------

# setup_run OUT ARGS...: a reference-making run of the test program, indexed; exits on failure
setup_run() {
    local out=$1
    shift
    if ! timeout "$SS_TIMEOUT" "$ST" "$@" --quiet -@ 1 -o "$out" </dev/null 2>"$W/setup.err" ||
        ! "$SAMTOOLS" index "$out" 2>>"$W/setup.err"; then
        echo "FAIL setup: $(ss_quote "$ST" "$@" -o "$out")" "$(head -2 "$W/setup.err")"
        exit 1
    fi
}

# refs NAME INPUT: $W/NAME.R.bam, NAME.S.bam, NAME.RS.bam; S checked against shift_expect.py
refs() {
    local n=$1 in=$2
    setup_run "$W/$n.R.bam" realign -f "$REF" -O bam "$in"
    setup_run "$W/$n.S.bam" shift -T "$REF" -O bam "$in"
    setup_run "$W/$n.RS.bam" shift -O bam "$W/$n.R.bam"
    "$SAMTOOLS" view -h -T "$REF" "$in" | python3 "$SS_SRC/tests/integration/shift_expect.py" |
        "$SAMTOOLS" sort --no-PG -O sam - | grep -v '^@' >"$W/$n.S.exp"
    "$SAMTOOLS" view "$W/$n.S.bam" >"$W/$n.S.got"
    if cmp -s "$W/$n.S.exp" "$W/$n.S.got"; then ss_ok "$n: shift == shift_expect + sort"; else
        ss_bad "$n: shift == shift_expect + sort" "records differ"
        ss_show_diff "$W/$n.S.exp" "$W/$n.S.got"
    fi
}
refs s1 "$TD/s1.bam"
refs edge "$TD/edge.bam"
refs cram "$TD/s1.cram"
# A chain that changes nothing would pass vacuously: realignment must move reads of s1.
if cmp -s <("$SAMTOOLS" view "$TD/s1.bam") <("$SAMTOOLS" view "$W/s1.R.bam"); then
    ss_bad "s1: realign changes records" "R has the input's records: the test checks nothing"
else
    ss_ok "s1: realign changes records"
fi

# ---- chains against the references -----------------------------------------------------------

# The chains, each with the reference it must equal, and the scales each runs at. Both steps
# run at every scale; each step alone at one shard per contig and at the scale with the most
# shard edges (the middle scale runs the same steps in the chain of two). The two steps given
# the other way round (--shift --realign) are put in the same order when the options are
# read, before any shard exists: that order runs at the scale with the most edges.
CHAINS=("--realign:R" "--shift:S" "--realign --shift:RS" "--shift --realign:RS")
chain_scales() {
    case $1 in
    "--realign --shift:RS") echo "${SCALES[@]}" ;;
    "--shift --realign:RS") echo "3:2k" ;;
    *) echo "1:- 3:2k" ;;
    esac
}
# Threads:shard size of the single-process runs ("-" is the default size).
SCALES=("1:-" "2:7k" "3:2k")

# scale_args T:S: the run options of a scale
scale_args() {
    local t=${1%%:*} s=${1#*:}
    printf '%s\n' -@ "$t"
    [ "$s" != - ] && printf '%s\n' --shard-size "$s"
}

# expected IN REF "ARGS": sets EXP to the kernel's output on reference REF of input IN, made
# once; 1 when that run failed
expected() {
    EXP=$W/exp.$(printf '%s' "$1.$2.$3" | tr -c 'A-Za-z0-9.' _)
    [ -f "$EXP" ] && return 0
    # shellcheck disable=SC2086 # ARGS is a word list
    timeout "$SS_TIMEOUT" "$ST" $3 --quiet -@ 1 "$W/$1.$2.bam" >"$EXP" 2>"$W/exp.err" </dev/null &&
        return 0
    rm -f "$EXP"
    ss_bad "$1 $(short "$3") on $2: reference run" "$(head -2 "$W/exp.err")"
    return 1
}

# short ARGS: ARGS without the data folder, for case names
short() { local a=${1//$TD\//}; printf '%s' "${a//$REF/ref.fa}"; }

# chain IN INPUT "ARGS" "STEPS" REF SCALE [LAUNCHER...]: the kernel run with STEPS on INPUT
# prints what it prints on the reference REF of IN
chain() {
    local n=$1 in=$2 args=$3 steps=$4 ref=$5 scale=$6
    shift 6
    expected "$n" "$ref" "$args" || return
    ss_case_no=$((ss_case_no + 1))
    local got=$W/got.$ss_case_no stdout=$W/got.$ss_case_no cmd lab=""
    # shellcheck disable=SC2206,SC2207 # ARGS, STEPS and the scale are word lists
    cmd=("$@" "$ST" $args $steps $(scale_args "$scale") --quiet)
    # under mpirun: a file, the fast path (standard output is mpi_stdout.sh's)
    [ $# -gt 0 ] && cmd+=(--bind none -o "$got") && stdout=/dev/null lab=" mpirun -np ${*: -1}"
    timeout "$SS_TIMEOUT" "${cmd[@]}" "$in" >"$stdout" 2>"$W/err" </dev/null
    local rc=$? what
    what="$n $(short "$args") $steps [$scale$lab]"
    if [ $rc != 0 ]; then
        ss_bad "$what" "exit status $rc" "$(ss_quote "${cmd[@]}" "$in")" "$(head -2 "$W/err")"
    elif cmp -s "$EXP" "$got"; then
        ss_ok "$what"
        rm -f "$got"
    else
        ss_bad "$what" "differs from the steps run one by one ($ref)" \
            "$(ss_quote "${cmd[@]}" "$in")" "reference: $EXP"
        ss_show_diff "$EXP" "$got"
    fi
}

# mos_same A B: what two --mosdepth runs wrote (directories A, B) holds the same: the same
# names, text files byte for byte, BGZF files decompressed, and their .csi indexes give the
# same lines per contig (the block layout may follow the shards: contract 1). Prints the
# first difference; 0 when none.
mos_same() {
    local a=$1 b=$2 f c
    [ "$(cd "$a" && ls -A)" = "$(cd "$b" && ls -A)" ] ||
        { echo "different files: $(cd "$a" && echo *) / $(cd "$b" && echo *)"; return 1; }
    for f in $(cd "$a" && ls -A); do
        case $f in
        *.gz) cmp -s <(gzip -dc "$a/$f") <(gzip -dc "$b/$f") || { echo "$f differs"; return 1; } ;;
        *.csi)
            for c in $(tabix -l "$a/${f%.csi}"); do
                cmp -s <(tabix "$a/${f%.csi}" "$c") <(tabix "$b/${f%.csi}" "$c") ||
                    { echo "$f: the lines of $c differ"; return 1; }
            done ;;
        *) cmp -s "$a/$f" "$b/$f" || { echo "$f differs"; return 1; } ;;
        esac
    done
}

# shellcheck disable=SC2054 # -T takes a comma-separated list
MOS_ARGS=(--by 500 -T 1,10,20 -q 0:1:10: -f "$REF")

# mosdepth IN INPUT "STEPS" REF SCALE [LAUNCHER...]: every file of --mosdepth with STEPS on
# INPUT holds what --mosdepth writes for the reference REF of IN
mosdepth() {
    local n=$1 in=$2 steps=$3 ref=$4 scale=$5
    shift 5
    local e=$W/mos.$n.$ref what="$n mosdepth $steps [$scale${*:+ mpirun -np ${*: -1}}]"
    if [ ! -d "$e" ]; then
        mkdir -p "$e"
        "$ST" depth --mosdepth "$e/p" "${MOS_ARGS[@]}" --quiet -@ 1 "$W/$n.$ref.bam" \
            2>"$W/exp.err" </dev/null || {
            rm -rf "$e"
            ss_bad "$what: reference run" "$(head -2 "$W/exp.err")"
            return
        }
    fi
    ss_case_no=$((ss_case_no + 1))
    local d=$W/mosgot.$ss_case_no cmd diff
    mkdir -p "$d"
    # shellcheck disable=SC2206,SC2207 # STEPS and the scale are word lists
    cmd=("$@" "$ST" depth --mosdepth "$d/p" "${MOS_ARGS[@]}" $steps $(scale_args "$scale") --quiet)
    [ $# -gt 0 ] && cmd+=(--bind none)
    timeout "$SS_TIMEOUT" "${cmd[@]}" "$in" >/dev/null 2>"$W/err" </dev/null
    local rc=$?
    if [ $rc != 0 ]; then
        ss_bad "$what" "exit status $rc" "$(ss_quote "${cmd[@]}" "$in")" "$(head -2 "$W/err")"
    elif diff=$(mos_same "$e" "$d"); then
        ss_ok "$what"
        rm -rf "$d"
    else
        ss_bad "$what" "differs from the steps run one by one ($ref): $diff" \
            "$(ss_quote "${cmd[@]}" "$in")" "reference: $e"
    fi
}

# Each command's options (with the reference the realign step needs), as words.
V_VIEW="view -T $REF"
V_PILEUP_B="pileup -B -f $REF"
V_PILEUP="pileup -f $REF"
V_PILEUP_R="pileup -f $REF -r ctgA:1500-9000"
V_PILEUP_L="pileup -B -f $REF -l $TD/regions.bed"
V_DEPTH="depth -a --reference $REF"
V_DEPTH_R="depth -a -r ctgB:25000-35000 --reference $REF"

for n in s1 edge; do
    vars=("$V_VIEW" "$V_PILEUP_B" "$V_PILEUP" "$V_DEPTH")
    [ $n = s1 ] && vars+=("$V_PILEUP_R" "$V_PILEUP_L" "$V_DEPTH_R")
    for c in "${CHAINS[@]}"; do
        for scale in $(chain_scales "$c"); do
            for v in "${vars[@]}"; do
                chain "$n" "$TD/$n.bam" "$v" "${c%%:*}" "${c#*:}" "$scale"
            done
            mosdepth "$n" "$TD/$n.bam" "${c%%:*}" "${c#*:}" "$scale"
        done
    done
done
# CRAM input: the steps read it through the reference too
chain cram "$TD/s1.cram" "$V_VIEW" --realign R 2:7k
chain cram "$TD/s1.cram" "$V_VIEW" --shift S 1:-
chain cram "$TD/s1.cram" "$V_PILEUP_B" "--realign --shift" RS 3:2k
chain cram "$TD/s1.cram" "$V_DEPTH" --shift S 1:-
mosdepth cram "$TD/s1.cram" --realign R 1:-
mosdepth cram "$TD/s1.cram" "--shift --realign" RS 2:7k

# ---- record output: a chain's BAM, a step command with a step behind it ---------------------

# records NAME REF CMD...: CMD -o x.bam writes the records of reference REF (of s1)
records() {
    local name=$1 ref=$2
    shift 2
    ss_case_no=$((ss_case_no + 1))
    local out=$W/rec.$ss_case_no.bam
    timeout "$SS_TIMEOUT" "$@" --quiet -o "$out" "$TD/s1.bam" >/dev/null 2>"$W/err" </dev/null
    local rc=$?
    if [ $rc != 0 ]; then
        ss_bad "$name" "exit status $rc" "$(ss_quote "$@")" "$(head -2 "$W/err")"
        return
    fi
    "$SAMTOOLS" view "$out" >"$out.sam" 2>"$W/err" ||
        { ss_bad "$name" "samtools cannot read the output" "$(head -2 "$W/err")"; return; }
    "$SAMTOOLS" view "$W/s1.$ref.bam" >"$W/rec.exp"
    if cmp -s "$W/rec.exp" "$out.sam"; then ss_ok "$name"; rm -f "$out" "$out.sam"; else
        ss_bad "$name" "records differ from samtools view $ref" "$(ss_quote "$@")"
        ss_show_diff "$W/rec.exp" "$out.sam"
    fi
}
records "view --realign -o out.bam -@1" R "$ST" view --realign -T "$REF" -@ 1
records "view --realign -o out.bam -@3 2k" R "$ST" view --realign -T "$REF" -@ 3 --shard-size 2k
records "view --shift --realign -o out.bam -@2 7k" RS "$ST" view --shift --realign -T "$REF" \
    -@ 2 --shard-size 7k
records "realign --shift -o x.bam -@1" RS "$ST" realign --shift -f "$REF" -@ 1
records "realign --shift -o x.bam -@3 2k" RS "$ST" realign --shift -f "$REF" -@ 3 --shard-size 2k
records "shift --realign -o x.bam -@2 7k" RS "$ST" shift --realign -T "$REF" -O bam -@ 2 \
    --shard-size 7k

# ---- refusals --------------------------------------------------------------------------------

# refuses NAME STATUS MENTION ARGS... [< stdin from $REFUSE_STDIN]: the test program exits with
# STATUS, one line on stderr matching MENTION, nothing on stdout
REFUSE_STDIN=/dev/null
refuses() {
    local name=$1 want=$2 mention=$3
    shift 3
    timeout "$SS_TIMEOUT" "$ST" "$@" <"$REFUSE_STDIN" >"$W/ref.out" 2>"$W/ref.err"
    local rc=$? nl
    nl=$(ss_error_lines "$W/ref.err" | wc -l)
    if [ $rc != "$want" ]; then
        ss_bad "$name" "exit status $rc, want $want" "$(ss_quote "$ST" "$@")" \
            "stderr: $(head -2 "$W/ref.err")"
    elif [ "$nl" != 1 ]; then
        ss_bad "$name" "$nl lines on stderr, want one" "$(head -4 "$W/ref.err")"
    elif ! grep -qE -- "$mention" "$W/ref.err"; then
        ss_bad "$name" "the message does not mention '$mention'" "$(head -2 "$W/ref.err")"
    elif [ -s "$W/ref.out" ]; then
        ss_bad "$name" "printed on stdout" "$(ss_quote "$ST" "$@")"
    else
        ss_ok "$name"
    fi
}
refuses "view --max-move without --realign" 2 "give --realign" view --max-move 3 "$TD/s1.bam"
refuses "pileup --known without --realign" 2 "give --realign" pileup -f "$REF" \
    --known "$TD/s1.bam.mutations.vcf" "$TD/s1.bam"
refuses "depth --realign without a reference" 2 "--reference" depth --realign "$TD/s1.bam"
refuses "view --realign without a reference" 2 "-T" view --realign "$TD/s1.bam"
REFUSE_STDIN=$TD/s1.bam
refuses "view --realign of standard input" 1 "index" view --realign -T "$REF" -
refuses "view --shift of standard input" 1 "index" view --shift -
REFUSE_STDIN=/dev/null

# --help lists each step's options, once
for cmd in view pileup depth; do
    "$ST" "$cmd" --help >"$W/help" 2>&1
    bad=""
    for o in --realign --known --shift; do
        k=$(grep -cE -- "^ +$o( |\$)" "$W/help")
        [ "$k" = 1 ] || bad+=" $o ($k times)"
    done
    if [ -z "$bad" ]; then ss_ok "$cmd --help lists the steps' options once"; else
        ss_bad "$cmd --help lists the steps' options once" "listed:$bad"
    fi
done

# ---- --report: the realign counters do not depend on the scale ------------------------------

counts() { grep -o '"kernel_counts": {[^}]*}' "$1"; }
REALIGN_COUNTERS="realign_windows realign_windows_skipped realign_windows_cleaned reads_realigned
ends_unclipped"
# report NAME [LAUNCHER...] -- RUN OPTIONS...: pileup --realign --report into $W/NAME.json
report() {
    local name=$1 l=()
    shift
    while [ "$1" != -- ]; do l+=("$1"); shift; done
    shift
    timeout "$SS_TIMEOUT" "${l[@]}" "$ST" pileup --realign -B -f "$REF" --quiet "$@" \
        --report "$W/$name.json" -o "$W/$name.pileup" "$TD/s1.bam" </dev/null 2>"$W/err" ||
        { ss_bad "report $name" "failed" "$(head -2 "$W/err")"; return 1; }
}
if report one -- -@ 1; then
    c1=$(counts "$W/one.json")
    miss=""
    for k in $REALIGN_COUNTERS; do
        grep -q "\"$k\": [0-9]" <<<"$c1" || miss+=" $k"
    done
    if [ -z "$miss" ] && ! grep -q '"reads_realigned": 0[,}]' <<<"$c1"; then
        ss_ok "report: the five realign counters"
    else
        ss_bad "report: the five realign counters" "missing:${miss:- none (but 0 reads)}" "$c1"
    fi
    if report three -- -@ 3 --shard-size 2k; then
        if [ "$(counts "$W/three.json")" = "$c1" ]; then ss_ok "report: -@3 2k counters"; else
            ss_bad "report: -@3 2k counters" "$(counts "$W/three.json")" "-@1: $c1"
        fi
    fi
fi

# ---- under mpirun ----------------------------------------------------------------------------

if [ "${SS_MPI:-1}" != 0 ] && command -v mpirun >/dev/null; then
    MPIRUN=(mpirun --oversubscribe --bind-to none)
    [ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
    export OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
    M2=("${MPIRUN[@]}" -np 2)
    M3=("${MPIRUN[@]}" -np 3)
    chain s1 "$TD/s1.bam" "$V_VIEW" "--realign --shift" RS 1:7k "${M2[@]}"
    chain s1 "$TD/s1.bam" "$V_PILEUP_B" --realign R 1:7k "${M2[@]}"
    chain edge "$TD/edge.bam" "$V_DEPTH" --shift S 1:2k "${M2[@]}"
    mosdepth s1 "$TD/s1.bam" "--shift --realign" RS 1:7k "${M2[@]}"
    chain s1 "$TD/s1.bam" "$V_VIEW" "--shift --realign" RS 2:2k "${M3[@]}"
    chain s1 "$TD/s1.bam" "$V_PILEUP" "--shift --realign" RS 2:2k "${M3[@]}"
    chain s1 "$TD/s1.bam" "$V_DEPTH" --realign R 2:2k "${M3[@]}"
    chain cram "$TD/s1.cram" "$V_PILEUP_B" "--realign --shift" RS 1:7k "${M3[@]}"
    mosdepth edge "$TD/edge.bam" --realign R 2:2k "${M3[@]}"
    records "mpirun -np 3 view --realign -o out.bam" R "${M3[@]}" "$ST" view --realign \
        -T "$REF" --bind none -@ 1 --shard-size 2k
    records "mpirun -np 2 realign --shift -o x.bam" RS "${M2[@]}" "$ST" realign --shift \
        -f "$REF" --bind none -@ 2 --shard-size 7k
    if [ -n "${c1:-}" ] && report mpi "${M2[@]}" -- --bind none -@ 1 --shard-size 7k; then
        if [ "$(counts "$W/mpi.json")" = "$c1" ]; then ss_ok "report: mpirun -np 2 counters"
        else ss_bad "report: mpirun -np 2 counters" "$(counts "$W/mpi.json")" "-@1: $c1"; fi
    fi
fi
ss_summary
exit $?
