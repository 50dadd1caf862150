#!/usr/bin/env bash
# bench-alloc-ab.sh -- the default build against the other allocators in many short,
# alternating runs: the 3% allocation target, with a confidence interval.
#
#   bench/bench-alloc-ab.sh            # bench/data (bench/make-data.sh); about 15 minutes
#
# bench-alloc.sh gives the full table (wall, user, sys, RSS, every allocator), but on a
# shared VM five runs of one command spread by 5-15%, so it cannot tell 3% apart. Here
# each round runs every case once under every allocator, back to back, in A B C D order
# in odd rounds and D C B A in even ones (a linear drift cancels), and the statistic is
# the ratio default/other *within a round*: its median over SS_BENCH_ROUNDS rounds, with
# a 95% bootstrap confidence interval. The target is met for a case when the interval's
# upper end is at most 1.03; "not shown" when the interval holds 1.03 and values above.
#
# Cases (each short enough for many rounds, long enough that start-up is a few percent):
#   pileup -B -f ref on the first 2 Mb, pileup -f ref (BAQ) on the first 500 kb,
#   view -b -T ref CRAM -> BAM on the first 600 kb, realign on the first 600 kb (-@ 1) and
#   1 Mb (-@ 2); pileup and view each at -@ 1 and -@ 2.
# SS_BENCH_CASES: a regular expression choosing cases by name (all by default).
# Allocators (SS_BENCH_ALLOCATORS): default (build/, tcmalloc linked), and on the glibc
# build of bench-alloc.sh (bench/build-glibc): glibc-seqshard (as shipped: seqshard's
# mallopt settings), glibc-tuned (MALLOC_MMAP_MAX_=0 MALLOC_TOP_PAD_=100000000),
# jemalloc-tuned (preloaded, MALLOC_CONF=tcache_max:131072). Each one's --report must
# name the allocator meant, checked once before timing.
# Results: $SS_BENCH_OUT [bench/results]/alloc-ab.tsv (every run), alloc-ab.md (table).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/.." && pwd)
DATA=${SS_BENCH_DATA:-$HERE/data}
OUT=${SS_BENCH_OUT:-$HERE/results}
ROUNDS=${SS_BENCH_ROUNDS:-30}
ALLOCATORS=${SS_BENCH_ALLOCATORS:-default glibc-seqshard glibc-tuned jemalloc-tuned}
DEFAULT_BIN=${SEQSHARD_BUILD:-$SRC/build}/seqshard
GLIBC_BUILD=$HERE/build-glibc

die() { echo "bench-alloc-ab: $*" >&2; exit 1; }
[ -x /usr/bin/time ] || die "/usr/bin/time not found; apt-get install time"
[ -x "$DEFAULT_BIN" ] || die "$DEFAULT_BIN not found; build seqshard first (cmake --build build)"
"$HERE/make-data.sh" "$DATA"
DATA=$(cd "$DATA" && pwd)
OUT=$(mkdir -p "$OUT" && cd "$OUT" && pwd)
REF=$DATA/ref.fa BAM=$DATA/ecoli30x.bam CRAM=$DATA/ecoli30x.cram
CTG=$(cut -f1 "$REF.fai" | head -1)

cmake -S "$SRC" -B "$GLIBC_BUILD" -DCMAKE_BUILD_TYPE=Release -DSEQSHARD_TESTS=OFF \
    -DSEQSHARD_ALLOCATOR=glibc >/dev/null || die "cmake failed for $GLIBC_BUILD"
cmake --build "$GLIBC_BUILD" -j2 --target seqshard >/dev/null || die "build failed in $GLIBC_BUILD"
# awk reads to the end: an early exit would kill ldconfig with SIGPIPE, and pipefail the script
JEMALLOC_LIB=$(ldconfig -p | awk '/libjemalloc.so.2 / && !p {print $NF; p = 1}')

