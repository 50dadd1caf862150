# shellcheck shell=bash
# lib.sh -- what every benchmark script starts with; source it, do not run it.
#   bench_init NAME DEFAULT_RUNS   sets HERE (bench/), SRC (the repository), SEQSHARD
#   (the binary, SEQSHARD or build/seqshard), DATA (SS_BENCH_DATA or bench/data), OUT
#   (SS_BENCH_OUT or bench/results), RUNS (SS_BENCH_RUNS or DEFAULT_RUNS), T
#   (SS_BENCH_THREADS or 2) and die() (one line naming the script, exit 1).
bench_init() {
    BENCH_NAME=$1
    HERE=$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)
    SRC=$(cd "$HERE/.." && pwd)
    SEQSHARD=${SEQSHARD:-$SRC/build/seqshard}
    DATA=${SS_BENCH_DATA:-$HERE/data}
    OUT=${SS_BENCH_OUT:-$HERE/results}
    RUNS=${SS_BENCH_RUNS:-$2}
    T=${SS_BENCH_THREADS:-2}
}

die() { echo "$BENCH_NAME: $*" >&2; exit 1; }
