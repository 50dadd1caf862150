#!/usr/bin/env bash
# bench-pileup.sh -- time seqshard pileup against samtools mpileup and
# sambamba mpileup on the whole E. coli 536 genome at 30x (bench/make-data.sh).
#
#   SEQSHARD=build/seqshard bench/bench-pileup.sh
#
# Two hyperfine runs (--warmup 1 --runs 5), output to /dev/null (hyperfine's
# default), so they time computing the pileup, not the disk:
#   no BAQ:  samtools mpileup -B | sambamba mpileup -t 2 --samtools -B |
#            seqshard pileup -B -@1 | seqshard pileup -B -@2
#   BAQ:     samtools mpileup -f ref | seqshard pileup -f ref -@2
# Before timing, seqshard's output must equal samtools' byte for byte (cmp);
# a mismatch stops the benchmark. Peak RSS comes from one extra run of each
# command under /usr/bin/time -v (for sambamba: its largest process).
# Results: bench/results/pileup-{nobaq,baq}.json (hyperfine), pileup-rss.json,
# pileup.md (table) and pileup.png (plot.py).
#
# Environment: SEQSHARD [<repo>/build/seqshard], SS_BENCH_RUNS [5],
# SS_BENCH_DATA [bench/data], SS_BENCH_OUT [bench/results].
set -euo pipefail

. "$(dirname "$0")/lib.sh"
bench_init bench-pileup 5

# ---- tools ---------------------------------------------------------------------
[ -x "$SEQSHARD" ] || die "SEQSHARD=$SEQSHARD is not executable; build seqshard first"
for t in samtools sambamba hyperfine; do
    command -v "$t" >/dev/null || die "$t not found; apt-get install $t"
done
# GNU time, not the shell keyword: it reports the peak RSS (-v).
[ -x /usr/bin/time ] || die "/usr/bin/time not found; apt-get install time"
# The first python3 that has matplotlib (a pyenv/venv python3 on PATH may
# not see Debian's python3-matplotlib).
PYTHON=
for p in ${PYTHON3:-} python3 /usr/bin/python3; do
    if "$p" -c 'import matplotlib' 2>/dev/null; then PYTHON=$p; break; fi
done
[ -n "$PYTHON" ] || die "no python3 with matplotlib; apt-get install python3-matplotlib"

"$HERE/make-data.sh" "$DATA"
REF=$DATA/ref.fa
BAM=$DATA/ecoli30x.bam
mkdir -p "$OUT"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ss-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# name|command, for each of the two runs. sambamba passes everything after
# --samtools to each `samtools mpileup` it starts, so the inputs go before.
NOBAQ=(
    "samtools mpileup -B|samtools mpileup -B $BAM"
    "sambamba mpileup -t 2|sambamba mpileup -t 2 --tmpdir $WORK $BAM --samtools -B"
    "seqshard pileup -B -@1|$SEQSHARD pileup --quiet -@ 1 -B $BAM"
    "seqshard pileup -B -@2|$SEQSHARD pileup --quiet -@ 2 -B $BAM"
)
BAQ=(
    "samtools mpileup -f (BAQ)|samtools mpileup -f $REF $BAM"
    "seqshard pileup -f (BAQ) -@2|$SEQSHARD pileup --quiet -@ 2 -f $REF $BAM"
)

# ---- correctness first ----------------------------------------------------------
check_same() { # label reference-command command
    echo "bench-pileup: checking $1"
    bash -c "$2" >"$WORK/exp.txt" 2>/dev/null || die "failed: $2"
    bash -c "$3" >"$WORK/got.txt" 2>"$WORK/got.err" || die "failed: $3: $(head -2 "$WORK/got.err")"
    if ! cmp "$WORK/exp.txt" "$WORK/got.txt"; then
        diff "$WORK/exp.txt" "$WORK/got.txt" | head -5 >&2
        die "$1: output differs from samtools; not timing a wrong answer"
    fi
}
check_same "seqshard -B -@1" "${NOBAQ[0]#*|}" "${NOBAQ[2]#*|}"
check_same "seqshard -B -@2" "${NOBAQ[0]#*|}" "${NOBAQ[3]#*|}"
check_same "seqshard -f -@2" "${BAQ[0]#*|}" "${BAQ[1]#*|}"
# sambamba is timed either way; record whether its output matches.
bash -c "${NOBAQ[0]#*|}" >"$WORK/exp.txt" 2>/dev/null
if bash -c "${NOBAQ[1]#*|}" 2>/dev/null | cmp -s - "$WORK/exp.txt"; then
    SAMBAMBA_SAME=yes
else
    SAMBAMBA_SAME=no
fi
rm -f "$WORK"/*.txt

# ---- timing ---------------------------------------------------------------------------
run_hyperfine() { # json entries...
    local json=$1 e
    shift
    local args=()
    for e in "$@"; do args+=(--command-name "${e%%|*}" "${e#*|}"); done
    hyperfine --warmup 1 --runs "$RUNS" --export-json "$json" "${args[@]}"
}
run_hyperfine "$OUT/pileup-nobaq.json" "${NOBAQ[@]}"
run_hyperfine "$OUT/pileup-baq.json" "${BAQ[@]}"

# ---- peak RSS ---------------------------------------------------------------------------
{
    echo "{"
    first=1
    for e in "${NOBAQ[@]}" "${BAQ[@]}"; do
        /usr/bin/time -v -o "$WORK/time.txt" bash -c "exec ${e#*|}" >/dev/null 2>&1 \
            || die "failed under /usr/bin/time: ${e#*|}"
        kb=$(awk -F': ' '/Maximum resident set size/{print $2}' "$WORK/time.txt")
        [ $first = 1 ] || echo ","
        first=0
        printf '  "%s": %s' "${e%%|*}" "$kb"
    done
    echo
    echo "}"
} >"$OUT/pileup-rss.json"

# ---- machine and versions, for the table's footnote --------------------------------------
cat >"$OUT/pileup-env.json" <<EOF
{
  "cpu": "$(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo)",
  "cores": $(nproc),
  "samtools": "$(samtools --version | awk 'NR==1{print $2}')",
  "sambamba": "$(sambamba --version 2>&1 | awk '/^sambamba/{print $2; exit}')",
  "seqshard": "$("$SEQSHARD" --version 2>&1 | head -1)",
  "hyperfine": "$(hyperfine --version | awk '{print $2}')",
  "data": "E. coli 536 (4.94 Mb), dwgsim 2x150 30x, bwa mem: $(du -h "$BAM" | cut -f1) BAM",
  "sambamba_output_equals_samtools": "$SAMBAMBA_SAME",
  "date": "$(date -u +%Y-%m-%d)"
}
EOF

"$PYTHON" "$HERE/plot.py" --results "$OUT" --table "$OUT/pileup.md" --png "$OUT/pileup.png"
echo "bench-pileup: wrote $OUT/pileup.md and $OUT/pileup.png"
cat "$OUT/pileup.md"
