#!/usr/bin/env bash
# bench-mpileup.sh -- seqshard mpileup against bcftools mpileup (Debian's 1.16), in paired
# rounds on the benchmark data (bench/make-data.sh: E. coli 536, 4.94 Mb, 30x).
#
#   SEQSHARD=build/seqshard bench/bench-mpileup.sh
#
# Cases, each with `-Ou` to /dev/null (bcftools' default options otherwise):
#   default   one sample, `mpileup -f ref.fa -Ou`
#   three     three samples (three copies of the BAM, each with its own read group),
#             `-a AD,DP,SP`
#   deep      a 20 kb stretch at 600x (the BAM's reads there, 20 times over under 20
#             read names), `-d 10000`: deep positions past 255 bases, the random stream
# Configs: bcftools; seqshard -@1; seqshard -@2. Each round runs every config of a case
# once, in an order that alternates between rounds; the ratio bcftools/seqshard within a
# round, its median over SS_BENCH_RUNS [5] rounds and a 95% bootstrap interval
# (paired_stats.py). Before timing, seqshard's output must equal bcftools' (cmp).
# Peak RSS (GNU time) of each run goes to the TSV; allocator calls per read come from
# the counting shim (build/libsscount.so) on two regions, their difference per read.
#
# Results: bench/results/mpileup.tsv, mpileup.md. About 15 minutes on 2 cores.
set -euo pipefail

. "$(dirname "$0")/lib.sh"
bench_init bench-mpileup 5

[ -x "$SEQSHARD" ] || die "SEQSHARD=$SEQSHARD is not executable; build seqshard first"
for t in bcftools samtools python3; do
    command -v "$t" >/dev/null || die "$t not found; apt-get install $t"
done
[ -x /usr/bin/time ] || die "/usr/bin/time not found; apt-get install time"
"$HERE/make-data.sh" "$DATA"
REF=$DATA/ref.fa
BAM=$DATA/ecoli30x.bam
mkdir -p "$OUT"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ss-bench-mpileup.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# ---- inputs: three samples, and a deep stretch ----------------------------------------
for s in A B C; do
    samtools addreplacerg -r "ID:$s" -r "SM:$s" -o "$WORK/$s.bam" "$BAM" 2>/dev/null ||
        die "samtools addreplacerg failed"
    samtools index "$WORK/$s.bam"
done
CTG=$(cut -f1 "$REF.fai" | head -1)
samtools view -h "$BAM" "$CTG:1000001-1020000" >"$WORK/deep.sam"
python3 - "$WORK/deep.sam" "$WORK/deep20.sam" <<'PY'
import sys
src, dst = sys.argv[1:3]
head, body = [], []
for line in open(src):
    (head if line.startswith('@') else body).append(line)
with open(dst, 'w') as f:
    f.writelines(head)
    for k in range(20):  # 20 copies of every read, each under its own name
        for line in body:
            q = line.split('\t', 1)
            f.write('%s_%d\t%s' % (q[0], k, q[1]))
