#!/usr/bin/env bash
# bench-mpi-stdout.sh -- standard output against a file under mpirun: `mpirun -np 2
# seqshard pileup -B -@ 1 ... > OUT` (rank 0 writes every shard, the other rank
# sends its own when asked; the stream goes through mpirun's forwarding) against
# the same run with `-o OUT` (each rank writes its shards at their offsets), in
# paired rounds (file then stream, then stream then file). Both outputs are checked
# to be the same bytes first. Ratio: stream time over file time in the same round;
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
export -f file stream
export MPIRUN SEQSHARD WORK BAM
file && stream && cmp -s "$WORK/file.txt" "$WORK/stream.txt" ||
    die "standard output differs from -o FILE"

TSV=$OUT/mpi-stdout.tsv
printf 'round\tcase\tconfig\twall_s\tuser_s\tsys_s\n' >"$TSV"
for ((r = 1; r <= RUNS; r++)); do
    order=(file stream)
    ((r % 2 == 0)) && order=(stream file)
    for c in "${order[@]}"; do
        /usr/bin/time -f '%e %U %S' -o "$WORK/t" bash -c "$c" || die "$c failed"
        printf '%s\tpileup-B\t%s\t%s\n' "$r" "$c" "$(tr ' ' '\t' <"$WORK/t")" >>"$TSV"
    done
    echo "bench-mpi-stdout: round $r of $RUNS done" >&2
done
python3 "$HERE/paired_stats.py" "$TSV" stream \
    "Standard output against -o FILE under mpirun -np 2 (pileup -B -@ 1)" \
    "bench/bench-mpi-stdout.sh, $RUNS paired rounds, whole benchmark BAM; ratio: standard output's time over the file's in the same round" \
    >"$OUT/mpi-stdout.md"
cat "$OUT/mpi-stdout.md"
