#!/usr/bin/env bash
# bench-alloc.sh [DATA_DIR] -- the same kernels under each allocator: wall, user, sys
# and peak RSS, medians of SS_BENCH_RUNS runs (DESIGN.md, Allocation).
#
#   bench/bench-alloc.sh                      # bench/data (bench/make-data.sh): 1-2 hours
#   SS_BENCH_RUNS=1 bench/bench-alloc.sh build/testdata   # a quick look on the test data
#
# Allocators (SS_BENCH_ALLOCATORS, in this order):
#   default         the default build (build/: gperftools tcmalloc linked in)
#   glibc           glibc build with glibc's own defaults (a no-op GLIBC_TUNABLES setting
#                   stops seqshard from applying its mallopt tuning, ss_alloc_tune)
#   glibc-seqshard  glibc build as shipped: seqshard's own mallopt tuning
#   glibc-tuned     glibc build, MALLOC_MMAP_MAX_=0 MALLOC_TOP_PAD_=100000000
#   tcmalloc        glibc build, LD_PRELOAD=libtcmalloc.so.4
#   jemalloc        glibc build, LD_PRELOAD=libjemalloc.so.2
#   jemalloc-tuned  the same with MALLOC_CONF=tcache_max:131072 (see docs/locality.md)
# Kernels (SS_BENCH_KERNELS): pileup-nobaq (-B -f ref), pileup-baq (-f ref), view-cram-bam
# (view -b -T ref in.cram; skipped while `seqshard view` does not exist). Threads
# (SS_BENCH_THREADS): 1, 2 and 8 (8 oversubscribes a 2-core machine: a stress case).
#
# Output goes to /dev/null. Before timing, each allocator's output on the first 200 kb of
# the first contig must have the same md5 as the default build's. While each run goes,
# /proc/PID/maps is read to check that the allocator meant to serve it is mapped (and no
# other), and the run's --report must name the same allocator: a preload that did not
# take stops the benchmark instead of giving a wrong table.
#
# Runs go round-robin (run 1 of every allocator, then run 2, ...), so drift in the
# machine's speed (a shared VM) shifts all allocators alike.
# Slow cases: the default build runs first; a run of another allocator is stopped after
# max(60 s, 10 x the default's first run) (SS_BENCH_MAX_S without a default run, 900 s),
# and an allocator whose first run takes over 5 x the default's runs only once.
# The table marks both.
#
# The glibc build is made in bench/build-glibc (-DSEQSHARD_ALLOCATOR=glibc). The default
# build is $SEQSHARD_BUILD [build/], configured and built here if it has no seqshard.
# Results: $SS_BENCH_OUT [bench/results]/alloc.md (tables and the issue-5 targets) and
# alloc.tsv (every run). Environment: SS_BENCH_DATA (DATA_DIR), SS_BENCH_BAM,
# SS_BENCH_CRAM (default: ecoli30x.*, else s1.*, else the first indexed file in DATA_DIR),
# SS_BENCH_RUNS [5], SS_BENCH_THREADS ["1 2 8"], SS_BENCH_ALLOCATORS, SS_BENCH_KERNELS,
# SS_BENCH_MAX_S [900], SEQSHARD_BUILD, SS_BENCH_OUT, SS_BENCH_REGION (time only this
# region, e.g. NC_008253.1:1-1500000: a third of the E. coli data, about 15 minutes in all).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/.." && pwd)
DATA=${1:-${SS_BENCH_DATA:-$HERE/data}}
OUT=${SS_BENCH_OUT:-$HERE/results}
RUNS=${SS_BENCH_RUNS:-5}
THREADS=${SS_BENCH_THREADS:-1 2 8}
ALLOCATORS=${SS_BENCH_ALLOCATORS:-default glibc glibc-seqshard glibc-tuned tcmalloc jemalloc jemalloc-tuned}
KERNELS=${SS_BENCH_KERNELS:-pileup-nobaq pileup-baq view-cram-bam}
MAX_S=${SS_BENCH_MAX_S:-900}
DEFAULT_BUILD=${SEQSHARD_BUILD:-$SRC/build}
GLIBC_BUILD=$HERE/build-glibc