PY
samtools sort -o "$WORK/deep.bam" "$WORK/deep20.sam" 2>/dev/null || die "samtools sort failed"
samtools index "$WORK/deep.bam"
rm -f "$WORK"/*.sam

# name|config|command ...
CASES=(
    "default|bcftools|bcftools mpileup -f $REF -Ou -o /dev/null $BAM"
    "default|seqshard -@1|$SEQSHARD mpileup --quiet -@ 1 -f $REF -Ou -o /dev/null $BAM"
    "default|seqshard -@2|$SEQSHARD mpileup --quiet -@ 2 -f $REF -Ou -o /dev/null $BAM"
    "three|bcftools|bcftools mpileup -a AD,DP,SP -f $REF -Ou -o /dev/null $WORK/A.bam $WORK/B.bam $WORK/C.bam"
    "three|seqshard -@1|$SEQSHARD mpileup --quiet -@ 1 -a AD,DP,SP -f $REF -Ou -o /dev/null $WORK/A.bam $WORK/B.bam $WORK/C.bam"
    "three|seqshard -@2|$SEQSHARD mpileup --quiet -@ 2 -a AD,DP,SP -f $REF -Ou -o /dev/null $WORK/A.bam $WORK/B.bam $WORK/C.bam"
    "deep|bcftools|bcftools mpileup -d 10000 -f $REF -Ou -o /dev/null $WORK/deep.bam"
    "deep|seqshard -@1|$SEQSHARD mpileup --quiet -@ 1 -d 10000 -f $REF -Ou -o /dev/null $WORK/deep.bam"
    "deep|seqshard -@2|$SEQSHARD mpileup --quiet -@ 2 -d 10000 -f $REF -Ou -o /dev/null $WORK/deep.bam"
)

# ---- correctness first: every seqshard config against bcftools ---------------------
for e in "${CASES[@]}"; do
    IFS='|' read -r case config cmd <<<"$e"
    out=$WORK/$case.${config// /_}.out   # not .bcf: that name would make BGZF
    bash -c "${cmd/-o \/dev\/null/-o $out} --no-version" 2>/dev/null || die "failed: $cmd"
done
for case in default three deep; do
    for c in "seqshard_-@1" "seqshard_-@2"; do
        cmp -s "$WORK/$case.bcftools.out" "$WORK/$case.$c.out" ||
            die "$case ($c): output differs from bcftools; not timing a wrong answer"
    done
done
rm -f "$WORK"/*.out

# ---- paired rounds ----------------------------------------------------------------
echo "bench-mpileup: load average $(cut -d' ' -f1-3 /proc/loadavg) (should be near 0)" >&2
TSV=$OUT/mpileup.tsv
printf 'round\tcase\tconfig\twall_s\tuser_s\tsys_s\tmax_rss_kb\n' >"$TSV"
for ((r = 1; r <= RUNS; r++)); do
    order=("${CASES[@]}")
    if ((r % 2 == 0)); then # reversed within each case in even rounds
        order=()
        for ((i = ${#CASES[@]} - 1; i >= 0; i--)); do order+=("${CASES[$i]}"); done
    fi
    for e in "${order[@]}"; do
        IFS='|' read -r case config cmd <<<"$e"
        /usr/bin/time -f '%e %U %S %M' -o "$WORK/t" bash -c "exec $cmd" 2>/dev/null ||
            die "failed: $cmd"
        printf '%s\t%s\t%s\t%s\n' "$r" "$case" "$config" "$(tr ' ' '\t' <"$WORK/t")" >>"$TSV"
    done
    echo "bench-mpileup: round $r of $RUNS done" >&2
done

# ---- allocator calls per read -------------------------------------------------------
COUNT_LIB=${SS_COUNT_LIB:-$SRC/build/libsscount.so}
per_read=n/a
if [ -r "$COUNT_LIB" ]; then
    counted() { # region -> "malloc_calls reads"
        LD_PRELOAD=$COUNT_LIB "$SEQSHARD" mpileup --quiet -@ 1 -f "$REF" -r "$CTG:$1" -Ou \
            -o /dev/null --report "$WORK/c.json" "$BAM" || die "counted run failed"
        report_allocs "$WORK/c.json"
    }
    read -r a0 r0 < <(counted 1-200000)
    read -r a1 r1 < <(counted 1-1200000)
    per_read=$(python3 -c "print('%.4f' % (($a1 - $a0) / ($r1 - $r0)))")
fi

note="bench/bench-mpileup.sh, $RUNS paired rounds, $(nproc) cores, -Ou to /dev/null."
note+=" Ratio: bcftools' time over seqshard's in the same round (above 1: seqshard faster);"
note+=" median over rounds, 95% bootstrap interval. Allocator calls per read (seqshard -@1,"
note+=" default case): $per_read."
python3 "$HERE/paired_stats.py" "$TSV" bcftools \
    "mpileup: seqshard against bcftools mpileup 1.16, paired rounds" "$note" >"$OUT/mpileup.md"
rss_table "$TSV" >>"$OUT/mpileup.md"
echo "bench-mpileup: wrote $OUT/mpileup.md"
cat "$OUT/mpileup.md"
