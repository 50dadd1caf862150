#!/usr/bin/env bash
# bench-spill.sh -- a stream against a file at one rank: `seqshard pileup -B -@ T -f ref.fa
# BAM > /dev/null` against the same run with `-o FILE`, at one and two threads, in paired
# rounds (file then stream, then stream then file). Shard output spills to --tmp-dir only
# past the output memory budget, so neither should spill here; the stream must cost no
# more than the file. Peak RSS of each run is kept too (/usr/bin/time %M). Ratio: stream
# time over file time in the same round; median and a 95% bootstrap interval
# (paired_stats.py). Results: $SS_BENCH_OUT [bench/results]/spill.{tsv,md}.
#
#   SEQSHARD=build/seqshard SS_BENCH_RUNS=7 bench/bench-spill.sh
set -euo pipefail
. "$(dirname "$0")/lib.sh"
bench_init bench-spill 7
[ -x "$SEQSHARD" ] || die "SEQSHARD=$SEQSHARD is not executable; build seqshard first"
"$HERE/make-data.sh" "$DATA"
OUT=$(mkdir -p "$OUT" && cd "$OUT" && pwd)
BAM=$DATA/ecoli30x.bam REF=$DATA/ref.fa
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ss-bench-spill.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
run() { # CONFIG THREADS
    local args=(pileup -B -@ "$2" --quiet -f "$REF")
    if [ "$1" = file ]; then
        /usr/bin/time -f '%e %U %S %M' -o "$WORK/t" "$SEQSHARD" "${args[@]}" -o "$WORK/f.txt" "$BAM"
    else
        /usr/bin/time -f '%e %U %S %M' -o "$WORK/t" "$SEQSHARD" "${args[@]}" "$BAM" >/dev/null
    fi
}
TSV=$OUT/spill.tsv
printf 'round\tcase\tconfig\twall_s\tuser_s\tsys_s\trss_kb\n' >"$TSV"
for ((r = 1; r <= RUNS; r++)); do
    for t in 1 2; do
        order=(file stream)
        ((r % 2 == 0)) && order=(stream file)
        for c in "${order[@]}"; do
            run "$c" "$t" || die "$c -@ $t failed"
            printf '%s\tpileup-B-@%s\t%s\t%s\n' "$r" "$t" "$c" "$(tr ' ' '\t' <"$WORK/t")" >>"$TSV"
        done
    done
    echo "bench-spill: round $r of $RUNS done" >&2
done
python3 "$HERE/paired_stats.py" "$TSV" stream \
    "Standard output (/dev/null) against -o FILE, one rank (pileup -B)" \
    "bench/bench-spill.sh, $RUNS paired rounds, whole benchmark BAM; ratio: the stream's time over the file's in the same round" \
    >"$OUT/spill.md"
python3 - "$TSV" >>"$OUT/spill.md" <<'PY'
import csv, statistics, sys
rss = {}
for r in csv.DictReader(open(sys.argv[1]), delimiter="\t"):
    rss.setdefault((r["case"], r["config"]), []).append(int(r["rss_kb"]))
print("\n| case | config | median peak RSS, MB |\n|---|---|---:|")
for (c, k), v in sorted(rss.items()):
    print("| %s | %s | %.0f |" % (c, k, statistics.median(v) / 1024))
PY
cat "$OUT/spill.md"
