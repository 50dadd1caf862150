# lib_cohort.sh -- sourced by cohort_vs_samtools.sh and mpi_cohort.sh (after ss_setup):
# a cohort of COHORT_N inputs (default 1000) made of links, two of every three a BAM
# (s1.bam, s2.bam) and the third a CRAM (s1.cram), each with its index beside it, in
# $SS_WORK/cohort; the list in $COHORT_LIST; samtools mpileup's bytes for COHORT_ARGS
# in $COHORT_EXP. A small region keeps the output (21 MB at 1000 inputs) and
# samtools' own time (13 s) small.
COHORT_N=${COHORT_N:-1000}
COHORT_DIR=$SS_WORK/cohort
COHORT_LIST=$COHORT_DIR/list.txt
COHORT_EXP=$COHORT_DIR/expected.txt
COHORT_ARGS=(-B -f "$REF" -r ctgA:20001-20500)

cohort_make() {
    mkdir -p "$COHORT_DIR"
    : >"$COHORT_LIST"
    local i name
    for ((i = 0; i < COHORT_N; i++)); do
        case $((i % 3)) in
        0) name=$COHORT_DIR/in$i.bam; ln -s "$TD/s1.bam" "$name"; ln -s "$TD/s1.bam.bai" "$name.bai" ;;
        1) name=$COHORT_DIR/in$i.bam; ln -s "$TD/s2.bam" "$name"; ln -s "$TD/s2.bam.bai" "$name.bai" ;;
        2) name=$COHORT_DIR/in$i.cram; ln -s "$TD/s1.cram" "$name"; ln -s "$TD/s1.cram.crai" "$name.crai" ;;
        esac
        echo "$name" >>"$COHORT_LIST"
    done
    "$SAMTOOLS" mpileup "${COHORT_ARGS[@]}" -b "$COHORT_LIST" >"$COHORT_EXP" 2>/dev/null ||
        { ss_bad "samtools reference run" "samtools mpileup failed on $COHORT_N inputs"; return 1; }
}

# cohort_check NAME OUT ERR: ss_ok when OUT has samtools' bytes and the run exited 0 (ss_rc).
cohort_check() {
    local name=$1 out=$2 err=$3
    if [ "$ss_rc" != 0 ]; then
        ss_bad "$name" "exit status $ss_rc" "stderr: $(head -2 "$err")"
    elif ! cmp -s "$COHORT_EXP" "$out"; then
        ss_bad "$name" "output differs from samtools mpileup on $COHORT_N inputs"
        ss_show_diff "$COHORT_EXP" "$out"
    else
        ss_ok "$name"
    fi
    rm -f "$out"
}