# allocator -> "binary|environment|the allocator --report must name"
config() {
    case $1 in
    default) echo "$DEFAULT_BIN||tcmalloc" ;;
    glibc-seqshard) echo "$GLIBC_BUILD/seqshard||glibc" ;;
    glibc-tuned) echo "$GLIBC_BUILD/seqshard|MALLOC_MMAP_MAX_=0 MALLOC_TOP_PAD_=100000000|glibc" ;;
    jemalloc-tuned)
        [ -n "$JEMALLOC_LIB" ] || die "libjemalloc.so.2 not found; apt-get install libjemalloc2"
        echo "$GLIBC_BUILD/seqshard|LD_PRELOAD=$JEMALLOC_LIB MALLOC_CONF=tcache_max:131072|jemalloc" ;;
    *) die "unknown allocator '$1'" ;;
    esac
}
CASES=(
    "pileup-nobaq-1|pileup --quiet -@ 1 -B -f $REF -r $CTG:1-2000000 -o /dev/null $BAM"
    "pileup-nobaq-2|pileup --quiet -@ 2 -B -f $REF -r $CTG:1-2000000 -o /dev/null $BAM"
    "pileup-baq-1|pileup --quiet -@ 1 -f $REF -r $CTG:1-500000 -o /dev/null $BAM"
    "pileup-baq-2|pileup --quiet -@ 2 -f $REF -r $CTG:1-500000 -o /dev/null $BAM"
    "view-cram-bam-1|view --quiet -@ 1 -b -T $REF -o /dev/null $CRAM $CTG:1-600000"
    "view-cram-bam-2|view --quiet -@ 2 -b -T $REF -o /dev/null $CRAM $CTG:1-600000"
    "realign-1|realign --quiet -@ 1 -f $REF -o /dev/null $BAM $CTG:1-600000"
    "realign-2|realign --quiet -@ 2 -f $REF -o /dev/null $BAM $CTG:1-1000000"
)

if [ -n "${SS_BENCH_CASES:-}" ]; then
    chosen=()
    for c in "${CASES[@]}"; do [[ ${c%%|*} =~ $SS_BENCH_CASES ]] && chosen+=("$c"); done
    [ ${#chosen[@]} -gt 0 ] || die "no case matches SS_BENCH_CASES='$SS_BENCH_CASES'"
    CASES=("${chosen[@]}")
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/ss-bench-ab.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
for a in $ALLOCATORS; do # each set-up really runs the allocator it names
    IFS='|' read -r bin envs want <<<"$(config "$a")"
    env $envs "$bin" pileup --quiet -B -f "$REF" -r "$CTG:1-10000" -o /dev/null \
        --report "$WORK/r.json" "$BAM" || die "$a: seqshard failed"
    got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["allocator"]["name"])' \
        "$WORK/r.json")
    [ "$got" = "$want" ] || die "$a: --report names allocator '$got', not '$want'"
done

echo "bench-alloc-ab: load average $(cut -d' ' -f1-3 /proc/loadavg) (should be near 0)" >&2
TSV=$OUT/alloc-ab.tsv
printf 'round\tcase\tconfig\twall_s\tuser_s\tsys_s\n' >"$TSV"
read -r -a ORDER <<<"$ALLOCATORS"
for ((r = 1; r <= ROUNDS; r++)); do
    order=("${ORDER[@]}")
    if ((r % 2 == 0)); then
        order=()
        for ((i = ${#ORDER[@]} - 1; i >= 0; i--)); do order+=("${ORDER[i]}"); done
    fi
    for c in "${CASES[@]}"; do
        IFS='|' read -r name args <<<"$c"
        for a in "${order[@]}"; do
            IFS='|' read -r bin envs want <<<"$(config "$a")"
            # shellcheck disable=SC2086 # args and envs are word lists
            env $envs /usr/bin/time -f '%e %U %S' -o "$WORK/t" "$bin" $args >/dev/null ||
                die "$name under $a failed"
            printf '%s\t%s\t%s\t%s\n' "$r" "$name" "$a" "$(tr ' ' '\t' <"$WORK/t")" >>"$TSV"
        done
    done
    echo "bench-alloc-ab: round $r of $ROUNDS done" >&2
done

python3 "$HERE/paired_stats.py" "$TSV" default \
    "Default build against each allocator, paired rounds" \
    "bench/bench-alloc-ab.sh, $ROUNDS rounds. Ratio: default's wall time over the other's in the same round; median over rounds, 95% bootstrap interval. Within 3%: the interval's upper end at most 1.03." \
    >"$OUT/alloc-ab.md"
echo "bench-alloc-ab: wrote $OUT/alloc-ab.md" >&2
cat "$OUT/alloc-ab.md"
