#!/usr/bin/env bash
# bench-call.sh -- `seqshard mpileup --call` against the pipe it replaces, Debian's bcftools
# 1.16 `bcftools mpileup -Ou | bcftools call`, in paired rounds on the benchmark data
# (bench/make-data.sh: E. coli 536, 4.94 Mb, 30x).
#
#   SEQSHARD=build/seqshard bench/bench-call.sh
#   SS_BENCH_DATA=/elsewhere/data SS_BENCH_RUNS=3 bench/bench-call.sh
#
# Cases, each with `-Ou` to /dev/null and bcftools' default options otherwise:
#   default   one sample, `mpileup -f ref.fa -Ou in.bam | call -mv -Ou`
#   three     three samples (three copies of the BAM, each with its own read group), the same
# Configs: the bcftools pipe (two processes: mpileup's BCF goes through a pipe into call);
# seqshard -@1; seqshard -@2. Each round runs every config of a case once, in an order that
# alternates between rounds; the ratio pipe/seqshard within a round, its median over
# SS_BENCH_RUNS [5] rounds and a 95% bootstrap interval (paired_stats.py). Before timing,
# seqshard's output must equal the pipe's (cmp, --no-version on both sides). Peak RSS (GNU
# time) goes to the TSV: for the pipe, the sum of its two processes' peaks (they run at once).
#
# Results: bench/results/call.tsv, call.md. About 20 minutes on 2 cores.
set -euo pipefail

. "$(dirname "$0")/lib.sh"
bench_init bench-call 5

[ -x "$SEQSHARD" ] || die "SEQSHARD=$SEQSHARD is not executable; build seqshard first"
for t in bcftools samtools python3; do
    command -v "$t" >/dev/null || die "$t not found; apt-get install $t"
done
[ -x /usr/bin/time ] || die "/usr/bin/time not found; apt-get install time"
# Data made elsewhere (SS_BENCH_DATA) is read as it is; make-data.sh only fills a missing set.
[ -f "$DATA/.stamp" ] || "$HERE/make-data.sh" "$DATA"
REF=$DATA/ref.fa
BAM=$DATA/ecoli30x.bam
mkdir -p "$OUT"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ss-bench-call.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

for s in A B C; do
    samtools addreplacerg -r "ID:$s" -r "SM:$s" -o "$WORK/$s.bam" "$BAM" 2>/dev/null ||
        die "samtools addreplacerg failed"
    samtools index "$WORK/$s.bam"
done
THREE="$WORK/A.bam $WORK/B.bam $WORK/C.bam"

# name|config|command ... (O: the output, /dev/null when timed)
CASES=(
    "default|bcftools pipe|bcftools mpileup -f $REF -Ou $BAM | bcftools call -mv -Ou -o \$O"
    "default|seqshard -@1|$SEQSHARD mpileup --quiet -@ 1 -f $REF $BAM --call -mv -Ou -o \$O"
    "default|seqshard -@2|$SEQSHARD mpileup --quiet -@ 2 -f $REF $BAM --call -mv -Ou -o \$O"
    "three|bcftools pipe|bcftools mpileup -f $REF -Ou $THREE | bcftools call -mv -Ou -o \$O"
    "three|seqshard -@1|$SEQSHARD mpileup --quiet -@ 1 -f $REF $THREE --call -mv -Ou -o \$O"
    "three|seqshard -@2|$SEQSHARD mpileup --quiet -@ 2 -f $REF $THREE --call -mv -Ou -o \$O"
)

# ---- correctness first: every seqshard config against the pipe -----------------------
for e in "${CASES[@]}"; do
    IFS='|' read -r case config cmd <<<"$e"
    cmd=${cmd//mpileup /mpileup --no-version } # both sides of the pipe, and seqshard's two
    cmd=${cmd//call -mv/call --no-version -mv}
    O=$WORK/$case.${config// /_}.out # not .bcf: that name would make BGZF
    O=$O bash -o pipefail -c "$cmd" 2>/dev/null || die "failed: $cmd"
done
for case in default three; do
    for c in "seqshard_-@1" "seqshard_-@2"; do
        cmp -s "$WORK/$case.bcftools_pipe.out" "$WORK/$case.$c.out" ||
            die "$case ($c): output differs from the bcftools pipe; not timing a wrong answer"
    done
    echo "bench-call: $case: seqshard's output equals the pipe's" \
        "($(bcftools view -H "$WORK/$case.bcftools_pipe.out" | wc -l) records)" >&2
done
rm -f "$WORK"/*.out

# One timed run: "wall user sys max_rss_kb". The pipe's parts are timed one by one (each
# under its own GNU time) and the whole by the outer one; its CPU is the sum of the parts.
timed() {
    local cmd=$1
    if [[ $cmd == *"|"* ]]; then
        local left=${cmd%%|*} right=${cmd#*|}
        /usr/bin/time -f '%e %U %S %M' -o "$WORK/t" bash -o pipefail -c \
            "/usr/bin/time -f '%U %S %M' -o $WORK/t1 $left 2>/dev/null |
             /usr/bin/time -f '%U %S %M' -o $WORK/t2 ${right//\$O//dev/null} 2>/dev/null" ||
            die "failed: $cmd"
        python3 - "$WORK/t" "$WORK/t1" "$WORK/t2" <<'PY'
import sys
w = open(sys.argv[1]).read().split()
a, b = (open(p).read().split() for p in sys.argv[2:4])
print(w[0], "%.2f" % (float(a[0]) + float(b[0])), "%.2f" % (float(a[1]) + float(b[1])),
      int(a[2]) + int(b[2]))
PY
    else
        /usr/bin/time -f '%e %U %S %M' -o "$WORK/t" bash -c "exec ${cmd//\$O//dev/null}" \
            2>/dev/null || die "failed: $cmd"
        cat "$WORK/t"
    fi
}

# ---- paired rounds ----------------------------------------------------------------
echo "bench-call: load average $(cut -d' ' -f1-3 /proc/loadavg) (should be near 0)" >&2
TSV=$OUT/call.tsv
printf 'round\tcase\tconfig\twall_s\tuser_s\tsys_s\tmax_rss_kb\n' >"$TSV"
for ((r = 1; r <= RUNS; r++)); do
    order=("${CASES[@]}")
    if ((r % 2 == 0)); then # reversed within each case in even rounds
        order=()
        for ((i = ${#CASES[@]} - 1; i >= 0; i--)); do order+=("${CASES[$i]}"); done
    fi
    for e in "${order[@]}"; do
        IFS='|' read -r case config cmd <<<"$e"
        t=$(timed "$cmd")
        printf '%s\t%s\t%s\t%s\n' "$r" "$case" "$config" "${t// /$'\t'}" >>"$TSV"
    done
    echo "bench-call: round $r of $RUNS done ($(cut -d' ' -f1-3 /proc/loadavg))" >&2
done

note="bench/bench-call.sh, $RUNS paired rounds, $(nproc) cores, -Ou to /dev/null, load"
note+=" average $(cut -d' ' -f1 /proc/loadavg) at the end. Ratio: the pipe's time over"
note+=" seqshard's in the same round (above 1: seqshard faster); median over rounds, 95%"
note+=" bootstrap interval. The pipe's CPU and peak RSS are the sums of its two processes'."
python3 "$HERE/paired_stats.py" "$TSV" "bcftools pipe" \
    "mpileup --call: seqshard against bcftools mpileup | bcftools call 1.16, paired rounds" \
    "$note" >"$OUT/call.md"
rss_table "$TSV" >>"$OUT/call.md"
echo "bench-call: wrote $OUT/call.md"
cat "$OUT/call.md"
