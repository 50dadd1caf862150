#!/usr/bin/env bash
# bench-mpi.sh -- scaling of seqshard pileup over MPI ranks x worker threads, on the
# whole E. coli 536 genome at 30x (bench/make-data.sh).
#
#   SEQSHARD=build/seqshard bench/bench-mpi.sh
#
# For each RxT in SS_BENCH_CONFIGS (default "1x1 1x2 2x1"):
#   mpirun --oversubscribe --bind-to none [--allow-run-as-root] -np R \
#       seqshard pileup -B -@ T --bind none --quiet -o OUT --report REPORT.json ecoli30x.bam
# SS_BENCH_MODE=baq runs `pileup -f ref.fa` (BAQ on: compute-bound) instead of -B (where
# writing the 431 MB output is a large share of the work); its results are named
# mpi-baq.* and scaling-baq.png.
# timed by hyperfine (--warmup 1 --runs SS_BENCH_RUNS; without hyperfine, by the shell
# clock), plus, for reference, the same 1x1 run without mpirun. Every configuration is
# launched the same way (1x1 included), so the speedups compare like with like; the
# row without mpirun shows what the launcher itself costs.
# --bind-to none: Open MPI binds each rank to one core when np <= 2, which would put
# both threads of a 1x2 run on one core. --bind none (seqshard): ranks the launcher did
# not bind all see the whole machine, and seqshard's default placement would pin every
# rank's worker 0 to the same core 0; the OS places the threads instead
# (SS_BENCH_BIND=auto measures the default placement).
#
# Output goes to a file (several ranks need -o FILE) in a scratch directory on local
# disk, so the numbers include writing it. Before the summary, every configuration's
# output must equal the 1x1 output byte for byte (cmp), and, unless
# SS_BENCH_CHECK_SAMTOOLS=0, equal `samtools mpileup -B` too; a mismatch fails the run.
#
# Results (SS_BENCH_OUT, default bench/results): mpi.json (times), mpi-reports/ (the
# --report of each configuration's last run), mpi-env.json (machine, load, versions),
# mpi.md (table) and scaling.png (plot-scaling.py).
#
# Environment: SEQSHARD [<repo>/build/seqshard], SS_BENCH_RUNS [3],
# SS_BENCH_CONFIGS ["1x1 1x2 2x1"], SS_BENCH_DATA [bench/data], SS_BENCH_OUT
# [bench/results], SS_BENCH_SHARD_SIZE [seqshard's default], SS_BENCH_BIND [none],
# SS_BENCH_CHECK_SAMTOOLS [1],
# MPIRUN [mpirun], TMPDIR (scratch space: a few output copies of ~400 MB each).
# The machine should be otherwise idle: the script prints the load average first and
# records it in mpi-env.json.
set -euo pipefail

. "$(dirname "$0")/lib.sh"
bench_init bench-mpi 3
CONFIGS=${SS_BENCH_CONFIGS:-1x1 1x2 2x1}
SHARD_SIZE=${SS_BENCH_SHARD_SIZE:-}
CHECK_SAMTOOLS=${SS_BENCH_CHECK_SAMTOOLS:-1}
BIND=${SS_BENCH_BIND:-none}
MODE=${SS_BENCH_MODE:-nobaq}

# ---- tools -------------------------------------------------------------------------
[ -x "$SEQSHARD" ] || die "SEQSHARD=$SEQSHARD is not executable; build seqshard first"
SEQSHARD=$(cd "$(dirname "$SEQSHARD")" && pwd)/$(basename "$SEQSHARD")
if "$SEQSHARD" --version | grep -q '^mpi: none'; then
    die "$SEQSHARD was built without MPI; configure with -DSEQSHARD_MPI=ON"
