# shellcheck shell=bash
# lib_markdup.sh -- the markdup tests' input and comparison; source after lib.sh.
#
# md_input DIR: DIR/in.bam, testdata's s1.bam (bwa mem reads on three contigs,
# supplementary alignments, unmapped pairs at the end) with duplicates injected
# (markdup_inject.py), through samtools collate | fixmate -m | sort, indexed.
md_input() {
    local d=$1
    "$SAMTOOLS" collate -O -u "$TD/s1.bam" "$d/collate" |
        "$SAMTOOLS" view -h - | python3 "$SS_SRC/tests/integration/markdup_inject.py" 5 |
        "$SAMTOOLS" fixmate -m -u - - | "$SAMTOOLS" sort -o "$d/in.bam" - 2>/dev/null &&
        "$SAMTOOLS" index "$d/in.bam"
}

# md_same NAME REF.bam REF.stats OUT.bam OUT.stats: the same records, the same
# header but for @PG lines, the same statistics but for COMMAND.
md_same() {
    local name=$1
    if ! cmp -s <("$SAMTOOLS" view "$2") <("$SAMTOOLS" view "$4"); then
        ss_bad "$name" "records differ from samtools markdup's" \
            "$(diff <("$SAMTOOLS" view "$2") <("$SAMTOOLS" view "$4") | head -4)"
    elif ! cmp -s <("$SAMTOOLS" view -H "$2" | grep -v '^@PG') \
        <("$SAMTOOLS" view -H "$4" | grep -v '^@PG'); then
        ss_bad "$name" "header differs from samtools markdup's"
    elif ! cmp -s <(grep -v '^COMMAND' "$3") <(grep -v '^COMMAND' "$5"); then
        ss_bad "$name" "statistics differ" "$(diff <(grep -v '^COMMAND' "$3") <(grep -v '^COMMAND' "$5"))"
    else
        ss_ok "$name"
    fi
}

# md_run ERR ARGS...: seqshard ARGS, stderr into ERR; its exit status (124: it hung).
md_run() {
    local err=$1
    shift
    timeout "$SS_TIMEOUT" "$SEQSHARD" "$@" </dev/null >/dev/null 2>"$err"
}
