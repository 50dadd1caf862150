#!/usr/bin/env bash
# soak.sh -- the long differential passes that make test only samples: every routine
# seqshard reimplements from htslib or bcftools against the original on SOAK_CASES
# generated cases (ssdiff), then the whole-tool fuzzer for SOAK_ROUNDS rounds, then the
# whole-genome comparisons. Run by `make soak`; hours on 2 cores with the defaults.
#
#   make soak                                     # 100 million cases, 200 fuzz rounds
#   make soak SOAK_SEED=7 SOAK_CASES=1e9 SOAK_ROUNDS=1000
#
# Variables: BUILD [build], SOAK_SEED [1], SOAK_CASES [1e8], SOAK_ROUNDS [200],
# SOAK_THREADS [nproc]. A difference prints its reproduction (ssdiff: the routine, seed
# and case to rerun; the fuzzer: the directory it kept) and the script exits 1 at the end.
set -uo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${BUILD:-$SRC/build}" && pwd) || { echo "soak: no build folder; run make first" >&2; exit 1; }
SEED=${SOAK_SEED:-1} CASES=${SOAK_CASES:-1e8} ROUNDS=${SOAK_ROUNDS:-200}
THREADS=${SOAK_THREADS:-$(nproc)}
for f in "$BUILD/tests/ssdiff" "$BUILD/seqshard"; do
    [ -x "$f" ] || { echo "soak: $f is missing; run make first" >&2; exit 1; }
done
export SEQSHARD=$BUILD/seqshard SEQSHARD_TEST=$BUILD/tests/seqshard-test SS_SRC=$SRC
export SS_TESTDATA=${SS_TESTDATA:-$BUILD/testdata}
bash "$SRC/scripts/make-testdata.sh" "$SS_TESTDATA" || { echo "soak: no test data" >&2; exit 1; }
failed=()
start=$SECONDS
echo "soak: ssdiff, seed $SEED, $CASES cases, $THREADS threads"
"$BUILD/tests/ssdiff" --seed "$SEED" --cases "$CASES" --threads "$THREADS" || failed+=(ssdiff)
echo "soak: the whole-tool fuzzer, $ROUNDS rounds from seed $SEED"
SS_FUZZ_ROUNDS=$ROUNDS SS_FUZZ_SEED=$SEED bash "$SRC/tests/integration/mpileup_fuzz.sh" ||
    failed+=(mpileup_fuzz)
for t in "$SRC"/tests/integration/genomes_*.sh; do
    echo "soak: $(basename "$t")"
    bash "$t" || failed+=("$(basename "$t")")
done
echo "soak: $((SECONDS - start)) s; seed $SEED, $CASES ssdiff cases, $ROUNDS fuzz rounds"
if [ ${#failed[@]} -gt 0 ]; then
    echo "soak: FAILED: ${failed[*]}"
    exit 1
fi
echo "soak: every comparison identical"
