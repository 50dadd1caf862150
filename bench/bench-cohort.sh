#!/usr/bin/env bash
# bench-cohort.sh -- seqshard pileup against samtools mpileup on cohorts: N inputs made
# of links to the benchmark's E. coli 30x (bench/make-data.sh), two of every three the
# BAM and the third the CRAM, -B with the reference (the CRAMs need it), a 20 kb region,
# for N = 1, 10, 30, 100, 300, 1000; and the issue's case: 30 BAMs over a 1 Mb region.
#
#   bench/bench-cohort.sh            (bench/results/cohort.{tsv,md,png})
#
# seqshard runs -@ 2 under ulimit -n 1024; samtools, which opens every input (and a
# FASTA per CRAM) at once, under the hard limit. Each case alternates the two tools
# for SS_BENCH_RUNS rounds (SS_BENCH_RUNS_1000 for N = 1000, where samtools takes about
# 7 minutes), each run under GNU time -v (wall, user, sys, peak RSS), output to a file
# in TMPDIR (1.3 GB each at N = 1000). Round 1 checks seqshard's bytes against
# samtools'. The table gives medians, the plot peak RSS and wall time against N.
#
# Environment: SEQSHARD [<repo>/build/seqshard], SS_BENCH_DATA [bench/data],
# SS_BENCH_OUT [bench/results], SS_BENCH_RUNS [3], SS_BENCH_RUNS_1000 [1],
# SS_BENCH_NS ["1 10 30 100 300 1000"], SS_BENCH_THREADS [2], TMPDIR.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/.." && pwd)
SEQSHARD=${SEQSHARD:-$SRC/build/seqshard}
DATA=${SS_BENCH_DATA:-$HERE/data}
DATA=$(cd "$DATA" 2>/dev/null && pwd) || { echo "bench-cohort: no ${SS_BENCH_DATA:-$HERE/data}" >&2; exit 1; } # the links need it absolute
OUT=${SS_BENCH_OUT:-$HERE/results}
RUNS=${SS_BENCH_RUNS:-3}
RUNS_1000=${SS_BENCH_RUNS_1000:-1}
NS=${SS_BENCH_NS:-1 10 30 100 300 1000}
T=${SS_BENCH_THREADS:-2}
TIME=/usr/bin/time
CTG=NC_008253.1
REGION=$CTG:1000001-1020000
REGION_1MB=$CTG:1000001-2000000

die() { echo "bench-cohort: $*" >&2; exit 1; }
[ -x "$SEQSHARD" ] || die "SEQSHARD=$SEQSHARD is not executable; build seqshard first"
[ -x "$TIME" ] || die "GNU time not found at $TIME; apt-get install time"
command -v samtools >/dev/null || die "samtools not found; apt-get install samtools"
# the first python3 that has matplotlib (a venv's python3 on PATH may not see Debian's)
PYTHON=
for p in ${PYTHON3:-} python3 /usr/bin/python3; do
    if "$p" -c 'import matplotlib' 2>/dev/null; then PYTHON=$p; break; fi
done
[ -n "$PYTHON" ] || die "no python3 with matplotlib; apt-get install python3-matplotlib"
[ -f "$DATA/.stamp" ] || "$HERE/make-data.sh" "$DATA"
for f in ref.fa ecoli30x.bam ecoli30x.bam.bai ecoli30x.cram ecoli30x.cram.crai; do
    [ -f "$DATA/$f" ] || die "no $DATA/$f; run bench/make-data.sh $DATA"
done
mkdir -p "$OUT"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ss-bench-cohort.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
HARD=$(ulimit -Hn)
echo "bench-cohort: load average $(cut -d' ' -f1-3 /proc/loadavg) (should be near 0)"

# links N MIX: N inputs in $WORK/nN-MIX, listed in $WORK/nN-MIX.txt; MIX "mix" makes
# every third a CRAM, "bam" only BAMs.
links() {
    local n=$1 mix=$2 d=$WORK/n$1-$2 i name
    [ -f "$d.txt" ] && return 0
    mkdir -p "$d"
    for ((i = 0; i < n; i++)); do
        if [ "$mix" = mix ] && [ $((i % 3)) = 2 ]; then
            name=$d/i$i.cram
            ln -s "$DATA/ecoli30x.cram" "$name"; ln -s "$DATA/ecoli30x.cram.crai" "$name.crai"
        else
            name=$d/i$i.bam
            ln -s "$DATA/ecoli30x.bam" "$name"; ln -s "$DATA/ecoli30x.bam.bai" "$name.bai"
        fi
        echo "$name" >>"$d.txt"
    done
}

TSV=$OUT/cohort.tsv
printf 'case\tn\tround\ttool\twall_s\tuser_s\tsys_s\tmax_rss_kb\n' >"$TSV"

# timed CASE N ROUND TOOL LIMIT CMD...: one run under GNU time -v and ulimit -n LIMIT.
timed() {
    local c=$1 n=$2 r=$3 tool=$4 limit=$5
    shift 5
    (ulimit -n "$limit" && exec "$TIME" -v -o "$WORK/time" "$@") >/dev/null 2>"$WORK/err" ||
        die "failed ($tool, $c): $* : $(tail -2 "$WORK/err")"
    awk -v c="$c" -v n="$n" -v r="$r" -v t="$tool" -F': ' '
        /Elapsed \(wall clock\)/ { k = split($2, x, ":"); w = 0
            for (j = 1; j <= k; j++) w = w * 60 + x[j] }
        /User time/ { u = $2 } /System time/ { s = $2 } /Maximum resident set size/ { m = $2 }
        END { printf "%s\t%d\t%d\t%s\t%.2f\t%.2f\t%.2f\t%d\n", c, n, r, t, w, u, s, m }' \
        "$WORK/time" >>"$TSV"
}

# bench_case CASE N MIX REGION ROUNDS: alternate samtools and seqshard, check bytes once.
bench_case() {
    local c=$1 n=$2 mix=$3 region=$4 rounds=$5 r
    links "$n" "$mix"
    local list=$WORK/n$n-$mix.txt
    for ((r = 1; r <= rounds; r++)); do
        echo "bench-cohort: $c N=$n round $r"
        timed "$c" "$n" "$r" samtools "$HARD" samtools mpileup -B -f "$DATA/ref.fa" -r "$region" \
            -b "$list" -o "$WORK/st.txt"
        timed "$c" "$n" "$r" seqshard 1024 "$SEQSHARD" pileup --quiet -@ "$T" -B -f "$DATA/ref.fa" \
            -r "$region" -b "$list" -o "$WORK/ss.txt"
        if [ "$r" = 1 ] && ! cmp -s "$WORK/st.txt" "$WORK/ss.txt"; then
            die "$c N=$n: seqshard's output differs from samtools mpileup"
        fi
        rm -f "$WORK/st.txt" "$WORK/ss.txt"
    done
}

bench_case floor30 30 bam "$REGION_1MB" "$RUNS"
for n in $NS; do
    rounds=$RUNS
    [ "$n" -ge 1000 ] && rounds=$RUNS_1000
    bench_case cohort "$n" mix "$REGION" "$rounds"
done

"$PYTHON" "$HERE/plot-cohort.py" --tsv "$TSV" --md "$OUT/cohort.md" --png "$OUT/cohort.png" \
    --load "$(cut -d' ' -f1-3 /proc/loadavg)" --threads "$T"
