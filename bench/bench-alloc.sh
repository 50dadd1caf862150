#!/usr/bin/env bash
# bench-alloc.sh [DATA_DIR] -- the same kernels under each allocator: wall, user, sys
# and peak RSS, medians of SS_BENCH_RUNS runs (issue 5; DESIGN.md, Allocation).
#
#   bench/bench-alloc.sh                      # bench/data (bench/make-data.sh), ~1 h
#   SS_BENCH_RUNS=1 bench/bench-alloc.sh build/testdata   # a quick look on test data
#
# Allocators (SS_BENCH_ALLOCATORS, in this order):
#   glibc           glibc build, glibc's own defaults (a no-op GLIBC_TUNABLES setting
#                   stops seqshard from applying its mallopt tuning)
#   glibc-seqshard  glibc build as shipped: seqshard's mallopt tuning (ss_alloc_tune)
#   glibc-tuned     glibc build, MALLOC_MMAP_MAX_=0 MALLOC_TOP_PAD_=100000000
#   tcmalloc        glibc build, LD_PRELOAD=libtcmalloc.so.4
#   jemalloc        glibc build, LD_PRELOAD=libjemalloc.so.2
#   default         the default build (build/: gperftools tcmalloc linked in)
# Kernels (SS_BENCH_KERNELS): pileup-nobaq (-B -f ref), pileup-baq (-f ref), view-cram-bam
# (view -b -T ref in.cram; skipped while `seqshard view` does not exist). Threads
# (SS_BENCH_THREADS): 1, 2 and 8 (8 oversubscribes this 2-core machine: a stress case).
# Output goes to /dev/null; before timing, every allocator's output must have the same
# md5 as the default build's at -@2.
#
# The glibc build is made in bench/build-glibc (-DSEQSHARD_ALLOCATOR=glibc). The default
# build is $SEQSHARD_BUILD [build/], configured and built here if it has no seqshard.
# While each run goes, /proc/PID/maps is read to check that the allocator meant to serve
# it is mapped (and that no other is); the run's --report must name the same allocator.
# A mismatch stops the benchmark: a preload that did not take would be a wrong table.
#
# Results: $SS_BENCH_OUT [bench/results]/alloc.md (tables and the issue-5 targets) and
# alloc.tsv (every run). Environment: SS_BENCH_DATA (DATA_DIR), SS_BENCH_BAM,
# SS_BENCH_CRAM (inputs; default: ecoli30x.* or s1.* or the first indexed file in
# DATA_DIR), SS_BENCH_RUNS [5], SS_BENCH_THREADS ["1 2 8"], SS_BENCH_ALLOCATORS,
# SS_BENCH_KERNELS, SEQSHARD_BUILD, SS_BENCH_OUT.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/.." && pwd)
DATA=${1:-${SS_BENCH_DATA:-$HERE/data}}
OUT=${SS_BENCH_OUT:-$HERE/results}
RUNS=${SS_BENCH_RUNS:-5}
THREADS=${SS_BENCH_THREADS:-1 2 8}
ALLOCATORS=${SS_BENCH_ALLOCATORS:-glibc glibc-seqshard glibc-tuned tcmalloc jemalloc default}
KERNELS=${SS_BENCH_KERNELS:-pileup-nobaq pileup-baq view-cram-bam}
DEFAULT_BUILD=${SEQSHARD_BUILD:-$SRC/build}
GLIBC_BUILD=$HERE/build-glibc

die() { echo "bench-alloc: $*" >&2; exit 1; }
say() { echo "bench-alloc: $*" >&2; }

# ---- tools and data ------------------------------------------------------------
[ -x /usr/bin/time ] || die "/usr/bin/time not found; apt-get install time"
for t in cmake python3 md5sum ldconfig realpath; do
    command -v "$t" >/dev/null || die "$t not found"
done
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || die "SS_BENCH_RUNS=$RUNS: need a whole number >= 1"

if [ "$(realpath -m "$DATA")" = "$(realpath -m "$HERE/data")" ]; then
    "$HERE/make-data.sh" "$DATA"
