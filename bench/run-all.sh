#!/usr/bin/env bash
# run-all.sh -- run every benchmark in bench/ (bench-*.sh), in name order;
# stops at the first that fails. Environment is passed through (SEQSHARD,
# SS_BENCH_RUNS, ...; bench-build-ab.sh and bench-steps.sh also need SEQSHARD_OLD,
# the build to compare against); see each script's header.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
for b in "$HERE"/bench-*.sh; do
    echo "== $(basename "$b")"
    "$b"
done
