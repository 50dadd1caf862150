#!/usr/bin/env bash
# bench-mpi-stdout.sh -- standard output against a file under mpirun: `mpirun -np 2
# seqshard pileup -B -@ 1 ... > OUT` and `> /dev/null` (rank 0 writes every shard to
# mpirun's own standard output, the other rank sends its own when asked) against the
# same run with `-o OUT` (each rank writes its shards at their offsets), and, for
# comparison, `> OUT` through mpirun's forwarding (SEQSHARD_STDOUT_DIRECT=0), in paired
# rounds (the order rotates each round). The outputs are checked to be the same bytes
# first. Ratio: stream time over file time in the same round;
# median and a 95% bootstrap interval (paired_stats.py). Results: $SS_BENCH_OUT
# [bench/results]/mpi-stdout.{tsv,md}.
#
#   SEQSHARD=build/seqshard SS_BENCH_RUNS=7 bench/bench-mpi-stdout.sh
set -euo pipefail
. "$(dirname "$0")/lib.sh"
bench_init bench-mpi-stdout 7
[ -x "$SEQSHARD" ] || die "SEQSHARD=$SEQSHARD is not executable; build seqshard first"
command -v mpirun >/dev/null || die "no mpirun; apt-get install openmpi-bin"
"$HERE/make-data.sh" "$DATA"
OUT=$(mkdir -p "$OUT" && cd "$OUT" && pwd)
BAM=$DATA/ecoli30x.bam
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ss-bench-stdout.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
MPIRUN="mpirun --oversubscribe --bind-to none -np 2"
[ "$(id -u)" = 0 ] && MPIRUN+=" --allow-run-as-root"
file() { $MPIRUN "$SEQSHARD" pileup -B -@ 1 --bind none --quiet -o "$WORK/file.txt" "$BAM"; }
stream() { $MPIRUN "$SEQSHARD" pileup -B -@ 1 --bind none --quiet "$BAM" >"$WORK/stream.txt"; }
null() { $MPIRUN "$SEQSHARD" pileup -B -@ 1 --bind none --quiet "$BAM" >/dev/null; }
forwarded() {
    $MPIRUN -x SEQSHARD_STDOUT_DIRECT=0 "$SEQSHARD" pileup -B -@ 1 --bind none --quiet "$BAM" \
        >"$WORK/forwarded.txt"
}
export -f file stream null forwarded
export MPIRUN SEQSHARD WORK BAM
file && stream && forwarded && cmp -s "$WORK/file.txt" "$WORK/stream.txt" &&
    cmp -s "$WORK/file.txt" "$WORK/forwarded.txt" || die "standard output differs from -o FILE"

TSV=$OUT/mpi-stdout.tsv
printf 'round\tcase\tconfig\twall_s\tuser_s\tsys_s\n' >"$TSV"
for ((r = 1; r <= RUNS; r++)); do
    all=(file stream null forwarded)
    order=("${all[@]:r%4}" "${all[@]:0:r%4}")
    for c in "${order[@]}"; do
        /usr/bin/time -f '%e %U %S' -o "$WORK/t" bash -c "$c" || die "$c failed"
        printf '%s\tpileup-B\t%s\t%s\n' "$r" "$c" "$(tr ' ' '\t' <"$WORK/t")" >>"$TSV"
    done
    echo "bench-mpi-stdout: round $r of $RUNS done" >&2
done
# each way to standard output against the others, -o FILE among them (stream/file: its cost)
: >"$OUT/mpi-stdout.md"
for base in stream null forwarded; do
    python3 "$HERE/paired_stats.py" "$TSV" "$base" \
        "$base against the others under mpirun -np 2 (pileup -B -@ 1)" \
        "bench/bench-mpi-stdout.sh, $RUNS paired rounds, whole benchmark BAM; stream: > FILE, null: > /dev/null, forwarded: > FILE through mpirun (SEQSHARD_STDOUT_DIRECT=0), file: -o FILE; ratio: $base's time over the other's in the same round" \
        >>"$OUT/mpi-stdout.md"
done
cat "$OUT/mpi-stdout.md"