die() { echo "bench-alloc: $*" >&2; exit 1; }
say() { echo "bench-alloc: $*" >&2; }

# ---- tools and data ------------------------------------------------------------------
[ -x /usr/bin/time ] || die "/usr/bin/time not found; apt-get install time"
for t in cmake python3 md5sum ldconfig realpath timeout; do
    command -v "$t" >/dev/null || die "$t not found"
done
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || die "SS_BENCH_RUNS=$RUNS: need a whole number >= 1"
[[ $MAX_S =~ ^[1-9][0-9]*$ ]] || die "SS_BENCH_MAX_S=$MAX_S: need a whole number of seconds"

if [ "$(realpath -m "$DATA")" = "$(realpath -m "$HERE/data")" ]; then
    "$HERE/make-data.sh" "$DATA"
fi
[ -d "$DATA" ] || die "$DATA is not a directory; give a folder with an indexed BAM, CRAM and ref.fa"
DATA=$(cd "$DATA" && pwd)

# first_indexed EXT INDEX_EXT...: the preferred, or first, DATA/*.EXT that has an index.
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
CHECK_REGION="$(head -1 "$REF.fai" | cut -f1):1-200000"

lib_path() { # soname -> path, from the loader's cache (awk reads on: no SIGPIPE to ldconfig)
    ldconfig -p | awk -v so="$1" '$1 == so && !p { print $NF; p = 1 }'
}
TCMALLOC_LIB=$(lib_path libtcmalloc.so.4)
JEMALLOC_LIB=$(lib_path libjemalloc.so.2)

# ---- builds --------------------------------------------------------------------------
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
[ -x "$DEFAULT_BUILD/seqshard" ] || build_seqshard "$DEFAULT_BUILD"
BIN_DEFAULT=$DEFAULT_BUILD/seqshard
if ldd "$BIN_GLIBC" | grep -Eq 'libtcmalloc|libjemalloc'; then
    die "$BIN_GLIBC links tcmalloc or jemalloc; the glibc build is wrong"
fi
DEFAULT_ALLOC=$(ldd "$BIN_DEFAULT" | grep -oE 'lib(tcmalloc|jemalloc)' | head -1 | sed 's/^lib//')
DEFAULT_ALLOC=${DEFAULT_ALLOC:-glibc}
[ "$DEFAULT_ALLOC" = tcmalloc ] || say "note: $BIN_DEFAULT is a $DEFAULT_ALLOC build, not tcmalloc"

# ---- configurations --------------------------------------------------------------------
# config -> binary; environment (VAR=value words); the library /proc/PID/maps must show
# ("" for glibc: neither tcmalloc nor jemalloc); the allocator --report must name.
config_bin() { [ "$1" = default ] && echo "$BIN_DEFAULT" || echo "$BIN_GLIBC"; }
config_env() {
    case $1 in
    default | glibc-seqshard) echo "" ;;
    glibc) echo "GLIBC_TUNABLES=glibc.malloc.tcache_count=7" ;; # glibc's own default value
    glibc-tuned) echo "MALLOC_MMAP_MAX_=0 MALLOC_TOP_PAD_=100000000" ;;
    tcmalloc) echo "LD_PRELOAD=$TCMALLOC_LIB" ;;
    jemalloc) echo "LD_PRELOAD=$JEMALLOC_LIB" ;;
    jemalloc-tuned) echo "LD_PRELOAD=$JEMALLOC_LIB MALLOC_CONF=tcache_max:131072" ;;
    *) die "unknown allocator configuration '$1' in SS_BENCH_ALLOCATORS" ;;
    esac
}
config_alloc() {
    case $1 in
    default) echo "$DEFAULT_ALLOC" ;;
    tcmalloc) echo tcmalloc ;;
    jemalloc*) echo jemalloc ;;
    *) echo glibc ;;
    esac
}
for c in $ALLOCATORS; do
    config_env "$c" >/dev/null
    case $c in
    tcmalloc) [ -n "$TCMALLOC_LIB" ] || die "libtcmalloc.so.4 not found; apt-get install libgoogle-perftools4" ;;
    jemalloc*) [ -n "$JEMALLOC_LIB" ] || die "libjemalloc.so.2 not found; apt-get install libjemalloc2" ;;
    esac
