#!/usr/bin/env bash
# bench-depth.sh -- time seqshard depth against samtools depth on the whole E. coli 536
# genome at 30x (bench/make-data.sh), every position printed (-a), to a file on local disk:
#
#   samtools depth -a -o OUT in.bam              (samtools' plain run)
#   samtools depth -@ 2 -a -o OUT in.bam         (2 more BGZF decompression threads)
#   seqshard depth -@ 2 -a -o OUT in.bam         (2 workers)
#
# Rounds alternate the commands (so drift in the machine's load hits all of them), each
# run under GNU time -v for the wall time and the peak RSS; the table gives the medians.
# Before timing, seqshard's file must equal samtools' byte for byte.
# Results: bench/results/depth.tsv (every run), depth.md (medians and the floors).
#
# Environment: SEQSHARD [<repo>/build/seqshard], SS_BENCH_RUNS [5],
# SS_BENCH_DATA [bench/data], SS_BENCH_OUT [bench/results], SS_BENCH_THREADS [2],
# TMPDIR (scratch on local disk: two outputs of ~110 MB).
set -euo pipefail

. "$(dirname "$0")/lib.sh"
bench_init bench-depth 5
TIME=/usr/bin/time
[ -x "$SEQSHARD" ] || die "SEQSHARD=$SEQSHARD is not executable; build seqshard first"
[ -x "$TIME" ] || die "GNU time not found at $TIME; apt-get install time"
command -v samtools >/dev/null || die "samtools not found; apt-get install samtools"
# the data is made once (bench/make-data.sh); a shared, read-only copy is used as it is
[ -f "$DATA/.stamp" ] || "$HERE/make-data.sh" "$DATA"
BAM=$DATA/ecoli30x.bam
[ -f "$BAM" ] || die "no $BAM; run bench/make-data.sh $DATA"
mkdir -p "$OUT"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ss-bench-depth.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
echo "bench-depth: load average $(cut -d' ' -f1-3 /proc/loadavg) (should be near 0)"

NAMES=(samtools "samtools-@$T" "seqshard-@$T")
CMDS=(
    "samtools depth -a -o $WORK/st.txt $BAM"
    "samtools depth -@ $T -a -o $WORK/st2.txt $BAM"
    "$SEQSHARD depth --quiet -@ $T -a -o $WORK/ss.txt $BAM"
)

# ---- correctness first ----------------------------------------------------------------------
for c in "${CMDS[@]}"; do bash -c "$c" || die "failed: $c"; done
cmp -s "$WORK/st.txt" "$WORK/ss.txt" || die "seqshard's output differs from samtools depth -a"
cmp -s "$WORK/st.txt" "$WORK/st2.txt" || die "samtools -@ $T differs from samtools"

# ---- timing: alternating rounds ---------------------------------------------------------------
TSV=$OUT/depth.tsv
printf 'round\tcommand\twall_s\tuser_s\tsys_s\tmax_rss_kb\n' >"$TSV"
for ((r = 1; r <= RUNS; r++)); do
    for i in "${!CMDS[@]}"; do
        rm -f "$WORK"/st.txt "$WORK"/st2.txt "$WORK"/ss.txt
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

# ---- medians and the floors -----------------------------------------------------------------
python3 - "$TSV" "$OUT/depth.md" "$RUNS" "$T" "$(cut -d' ' -f1-3 /proc/loadavg)" <<'PY'
import csv, statistics, sys
tsv, md, runs, t, load = sys.argv[1:]
rows = list(csv.DictReader(open(tsv), delimiter="\t"))
names = list(dict.fromkeys(r["command"] for r in rows))
med = {n: {k: statistics.median(float(r[k]) for r in rows if r["command"] == n)
           for k in ("wall_s", "user_s", "sys_s", "max_rss_kb")} for n in names}
base, ss = med["samtools"], med["seqshard-@" + t]
lines = ["| command | wall (s) | user (s) | sys (s) | peak RSS (MB) | speed-up vs samtools -a |",
         "|---|---:|---:|---:|---:|---:|"]
for n in names:
    m = med[n]
    lines.append("| %s | %.2f | %.2f | %.2f | %.1f | %.2fx |" % (
        n, m["wall_s"], m["user_s"], m["sys_s"], m["max_rss_kb"] / 1024,
        base["wall_s"] / m["wall_s"]))
speed = base["wall_s"] / ss["wall_s"]
rss = ss["max_rss_kb"] / 1024
lines += ["", "Medians of %s alternating rounds; load average at the end: %s." % (runs, load),
          "Floors: seqshard -@%s at least 1.6x faster than samtools depth -a: %s (%.2fx); "
          "peak RSS under 128 MB: %s (%.1f MB)." % (
              t, "met" if speed >= 1.6 else "NOT met", speed, "met" if rss < 128 else "NOT met",
              rss)]
open(md, "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
