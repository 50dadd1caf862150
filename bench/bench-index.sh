#!/usr/bin/env bash
# bench-index.sh -- what the output's index costs: `view -b --write-index` against
# `view -b`, `pileup -B -o out.txt.gz` (BGZF plus its tabix index) against
# `-o out.txt`, and `mpileup -Ob --write-index` against `mpileup -Ob` (over
# SS_BENCH_MP_REGION [the genome's first 1 Mbp] with -B, so the run stays short), at
# -@ $T [2], in paired rounds (the two configs of a case one after the
# other, their order swapped every round). With SEQSHARD_BASE set (an older build), its
# runs are cases of their own, so before and after sit in one table. Every index is
# checked first against samtools index -c, tabix -s1 -b2 -e2 and bcftools index of the
# same file.
# Ratio: the indexed run's time over the plain run's in the same round; median and a 95%
# bootstrap interval (paired_stats.py). Before each timed run the outputs of the run before
# are removed and the page cache written out (sync), untimed: otherwise a run pays for
# freeing and flushing the last run's 125 MB file, which on this VM's disk is about a
# tenth of a second and falls on whichever config runs after an indexed one. Results: $SS_BENCH_OUT [bench/results]/index.{tsv,md}.
#
#   SEQSHARD=build/seqshard SEQSHARD_BASE=/path/to/old/seqshard SS_BENCH_RUNS=7 \
#       bench/bench-index.sh
set -euo pipefail
. "$(dirname "$0")/lib.sh"
bench_init bench-index 7
[ -x "$SEQSHARD" ] || die "SEQSHARD=$SEQSHARD is not executable; build seqshard first"
"$HERE/make-data.sh" "$DATA"
OUT=$(mkdir -p "$OUT" && cd "$OUT" && pwd)
BAM=$DATA/ecoli30x.bam REF=$DATA/ref.fa
CASES=${SS_BENCH_INDEX_CASES:-view pileup mpileup} # a subset: SS_BENCH_INDEX_CASES=mpileup
MP_REGION=${SS_BENCH_MP_REGION:-$(head -1 "$DATA/ref.fa.fai" | cut -f1):1-1000000}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ss-bench-index.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

bins=(this)
[ -n "${SEQSHARD_BASE:-}" ] && bins+=(base)

# run BIN CASE CONFIG: one timed command
cmd() {
    local s
    s=$(binary "$1")
    case $2/$3 in
    view/indexed) echo "$s view -b -@ $T --quiet --write-index -o $WORK/v.bam $BAM" ;;
    view/plain) echo "$s view -b -@ $T --quiet -o $WORK/v.bam $BAM" ;;
    pileup/indexed) echo "$s pileup -B -@ $T --quiet -f $REF -o $WORK/p.txt.gz $BAM" ;;
    pileup/plain) echo "$s pileup -B -@ $T --quiet -f $REF -o $WORK/p.txt $BAM" ;;
    mpileup/indexed) echo "$s mpileup -B -@ $T --quiet -f $REF -r $MP_REGION -Ob --write-index -o $WORK/m.bcf $BAM" ;;
    mpileup/plain) echo "$s mpileup -B -@ $T --quiet -f $REF -r $MP_REGION -Ob -o $WORK/m.bcf $BAM" ;;
    esac
}

want() { [[ " $CASES " == *" $1 "* ]]; }
for b in "${bins[@]}"; do
    if want view; then
        $(cmd "$b" view indexed) && index_is_tools sam-csi "$WORK/v.bam" "$WORK/v.bam.csi" ||
            die "$b: view's .csi is not samtools index -c's"
    fi
    if want pileup; then
        $(cmd "$b" pileup indexed) && index_is_tools tbi "$WORK/p.txt.gz" "$WORK/p.txt.gz.tbi" ||
            die "$b: pileup's .tbi is not tabix's"
    fi
    if want mpileup; then
        $(cmd "$b" mpileup indexed) && index_is_tools bcf-csi "$WORK/m.bcf" "$WORK/m.bcf.csi" ||
            die "$b: mpileup's .csi is not bcftools index's"
    fi
done

TSV=$OUT/index.tsv
printf 'round\tcase\tconfig\twall_s\tuser_s\tsys_s\n' >"$TSV"
for ((r = 1; r <= RUNS; r++)); do
    for b in "${bins[@]}"; do
        for c in $CASES; do
            order=(indexed plain)
            ((r % 2 == 0)) && order=(plain indexed)
            for k in "${order[@]}"; do
                rm -f "$WORK"/[vpm].* && sync
                /usr/bin/time -f '%e %U %S' -o "$WORK/t" $(cmd "$b" "$c" "$k") || die "$b $c $k failed"
                printf '%s\t%s (%s)\t%s\t%s\n' "$r" "$c" "$b" "$k" "$(tr ' ' '\t' <"$WORK/t")" >>"$TSV"
            done
        done
    done
    echo "bench-index: round $r of $RUNS done" >&2
done
python3 "$HERE/paired_stats.py" "$TSV" indexed \
    "The output's index: indexed against plain runs (-@ $T)" \
    "bench/bench-index.sh, $RUNS paired rounds, whole benchmark BAM; view: --write-index against none; pileup: -o out.txt.gz (BGZF and .tbi) against -o out.txt; mpileup: -B -r $MP_REGION -Ob --write-index against -Ob; ratio: the indexed run's time over the plain run's in the same round; each run starts with the last run's outputs removed and synced" \
    >"$OUT/index.md"
cat "$OUT/index.md"