done
# Run order: the default build first, so the others' time limits can follow it.
RUN_ORDER=$( (for c in $ALLOCATORS; do [ "$c" = default ] && echo "$c"; done
              for c in $ALLOCATORS; do [ "$c" = default ] || echo "$c"; done) | tr '\n' ' ')

# kernel threads [check] -> arguments after the binary (with "check": only CHECK_REGION;
# else SS_BENCH_REGION when set).
kernel_args() {
    local reg=${SS_BENCH_REGION:-} r=""
    [ -n "${3:-}" ] && reg=$CHECK_REGION
    case $1 in
    pileup-nobaq) [ -n "$reg" ] && r="-r $reg"
        echo "pileup --quiet -@ $2 -B -f $REF $r $BAM" ;;
    pileup-baq) [ -n "$reg" ] && r="-r $reg"
        echo "pileup --quiet -@ $2 -f $REF $r $BAM" ;;
    view-cram-bam)
        echo "view --quiet -@ $2 -b -T $REF $CRAM $reg" ;;
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
printf 'kernel\tthreads\tallocator\trun\twall_s\tuser_s\tsys_s\tmax_rss_kb\tstatus\tmapped\treport_allocator\n' >"$TSV"

# ---- one run -----------------------------------------------------------------------------
# run_one CONFIG LIMIT_S ARGS...: run under /usr/bin/time with the config's environment,
# stopped after LIMIT_S seconds, output to /dev/null, reading /proc/PID/maps meanwhile.
# Sets r_time ("wall user sys rss_kb"), r_status (ok/stopped), r_mapped (yes: the expected
# allocator was mapped and no other; unseen: the run ended before a look) and r_alloc.
run_one() {
    local cfg=$1 limit=$2
    shift 2
    local bin env_words pidfile=$WORK/pid tf=$WORK/time err=$WORK/err report=$WORK/report.json
    bin=$(config_bin "$cfg")
    read -r -a env_words <<<"$(config_env "$cfg")"
    rm -f "$pidfile" "$tf" "$report"
    # bash writes its pid, then execs env, which execs seqshard: one pid throughout.
    /usr/bin/time -f '%e %U %S %M' -o "$tf" timeout -s KILL "$limit" \
        bash -c 'echo $$ >"$0"; exec "$@"' "$pidfile" env "${env_words[@]}" "$bin" "$@" \
        --report "$report" >/dev/null 2>"$err" &
    local tpid=$! pid="" maps="" want bin_real rc=0
    want=$(config_alloc "$cfg")
    bin_real=$(realpath "$bin")
    while kill -0 "$tpid" 2>/dev/null; do
        [ -z "$pid" ] && [ -s "$pidfile" ] && pid=$(cat "$pidfile")
        # Keep the last look taken after the exec: libraries are all mapped before main.
        if [ -n "$pid" ] && [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$bin_real" ]; then
            maps=$(grep -oE 'lib(tcmalloc|jemalloc|c)[^ /]*\.so[^ ]*' "/proc/$pid/maps" \
                2>/dev/null | sort -u | tr '\n' ' ') || true
        fi
        sleep 0.2
    done
    wait "$tpid" || rc=$?
    r_time=$(tail -1 "$tf" 2>/dev/null || true) # after "Command terminated ..." if any
    [[ $r_time =~ ^[0-9.]+\ [0-9.]+\ [0-9.]+\ [0-9]+$ ]] || die "no timing for $cfg: $r_time"
    r_status=ok
    if [ $rc = 137 ]; then
        r_status=stopped
    elif [ $rc != 0 ]; then
        die "failed ($cfg, status $rc): $(config_env "$cfg") $bin $* :: $(tail -2 "$err")"
    fi
    if [ -z "$maps" ] || [[ $maps != *libc* ]]; then
        r_mapped=unseen
    elif [ "$want" = glibc ]; then
        [[ $maps =~ libtcmalloc|libjemalloc ]] && r_mapped=no || r_mapped=yes
    else
        [[ $maps == *lib$want* ]] && r_mapped=yes || r_mapped=no
    fi
    [ "$r_mapped" = no ] && die "$cfg: /proc/PID/maps shows [$maps] but $want should serve" \
        "malloc: the preload did not take"
    r_alloc="?"
    if [ $r_status = ok ]; then
        r_alloc=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["allocator"]["name"])' \
            "$report" 2>/dev/null || echo "?")
        [ "$r_alloc" = "?" ] || [ "$r_alloc" = "$want" ] \
            || die "$cfg: --report says the allocator is $r_alloc, expected $want"
    fi
    return 0
}

