#!/usr/bin/env bash
# bench-steps.sh -- what a record step (--realign in front of view, pileup or depth)
# costs, on the whole benchmark BAM at -@ SS_BENCH_THREADS [2], in one run:
#
#   SEQSHARD_OLD=/path/to/old/seqshard SEQSHARD=build/seqshard bench/bench-steps.sh
#
# 1. pileup --realign -B: the build before record steps (SEQSHARD_OLD, whose pileup wired
#    realign in by hand) against this one (SEQSHARD), outputs checked to be the same bytes
#    first. SS_BENCH_RUNS [5] rounds, old then new in odd rounds and new then old in even
#    ones; the ratio new/old within each round, its median and a 95% bootstrap interval
#    (paired_stats.py). Target: no slower than the old build within 3%, i.e. the wall
#    interval's upper end at most 1.03.
# 2. view --realign -T ref -o out.bam against view -o out.bam, both of this build, in the
#    first SS_BENCH_VIEW_RUNS [3] rounds (order reversed in even rounds): ratio of
#    medians, target at most 1.3. Plain BAM to BAM copies the input's compressed blocks,
#    so view -O bam,level=6 (htslib's default level, which view --realign writes at) is
#    timed too: the same compression without the step. Checked first: the records of
#    view --realign are those of seqshard realign + samtools index + seqshard view.
# 3. Allocator calls per read in steady state, under the counting shim (SS_COUNT_LIB
#    [libsscount.so beside SEQSHARD]), as tests/integration/alloc_steady_state.sh counts
#    them: each command on the first 500 kb and on the whole contig, (allocs(large) -
#    allocs(small)) / (reads(large) - reads(small)), from --report's malloc_calls and
#    totals.reads; with and without --realign. Target: the step adds at most 0.05.
#
# Results: $SS_BENCH_OUT [bench/results]/steps.md (the tables; whether each target is met
# goes to stderr), steps.tsv (every timed run), steps-alloc.tsv (every counted run). About
# 3 minutes on 2 cores (30 rounds: 5).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
bench_init bench-steps 5
VIEW_RUNS=${SS_BENCH_VIEW_RUNS:-3}
OLD=${SEQSHARD_OLD:-}
COUNT_LIB=${SS_COUNT_LIB:-$(dirname "$SEQSHARD")/libsscount.so}
[ -x /usr/bin/time ] || die "/usr/bin/time not found; apt-get install time"
[ -x "$SEQSHARD" ] || die "SEQSHARD=$SEQSHARD is not executable; build seqshard first"
[[ -n $OLD && -x $OLD ]] ||
    die "SEQSHARD_OLD='$OLD' is not executable; build the commit before record steps"
[ -r "$COUNT_LIB" ] || die "$COUNT_LIB not found; cmake --build build --target sscount"
"$HERE/make-data.sh" "$DATA"
DATA=$(cd "$DATA" && pwd)
OUT=$(mkdir -p "$OUT" && cd "$OUT" && pwd)
REF=$DATA/ref.fa BAM=$DATA/ecoli30x.bam
CTG=$(cut -f1 "$REF.fai" | head -1)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ss-bench-steps.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# case|config|binary|arguments: the timed commands.
PILEUP="pileup --quiet -@ $T --realign -B -f $REF"
CMDS=(
    "pileup-realign|old|$OLD|$PILEUP -o $WORK/pileup-old.txt $BAM"
    "pileup-realign|new|$SEQSHARD|$PILEUP -o $WORK/pileup-new.txt $BAM"
    "view|copy|$SEQSHARD|view --quiet -@ $T -o $WORK/view-copy.bam $BAM"
    "view|level6|$SEQSHARD|view --quiet -@ $T -O bam,level=6 -o $WORK/view-l6.bam $BAM"
    "view|realign|$SEQSHARD|view --quiet -@ $T --realign -T $REF -o $WORK/view-realign.bam $BAM"
)

