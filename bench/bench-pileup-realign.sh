#!/usr/bin/env bash
# bench-pileup-realign.sh -- realigned pileups in one pass against the two-step
# pipeline, same run: `seqshard pileup --realign -B -@ T` against `seqshard realign
# -@ T` to a BAM, `samtools index`, then `seqshard pileup -B -@ T` of it; and against
# plain `samtools mpileup -B` (which does no realignment). Both realigned pileups are
# checked to be the same bytes first. Medians of SS_BENCH_RUNS alternating rounds,
# wall time and peak RSS (GNU time). Results: $SS_BENCH_OUT [bench/results]/
# pileup-realign.md.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
bench_init bench-pileup-realign 3
[ -x /usr/bin/time ] || die "/usr/bin/time not found; apt-get install time"
[ -x "$SEQSHARD" ] || die "SEQSHARD=$SEQSHARD is not executable; build seqshard first"
"$HERE/make-data.sh" "$DATA"
OUT=$(mkdir -p "$OUT" && cd "$OUT" && pwd)
REF=$DATA/ref.fa BAM=$DATA/ecoli30x.bam
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ss-bench-plr.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

one_pass() { "$SEQSHARD" pileup --quiet -@ "$T" --realign -B -f "$REF" -o "$WORK/one.txt" "$BAM"; }
two_step() {
    "$SEQSHARD" realign --quiet -@ "$T" -f "$REF" -o "$WORK/r.bam" "$BAM" &&
        samtools index "$WORK/r.bam" &&
        "$SEQSHARD" pileup --quiet -@ "$T" -B -f "$REF" -o "$WORK/two.txt" "$WORK/r.bam"
}
plain() { samtools mpileup -B -f "$REF" -o "$WORK/plain.txt" "$BAM" 2>/dev/null; }
export -f one_pass two_step plain
export SEQSHARD T REF BAM WORK

one_pass && two_step && cmp -s "$WORK/one.txt" "$WORK/two.txt" ||
    die "pileup --realign differs from realign + pileup"
TSV=$OUT/pileup-realign.tsv
printf 'round\tcase\twall_s\tmax_rss_kb\n' >"$TSV"
for ((r = 1; r <= RUNS; r++)); do
    order=(one_pass two_step plain)
    ((r % 2 == 0)) && order=(plain two_step one_pass)
    for c in "${order[@]}"; do
        /usr/bin/time -f '%e %M' -o "$WORK/t" bash -c "$c" || die "$c failed"
        printf '%s\t%s\t%s\n' "$r" "$c" "$(tr ' ' '\t' <"$WORK/t")" >>"$TSV"
    done
    echo "bench-pileup-realign: round $r of $RUNS done" >&2
done
python3 - "$TSV" "$T" >"$OUT/pileup-realign.md" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
by = {}
for r in rows:
    by.setdefault(r["case"], []).append((float(r["wall_s"]), int(r["max_rss_kb"])))
med = {c: statistics.median(w for w, _ in v) for c, v in by.items()}
rss = {c: max(m for _, m in v) / 1024 for c, v in by.items()}
names = {"one_pass": "seqshard pileup --realign -B -@%s" % sys.argv[2],
         "two_step": "seqshard realign -@%s + samtools index + seqshard pileup -B -@%s" % (sys.argv[2], sys.argv[2]),
         "plain": "samtools mpileup -B (no realignment)"}
print("| command | median wall s | peak RSS MB | one pass / this |")
print("|---|---:|---:|---:|")
for c in ("one_pass", "two_step", "plain"):
    print("| %s | %.2f | %.0f | %.2f |" % (names[c], med[c], rss[c], med["one_pass"] / med[c]))
PY
cat "$OUT/pileup-realign.md"