# ---- correctness: every allocator gives the default build's bytes ----------------------
declare -A REFMD5
check_output() { # cfg kernel
    local cfg=$1 kernel=$2 bin env_words args sum
    bin=$(config_bin "$cfg")
    read -r -a env_words <<<"$(config_env "$cfg")"
    read -r -a args <<<"$(kernel_args "$kernel" 2 check)"
    sum=$(timeout -s KILL "$MAX_S" env "${env_words[@]}" "$bin" "${args[@]}" 2>"$WORK/err" \
        | md5sum | cut -d' ' -f1)
    [ "${PIPESTATUS[0]}" = 0 ] || die "$cfg $kernel failed on $CHECK_REGION: $(tail -2 "$WORK/err")"
    if [ -z "${REFMD5[$kernel]:-}" ]; then
        REFMD5[$kernel]=$sum
    elif [ "$sum" != "${REFMD5[$kernel]}" ]; then
        die "$kernel under $cfg gives other bytes than under ${RUN_ORDER%% *}; not timing it"
    fi
}

median_of() { # file of "wall user sys rss" lines -> medians of each column
    python3 - "$1" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
print(*(statistics.median(c) for c in zip(*rows)))
PY
}

# ---- the runs ------------------------------------------------------------------------------
declare -A MED_WALL MED_USER MED_SYS MED_RSS MAPPED NOTE
RUN_KERNELS=()
for kernel in $KERNELS; do
    kernel_available "$kernel" || continue
    RUN_KERNELS+=("$kernel")
    say "$kernel: same output under every allocator on $CHECK_REGION (also warms the cache)"
    for cfg in $RUN_ORDER; do
        check_output "$cfg" "$kernel"
    done
    for t in $THREADS; do
        read -r -a args <<<"$(kernel_args "$kernel" "$t")"
        # Round-robin: run i of every allocator before run i+1 of any, so a machine whose
        # speed drifts (a shared VM) shifts every allocator alike instead of the ones
        # timed last. base: the default build's first wall time at this thread count.
        base=""
        declare -A SEEN=() NOTE_T=() DONE=()
        for cfg in $RUN_ORDER; do : >"$WORK/runs.$cfg"; SEEN[$cfg]=unseen NOTE_T[$cfg]=""; done
        for ((i = 1; i <= RUNS; i++)); do
            for cfg in $RUN_ORDER; do
                [ -z "${DONE[$cfg]:-}" ] || continue
                limit=$MAX_S
                [ -n "$base" ] && limit=$(python3 -c "print(max(60, int(10 * $base) + 1))")
                run_one "$cfg" "$limit" "${args[@]}"
                printf '%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n' "$kernel" "$t" "$cfg" "$i" \
                    "$(tr ' ' '\t' <<<"$r_time")" "$r_status" "$r_mapped" "$r_alloc" >>"$TSV"
                [ "$r_mapped" = yes ] && SEEN[$cfg]=yes
                wall=${r_time%% *}
                if [ "$r_status" = stopped ]; then
                    NOTE_T[$cfg]="stopped after ${limit} s"
                    echo "$limit ${r_time#* }" >>"$WORK/runs.$cfg"
                    DONE[$cfg]=1
                    continue
                fi
                echo "$r_time" >>"$WORK/runs.$cfg"
                [ "$cfg" = default ] && [ -z "$base" ] && base=$wall
                if [ "$i" = 1 ] && [ "$RUNS" -gt 1 ] && [ -n "$base" ] &&
                    python3 -c "import sys; sys.exit(0 if $wall > 5 * $base else 1)"; then
                    NOTE_T[$cfg]="1 run (over 5x the default)"
                    DONE[$cfg]=1
                fi
            done
        done
        for cfg in $RUN_ORDER; do
            read -r mw mu ms mr < <(median_of "$WORK/runs.$cfg")
            key="$kernel|$t|$cfg"
            MED_WALL[$key]=$mw MED_USER[$key]=$mu MED_SYS[$key]=$ms MED_RSS[$key]=$mr
            MAPPED[$key]=${SEEN[$cfg]} NOTE[$key]=${NOTE_T[$cfg]}
            say "$(printf '%s -@%s %s: wall %.2f s, user %.2f s, sys %.2f s, RSS %.0f MiB' \
                "$kernel" "$t" "$cfg" "$mw" "$mu" "$ms" "$(python3 -c "print($mr / 1024)")")," \
                "mapped: ${SEEN[$cfg]}${NOTE_T[$cfg]:+, ${NOTE_T[$cfg]}}"
        done
        unset SEEN NOTE_T DONE
    done
