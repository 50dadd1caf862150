#!/usr/bin/env bash
# bench-ref.sh -- what mpileup's reference costs a worker: this build (each shard loads
# the stretch its reads reach) against SEQSHARD_BASE (an older build that loads each
# contig whole), `mpileup -f ref.fa` (BAQ on) over SS_BENCH_REF_REGION [the first
# 200 kb of the benchmark genome] at --shard-size 2k and 16k, -@ $T [2], in paired
# rounds (the two builds one after the other, their order swapped every round). The
# outputs are compared first (cmp). Wall, CPU (user + sys) and peak RSS per run; ratio:
# this build's over the base's in the same round (paired_stats.py). Results:
# $SS_BENCH_OUT [bench/results]/ref.{tsv,md}.
#
#   SEQSHARD=build/seqshard SEQSHARD_BASE=/path/to/old/seqshard SS_BENCH_RUNS=5 \
#       bench/bench-ref.sh
set -euo pipefail
. "$(dirname "$0")/lib.sh"
bench_init bench-ref 5
[ -x "$SEQSHARD" ] || die "SEQSHARD=$SEQSHARD is not executable; build seqshard first"
[ -x "${SEQSHARD_BASE:-}" ] || die "SEQSHARD_BASE must name an older seqshard to compare with"
"$HERE/make-data.sh" "$DATA"
OUT=$(mkdir -p "$OUT" && cd "$OUT" && pwd)
BAM=$DATA/ecoli30x.bam REF=$DATA/ref.fa
REGION=${SS_BENCH_REF_REGION:-$(head -1 "$DATA/ref.fa.fai" | cut -f1):1-200000}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ss-bench-ref.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

cmd() { echo "$(binary "$1") mpileup --no-version -@ $T --quiet -f $REF -r $REGION --shard-size $2 -o $WORK/$1.vcf $BAM"; }

for sz in 2k 16k; do
    $(cmd this $sz) && $(cmd base $sz) && cmp -s "$WORK/this.vcf" "$WORK/base.vcf" ||
        die "the two builds' records differ at --shard-size $sz"
done

TSV=$OUT/ref.tsv
printf 'round\tcase\tconfig\twall_s\tuser_s\tsys_s\trss_kb\n' >"$TSV"
for ((r = 1; r <= RUNS; r++)); do
    for sz in 2k 16k; do
        order=(this base)
        ((r % 2 == 0)) && order=(base this)
        for b in "${order[@]}"; do
            /usr/bin/time -f '%e %U %S %M' -o "$WORK/t" $(cmd "$b" $sz) || die "$b $sz failed"
            printf '%s\tshard %s\t%s\t%s\n' "$r" "$sz" "$b" "$(tr ' ' '\t' <"$WORK/t")" >>"$TSV"
        done
    done
    echo "bench-ref: round $r of $RUNS done" >&2
done
python3 "$HERE/paired_stats.py" "$TSV" this \
    "mpileup's reference: a shard's stretch (this) against whole contigs (base), -@ $T" \
    "bench/bench-ref.sh, $RUNS paired rounds, mpileup -f (BAQ) -r $REGION; ratio: this build's time over the base's in the same round" \
    >"$OUT/ref.md"
python3 - "$TSV" >>"$OUT/ref.md" <<'EOF'
import csv, statistics, sys
rss = {}
for r in csv.DictReader(open(sys.argv[1]), delimiter="\t"):
    rss.setdefault((r["case"], r["config"]), []).append(int(r["rss_kb"]))
print("\n| case | build | median peak RSS (MB) |\n|---|---|---:|")
for (case, cfg), v in sorted(rss.items()):
    print("| %s | %s | %.1f |" % (case, cfg, statistics.median(v) / 1024))
EOF
cat "$OUT/ref.md"