# run CASE CONFIG ROUND: time one command, append its row to the TSV.
run() {
    local c bin args
    for c in "${CMDS[@]}"; do
        IFS='|' read -r name config bin args <<<"$c"
        [ "$name|$config" = "$1|$2" ] && break
    done
    # shellcheck disable=SC2086 # args is a word list
    /usr/bin/time -f '%e %U %S %M' -o "$WORK/t" "$bin" $args || die "$1 ($2) failed"
    [ -z "${3:-}" ] || printf '%s\t%s\t%s\t%s\n' "$3" "$1" "$2" "$(tr ' ' '\t' <"$WORK/t")" >>"$TSV"
}

# The checks, which also warm the page cache.
run pileup-realign old && run pileup-realign new
cmp -s "$WORK/pileup-old.txt" "$WORK/pileup-new.txt" ||
    die "pileup --realign: the old and new builds' outputs differ"
run view realign
"$SEQSHARD" realign --quiet -@ "$T" -f "$REF" -o "$WORK/r.bam" "$BAM" || die "realign failed"
samtools index "$WORK/r.bam" || die "samtools index failed"
"$SEQSHARD" view --quiet -@ "$T" -o "$WORK/rv.bam" "$WORK/r.bam" || die "view of r.bam failed"
cmp -s <(samtools view "$WORK/view-realign.bam") <(samtools view "$WORK/rv.bam") ||
    die "view --realign's records differ from realign + samtools index + view"
rm -f "$WORK"/r.bam* "$WORK/rv.bam"

echo "bench-steps: load average $(cut -d' ' -f1-3 /proc/loadavg) (should be near 0)" >&2
TSV=$OUT/steps.tsv
printf 'round\tcase\tconfig\twall_s\tuser_s\tsys_s\tmax_rss_kb\n' >"$TSV"
for ((r = 1; r <= RUNS; r++)); do
    pileup=(old new) view=(copy level6 realign)
    ((r % 2 == 0)) && pileup=(new old) view=(realign level6 copy)
    for c in "${pileup[@]}"; do run pileup-realign "$c" "$r"; done
    if ((r <= VIEW_RUNS)); then
        for c in "${view[@]}"; do run view "$c" "$r"; done
    fi
    echo "bench-steps: round $r of $RUNS done" >&2
done

# counted NAME BINARY ARGS...: run BINARY under the shim; print "malloc_calls reads".
counted() {
    local name=$1 bin=$2
    shift 2
    LD_PRELOAD=$COUNT_LIB "$bin" "$@" --report "$WORK/$name.json" >/dev/null ||
        die "$name failed under $COUNT_LIB"
    report_allocs "$WORK/$name.json"
}
# count CMD STEP BINARY: CMD with STEP (none, realign) on both regions, rows to ALLOC.
count() {
    local cmd=$1 step=$2 bin=$3 region args got
    for region in "$CTG:1-500000" "$CTG"; do
        args=("$cmd" --quiet -@ "$T")
        [ "$step" = none ] || args+=(--realign)
        case $cmd in
        view) args+=(-T "$REF" -b -o "$WORK/a.bam" "$BAM" "$region") ;;
        pileup) args+=(-B -f "$REF" -r "$region" -o "$WORK/a.txt" "$BAM") ;;
        depth) args+=(-T "$REF" -r "$region" -o "$WORK/a.txt" "$BAM") ;;
        realign) args+=(-f "$REF" -o "$WORK/a.bam" "$BAM" "$region") ;;
        esac
        got=$(counted "$cmd-$step" "$bin" "${args[@]}")
        printf '%s\t%s\t%s\t%s\t%s\n' "$cmd" "$step" "$bin" "$region" "${got// /$'\t'}" \
            >>"$ALLOC"
    done
}
ALLOC=$OUT/steps-alloc.tsv
printf 'command\tstep\tbinary\tregion\tmalloc_calls\treads\n' >"$ALLOC"
for cmd in view pileup depth; do
    count "$cmd" none "$SEQSHARD" && count "$cmd" realign "$SEQSHARD"
done
# For comparison: seqshard realign itself, and the old build's hand-wired pileup --realign.
count realign none "$SEQSHARD" && count pileup realign "$OLD"
echo "bench-steps: allocations counted" >&2