fi
[ -d "$DATA" ] || die "$DATA is not a directory; give a folder with an indexed BAM, CRAM and ref.fa"
DATA=$(cd "$DATA" && pwd)

# first_indexed EXT INDEX_EXT...: the preferred or first file DATA/*.EXT that has an index.
first_indexed() {
    local ext=$1 f i
    shift
    for f in "$DATA/ecoli30x.$ext" "$DATA/s1.$ext" "$DATA"/*."$ext"; do
        [ -f "$f" ] || continue
        for i in "$@"; do
            [ -f "$f.$i" ] && { echo "$f"; return 0; }
        done
    done
    return 0
}
BAM=${SS_BENCH_BAM:-$(first_indexed bam bai csi)}
CRAM=${SS_BENCH_CRAM:-$(first_indexed cram crai)}
REF=$DATA/ref.fa
[ -n "$BAM" ] || die "no indexed BAM in $DATA; run bench/make-data.sh or set SS_BENCH_BAM"
[ -f "$REF" ] && [ -f "$REF.fai" ] || die "no $REF (with .fai); samtools faidx it"

lib_path() { # soname -> path, from the loader's cache
    ldconfig -p | awk -v so="$1" '$1 == so { print $NF; exit }'
}
TCMALLOC_LIB=$(lib_path libtcmalloc.so.4)
JEMALLOC_LIB=$(lib_path libjemalloc.so.2)

# ---- builds ----------------------------------------------------------------------
build_seqshard() { # build_dir cmake-args...
    local dir=$1
    shift
    say "building seqshard in $dir ($*)"
    mkdir -p "$dir"
    cmake -S "$SRC" -B "$dir" -DCMAKE_BUILD_TYPE=Release -DSEQSHARD_TESTS=OFF "$@" \
        >"$dir/bench-cmake.log" 2>&1 || { tail "$dir/bench-cmake.log" >&2; die "cmake failed for $dir"; }
    cmake --build "$dir" -j2 --target seqshard >"$dir/bench-build.log" 2>&1 \
        || { tail "$dir/bench-build.log" >&2; die "build failed in $dir"; }
}
build_seqshard "$GLIBC_BUILD" -DSEQSHARD_ALLOCATOR=glibc
BIN_GLIBC=$GLIBC_BUILD/seqshard
if [ ! -x "$DEFAULT_BUILD/seqshard" ]; then
    build_seqshard "$DEFAULT_BUILD"
fi
BIN_DEFAULT=$DEFAULT_BUILD/seqshard
ldd "$BIN_GLIBC" | grep -Eq 'libtcmalloc|libjemalloc' \
    && die "$BIN_GLIBC links tcmalloc or jemalloc; the glibc build is wrong"
ldd "$BIN_DEFAULT" | grep -q libtcmalloc \
    || say "note: $BIN_DEFAULT does not link tcmalloc (configured with another allocator?)"

# ---- configurations ----------------------------------------------------------------
# config -> binary, environment (space-separated VAR=value), the library that must be
# mapped (a regex on /proc/PID/maps, or "" for glibc: neither tcmalloc nor jemalloc),
# and the allocator --report must name.
config_bin() { [ "$1" = default ] && echo "$BIN_DEFAULT" || echo "$BIN_GLIBC"; }
config_env() {
    case $1 in
    glibc) echo "GLIBC_TUNABLES=glibc.malloc.tcache_count=7" ;; # glibc's default value
    glibc-seqshard) echo "" ;;
    glibc-tuned) echo "MALLOC_MMAP_MAX_=0 MALLOC_TOP_PAD_=100000000" ;;
    tcmalloc) echo "LD_PRELOAD=$TCMALLOC_LIB" ;;
    jemalloc) echo "LD_PRELOAD=$JEMALLOC_LIB" ;;
    default) echo "" ;;
    *) die "unknown allocator configuration '$1' in SS_BENCH_ALLOCATORS" ;;
    esac
}
config_maps() {
    case $1 in
    tcmalloc | default) echo 'libtcmalloc' ;;
    jemalloc) echo 'libjemalloc' ;;
    *) echo '' ;;
    esac
}
config_name() {
    case $1 in
    tcmalloc | default) echo tcmalloc ;;
    jemalloc) echo jemalloc ;;
    *) echo glibc ;;
    esac
}
for c in $ALLOCATORS; do
    config_env "$c" >/dev/null
    case $c in
    tcmalloc) [ -n "$TCMALLOC_LIB" ] || die "libtcmalloc.so.4 not found; apt-get install libgoogle-perftools4" ;;
    jemalloc) [ -n "$JEMALLOC_LIB" ] || die "libjemalloc.so.2 not found; apt-get install libjemalloc2" ;;
    esac
done

# kernel -> arguments after the binary (threads substituted), or nothing when not available.
kernel_args() { # kernel threads
    case $1 in
    pileup-nobaq) echo "pileup --quiet -@ $2 -B -f $REF $BAM" ;;
    pileup-baq) echo "pileup --quiet -@ $2 -f $REF $BAM" ;;
    view-cram-bam) echo "view --quiet -@ $2 -b -T $REF $CRAM" ;;
    *) die "unknown kernel '$1' in SS_BENCH_KERNELS" ;;
    esac
}
kernel_available() {
    case $1 in
    view-cram-bam)
        [ -n "$CRAM" ] || { say "no indexed CRAM in $DATA: view-cram-bam skipped"; return 1; }
        "$BIN_DEFAULT" view --help >/dev/null 2>&1 \
            || { say "no \`seqshard view\` yet: view-cram-bam skipped"; return 1; }
        ;;
    esac
    return 0
}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/ss-bench-alloc.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$OUT"
TSV=$OUT/alloc.tsv
printf 'kernel\tthreads\tallocator\trun\twall_s\tuser_s\tsys_s\tmax_rss_kb\tmapped\treport_allocator\n' >"$TSV"

# ---- one run ------------------------------------------------------------------------
# run_one CONFIG ARGS...: run under /usr/bin/time with the config's environment, output to
# /dev/null; meanwhile read /proc/PID/maps. Sets r_time ("wall user sys rss_kb"),
# r_mapped (yes/no/unseen: was the expected allocator mapped, and no other) and r_alloc
# (the allocator --report names).
run_one() {
    local cfg=$1
    shift
    local bin env_words pidfile=$WORK/pid tf=$WORK/time err=$WORK/err report=$WORK/report.json
    bin=$(config_bin "$cfg")
    read -r -a env_words <<<"$(config_env "$cfg")"
    rm -f "$pidfile" "$tf" "$report"
    # bash writes its pid, then execs env, which execs seqshard: one pid throughout.
    /usr/bin/time -f '%e %U %S %M' -o "$tf" \
        bash -c 'echo $$ >"$0"; exec "$@"' "$pidfile" env "${env_words[@]}" "$bin" "$@" \
        --report "$report" >/dev/null 2>"$err" &
    local tpid=$! pid="" maps="" want bin_real
    want=$(config_maps "$cfg")
    bin_real=$(realpath "$bin")
    while kill -0 "$tpid" 2>/dev/null; do
        [ -z "$pid" ] && [ -s "$pidfile" ] && pid=$(cat "$pidfile")
        # The last snapshot taken after the exec (all libraries are mapped before main).
        if [ -n "$pid" ] && [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$bin_real" ]; then
            maps=$(grep -oE 'lib(tcmalloc|jemalloc|c)[^ /]*\.so[^ ]*' "/proc/$pid/maps" \
                2>/dev/null | sort -u | tr '\n' ' ') || true
        fi
        sleep 0.2
    done
    wait "$tpid" || die "failed ($cfg): $(config_env "$cfg") $bin $* :: $(tail -2 "$err")"
    r_time=$(tail -1 "$tf") # after "Command exited ..." when there is one
    [[ $r_time =~ ^[0-9.]+\ [0-9.]+\ [0-9.]+\ [0-9]+$ ]] || die "no timing from /usr/bin/time for $cfg"
    if [ -z "$maps" ] || [[ $maps != *libc* ]]; then
        r_mapped=unseen
    elif [ -n "$want" ]; then
        [[ $maps =~ $want ]] && r_mapped=yes || r_mapped=no
    else
        [[ $maps =~ libtcmalloc|libjemalloc ]] && r_mapped=no || r_mapped=yes
    fi
    r_alloc=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["allocator"]["name"])' \
        "$report" 2>/dev/null || echo "?")
    [ "$r_mapped" = no ] && die "$cfg: /proc/PID/maps shows [$maps], expected ${want:-no tcmalloc/jemalloc}: the preload did not take"
    [ "$r_alloc" != "?" ] && [ "$r_alloc" != "$(config_name "$cfg")" ] \
        && die "$cfg: --report says the allocator is $r_alloc, expected $(config_name "$cfg")"
    return 0
}

# ---- correctness: every allocator gives the default build's bytes ----------------------
declare -A REFMD5
check_output() { # cfg kernel
    local cfg=$1 kernel=$2 bin env_words args sum
    bin=$(config_bin "$cfg")
    read -r -a env_words <<<"$(config_env "$cfg")"
    read -r -a args <<<"$(kernel_args "$kernel" 2)"
    sum=$(env "${env_words[@]}" "$bin" "${args[@]}" 2>"$WORK/err" | md5sum | cut -d' ' -f1)
    [ "${PIPESTATUS[0]}" = 0 ] || die "$cfg $kernel failed: $(tail -2 "$WORK/err")"
    if [ -z "${REFMD5[$kernel]:-}" ]; then
        REFMD5[$kernel]=$sum
    elif [ "$sum" != "${REFMD5[$kernel]}" ]; then
        die "$kernel under $cfg gives other bytes than under the default build; not timing it"
    fi
}

# ---- the runs --------------------------------------------------------------------------
declare -A MED_WALL MED_USER MED_SYS MED_RSS MAPPED
RUN_KERNELS=()
for kernel in $KERNELS; do
    kernel_available "$kernel" || continue
    RUN_KERNELS+=("$kernel")
    say "$kernel: checking outputs (also warms the page cache)"
    for cfg in default $ALLOCATORS; do
        check_output "$cfg" "$kernel"
    done
    for t in $THREADS; do
        for cfg in $ALLOCATORS; do
            read -r -a args <<<"$(kernel_args "$kernel" "$t")"
            : >"$WORK/runs"
            seen=unseen
            for ((i = 1; i <= RUNS; i++)); do
                run_one "$cfg" "${args[@]}"
                echo "$r_time" >>"$WORK/runs"
                [ "$r_mapped" = yes ] && seen=yes
                printf '%s\t%s\t%s\t%d\t%s\t%s\t%s\n' "$kernel" "$t" "$cfg" "$i" \
                    "$(tr ' ' '\t' <<<"$r_time")" "$r_mapped" "$r_alloc" >>"$TSV"
            done
            # Medians, column by column (wall, user, sys, rss).
            read -r mw mu ms mr < <(python3 - "$WORK/runs" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
print(*(statistics.median(c) for c in zip(*rows)))
PY
)
            key="$kernel|$t|$cfg"
            MED_WALL[$key]=$mw MED_USER[$key]=$mu MED_SYS[$key]=$ms MED_RSS[$key]=$mr
            MAPPED[$key]=$seen
            say "$kernel -@$t $cfg: wall $mw s, user $mu s, sys $ms s, RSS $((${mr%.*} / 1024)) MiB (mapped: $seen)"
        done
    done
done
[ ${#RUN_KERNELS[@]} -gt 0 ] || die "no kernel to run (SS_BENCH_KERNELS=$KERNELS)"

# ---- the table --------------------------------------------------------------------------
MD=$OUT/alloc.md
{
    echo "# Allocator benchmark"
    echo
    echo "bench/bench-alloc.sh on $(hostname) ($(nproc) CPUs), $(date -u +%Y-%m-%d)."
    echo "Input: $(basename "$BAM")${CRAM:+ / $(basename "$CRAM")} in $DATA;" \
        "medians of $RUNS runs; output to /dev/null (identical bytes under every allocator)."
    echo "Builds: default = $BIN_DEFAULT ($(ldd "$BIN_DEFAULT" | grep -oE 'lib(tcmalloc|jemalloc)[^ ]*' | head -1 || echo glibc));"
    echo "others = $BIN_GLIBC (glibc build) with the environment shown."
    echo
    echo "| allocator | how |"
    echo "|---|---|"
    for cfg in $ALLOCATORS; do
        how=$(config_env "$cfg")
        [ "$cfg" = default ] && how="default build, nothing set"
        [ "$cfg" = glibc-seqshard ] && how="glibc build, nothing set: seqshard's own mallopt settings"
        echo "| $cfg | ${how:-(nothing)} |"
    done
    echo
    echo "mapped: the allocator was seen in /proc/PID/maps during the runs (glibc: neither" \
        "tcmalloc nor jemalloc was); unseen: every run ended before it could be read."
    for kernel in "${RUN_KERNELS[@]}"; do
        echo
        echo "## $kernel"
        echo
        echo "| threads | allocator | wall s | user s | sys s | sys/user | peak RSS MiB | vs best | mapped |"
        echo "|---:|---|---:|---:|---:|---:|---:|---:|---|"
        for t in $THREADS; do
            best=""
            for cfg in $ALLOCATORS; do
                w=${MED_WALL["$kernel|$t|$cfg"]}
                if [ -z "$best" ] || python3 -c "import sys; sys.exit(0 if $w < $best else 1)"; then
                    best=$w
                fi
            done
            for cfg in $ALLOCATORS; do
                key="$kernel|$t|$cfg"
                python3 - "$t" "$cfg" "${MED_WALL[$key]}" "${MED_USER[$key]}" "${MED_SYS[$key]}" \
                    "${MED_RSS[$key]}" "$best" "${MAPPED[$key]}" <<'PY'
import sys
t, cfg, w, u, s, rss, best, mapped = sys.argv[1:]
w, u, s, rss, best = float(w), float(u), float(s), float(rss), float(best)
ratio = "%.1f%%" % (100 * s / u) if u > 0 else "-"
gap = "best" if w <= best else "+%.1f%%" % (100 * (w - best) / best)
print("| %s | %s | %.2f | %.2f | %.2f | %s | %.0f | %s | %s |"
      % (t, cfg, w, u, s, ratio, rss / 1024, gap, mapped))
PY
            done
        done
    done
    echo
    echo "## Targets (issue 5)"
    echo
    echo "Default build within 3% of the best allocator (wall), and sys under 5% of user:"
    echo
    echo "| kernel | threads | default vs best | default sys/user | met |"
    echo "|---|---:|---:|---:|---|"
    for kernel in "${RUN_KERNELS[@]}"; do
        for t in $THREADS; do
            key="$kernel|$t|default"
            [ -n "${MED_WALL[$key]:-}" ] || continue
            best=""
            for cfg in $ALLOCATORS; do
                w=${MED_WALL["$kernel|$t|$cfg"]}
                if [ -z "$best" ] || python3 -c "import sys; sys.exit(0 if $w < $best else 1)"; then
                    best=$w
                fi
            done
            python3 - "$kernel" "$t" "${MED_WALL[$key]}" "${MED_USER[$key]}" "${MED_SYS[$key]}" \
                "$best" <<'PY'
import sys
k, t, w, u, s, best = sys.argv[1], sys.argv[2], *map(float, sys.argv[3:])
gap = 100 * (w - best) / best if best > 0 else 0.0
ratio = 100 * s / u if u > 0 else 0.0
ok = gap <= 3.0 and ratio < 5.0
note = "" if int(t) <= 2 else " (oversubscribed)"
print("| %s | %s%s | +%.1f%% | %.1f%% | %s |" % (k, t, note, gap, ratio, "yes" if ok else "NO"))
PY
        done
    done
    if [[ " $ALLOCATORS " != *" default "* ]]; then
        echo
        echo "(the default build was not in SS_BENCH_ALLOCATORS: no targets to check)"
    fi
    echo
    echo "Every run: $(basename "$TSV")."
} >"$MD"
say "wrote $MD and $TSV"
