#!/usr/bin/env bash
# bench-mosdepth.sh -- time seqshard depth --mosdepth against mosdepth 0.3.3 on the whole
# E. coli 536 genome at 30x (bench/make-data.sh), to local disk:
#
#   mosdepth -t 2 P in.bam                        (per-base + summary + global dist)
#   seqshard depth --mosdepth P -@ 2 in.bam       (the same files)
#   mosdepth -n -t 2 P in.bam                     (summary + global dist only)
#   seqshard depth --mosdepth P -n -@ 2 in.bam
#
# mosdepth's -t adds BGZF decompression threads; seqshard's -@ is worker threads. Rounds
# alternate the four commands (so drift in the machine's load hits all of them), each run
# under GNU time -v for wall and CPU time and peak RSS. The table gives the medians, and
# the speed-up as the median over rounds of each round's paired ratio (mosdepth's wall /
# seqshard's wall in the same round). Before timing, seqshard's files must have mosdepth's
# content. Results: bench/results/mosdepth.tsv (every run), mosdepth.md (the table).
#
# Environment: SEQSHARD [<repo>/build/seqshard], MOSDEPTH [mosdepth], SS_BENCH_RUNS [7],
# SS_BENCH_DATA [bench/data], SS_BENCH_OUT [bench/results], SS_BENCH_THREADS [2],
# TMPDIR (scratch on local disk: about 20 MB per run).
set -euo pipefail

. "$(dirname "$0")/lib.sh"
bench_init bench-mosdepth 7
TIME=/usr/bin/time
MOSDEPTH=${MOSDEPTH:-mosdepth}
[ -x "$SEQSHARD" ] || die "SEQSHARD=$SEQSHARD is not executable; build seqshard first"
[ -x "$TIME" ] || die "GNU time not found at $TIME; apt-get install time"
command -v "$MOSDEPTH" >/dev/null || die "mosdepth not found; apt-get install mosdepth"
[ -f "$DATA/.stamp" ] || "$HERE/make-data.sh" "$DATA"
BAM=$DATA/ecoli30x.bam
[ -f "$BAM" ] || die "no $BAM; run bench/make-data.sh $DATA"
mkdir -p "$OUT"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ss-bench-mosdepth.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
echo "bench-mosdepth: load average $(cut -d' ' -f1-3 /proc/loadavg) (should be near 0)"

NAMES=("mosdepth-t$T" "seqshard-@$T" "mosdepth-n-t$T" "seqshard-n-@$T")
CMDS=(
    "$MOSDEPTH -t $T $WORK/md $BAM"
    "$SEQSHARD depth --mosdepth $WORK/ss --quiet -@ $T $BAM"
    "$MOSDEPTH -n -t $T $WORK/mdn $BAM"
    "$SEQSHARD depth --mosdepth $WORK/ssn -n --quiet -@ $T $BAM"
)

# ---- correctness first ----------------------------------------------------------------------
for c in "${CMDS[@]}"; do bash -c "$c" || die "failed: $c"; done
cmp -s <(gzip -dc "$WORK/md.per-base.bed.gz") <(gzip -dc "$WORK/ss.per-base.bed.gz") ||
    die "seqshard's per-base file differs from mosdepth's"
for p in "md ss" "mdn ssn"; do
    set -- $p
    for f in mosdepth.summary.txt mosdepth.global.dist.txt; do
        cmp -s "$WORK/$1.$f" "$WORK/$2.$f" || die "seqshard's $f differs from mosdepth's"
    done
done

# ---- timing: alternating rounds ---------------------------------------------------------------
TSV=$OUT/mosdepth.tsv
printf 'round\tcommand\twall_s\tuser_s\tsys_s\tmax_rss_kb\n' >"$TSV"
for ((r = 1; r <= RUNS; r++)); do
    for i in "${!CMDS[@]}"; do
        rm -f "$WORK"/md.* "$WORK"/ss.* "$WORK"/mdn.* "$WORK"/ssn.*
        $TIME -v -o "$WORK/time" bash -c "exec ${CMDS[$i]}" >/dev/null 2>&1 ||
            die "failed: ${CMDS[$i]}"
        awk -v r="$r" -v n="${NAMES[$i]}" -F': ' '
            /Elapsed \(wall clock\)/ { k = split($2, t, ":"); w = 0
                for (j = 1; j <= k; j++) w = w * 60 + t[j] }
            /User time/ { u = $2 } /System time/ { s = $2 }
            /Maximum resident set size/ { m = $2 }
            END { printf "%d\t%s\t%.2f\t%.2f\t%.2f\t%d\n", r, n, w, u, s, m }' \
            "$WORK/time" >>"$TSV"
    done
done

# ---- medians, paired ratios and the floors ----------------------------------------------------
python3 - "$TSV" "$OUT/mosdepth.md" "$RUNS" "$T" "$(cut -d' ' -f1-3 /proc/loadavg)" <<'PY'
import csv, statistics, sys
tsv, md, runs, t, load = sys.argv[1:]
rows = list(csv.DictReader(open(tsv), delimiter="\t"))
names = list(dict.fromkeys(r["command"] for r in rows))
def val(n, k):
    return {int(r["round"]): float(r[k]) for r in rows if r["command"] == n}
med = {n: {k: statistics.median(val(n, k).values())
           for k in ("wall_s", "user_s", "sys_s", "max_rss_kb")} for n in names}
def paired(a, b):
    wa, wb = val(a, "wall_s"), val(b, "wall_s")
    r = sorted(wa[i] / wb[i] for i in wa if wb.get(i))
    return statistics.median(r), r[0], r[-1]
sp, sp_lo, sp_hi = paired("mosdepth-t" + t, "seqshard-@" + t)
sn, sn_lo, sn_hi = paired("mosdepth-n-t" + t, "seqshard-n-@" + t)
lines = ["| command | wall (s) | user (s) | sys (s) | CPU (s) | peak RSS (MB) |",
         "|---|---:|---:|---:|---:|---:|"]
for n in names:
    m = med[n]
    lines.append("| %s | %.2f | %.2f | %.2f | %.2f | %.1f |" % (
        n, m["wall_s"], m["user_s"], m["sys_s"], m["user_s"] + m["sys_s"],
        m["max_rss_kb"] / 1024))
rss = max(med["seqshard-@" + t]["max_rss_kb"], med["seqshard-n-@" + t]["max_rss_kb"]) / 1024
lines += ["",
          "Paired speed-up (median of per-round mosdepth/seqshard wall ratios, range): "
          "per-base + summary %.2fx (%.2f-%.2f), -n %.2fx (%.2f-%.2f)." % (
              sp, sp_lo, sp_hi, sn, sn_lo, sn_hi),
          "Medians of %s alternating rounds; load average at the end: %s." % (runs, load),
          "Floors: per-base + summary at least 1.3x faster than mosdepth -t %s: %s; -n at "
          "least 2x faster than mosdepth -n -t %s: %s; peak RSS under 128 MB: %s (%.1f MB)." % (
              t, "met" if sp >= 1.3 else "NOT met", t, "met" if sn >= 2 else "NOT met",
              "met" if rss < 128 else "NOT met", rss)]
open(md, "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
