#!/usr/bin/env bash
# bench-baq.sh -- BAQ on: samtools mpileup -f ref.fa against seqshard pileup
# -f ref.fa at -@1 and -@2, on the whole benchmark BAM and its CRAM copy
# (bench/make-data.sh: E. coli 536, 2x150 at 30x).
#
#   SEQSHARD=build/seqshard bench/bench-baq.sh
#
# Before timing, every seqshard command's output must equal samtools' byte
# for byte (cmp); a mismatch stops the benchmark. Then SS_BENCH_RUNS rounds
# [5]; each round runs every command once, output to /dev/null, in an order
# that rotates from round to round, so that drift on a shared machine falls
# on all commands alike. Reported: each command's median wall time, and each
# speed-up as the median over rounds of samtools' time / seqshard's time in
# the same round (paired), with its range.
#
# Environment: SEQSHARD [<repo>/build/seqshard], SS_BENCH_RUNS [5],
# SS_BENCH_DATA [bench/data; made with make-data.sh unless it has .stamp],
# SS_BENCH_OUT [bench/results], SEQSHARD_BAQ_PATH (passed on: forces a path).
# Results: $SS_BENCH_OUT/baq-times.tsv (every run) and baq.md (the table).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/.." && pwd)
SEQSHARD=${SEQSHARD:-$SRC/build/seqshard}
DATA=${SS_BENCH_DATA:-$HERE/data}
OUT=${SS_BENCH_OUT:-$HERE/results}
RUNS=${SS_BENCH_RUNS:-5}

die() { echo "bench-baq: $*" >&2; exit 1; }

[ -x "$SEQSHARD" ] || die "SEQSHARD=$SEQSHARD is not executable; build seqshard first"
command -v samtools >/dev/null || die "samtools not found; apt-get install samtools"
[ -f "$DATA/.stamp" ] || "$HERE/make-data.sh" "$DATA"
REF=$DATA/ref.fa
BAM=$DATA/ecoli30x.bam
CRAM=$DATA/ecoli30x.cram
for f in "$REF" "$BAM" "$CRAM"; do [ -r "$f" ] || die "$f missing; run bench/make-data.sh"; done
mkdir -p "$OUT"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ss-bench-baq.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

PATH_LINE=$("$SEQSHARD" --version | sed -n 's/^pileup: //p')
[ -n "$PATH_LINE" ] || die "seqshard --version names no BAQ path"
case $PATH_LINE in *none*) die "$PATH_LINE" ;; esac

# name|command; the samtools command of an input comes first.
CMDS=(
    "samtools bam|samtools mpileup -f $REF $BAM"
    "seqshard bam -@1|$SEQSHARD pileup --quiet -@ 1 -f $REF $BAM"
    "seqshard bam -@2|$SEQSHARD pileup --quiet -@ 2 -f $REF $BAM"
    "samtools cram|samtools mpileup -f $REF $CRAM"
    "seqshard cram -@1|$SEQSHARD pileup --quiet -@ 1 -f $REF $CRAM"
    "seqshard cram -@2|$SEQSHARD pileup --quiet -@ 2 -f $REF $CRAM"
)
name() { echo "${1%%|*}"; }
cmdof() { echo "${1#*|}"; }

# ---- correctness first --------------------------------------------------------------
for input in bam cram; do
    ref_cmd=
    for e in "${CMDS[@]}"; do
        case $(name "$e") in
        "samtools $input")
            ref_cmd=$(cmdof "$e")
            echo "bench-baq: $(name "$e"): reference output"
            bash -c "$ref_cmd" >"$WORK/exp.txt" 2>/dev/null || die "failed: $ref_cmd"
            ;;
        "seqshard $input"*)
            echo "bench-baq: checking $(name "$e") against samtools"
            bash -c "$(cmdof "$e")" >"$WORK/got.txt" 2>"$WORK/got.err" \
                || die "failed: $(cmdof "$e"): $(head -2 "$WORK/got.err")"
            cmp "$WORK/exp.txt" "$WORK/got.txt" \
                || die "$(name "$e"): output differs from samtools; not timing a wrong answer"
            ;;
        esac
    done
done
rm -f "$WORK"/*.txt

# ---- timing: rounds, the order rotating -------------------------------------------------
TSV=$OUT/baq-times.tsv
printf 'round\tcommand\tseconds\n' >"$TSV"
n=${#CMDS[@]}
for ((r = 1; r <= RUNS; r++)); do
    for ((i = 0; i < n; i++)); do
        e=${CMDS[$(((i + r - 1) % n))]}
        t0=$(date +%s.%N)
        bash -c "$(cmdof "$e")" >/dev/null 2>&1 || die "failed in round $r: $(cmdof "$e")"
        t1=$(date +%s.%N)
        s=$(echo "$t1 - $t0" | bc -l)
        printf '%d\t%s\t%.3f\n' "$r" "$(name "$e")" "$s" >>"$TSV"
        printf 'bench-baq: round %d/%d  %-18s %7.2f s\n' "$r" "$RUNS" "$(name "$e")" "$s"
    done
done

# ---- the table ---------------------------------------------------------------------------
python3 - "$TSV" "$OUT/baq.md" "$PATH_LINE" "$RUNS" <<'PY'
import csv, statistics, sys, os, subprocess
tsv, md, path_line, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
t = {}
for row in csv.DictReader(open(tsv), delimiter='\t'):
    t.setdefault(row['command'], {})[int(row['round'])] = float(row['seconds'])
lines = ["| input | command | median (s) | min-max (s) | speed-up vs samtools (median of paired rounds) | range |",
         "|---|---|---:|---:|---:|---:|"]
for inp in ('bam', 'cram'):
    base = t['samtools ' + inp]
    for name in ['samtools ' + inp, 'seqshard %s -@1' % inp, 'seqshard %s -@2' % inp]:
        v = t[name]
        med = statistics.median(v.values())
        if name.startswith('samtools'):
            sp, rng = '1.00x', ''
        else:
            ratios = [base[r] / v[r] for r in v if r in base]
            sp = '%.2fx' % statistics.median(ratios)
            rng = '%.2f-%.2fx' % (min(ratios), max(ratios))
        cmd = name.replace(' ' + inp, '').replace('seqshard', 'seqshard pileup -f').replace(
            'samtools', 'samtools mpileup -f')
        lines.append('| %s | %s | %.2f | %.2f-%.2f | %s | %s |' % (
            inp.upper(), cmd, med, min(v.values()), max(v.values()), sp, rng))
cpu = next((l.split(':', 1)[1].strip() for l in open('/proc/cpuinfo') if l.startswith('model name')), '?')
load = open('/proc/loadavg').read().split()[0]
foot = ('%d rounds, each command once per round in rotating order, output to /dev/null; '
        'seqshard %s; %s, %d cores; load average %s at the end.' % (
            runs, path_line, cpu, os.cpu_count(), load))
open(md, 'w').write('\n'.join(lines) + '\n\n' + foot + '\n')
print('\n'.join(lines) + '\n\n' + foot)
PY
echo "bench-baq: wrote $OUT/baq.md and $TSV"
