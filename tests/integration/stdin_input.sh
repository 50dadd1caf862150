#!/usr/bin/env bash
# stdin_input.sh -- '-' reads standard input for view, pileup, depth, mpileup (and --call)
# and markdup: one worker, one pass, no index, and the same bytes samtools or bcftools give
# for the file; what a stream cannot do (regions, -l, another input, several ranks,
# depth -a and mosdepth mode, which need the index, markdup -S, which reads twice) is
# refused with a message.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_markdup.sh"
ss_setup

S1=$TD/s1.bam
W=$SS_WORK

# same NAME INPUT_CMD SAMTOOLS_ARGS -- SEQSHARD_ARGS: `INPUT_CMD | seqshard ARGS` prints
# what `samtools ARGS` prints for the file
same() {
    local name=$1 feed=$2
    shift 2
    local a=() b=()
    while [ "$1" != -- ]; do a+=("$1"); shift; done
    shift
    b=("$@")
    "$SAMTOOLS" "${a[@]}" >"$W/exp" 2>/dev/null
    bash -c "$feed" | timeout "$SS_TIMEOUT" "$SEQSHARD" "${b[@]}" >"$W/got" 2>"$W/err"
    local rc=${PIPESTATUS[1]}
    if [ "$rc" != 0 ]; then
        ss_bad "$name" "exit status $rc" "$(head -3 "$W/err")"
    elif ! cmp -s "$W/exp" "$W/got"; then
        ss_bad "$name" "differs from samtools $(ss_quote "${a[@]}")"
        ss_show_diff "$W/exp" "$W/got"
    else
        ss_ok "$name"
    fi
}

same "view - (BAM)" "cat $S1" view "$S1" -- view --quiet -
same "view -h - (BAM) at -@3" "cat $S1" view -h --no-PG "$S1" -- view --quiet -@ 3 -h --no-PG -
same "view - (SAM text)" "$SAMTOOLS view -h $S1" view "$S1" -- view --quiet -
same "view - (CRAM)" "cat $TD/s1.cram" view -T "$REF" "$TD/s1.cram" -- view --quiet -T "$REF" -
same "view - unplaced reads" "cat $TD/edge.bam" view "$TD/edge.bam" -- view --quiet -
same "view -c -q 30 -" "cat $S1" view -c -q 30 "$S1" -- view --quiet -c -q 30 -
same "view -e -x -" "cat $S1" view -e 'flag.proper_pair' -x MD "$S1" -- \
    view --quiet -e 'flag.proper_pair' -x MD -
same "pileup - (BAQ)" "cat $S1" mpileup -f "$REF" "$S1" -- pileup --quiet -f "$REF" -
same "pileup -B -" "cat $TD/edge.bam" mpileup -B "$TD/edge.bam" -- pileup --quiet -B -
same "pileup -aa -" "cat $TD/edge.bam" mpileup -B -aa "$TD/edge.bam" -- pileup --quiet -B -aa -
same "pileup -a - (the contig probed, then read)" "cat $S1" mpileup -B -a "$S1" -- pileup --quiet -B -a -
same "pileup - (SAM text)" "$SAMTOOLS view -h $S1" mpileup -B -Q 20 "$S1" -- pileup --quiet -B -Q 20 -
same "depth -" "cat $S1" depth "$S1" -- depth --quiet -
same "depth -aa -Q 20 -" "cat $TD/edge.bam" depth -aa -Q 20 "$TD/edge.bam" -- \
    depth --quiet -aa -Q 20 -
# bcftools: the stream's records are the file's (the header's command lines aside)
vcf_same() { # NAME EXPECTED_CMD -- SEQSHARD_ARGS (standard input from s1.bam)
    local name=$1 exp=$2
    shift 3
    bash -c "$exp" 2>/dev/null | grep -v '^##' >"$W/exp"
    timeout "$SS_TIMEOUT" "$SEQSHARD" "$@" <"$S1" 2>"$W/err" | grep -v '^##' >"$W/got"
    if [ "${PIPESTATUS[0]}" != 0 ]; then
        ss_bad "$name" "exit status ${PIPESTATUS[0]}" "$(head -3 "$W/err")"
    elif ! cmp -s "$W/exp" "$W/got" || [ ! -s "$W/exp" ]; then
        ss_bad "$name" "differs from bcftools"
        ss_show_diff "$W/exp" "$W/got"
    else
        ss_ok "$name"
    fi
}
vcf_same "mpileup -" "bcftools mpileup -f $REF $S1" -- mpileup --quiet -f "$REF" -
vcf_same "mpileup - --call -mv" "bcftools mpileup -Ou -f $REF $S1 | bcftools call -mv" -- \
    mpileup --quiet -f "$REF" - --call -mv