awk -F'\t' 'NR == 1 || $2 == "pileup-realign"' "$TSV" >"$WORK/pileup.tsv"
note="bench/bench-steps.sh, $RUNS rounds, -@ $T, whole benchmark BAM. Ratio: the new build's"
note+=" time over the old one's in the same round; median over rounds, 95% bootstrap interval."
python3 "$HERE/paired_stats.py" "$WORK/pileup.tsv" new \
    "Record steps: pileup --realign -B, new build against old, paired rounds" "$note" \
    >"$WORK/paired.md"
python3 - "$TSV" "$ALLOC" "$WORK/paired.md" "$T" >"$OUT/steps.md" <<'PY'
import csv, statistics, sys
tsv, alloc, paired, t = sys.argv[1:5]
print(open(paired).read().rstrip())
row = [l for l in open(paired) if l.startswith("| pileup-realign |")][0].split("|")
lo, hi = (float(x) for x in row[6].split("-"))
med = float(row[5])
verdict = "met" if hi <= 1.03 else "not shown" if med <= 1.03 else "missed"
print("bench-steps: pileup --realign -B, new/old wall at most 1.03 (the interval's upper "
      "end): %s (median %.3f, interval %.3f-%.3f)" % (verdict, med, lo, hi), file=sys.stderr)

runs = {}
for r in csv.DictReader(open(tsv), delimiter="\t"):
    if r["case"] == "view":
        runs.setdefault(r["config"], []).append(r)
m = {c: statistics.median(float(r["wall_s"]) for r in v) for c, v in runs.items()}
cpu = {c: statistics.median(float(r["user_s"]) + float(r["sys_s"]) for r in v)
       for c, v in runs.items()}
rss = {c: max(int(r["max_rss_kb"]) for r in v) / 1024 for c, v in runs.items()}
names = {"copy": "view -o out.bam (copies the input's blocks)",
         "level6": "view -O bam,level=6 -o out.bam (compresses)",
         "realign": "view --realign -T ref -o out.bam"}
print("\n## view --realign against view, -@ %s, %d rounds\n" % (t, len(runs["realign"])))
print("| command | median wall s | median CPU s | peak RSS MB | realign/this wall |")
print("|---|---:|---:|---:|---:|")
for c in ("copy", "level6", "realign"):
    print("| %s | %.2f | %.2f | %.0f | %.2f |" % (names[c], m[c], cpu[c], rss[c],
                                                  m["realign"] / m[c]))
for c in ("copy", "level6"):
    q = m["realign"] / m[c]
    print("bench-steps: view --realign at most 1.3x %s: %s (%.2fx)" % (
        names[c].split(" (")[0], "met" if q <= 1.3 else "missed", q), file=sys.stderr)

counts, bins = {}, []
for r in csv.DictReader(open(alloc), delimiter="\t"):
    bins += [r["binary"]] if r["binary"] not in bins else []
    k = (r["command"], r["step"], bins.index(r["binary"]))
    counts.setdefault(k, []).append((int(r["malloc_calls"]), int(r["reads"])))
per = {k: (a2 - a1) / (r2 - r1) for k, ((a1, r1), (a2, r2)) in counts.items()}
print("\n## Allocator calls per read in steady state, -@ %s\n" % t)
print("(whole contig minus its first 500 kb: extra calls over extra reads)\n")
print("| command | without the step | with --realign | the step adds |")
print("|---|---:|---:|---:|")
for c in ("view", "pileup", "depth"):
    a, b = per[(c, "none", 0)], per[(c, "realign", 0)]
    print("| %s | %.4f | %.4f | %+.4f |" % (c, a, b, b - a))
    print("bench-steps: %s --realign adds at most 0.05 allocations per read: %s (%+.4f)" % (
        c, "met" if b - a <= 0.05 else "missed", b - a), file=sys.stderr)
print("\nFor comparison: seqshard realign -o out.bam %.4f per read; the old build's "
      "pileup --realign -B %.4f." % (per[("realign", "none", 0)], per[("pileup", "realign", 1)]))
PY
echo "bench-steps: wrote $OUT/steps.md" >&2
cat "$OUT/steps.md"
