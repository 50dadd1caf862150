#!/usr/bin/env bash
# bench-index-merge.sh -- the serial term of an indexed run: the seconds rank 0 spends
# adding the shards' index pieces (`index_merge_s` of --report), for pileup -B -o
# out.txt.gz (.tbi), view -b --write-index (.csi), view -o out.sam.gz --write-index
# (.csi) and mpileup -B -Ob --write-index over SS_BENCH_MP_REGION [the first 1 Mbp]
# (.csi), at -@ $T [2]. With SEQSHARD_BASE set (an older build that reports the field),
# its runs sit in the same rounds, alternating with this build's. Every index is checked
# first against tabix, samtools index -c and bcftools index of the same file.
# Results: $SS_BENCH_OUT [bench/results]/index-merge.{tsv,md}: per case and build, the
# median over the rounds, and the entries' count (lines or records of the output).
#
#   SEQSHARD=build/seqshard SEQSHARD_BASE=/path/to/old/seqshard SS_BENCH_RUNS=5 \
#       bench/bench-index-merge.sh
set -euo pipefail
. "$(dirname "$0")/lib.sh"
bench_init bench-index-merge 5
[ -x "$SEQSHARD" ] || die "SEQSHARD=$SEQSHARD is not executable; build seqshard first"
"$HERE/make-data.sh" "$DATA"
OUT=$(mkdir -p "$OUT" && cd "$OUT" && pwd)
BAM=$DATA/ecoli30x.bam REF=$DATA/ref.fa
MP_REGION=${SS_BENCH_MP_REGION:-$(head -1 "$DATA/ref.fa.fai" | cut -f1):1-1000000}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ss-bench-imerge.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
CASES="pileup view sam mpileup"

bins=(this)
[ -n "${SEQSHARD_BASE:-}" ] && bins+=(base)

# cmd BIN CASE: the indexed run, its report in $WORK/r.json
cmd() {
    local s
    s=$(binary "$1")
    case $2 in
    pileup) echo "$s pileup -B -@ $T --quiet --report $WORK/r.json -f $REF -o $WORK/o.txt.gz $BAM" ;;
    view) echo "$s view -b -@ $T --quiet --report $WORK/r.json --write-index -o $WORK/o.bam $BAM" ;;
    sam) echo "$s view -h -@ $T --quiet --report $WORK/r.json --write-index -o $WORK/o.sam.gz $BAM" ;;
    mpileup) echo "$s mpileup -B -@ $T --quiet --report $WORK/r.json -f $REF -r $MP_REGION -Ob --write-index -o $WORK/o.bcf $BAM" ;;
    esac
}

# check CASE: the index written equals the tool's of the same file
check() {
    case $1 in
    pileup) index_is_tools tbi "$WORK/o.txt.gz" "$WORK/o.txt.gz.tbi" ;;
    view) index_is_tools sam-csi "$WORK/o.bam" "$WORK/o.bam.csi" ;;
    sam) index_is_tools sam-csi "$WORK/o.sam.gz" "$WORK/o.sam.gz.csi" ;;
    mpileup) index_is_tools bcf-csi "$WORK/o.bcf" "$WORK/o.bcf.csi" ;;
    esac
}

# entries CASE: the lines or records the index describes
entries() {
    case $1 in
    pileup) zcat "$WORK/o.txt.gz" | wc -l ;;
    view) samtools view -c "$WORK/o.bam" ;;
    sam) samtools view -c "$WORK/o.sam.gz" ;;
    mpileup) bcftools view -H "$WORK/o.bcf" | wc -l ;;
    esac
}

declare -A N
for b in "${bins[@]}"; do
    for c in $CASES; do
        $(cmd "$b" "$c") && check "$c" || die "$b: $c's index is not the tool's"
        N[$c]=$(entries "$c")
    done
done

TSV=$OUT/index-merge.tsv
printf 'round\tcase\tbuild\tindex_merge_s\twall_s\n' >"$TSV"
for ((r = 1; r <= RUNS; r++)); do
    for c in $CASES; do
        order=("${bins[@]}")
        ((r % 2 == 0)) && [ ${#bins[@]} -gt 1 ] && order=(base this)
        for b in "${order[@]}"; do
            rm -f "$WORK"/o.* && sync
            $(cmd "$b" "$c") || die "$b $c failed"
            python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("%s\t%s\t%s\t%.6f\t%.3f" % (sys.argv[2], sys.argv[3], sys.argv[4], d["index_merge_s"], d["wall_s"]))' \
                "$WORK/r.json" "$r" "$c" "$b" >>"$TSV"
        done
    done
    echo "bench-index-merge: round $r of $RUNS done" >&2
done

python3 - "$TSV" "$RUNS" "$T" "${N[@]@K}" >"$OUT/index-merge.md" <<'EOF'
import csv, statistics, sys
tsv, runs, threads = sys.argv[1], sys.argv[2], sys.argv[3]
kv = sys.argv[4].split() if len(sys.argv) > 4 else []
entries = {kv[i]: int(kv[i + 1].strip('"')) for i in range(0, len(kv) - 1, 2)}
rows = list(csv.DictReader(open(tsv), delimiter='\t'))
print("# Rank 0's index merge (`index_merge_s`), -@ %s, %s rounds\n" % (threads, runs))
print("bench/bench-index-merge.sh; whole benchmark BAM (mpileup: its first 1 Mbp, -B);"
      " median over the rounds; every index checked against the tool's first.\n")
print("| case | build | entries | index_merge_s, median | per entry | run wall, median s |")
print("|---|---|---:|---:|---:|---:|")
for case in dict.fromkeys(r['case'] for r in rows):
    for build in dict.fromkeys(r['build'] for r in rows):
        sel = [r for r in rows if r['case'] == case and r['build'] == build]
        if not sel:
            continue
        m = statistics.median(float(r['index_merge_s']) for r in sel)
        w = statistics.median(float(r['wall_s']) for r in sel)
        n = entries.get(case, 0)
        per = "%.3g ns" % (m / n * 1e9) if n else "-"
        print("| %s | %s | %d | %.6f | %s | %.2f |" % (case, build, n, m, per, w))
EOF
cat "$OUT/index-merge.md"
