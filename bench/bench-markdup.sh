#!/usr/bin/env bash
# bench-markdup.sh -- seqshard markdup against samtools markdup 1.16.1, paired rounds.
#
# Data: the benchmark BAM with ~10% duplicates injected (tests/integration/
# markdup_inject.py: copies of read pairs under Illumina-style names, some within
# optical distance), through samtools collate | fixmate -m | sort; and a stack of
# 100,000 duplicate pairs at one position (markdup-stack.py). Both made once, into
# $DATA. Cases, each samtools and seqshard at -@ $T [2]:
#   bam      BAM at the default level (both compress);
#   -u       uncompressed BAM;
#   stack    the stack, -d 100 (optical checks among 100,000 duplicates);
#   re-encode  the bound on BAM output at that level: samtools view -b, which decodes
#            and re-encodes the same BAM and marks nothing, against seqshard markdup.
# Outputs are checked against samtools' first. Peak RSS (GNU time) of each run goes to
# the TSV; allocator calls per read come from the counting shim (build/libsscount.so):
# the whole BAM against its first half, their difference per read.
# Results: $SS_BENCH_OUT [bench/results]/markdup.{tsv,md}.
#
#   SS_BENCH_RUNS=5 bench/bench-markdup.sh
set -euo pipefail
. "$(dirname "$0")/lib.sh"
bench_init bench-markdup 5
[ -x "$SEQSHARD" ] || die "SEQSHARD=$SEQSHARD is not executable; build seqshard first"
"$HERE/make-data.sh" "$DATA"
OUT=$(mkdir -p "$OUT" && cd "$OUT" && pwd)
SAMTOOLS=${SAMTOOLS:-samtools}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ss-bench-markdup.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

IN=$DATA/ecoli30x.dups.bam HALF=$DATA/ecoli30x.dups.half.bam STACK=$DATA/stack100k.bam
if [ ! -s "$IN.bai" ]; then
    echo "bench-markdup: making $IN (injected duplicates, fixmate -m)" >&2
    "$SAMTOOLS" collate -O -u "$DATA/ecoli30x.bam" "$WORK/c" | "$SAMTOOLS" view -h - |
        python3 "$SRC/tests/integration/markdup_inject.py" 11 |
        "$SAMTOOLS" fixmate -m -u - - | "$SAMTOOLS" sort -@ 2 -o "$IN.tmp" - &&
        mv "$IN.tmp" "$IN" && "$SAMTOOLS" index "$IN" || die "cannot make $IN"
fi
if [ ! -s "$HALF.bai" ]; then
    ctg=$("$SAMTOOLS" view -H "$IN" | awk -F'\t' '/^@SQ/ { sub("SN:", "", $2); print $2; exit }')
    "$SAMTOOLS" view -b -o "$HALF" "$IN" "$ctg:1-2500000" && "$SAMTOOLS" index "$HALF" ||
        die "cannot make $HALF"
fi
if [ ! -s "$STACK.bai" ]; then
    python3 "$HERE/markdup-stack.py" 100000 stack 100000 | "$SAMTOOLS" fixmate -m -u - - |
        "$SAMTOOLS" sort -o "$STACK" - && "$SAMTOOLS" index "$STACK" || die "cannot make $STACK"
fi

CASES=(
    "bam|samtools|$SAMTOOLS markdup -@ $T $IN $WORK/s.bam"
    "bam|seqshard|$SEQSHARD markdup --quiet -@ $T $IN $WORK/q.bam"
    "-u|samtools|$SAMTOOLS markdup -u -@ $T $IN $WORK/s.bam"
    "-u|seqshard|$SEQSHARD markdup --quiet -u -@ $T $IN $WORK/q.bam"
    "stack -d 100|samtools|$SAMTOOLS markdup -d 100 -@ $T $STACK $WORK/s.bam"
    "stack -d 100|seqshard|$SEQSHARD markdup --quiet -d 100 -@ $T $STACK $WORK/q.bam"
    # the bound at the same level: samtools decoding and re-encoding the BAM, marking nothing
    "re-encode|samtools|$SAMTOOLS view -b -@ $T -o $WORK/s.bam $IN"
    "re-encode|seqshard|$SEQSHARD markdup --quiet -@ $T $IN $WORK/q.bam"
)

# ---- the same records first --------------------------------------------------------
for ((i = 0; i < ${#CASES[@]}; i += 2)); do
    IFS='|' read -r case _ scmd <<<"${CASES[$i]}"
    IFS='|' read -r _ _ qcmd <<<"${CASES[$((i + 1))]}"
    bash -c "exec $scmd" 2>/dev/null && bash -c "exec $qcmd" || die "$case: a run failed"
    [ "$case" = re-encode ] && continue # samtools marks nothing there
    cmp -s <("$SAMTOOLS" view "$WORK/s.bam") <("$SAMTOOLS" view "$WORK/q.bam") ||
        die "$case: records differ from samtools'; not timing a wrong answer"
done

# ---- paired rounds ------------------------------------------------------------------
echo "bench-markdup: load average $(cut -d' ' -f1-3 /proc/loadavg) (should be near 0)" >&2
TSV=$OUT/markdup.tsv
printf 'round\tcase\tconfig\twall_s\tuser_s\tsys_s\tmax_rss_kb\n' >"$TSV"
for ((r = 1; r <= RUNS; r++)); do
    order=("${CASES[@]}")
    if ((r % 2 == 0)); then
        order=()
        for ((i = ${#CASES[@]} - 1; i >= 0; i--)); do order+=("${CASES[$i]}"); done
    fi
    for e in "${order[@]}"; do
        IFS='|' read -r case config cmd <<<"$e"
        /usr/bin/time -f '%e %U %S %M' -o "$WORK/t" bash -c "exec $cmd" 2>/dev/null ||
            die "failed: $cmd"
        printf '%s\t%s\t%s\t%s\n' "$r" "$case" "$config" "$(tr ' ' '\t' <"$WORK/t")" >>"$TSV"
    done
    echo "bench-markdup: round $r of $RUNS done" >&2
done

# ---- allocator calls per read -------------------------------------------------------
COUNT_LIB=${SS_COUNT_LIB:-$SRC/build/libsscount.so}
per_read=n/a
if [ -r "$COUNT_LIB" ]; then
    counted() { # input -> "malloc_calls reads"
        LD_PRELOAD=$COUNT_LIB "$SEQSHARD" markdup --quiet -@ 1 -d 100 --report "$WORK/c.json" \
            "$1" "$WORK/c.bam" || die "counted run failed"
        report_allocs "$WORK/c.json"
    }
    read -r a0 r0 < <(counted "$HALF")
    read -r a1 r1 < <(counted "$IN")
    per_read=$(python3 -c "print('%.4f' % (($a1 - $a0) / ($r1 - $r0)))")
fi

note="bench/bench-markdup.sh, $RUNS paired rounds, $(nproc) cores, -@ $T on both sides."
note+=" Ratio: samtools' time over seqshard's in the same round (above 1: seqshard faster);"
note+=" median over rounds, 95% bootstrap interval. Allocator calls per read (seqshard -@1"
note+=" -d 100): $per_read."
python3 "$HERE/paired_stats.py" "$TSV" samtools \
    "markdup: seqshard against samtools markdup 1.16.1, paired rounds" "$note" >"$OUT/markdup.md"
rss_table "$TSV" >>"$OUT/markdup.md"
echo "bench-markdup: wrote $OUT/markdup.md"
cat "$OUT/markdup.md"
