# shellcheck shell=bash
# lib.sh -- what every benchmark script starts with; source it, do not run it.
#   bench_init NAME DEFAULT_RUNS   sets HERE (bench/), SRC (the repository), SEQSHARD
#   (the binary, SEQSHARD or build/seqshard), DATA (SS_BENCH_DATA or bench/data), OUT
#   (SS_BENCH_OUT or bench/results), RUNS (SS_BENCH_RUNS or DEFAULT_RUNS), T
#   (SS_BENCH_THREADS or 2) and die() (one line naming the script, exit 1).
bench_init() {
    BENCH_NAME=$1
    HERE=$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)
    SRC=$(cd "$HERE/.." && pwd)
    SEQSHARD=${SEQSHARD:-$SRC/build/seqshard}
    DATA=${SS_BENCH_DATA:-$HERE/data}
    OUT=${SS_BENCH_OUT:-$HERE/results}
    RUNS=${SS_BENCH_RUNS:-$2}
    T=${SS_BENCH_THREADS:-2}
}

die() { echo "$BENCH_NAME: $*" >&2; exit 1; }

# report_allocs REPORT.json: "malloc_calls reads" of a run under the counting shim
# (LD_PRELOAD=build/libsscount.so): the allocator calls and the reads the kernel read.
report_allocs() {
    python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
n = d.get("diagnostics", {}).get("malloc_calls")
if not isinstance(n, int):
    sys.exit("%s: the report has no malloc_calls; is the counting shim loaded?" % sys.argv[1])
print(n, d["totals"]["reads"])
PY
}

# rss_table TSV: the median peak RSS (column max_rss_kb) of each case and config, as a
# Markdown table.
rss_table() {
    python3 - "$1" <<'PY'
import csv, statistics, sys
rss = {}
for r in csv.DictReader(open(sys.argv[1]), delimiter='\t'):
    rss.setdefault((r['case'], r['config']), []).append(int(r['max_rss_kb']))
print('\n| case | config | peak RSS MB (median) |\n|---|---|---:|')
for (case, config), v in rss.items():
    print('| %s | %s | %.0f |' % (case, config, statistics.median(v) / 1024))
PY
}

# binary BUILD: the seqshard of build "this" (SEQSHARD) or "base" (SEQSHARD_BASE).
binary() { if [ "$1" = base ]; then echo "$SEQSHARD_BASE"; else echo "$SEQSHARD"; fi; }

# index_is_tools KIND FILE INDEX: whether INDEX has the bytes the tool makes of FILE:
# tbi (tabix -s1 -b2 -e2), sam-csi (samtools index -c, BAM or SAM.gz), bcf-csi
# (bcftools index). The tool works on a copy beside FILE.
index_is_tools() {
    local kind=$1 file=$2 index=$3 copy
    copy=$(dirname "$file")/tool.$(basename "$file")
    cp "$file" "$copy" || return 1
    case $kind in
    tbi) tabix -f -s1 -b2 -e2 "$copy" && cmp -s "$copy.tbi" "$index" ;;
    sam-csi) "${SAMTOOLS:-samtools}" index -c "$copy" && cmp -s "$copy.csi" "$index" ;;
    bcf-csi) "${BCFTOOLS:-bcftools}" index -f "$copy" && cmp -s "$copy.csi" "$index" ;;
    *) return 1 ;;
    esac
}
