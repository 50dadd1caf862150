#!/usr/bin/env bash
# bench-build-ab.sh -- two builds of seqshard in alternating rounds: does a change
# cost speed? Each round runs every case once with each build, in A B order in odd
# rounds and B A in even ones (a linear drift cancels); the statistic is the ratio
# new/old within a round, its median over SS_BENCH_ROUNDS rounds with a 95%
# bootstrap interval (bench/paired_stats.py).
#
#   SEQSHARD_OLD=/path/old/seqshard SEQSHARD_NEW=build/seqshard bench/bench-build-ab.sh
#
# Cases: pileup -B on the whole genome, pileup with BAQ on the first 500 kb, view
# CRAM -> BAM on the first 600 kb, mpileup (-Ou) and mpileup --call -mv on the first
# 1 Mb; each at -@ 2 (SS_BENCH_THREADS); SS_AB_CASES=REGEX keeps the cases it matches;
# SS_AB_REF=ref.fa SS_AB_BAMS='a.bam b.bam' runs them on another data set;
# SS_AB_DIFFER_OK=1 times builds whose outputs differ (a fix that changes bytes). Both builds must
# give the same bytes (checked once before timing). Results: $SS_BENCH_OUT
# [bench/results]/build-ab.tsv (every run) and build-ab.md (the table).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/.." && pwd)
DATA=${SS_BENCH_DATA:-$HERE/data}
OUT=${SS_BENCH_OUT:-$HERE/results}
ROUNDS=${SS_BENCH_ROUNDS:-20}
T=${SS_BENCH_THREADS:-2}
OLD=${SEQSHARD_OLD:?give SEQSHARD_OLD=the build to compare against}
NEW=${SEQSHARD_NEW:-$SRC/build/seqshard}

die() { echo "bench-build-ab: $*" >&2; exit 1; }
[ -x /usr/bin/time ] || die "/usr/bin/time not found; apt-get install time"
for b in "$OLD" "$NEW"; do [ -x "$b" ] || die "$b is not executable"; done
"$HERE/make-data.sh" "$DATA"
DATA=$(cd "$DATA" && pwd)
OUT=$(mkdir -p "$OUT" && cd "$OUT" && pwd)
REF=$DATA/ref.fa BAM=$DATA/ecoli30x.bam CRAM=$DATA/ecoli30x.cram
# SS_AB_REF and SS_AB_BAMS: another data set (a reference and one or more BAMs, e.g. three
# samples at low coverage); the CRAM case is left out there.
if [ -n "${SS_AB_BAMS:-}" ]; then
    REF=${SS_AB_REF:?give SS_AB_REF with SS_AB_BAMS}
    BAM=$SS_AB_BAMS CRAM=
fi
CTG=$(cut -f1 "$REF.fai" | head -1)
CASES=(
    "pileup-nobaq|pileup --quiet -@ $T -B -f $REF -o OUT $BAM"
    "pileup-baq-500k|pileup --quiet -@ $T -f $REF -r $CTG:1-500000 -o OUT $BAM"
    "view-cram-bam-600k|view --quiet -@ $T -b -T $REF -o OUT $CRAM $CTG:1-600000"
    "mpileup-1m|mpileup --quiet --no-version -@ $T -f $REF -r $CTG:1-1000000 -Ou -o OUT $BAM"
    "mpileup-call-1m|mpileup --quiet --no-version -@ $T -f $REF -r $CTG:1-1000000 -Ou -o OUT $BAM --call -mv"
)
[ -n "$CRAM" ] || CASES=("${CASES[@]:0:2}" "${CASES[@]:3}")
# SS_AB_CASES: a regular expression; only the cases whose names match run (default: all)
if [ -n "${SS_AB_CASES:-}" ]; then
    kept=()
    for c in "${CASES[@]}"; do [[ ${c%%|*} =~ $SS_AB_CASES ]] && kept+=("$c"); done
    CASES=("${kept[@]}")
    [ ${#CASES[@]} -gt 0 ] || die "SS_AB_CASES=$SS_AB_CASES matches no case"
fi
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ss-build-ab.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

for c in "${CASES[@]}"; do # the same bytes from both builds, or the timing means nothing
    IFS='|' read -r name args <<<"$c"
    for b in old new; do
        bin=$OLD
        [ $b = new ] && bin=$NEW
        # shellcheck disable=SC2086 # args is a word list
        "$bin" ${args//OUT/$WORK/$b.out} || die "$name: the $b build failed"
    done
    if [[ $name == view* ]]; then # @PG differs by nothing, but compare records to be plain
        cmp -s <(samtools view "$WORK/old.out") <(samtools view "$WORK/new.out") ||
            die "$name: the builds' records differ"
    else
        if ! cmp -s "$WORK/old.out" "$WORK/new.out"; then
            # SS_AB_DIFFER_OK=1: a fix that changes output is timed all the same (say so)
            [ "${SS_AB_DIFFER_OK:-0}" = 1 ] || die "$name: the builds' outputs differ"
            echo "bench-build-ab: $name: the builds' outputs differ in" \
                "$(cmp -l "$WORK/old.out" "$WORK/new.out" 2>/dev/null | wc -l) bytes" >&2
        fi
    fi
done

echo "bench-build-ab: load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
TSV=$OUT/build-ab.tsv
printf 'round\tcase\tconfig\twall_s\tuser_s\tsys_s\n' >"$TSV"
for ((r = 1; r <= ROUNDS; r++)); do
    order=(old new)
    ((r % 2 == 0)) && order=(new old)
    for c in "${CASES[@]}"; do
        IFS='|' read -r name args <<<"$c"
        for b in "${order[@]}"; do
            bin=$OLD
            [ $b = new ] && bin=$NEW
            # shellcheck disable=SC2086
            /usr/bin/time -f '%e %U %S' -o "$WORK/t" "$bin" ${args//OUT//dev/null} >/dev/null ||
                die "$name ($b) failed"
            printf '%s\t%s\t%s\t%s\n' "$r" "$name" "$b" "$(tr ' ' '\t' <"$WORK/t")" >>"$TSV"
        done
    done
    echo "bench-build-ab: round $r of $ROUNDS done" >&2
done
python3 "$HERE/paired_stats.py" "$TSV" new "New build against the old, paired rounds" \
    "bench/bench-build-ab.sh, $ROUNDS rounds, -@ $T. Ratio: the new build's wall time over the old one's in the same round; median over rounds, 95% bootstrap interval (below 1: the new build is faster)." \
    >"$OUT/build-ab.md"
echo "bench-build-ab: wrote $OUT/build-ab.md" >&2
cat "$OUT/build-ab.md"
