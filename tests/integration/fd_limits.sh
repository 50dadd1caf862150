#!/usr/bin/env bash
# fd_limits.sh -- descriptors: 30 inputs run at ulimit -n 20 (where samtools
# mpileup itself fails: it opens them all at once) with samtools' bytes,
# because inputs the budget cannot hold are opened per batch of records; a
# limit too low for the workers' own descriptors is refused before any work
# with one line saying what limit would do; running out of descriptors is
# "too many open files", never "no index found".
set -u
. "$(dirname "$0")/lib.sh"
ss_setup

N=30
d=$SS_WORK/fd
mkdir -p "$d"
bams=() crams=()
for i in $(seq 1 $N); do
    ln -s "$TD/s1.bam" "$d/in$i.bam"
    ln -s "$TD/s1.bam.bai" "$d/in$i.bam.bai"
    ln -s "$TD/s1.cram" "$d/in$i.cram"
    ln -s "$TD/s1.cram.crai" "$d/in$i.cram.crai"
    bams+=("$d/in$i.bam")
    crams+=("$d/in$i.cram")
done

# limited LIMIT OUT ERR ARGS...: seqshard under ulimit -n LIMIT, in a subshell; sets ss_rc.
limited() {
    local limit=$1 out=$2 err=$3
    shift 3
    (ulimit -n "$limit" && exec timeout "$SS_TIMEOUT" "$SEQSHARD" "$@") </dev/null >"$out" 2>"$err"
    ss_rc=$?
}

# same_at NAME LIMIT EXPECTED ARGS...: exit 0 and EXPECTED's bytes under the limit.
same_at() {
    local name=$1 limit=$2 exp=$3
    shift 3
    ss_case_no=$((ss_case_no + 1))
    local got=$d/got.$ss_case_no
    limited "$limit" "$got" "$got.err" "$@"
    if [ $ss_rc != 0 ]; then
        ss_bad "$name" "exit status $ss_rc at ulimit -n $limit" \
            "(ulimit -n $limit; $(ss_quote "$SEQSHARD" "$@"))" "stderr: $(head -2 "$got.err")"
    elif ! cmp -s "$exp" "$got"; then
        ss_bad "$name" "output differs from samtools mpileup" \
            "(ulimit -n $limit; $(ss_quote "$SEQSHARD" "$@"))"
        ss_show_diff "$exp" "$got"
    else
        ss_ok "$name"
    fi
}

exp=$d/exp.txt
"$SAMTOOLS" mpileup -B -r ctgA:1-20000 "${bams[@]}" >"$exp" 2>/dev/null ||
    ss_bad "samtools reference run" "samtools mpileup failed"
same_at "30 BAMs at ulimit -n 20, -@1" 20 "$exp" pileup --quiet -@ 1 -B -r ctgA:1-20000 \
    "${bams[@]}"
same_at "30 BAMs at ulimit -n 20, -@2 2k" 20 "$exp" pileup --quiet -@ 2 --shard-size 2k -B \
    -r ctgA:1-20000 "${bams[@]}"

# CRAM: htslib keeps the reference open per CRAM; BAQ on, so pileup's reference caches too
expc=$d/expc.txt
"$SAMTOOLS" mpileup -f "$REF" -r ctgB:1-12000 "${crams[@]}" >"$expc" 2>/dev/null ||
    ss_bad "samtools reference run (CRAM)" "samtools mpileup failed"
same_at "30 CRAMs -f at ulimit -n 20, -@2 4k" 20 "$expc" pileup --quiet -@ 2 --shard-size 4k \
    -f "$REF" -r ctgB:1-12000 "${crams[@]}"

# too_low NAME LIMIT PATTERN ARGS...: exit 1, one line matching PATTERN, no output file.
too_low() {
    local name=$1 limit=$2 pattern=$3
    shift 3
    ss_case_no=$((ss_case_no + 1))
    local o=$d/low.$ss_case_no
    mkdir -p "$o"
    limited "$limit" "$o/stdout" "$o/stderr" pileup --quiet -o "$o/out.txt" "$@"
    if [ $ss_rc != 1 ]; then
        ss_bad "$name" "exit status $ss_rc, want 1" "stderr: $(head -2 "$o/stderr")"
    elif [ "$(wc -l <"$o/stderr")" != 1 ] || ! grep -qE -- "$pattern" "$o/stderr"; then
        ss_bad "$name" "want one line matching: $pattern" "stderr: $(head -3 "$o/stderr")"
    elif [ -e "$o/out.txt" ]; then
        ss_bad "$name" "left an output file"
    else
        ss_ok "$name"
    fi
}

NEED="^seqshard: 30 inputs need at least [0-9]+ open files per worker \(-@ [12]: [0-9]+ in all\)"
NEED+=" but the limit is 12 \(ulimit -n\); raise it with ulimit -n [0-9]+ or use fewer threads$"
too_low "ulimit -n 12: refused before any work" 12 "$NEED" -@ 1 -B "${bams[@]}"
too_low "ulimit -n 12, -@2: refused" 12 "$NEED" -@ 2 --shard-size 2k -B "${bams[@]}"
# Out of descriptors while checking the inputs (stdio, the signal pipe, the first input):
# an index that cannot be opened is not a missing index.
for limit in 6 7; do
    too_low "ulimit -n $limit: too many open files" $limit \
        "too many open files .*ulimit -n.*fewer threads" -B "${bams[@]}"
done

ss_summary
exit $?
