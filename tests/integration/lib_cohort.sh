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
    # one process for the 2000 links: an ln per link took 15-20 s of the test
    python3 - "$COHORT_DIR" "$COHORT_N" "$TD" "$COHORT_LIST" <<'PY' ||
import os, sys
folder, n, data, listing = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
kinds = [("bam", "s1.bam", "bai"), ("bam", "s2.bam", "bai"), ("cram", "s1.cram", "crai")]
with open(listing, "w") as out:
    for i in range(n):
        ext, src, idx = kinds[i % 3]
        name = os.path.join(folder, "in%d.%s" % (i, ext))
        os.symlink(os.path.join(data, src), name)
        os.symlink(os.path.join(data, src + "." + idx), name + "." + idx)
        out.write(name + "\n")
PY
        { ss_bad "cohort links" "could not make $COHORT_N links in $COHORT_DIR"; return 1; }
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
