#!/usr/bin/env bash
# bench-realign.sh -- seqshard realign on the whole E. coli 536 genome at 30x
# (dwgsim + bwa mem: ref.fa, ecoli30x.bam, mutations.vcf = dwgsim's truth), read-only:
#
#   speed   `seqshard realign -@T -l 6` against `seqshard view -@T -O bam,level=6` re-encoding
#           the same BAM (a level given, so view compresses instead of copying blocks),
#           in alternating rounds; median wall time of each, their ratio, peak RSS.
#   reads   scripts/realign-eval.py on bwa's BAM and on the realigned one: of the
#           MAPQ >= 1 reads whose clipped span covers a homozygous true indel with 5
#           bases each side, the share holding exactly it (left-normalised), and the
#           share when an insertion whose placement scores as the true one's counts
#           (its inserted bases, which hold the read's own errors, may differ); and the
#           reads' indels that match no true indel.
#   calls   bcftools mpileup -f ref.fa | bcftools call -mv | bcftools norm -f ref.fa -m -both
#           on both BAMs; indel recall and precision and SNV precision against the
#           truth (normalised the same way), matched on CHROM, POS, REF, ALT. The same
#           again on a third of the reads (samtools view -s 7.33, about 10x), where a
#           caller has fewer reads to outvote a misaligned one.
#   scale   the realigned BAM's records at -@1 --shard-size 50k equal the -@T run's.
#   allocs  allocator calls per read in steady state under the counting shim
#           (libsscount.so beside SEQSHARD, or SS_COUNT_LIB): two runs, --report.
#
# Results: bench/results/realign.md (the table docs/benchmarks.md quotes) and
# realign.txt (raw figures). Environment: SEQSHARD [<repo>/build/seqshard],
# SS_BENCH_DATA [bench/data], SS_BENCH_OUT [bench/results], SS_BENCH_RUNS [3],
# SS_BENCH_THREADS [2], TMPDIR (scratch: three BAMs of ~130 MB).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/.." && pwd)
SEQSHARD=${SEQSHARD:-$SRC/build/seqshard}
DATA=${SS_BENCH_DATA:-$HERE/data}
OUT=${SS_BENCH_OUT:-$HERE/results}
RUNS=${SS_BENCH_RUNS:-3}
T=${SS_BENCH_THREADS:-2}
REF=$DATA/ref.fa
IN=$DATA/ecoli30x.bam
TRUTH=$DATA/mutations.vcf

die() { echo "bench-realign: $*" >&2; exit 1; }
[ -x "$SEQSHARD" ] || die "SEQSHARD=$SEQSHARD is not executable; build seqshard first"
for t in samtools bcftools python3 /usr/bin/time; do
    command -v "$t" >/dev/null || die "$t not found"
done
for f in "$REF" "$IN" "$TRUTH"; do [ -f "$f" ] || die "no $f; run bench/make-data.sh"; done
mkdir -p "$OUT"
W=$(mktemp -d "${TMPDIR:-/tmp}/bench-realign.XXXXXX")
trap 'rm -rf "$W"' EXIT

REALIGN=("$SEQSHARD" realign --quiet -@ "$T" -l 6 -f "$REF" -o "$W/realigned.bam" "$IN")
VIEW=("$SEQSHARD" view --quiet -@ "$T" -O bam,level=6 -o "$W/view.bam" "$IN")

timed() { # NAME CMD...: append "NAME wall_s rss_kb" to $W/times
    local name=$1
    shift
    /usr/bin/time -f "$name %e %M" -a -o "$W/times" "$@"
}
for ((i = 0; i < RUNS; i++)); do # alternate, so drift hits both alike
    timed view "${VIEW[@]}"
    timed realign "${REALIGN[@]}"
done
n_in=$(samtools view -c "$IN") # a timed run that wrote fewer records measured nothing
for f in view realigned; do
    n=$(samtools view -c "$W/$f.bam")
    [ "$n" = "$n_in" ] || die "$f.bam has $n records, the input $n_in"