done
[ ${#RUN_KERNELS[@]} -gt 0 ] || die "no kernel to run (SS_BENCH_KERNELS=$KERNELS)"

# ---- the tables ------------------------------------------------------------------------------
best_wall() { # kernel threads -> the lowest median wall among completed allocators
    local k=$1 t=$2 cfg b="" w
    for cfg in $ALLOCATORS; do
        [ -z "${NOTE["$k|$t|$cfg"]}" ] || [[ ${NOTE["$k|$t|$cfg"]} != stopped* ]] || continue
        w=${MED_WALL["$k|$t|$cfg"]}
        if [ -z "$b" ] || python3 -c "import sys; sys.exit(0 if $w < $b else 1)"; then b=$w; fi
    done
    echo "$b"
}

MD=$OUT/alloc.md
{
    echo "# Allocator benchmark"
    echo
    echo "bench/bench-alloc.sh on $(nproc) CPUs ($(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)), $(date -u +%Y-%m-%d)."
    echo "Input: $(basename "$BAM")${CRAM:+ and $(basename "$CRAM")} ($DATA); medians of" \
        "$RUNS runs; output to /dev/null; every allocator gave the same bytes on $CHECK_REGION."
    echo "default = $BIN_DEFAULT ($DEFAULT_ALLOC build); the others run $BIN_GLIBC (glibc build)."
    echo
    echo "| allocator | environment |"
    echo "|---|---|"
    for cfg in $ALLOCATORS; do
        how=$(config_env "$cfg")
        case $cfg in
        default) how="default build, nothing set" ;;
        glibc-seqshard) how="nothing set: seqshard's own mallopt settings apply" ;;
        glibc) how="$how (glibc's default value: only stops seqshard's mallopt tuning)" ;;
        esac
        echo "| $cfg | \`$how\` |"
    done
    echo
    echo "mapped: the allocator was seen in /proc/PID/maps while the runs went (glibc: neither" \
        "tcmalloc nor jemalloc); unseen: the runs ended before a look. vs best: median wall" \
        "time against the fastest allocator at that thread count."
    for kernel in "${RUN_KERNELS[@]}"; do
        echo
        echo "## $kernel: $(kernel_args "$kernel" N | sed "s|$DATA/||g" | tr -s " ")"
        echo
        echo "| threads | allocator | wall s | user s | sys s | sys/user | peak RSS MiB | vs best | mapped | note |"
        echo "|---:|---|---:|---:|---:|---:|---:|---:|---|---|"
        for t in $THREADS; do
            best=$(best_wall "$kernel" "$t")
            for cfg in $ALLOCATORS; do
                key="$kernel|$t|$cfg"
                python3 - "$t" "$cfg" "${MED_WALL[$key]}" "${MED_USER[$key]}" "${MED_SYS[$key]}" \
                    "${MED_RSS[$key]}" "$best" "${MAPPED[$key]}" "${NOTE[$key]}" <<'PY'