fi
read -r -a MPIRUN <<<"${MPIRUN:-mpirun}"
command -v "${MPIRUN[0]}" >/dev/null || die "${MPIRUN[0]} not found; apt-get install openmpi-bin"
MPIRUN+=(--oversubscribe --bind-to none)
[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
# One host: shared memory between ranks, loopback only, no probing of networks.
export OMPI_MCA_btl=${OMPI_MCA_btl:-self,vader,tcp}
export OMPI_MCA_btl_tcp_if_include=${OMPI_MCA_btl_tcp_if_include:-lo}
export OMPI_MCA_oob_tcp_if_include=${OMPI_MCA_oob_tcp_if_include:-lo}
HYPERFINE=$(command -v hyperfine || true)
[ -n "$HYPERFINE" ] || echo "bench-mpi: hyperfine not found; timing with the shell clock" >&2
[ "$CHECK_SAMTOOLS" = 0 ] || command -v samtools >/dev/null ||
    die "samtools not found; apt-get install samtools (or SS_BENCH_CHECK_SAMTOOLS=0)"
PYTHON=
for p in ${PYTHON3:-} python3 /usr/bin/python3; do
    if "$p" -c 'import matplotlib' 2>/dev/null; then PYTHON=$p; break; fi
done
[ -n "$PYTHON" ] || die "no python3 with matplotlib; apt-get install python3-matplotlib"
for c in $CONFIGS; do
    [[ $c =~ ^[1-9][0-9]*x[1-9][0-9]*$ ]] || die "SS_BENCH_CONFIGS: '$c' is not RANKSxTHREADS"
done
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || die "SS_BENCH_RUNS=$RUNS: need a whole number >= 1"

LOAD0=$(cut -d' ' -f1 /proc/loadavg)
echo "bench-mpi: load average $LOAD0 on $(nproc) cores (an idle machine gives the fairest numbers)"

"$HERE/make-data.sh" "$DATA"
BAM=$DATA/ecoli30x.bam
case $MODE in
nobaq) PARGS=(-B) TAG=mpi PNG=scaling ;;
baq) PARGS=(-f "$DATA/ref.fa") TAG=mpi-baq PNG=scaling-baq ;;
*) die "SS_BENCH_MODE=$MODE: use nobaq or baq" ;;
esac
REPORTS=$OUT/$TAG-reports
[ "$TAG" = mpi ] && REPORTS=$OUT/mpi-reports
mkdir -p "$OUT" "$REPORTS"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ss-bench-mpi.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# ---- the commands -------------------------------------------------------------------
q() { printf '%q ' "$@"; }
size=()
[ -n "$SHARD_SIZE" ] && size=(--shard-size "$SHARD_SIZE")
NAMES=() CMDS=() OUTS=()
add() { # name out command...
    NAMES+=("$1")
    OUTS+=("$2")
    shift 2
    CMDS+=("$(q "$@")")
}
for c in $CONFIGS; do
    r=${c%x*} t=${c#*x}
    add "$c" "$WORK/out.$c.txt" "${MPIRUN[@]}" -np "$r" "$SEQSHARD" pileup "${PARGS[@]}" \
        -@ "$t" --bind "$BIND" "${size[@]}" --quiet --report "$REPORTS/$c.json" \
        -o "$WORK/out.$c.txt" "$BAM"
done
add "1x1 (no mpirun)" "$WORK/out.plain.txt" "$SEQSHARD" pileup "${PARGS[@]}" -@ 1 \
    --bind "$BIND" "${size[@]}" --quiet --report "$REPORTS/plain-1x1.json" \
    -o "$WORK/out.plain.txt" "$BAM"

# ---- timing --------------------------------------------------------------------------
if [ -n "$HYPERFINE" ]; then
    args=()
    for i in "${!NAMES[@]}"; do args+=(--command-name "${NAMES[$i]}" "${CMDS[$i]}"); done
    "$HYPERFINE" --warmup 1 --runs "$RUNS" --export-json "$OUT/$TAG.json" "${args[@]}"
else
    # The same JSON shape hyperfine writes (results[].command, .times, .median).
    {
        echo '{"results": ['
        for i in "${!NAMES[@]}"; do
            bash -c "${CMDS[$i]}" || die "failed: ${CMDS[$i]}" # warm-up
            times=()
            for _ in $(seq "$RUNS"); do
                t0=$(date +%s.%N)
                bash -c "${CMDS[$i]}" || die "failed: ${CMDS[$i]}"
                times+=("$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.4f", b - a}')")
            done
            med=$(printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END{
                print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}')
            [ "$i" = 0 ] || echo ','
            printf '{"command": "%s", "median": %s, "times": [%s]}' "${NAMES[$i]}" "$med" \
                "$(IFS=,; echo "${times[*]}")"
        done
        echo ']}'
    } >"$OUT/$TAG.json"
fi

# ---- the outputs must not depend on ranks or threads -----------------------------------
for i in "${!NAMES[@]}"; do
    [ -s "${OUTS[$i]}" ] || die "${NAMES[$i]}: no output file ${OUTS[$i]}"
    cmp "${OUTS[0]}" "${OUTS[$i]}" ||
        die "${NAMES[$i]}: output differs from ${NAMES[0]}'s; not reporting a wrong answer"
done
SAMTOOLS_SAME=not-checked
if [ "$CHECK_SAMTOOLS" != 0 ]; then
    echo "bench-mpi: comparing with samtools mpileup ${PARGS[*]}"
    samtools mpileup "${PARGS[@]}" "$BAM" 2>/dev/null | cmp - "${OUTS[0]}" ||
        die "output differs from samtools mpileup ${PARGS[*]}"
    SAMTOOLS_SAME=yes
fi

# ---- machine, load and versions, for the table's footnote ---------------------------------
cat >"$OUT/$TAG-env.json" <<EOF
{
  "pileup_args": "$([ "$MODE" = baq ] && echo '-f ref.fa' || echo '-B')",
  "cpu": "$(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo)",
  "cores": $(nproc),
  "load_before": $LOAD0,
  "load_after": $(cut -d' ' -f1 /proc/loadavg),
  "seqshard": "$("$SEQSHARD" --version | head -1)",
  "mpi": "$("$SEQSHARD" --version | sed -n 's/^mpi: //p')",
  "allocator": "$("$SEQSHARD" --version | sed -n 's/^allocator: //p')",
  "timer": "$([ -n "$HYPERFINE" ] && "$HYPERFINE" --version || echo 'shell clock')",
  "runs": $RUNS,
  "shard_size": "${SHARD_SIZE:-default}",
  "bind": "$BIND",
  "output_bytes": $(stat -c %s "${OUTS[0]}"),
  "outputs_identical": "yes",
  "equals_samtools": "$SAMTOOLS_SAME",
  "data": "E. coli 536 (4.94 Mb), dwgsim 2x150 30x, bwa mem: $(du -h "$BAM" | cut -f1) BAM",
  "launcher": "$(q "${MPIRUN[@]}")",
  "date": "$(date -u +%Y-%m-%d)"
}
EOF

"$PYTHON" "$HERE/plot-scaling.py" --results "$OUT" --prefix "$TAG" --table "$OUT/$TAG.md" \
    --png "$OUT/$PNG.png"
echo "bench-mpi: wrote $OUT/$TAG.md and $OUT/$PNG.png"
cat "$OUT/$TAG.md"