done
median() { awk -v n="$1" '$1 == n {print $2}' "$W/times" | sort -g | awk '{a[NR] = $1}
    END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
rss_max() { awk -v n="$1" '$1 == n && $3 > m {m = $3} END {print m}' "$W/times"; }
t_view=$(median view)
t_realign=$(median realign)
ratio=$(awk -v a="$t_realign" -v b="$t_view" 'BEGIN {printf "%.2f", a / b}')
rss_mb=$(awk -v k="$(rss_max realign)" 'BEGIN {printf "%.0f", k / 1024}')
view_rss_mb=$(awk -v k="$(rss_max view)" 'BEGIN {printf "%.0f", k / 1024}')

# ---- the same records at another thread count and shard size ----
"$SEQSHARD" realign --quiet -@ 1 --shard-size 50k -l 1 -f "$REF" -o "$W/r50k.bam" \
    --report "$W/report.json" "$IN"
if cmp -s <(samtools view "$W/realigned.bam") <(samtools view "$W/r50k.bam"); then
    scale="same records"
else
    scale="RECORDS DIFFER"
fi
counts=$(grep -o '"kernel_counts": {[^}]*}' "$W/report.json" | sed 's/"kernel_counts": //')
rm -f "$W/r50k.bam"

# ---- allocator calls per read in steady state (the counting shim, when built) ----
# As tests/integration/alloc_steady_state.sh: one worker, a run over the first fifth of
# the first contig and one over the whole file; the difference in allocator calls over
# the difference in reads cancels what a run allocates once (start-up, first shards).
COUNT_LIB=${SS_COUNT_LIB:-$(dirname "$SEQSHARD")/libsscount.so}
allocs="not measured (no $COUNT_LIB)"
if [ -r "$COUNT_LIB" ]; then
    read -r ctg ctg_len _ <"$REF.fai"
    for part in small large; do
        region=()
        [ $part = small ] && region=("$ctg:1-$((ctg_len / 5))")
        LD_PRELOAD=$COUNT_LIB "$SEQSHARD" realign --quiet -@ 1 -l 1 -f "$REF" \
            -o "$W/count.bam" --report "$W/count.$part.json" "$IN" "${region[@]}"
    done
    allocs=$(python3 - "$W/count.small.json" "$W/count.large.json" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
calls = b['diagnostics']['malloc_calls'] - a['diagnostics']['malloc_calls']
reads = b['totals']['reads'] - a['totals']['reads']
print('%.4f' % (calls / reads))
PY
)
    rm -f "$W/count.bam"
fi

# ---- reads over true indels ----
EVAL=$SRC/scripts/realign-eval.py
e_bwa=$(samtools view "$IN" | python3 "$EVAL" "$REF" "$TRUTH" bwa)
e_rl=$(samtools view "$W/realigned.bam" | python3 "$EVAL" "$REF" "$TRUTH" realigned)
get() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

# ---- bcftools calls ----
norm_truth() { # KIND (indel|snv) -> CHROM POS REF ALT lines of the truth
    bcftools norm -f "$REF" -m -both "$TRUTH" 2>/dev/null | kind_of "$1"
}
kind_of() { # KIND: the VCF lines on stdin of that kind, as CHROM POS REF ALT
    if [ "$1" = indel ]; then
        awk '!/^#/ && length($4) != length($5) {print $1"\t"$2"\t"$4"\t"$5}' | sort -u
    else
        awk '!/^#/ && length($4) == 1 && length($5) == 1 {print $1"\t"$2"\t"$4"\t"$5}' | sort -u
    fi
}
norm_truth indel >"$W/truth.tsv"
norm_truth snv >"$W/truth.snv.tsv"
calls() { # BAM PREFIX: PREFIX.tsv (indels) and PREFIX.snv.tsv
    bcftools mpileup --threads "$T" -Ou -f "$REF" "$1" 2>/dev/null | bcftools call -mv -Ou 2>/dev/null |
        bcftools norm -f "$REF" -m -both 2>/dev/null >"$2.vcf"
    kind_of indel <"$2.vcf" >"$2.tsv"
    kind_of snv <"$2.vcf" >"$2.snv.tsv"
}
rp() { # TRUTH.tsv CALLS.tsv: "recall precision TP called"
    local tp n c
    tp=$(comm -12 "$1" "$2" | wc -l)
    n=$(wc -l <"$1")
    c=$(wc -l <"$2")
    awk -v tp="$tp" -v n="$n" -v c="$c" 'BEGIN {printf "%.4f %.4f %d %d", tp / n, c ? tp / c : 0, tp, c}'
}
calls "$IN" "$W/bwa"
calls "$W/realigned.bam" "$W/rl"
read -r rec_bwa prec_bwa tp_bwa c_bwa <<<"$(rp "$W/truth.tsv" "$W/bwa.tsv")"
read -r rec_rl prec_rl tp_rl c_rl <<<"$(rp "$W/truth.tsv" "$W/rl.tsv")"
read -r _ sprec_bwa stp_bwa sc_bwa <<<"$(rp "$W/truth.snv.tsv" "$W/bwa.snv.tsv")"
read -r _ sprec_rl stp_rl sc_rl <<<"$(rp "$W/truth.snv.tsv" "$W/rl.snv.tsv")"
n_truth=$(wc -l <"$W/truth.tsv")

# ---- the same at a third of the depth ----
samtools view -@ "$T" -s 7.33 -b -o "$W/sub.bam" "$IN"
samtools index "$W/sub.bam"
"$SEQSHARD" realign --quiet -@ "$T" -f "$REF" -o "$W/sub.rl.bam" "$W/sub.bam"
calls "$W/sub.bam" "$W/subbwa"
calls "$W/sub.rl.bam" "$W/subrl"
read -r lrec_bwa lprec_bwa ltp_bwa lc_bwa <<<"$(rp "$W/truth.tsv" "$W/subbwa.tsv")"
read -r lrec_rl lprec_rl ltp_rl lc_rl <<<"$(rp "$W/truth.tsv" "$W/subrl.tsv")"
read -r _ lsprec_bwa _ lsc_bwa <<<"$(rp "$W/truth.snv.tsv" "$W/subbwa.snv.tsv")"
read -r _ lsprec_rl _ lsc_rl <<<"$(rp "$W/truth.snv.tsv" "$W/subrl.snv.tsv")"
rm -f "$W/sub.bam" "$W/sub.bam.bai" "$W/sub.rl.bam"

verdict() { awk "BEGIN {exit !($1)}" && echo met || echo "NOT met"; }
share_ok=$(verdict "$(get "$e_rl" share) >= 0.997")
equiv_ok=$(verdict "$(get "$e_rl" share_equiv) >= 0.997")
false_ok=$(verdict "$(get "$e_rl" false) <= $(get "$e_bwa" false) / 3")
recall_ok=$(verdict "$rec_rl >= $rec_bwa")
prec_ok=$(verdict "$prec_rl >= $prec_bwa")
sprec_ok=$(verdict "$sprec_rl >= $sprec_bwa")
lrecall_ok=$(verdict "$lrec_rl > $lrec_bwa")
lprec_ok=$(verdict "$lprec_rl >= $lprec_bwa && $lsprec_rl >= $lsprec_bwa")
speed_ok=$(verdict "$ratio <= 1.3")
rss_ok=$(verdict "$rss_mb < 512")
allocs_ok="not measured"
[[ $allocs =~ ^[0-9.e+-]+$ ]] && allocs_ok=$(verdict "$allocs <= 0.05")

{
    echo "$e_bwa"
    echo "$e_rl"
    echo "bcftools bwa recall=$rec_bwa precision=$prec_bwa tp=$tp_bwa called=$c_bwa truth=$n_truth"
    echo "bcftools realigned recall=$rec_rl precision=$prec_rl tp=$tp_rl called=$c_rl truth=$n_truth"
    echo "bcftools snv bwa precision=$sprec_bwa tp=$stp_bwa called=$sc_bwa realigned precision=$sprec_rl tp=$stp_rl called=$sc_rl"
    echo "bcftools third-depth bwa recall=$lrec_bwa precision=$lprec_bwa tp=$ltp_bwa called=$lc_bwa snv_precision=$lsprec_bwa"
    echo "bcftools third-depth realigned recall=$lrec_rl precision=$lprec_rl tp=$ltp_rl called=$lc_rl snv_precision=$lsprec_rl"
    echo "time view_s=$t_view realign_s=$t_realign ratio=$ratio realign_rss_mb=$rss_mb view_rss_mb=$view_rss_mb runs=$RUNS threads=$T"
    echo "kernel_counts $counts"
    echo "allocs_per_read $allocs"
    echo "scale -@1 --shard-size 50k: $scale"
} >"$OUT/realign.txt"

cat >"$OUT/realign.md" <<EOF
| figure | bwa mem (input) | seqshard realign | floor | |
|---|---|---|---|---|
| MAPQ>=1 reads over homozygous true indels holding exactly it | $(get "$e_bwa" holding)/$(get "$e_bwa" covering) = $(get "$e_bwa" share) | $(get "$e_rl" holding)/$(get "$e_rl" covering) = $(get "$e_rl" share) | >= 0.997 | $share_ok |
| the same, an insertion counted when its placement scores as the true one's (only the read's inserted bases differ) | $(get "$e_bwa" equiv)/$(get "$e_bwa" covering) = $(get "$e_bwa" share_equiv) | $(get "$e_rl" equiv)/$(get "$e_rl" covering) = $(get "$e_rl" share_equiv) | >= 0.997 | $equiv_ok |
| the same, all reads (MAPQ 0 included) | $(get "$e_bwa" holding_all)/$(get "$e_bwa" covering_all) | $(get "$e_rl" holding_all)/$(get "$e_rl" covering_all) | | |
| read indels matching no true indel | $(get "$e_bwa" false) | $(get "$e_rl" false) | <= a third of bwa's | $false_ok |
| bcftools indel recall ($n_truth true) | $rec_bwa ($tp_bwa) | $rec_rl ($tp_rl) | not lower | $recall_ok |
| bcftools indel precision | $prec_bwa ($c_bwa called) | $prec_rl ($c_rl called) | not lower | $prec_ok |
| bcftools SNV precision | $sprec_bwa ($sc_bwa called) | $sprec_rl ($sc_rl called) | not lower | $sprec_ok |
| a third of the reads (about 10x): indel recall | $lrec_bwa ($ltp_bwa) | $lrec_rl ($ltp_rl) | higher | $lrecall_ok |
| the same: indel precision, SNV precision | $lprec_bwa, $lsprec_bwa | $lprec_rl, $lsprec_rl | not lower | $lprec_ok |
| wall time, -@ $T (median of $RUNS) | view -O bam,level=6: ${t_view} s | ${t_realign} s (x$ratio) | <= 1.3x view | $speed_ok |
| peak RSS | view: ${view_rss_mb} MB | ${rss_mb} MB | < 512 MB | $rss_ok |
| allocator calls per read, steady state | | $allocs | <= 0.05 | $allocs_ok |
| -@1 --shard-size 50k vs -@$T default | | $scale | same | |
EOF
cat "$OUT/realign.txt"
cat "$OUT/realign.md"
