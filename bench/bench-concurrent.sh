#!/usr/bin/env bash
# bench-concurrent.sh -- seqshard on a shared node: K single-node runs started side by
# side (as Snakemake, GNU parallel or xargs -P start them), each `pileup -B -@ T` on
# the benchmark BAM, with --bind auto (the default), --bind core (one worker per core
# from core 0 up: what auto did before it left unrestricted processes unpinned) and
# --bind none; and one run alone. Each round runs every configuration once, in an order
# that turns each round (a linear drift cancels); the figure is the median over
# SS_BENCH_RUNS rounds of the time until the last of the K runs ends.
#
#   bench/bench-concurrent.sh     # SS_BENCH_RUNS (10), SS_CONC_K ("2 4"), SS_CONC_T ("1 2")
#
# Results: $SS_BENCH_OUT [bench/results]/concurrent.tsv (every batch), concurrent.md.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
bench_init bench-concurrent 10
KS=${SS_CONC_K:-2 4}
TS=${SS_CONC_T:-1 2}
"$HERE/make-data.sh" "$DATA"
REF=$DATA/ref.fa BAM=$DATA/ecoli30x.bam
[ -x "$SEQSHARD" ] || die "$SEQSHARD is not executable; build it first"
mkdir -p "$OUT"
TSV=$OUT/concurrent.tsv
echo -e "round\tk\tthreads\tbind\tseconds" >"$TSV"

# batch K T BIND: seconds until the last of K runs side by side ends
batch() {
    local k=$1 t=$2 bind=$3 i pids=() t0 t1
    t0=$(date +%s.%N)
    for i in $(seq 1 "$k"); do
        "$SEQSHARD" pileup --quiet -B -@ "$t" --bind "$bind" -f "$REF" -o /dev/null "$BAM" &
        pids+=($!)
    done
    for i in "${pids[@]}"; do wait "$i" || die "a run failed (bind $bind, -@ $t)"; done
    t1=$(date +%s.%N)
    echo "$t1 - $t0" | bc
}

configs=()
for t in $TS; do
    configs+=("1 $t auto")
    for k in $KS; do
        for b in auto core none; do configs+=("$k $t $b"); done
    done
done
for r in $(seq 1 "$RUNS"); do
    n=${#configs[@]}
    for j in $(seq 0 $((n - 1))); do
        # each round starts one configuration further on: every order position in turn
        c=${configs[$(((j + r) % n))]}
        read -r k t b <<<"$c"
        s=$(batch "$k" "$t" "$b")
        echo -e "$r\t$k\t$t\t$b\t$s" >>"$TSV"
    done
done

python3 - "$TSV" >"$OUT/concurrent.md" <<'PY'
import csv, statistics, sys
runs = {}
for r in csv.DictReader(open(sys.argv[1]), delimiter='\t'):
    runs.setdefault((int(r['threads']), int(r['k']), r['bind']), []).append(float(r['seconds']))
print('| -@ | runs side by side | --bind | seconds until all end (median) | vs one run alone |')
print('|---:|---:|---|---:|---:|')
for (t, k, b) in sorted(runs):
    med = statistics.median(runs[(t, k, b)])
    alone = statistics.median(runs[(t, 1, 'auto')])
    print('| %d | %d | %s | %.2f | %.2fx |' % (t, k, b, med, med / alone))
PY
cat "$OUT/concurrent.md"