import sys
t, cfg, w, u, s, rss, best, mapped, note = sys.argv[1:]
w, u, s, rss, best = float(w), float(u), float(s), float(rss), float(best)
ratio = "%.1f%%" % (100 * s / u) if u > 0 else "-"
gap = "best" if w <= best else "+%.1f%%" % (100 * (w - best) / best)
if note.startswith("stopped"):  # killed: its user/sys/RSS were never reported
    print("| %s | %s | >%.0f | - | - | - | - | - | %s | %s |" % (t, cfg, w, mapped, note))
else:
    print("| %s | %s | %.2f | %.2f | %.2f | %s | %.0f | %s | %s | %s |"
          % (t, cfg, w, u, s, ratio, rss / 1024, gap, mapped, note))
PY
            done
        done
    done
    echo
    echo "## Targets"
    echo
    if [[ " $ALLOCATORS " == *" default "* ]]; then
        echo "The default build within 3% of the best allocator (median wall), and its sys" \
            "time under 5% of its user time:"
        echo
        echo "| kernel | threads | default vs best | default sys/user | met |"
        echo "|---|---:|---:|---:|---|"
        for kernel in "${RUN_KERNELS[@]}"; do
            for t in $THREADS; do
                key="$kernel|$t|default"
                python3 - "$kernel" "$t" "${MED_WALL[$key]}" "${MED_USER[$key]}" \
                    "${MED_SYS[$key]}" "$(best_wall "$kernel" "$t")" "$(nproc)" <<'PY'
import sys
k, t = sys.argv[1], sys.argv[2]
w, u, s, best = map(float, sys.argv[3:7])
cpus = int(sys.argv[7])
gap = 100 * (w - best) / best if best > 0 else 0.0
ratio = 100 * s / u if u > 0 else 0.0
met = "yes" if gap <= 3.0 and ratio < 5.0 else "NO"
note = " (oversubscribed)" if int(t) > cpus else ""
print("| %s | %s%s | +%.1f%% | %.1f%% | %s |" % (k, t, note, gap, ratio, met))
PY
            done
        done
    else
        echo "(the default build was not among SS_BENCH_ALLOCATORS: nothing to check)"
    fi
    echo
    echo "## Paired comparison"
    echo
    echo "Runs go round-robin, so the runs of one round are minutes apart at most, and a" \
        "ratio inside a round cancels the machine's drift between rounds. Per kernel and" \
        "thread count: the allocator with the lowest median wall time (best), the median" \
        "over rounds of default/best in the same round with its interquartile range, and" \
        "the same for tcmalloc/default: the same allocator loaded two ways, so its spread" \
        "is this machine's noise. Met: paired default/best at most 1.03."
    echo
    python3 - "$TSV" <<'PY'
import csv, statistics, sys
rows = [r for r in csv.DictReader(open(sys.argv[1]), delimiter="\t") if r["status"] == "ok"]
runs = {}
for r in rows:
    runs.setdefault((r["kernel"], r["threads"]), {}).setdefault(r["allocator"], {})[int(r["run"])] = float(r["wall_s"])
def paired(a, b):
    q = sorted(a[i] / b[i] for i in a if i in b and b[i] > 0)
    if not q:
        return None
    if len(q) < 4:
        return statistics.median(q), q[0], q[-1]
    qs = statistics.quantiles(q, n=4)
    return statistics.median(q), qs[0], qs[2]
def fmt(p):
    return "-" if p is None else "%.3f (%.3f-%.3f)" % p
print("| kernel | threads | best | default/best | tcmalloc/default (noise) | met |")
print("|---|---:|---|---:|---:|---|")
for (k, t), by in runs.items():
    if "default" not in by:
        continue
    complete = {a: v for a, v in by.items() if len(v) == len(by["default"])}
    best = min(complete, key=lambda a: statistics.median(complete[a].values()))
    p = paired(by["default"], by[best])
    noise = paired(by["tcmalloc"], by["default"]) if "tcmalloc" in by else None
    met = "-" if p is None else ("yes" if p[0] <= 1.03 else "NO")
    print("| %s | %s | %s | %s | %s | %s |" % (k, t, best, fmt(p), fmt(noise), met))
PY
    echo
    echo "Every run: $(basename "$TSV")."
} >"$MD"
say "wrote $MD and $TSV"