# markdup: the records and statistics of samtools markdup on the file
mkdir -p "$W/md"
if md_input "$W/md"; then
    "$SAMTOOLS" markdup -s -f "$W/md/exp.stats" "$W/md/in.bam" "$W/md/exp.bam" 2>/dev/null
    timeout "$SS_TIMEOUT" "$SEQSHARD" markdup --quiet -f "$W/md/got.stats" - "$W/md/got.bam" \
        <"$W/md/in.bam" 2>"$W/md/err" || ss_bad "markdup -" "exit status $?" "$(head -2 "$W/md/err")"
    md_same "markdup - (duplicates injected)" "$W/md/exp.bam" "$W/md/exp.stats" \
        "$W/md/got.bam" "$W/md/got.stats"
else
    ss_bad "markdup - input" "samtools collate | fixmate | sort failed: the test is wrong"
fi

# BAM out from a stream, with the report: one worker
"$SEQSHARD" view --quiet -b --no-PG -o "$W/o.bam" --report "$W/o.json" - <"$S1" &&
    cmp -s <("$SAMTOOLS" view "$S1") <("$SAMTOOLS" view "$W/o.bam") &&
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(d["threads"] != 1 or d["inputs"] != ["-"])' "$W/o.json" &&
    ss_ok "view -b - with --report: one worker" || ss_bad "view -b - with --report: one worker" \
    "$(head -c 300 "$W/o.json" 2>/dev/null)"

# ---- what a stream cannot do ------------------------------------------------------------
refused() { # NAME STATUS PATTERN ARGS... (standard input from s1.bam)
    local name=$1 want=$2 pat=$3
    shift 3
    timeout "$SS_TIMEOUT" "$@" <"$S1" >"$W/r.out" 2>"$W/r.err"
    local rc=$?
    [ "$rc" = "$want" ] && grep -qE -- "$pat" "$W/r.err" && [ ! -s "$W/r.out" ] && ss_ok "$name" ||
        ss_bad "$name" "status $rc (want $want)" "$(head -2 "$W/r.err")"
}
refused "view - REGION" 1 '^seqshard: -: .*regions need an index' "$SEQSHARD" view --quiet - ctgA
refused "pileup -r -" 1 '^seqshard: -: .*regions' "$SEQSHARD" pileup --quiet -r ctgA -
refused "pileup -l -" 1 '^seqshard: -: .*-l' "$SEQSHARD" pileup --quiet -l "$TD/regions.bed" -
refused "pileup - with a file" 1 'only input' "$SEQSHARD" pileup --quiet - "$S1"
refused "depth -a -" 1 '^seqshard: -: -a .*needs the input.s index' "$SEQSHARD" depth --quiet -a -
refused "depth --mosdepth -" 1 '^seqshard: -: mosdepth mode .*needs the input.s index' \
    "$SEQSHARD" depth --quiet --mosdepth "$W/mos" -
refused "markdup -S -" 1 '^seqshard: -: markdup -S reads its input twice' \
    "$SEQSHARD" markdup --quiet -S - "$W/mdS.bam"
refused "realign -" 1 'reads files only' "$SEQSHARD" realign --quiet -f "$REF" -o "$W/r.bam" -
bad_stream() { # NAME FILE PATTERN: `seqshard view - < FILE` fails naming standard input
    timeout "$SS_TIMEOUT" "$SEQSHARD" view --quiet - <"$2" >/dev/null 2>"$W/d.err"
    local rc=$?
    [ $rc = 1 ] && grep -qE -- "$3" "$W/d.err" && ss_ok "$1" ||
        ss_bad "$1" "status $rc" "$(head -2 "$W/d.err")"
}
bad_stream "view - unsorted header" "$TD/unsorted.bam" '^seqshard: -: .*(sort|coordinate)'
bad_stream "view - records out of order" "$TD/disorder.bam" '^seqshard: -: .*(order|sort)'

if [ "${SS_MPI:-1}" != 0 ] && command -v mpirun >/dev/null; then
    MPIRUN=(mpirun --oversubscribe --bind-to none)
    [ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
    OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo \
        refused "view - under mpirun -np 2" 1 'standard input as input: it is read by one process' \
        "${MPIRUN[@]}" -np 2 "$SEQSHARD" view --quiet --bind none -o "$W/mpi.sam" -
fi

ss_summary
exit $?
