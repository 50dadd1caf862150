#!/usr/bin/env bash
# check-deps.sh [--cmake-args] -- what `make demo` needs to build, checked the way the
# build looks for it (CMake, pkg-config modules, Open MPI's compiler wrapper) rather
# than by Debian package names, so it also works where the libraries came from
# elsewhere (modules, conda, a prefix in PKG_CONFIG_PATH).
#
# Missing pieces are installed with apt-get, and only they, when that is possible
# (root and apt-get present). Otherwise it prints what is missing, with the packages
# that provide them on Debian/Ubuntu, and lets the build try anyway.
#
#   --cmake-args  print on stdout the CMake options that build without what is still
#                 missing and optional here (MPI, tcmalloc, the CUnit tests); messages
#                 go to stderr.
# Exit status: 0 when the build can be tried; 1 when something it cannot do without
# (a C compiler, CMake >= 3.18, pkg-config, htslib, hwloc, zlib) is missing; 2 on bad usage.
set -u

cmake_args=0
case "${1:-}" in
--cmake-args) cmake_args=1 ;;
"") ;;
-h | --help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
*) echo "check-deps: unknown option '$1'; run with --help" >&2; exit 2 ;;
esac
say() { echo "check-deps: $*" >&2; }

# name | how to check | Debian package(s) | required (1) or what to do without it
checks=(
    "C compiler|command -v cc|build-essential|1"
    "CMake >= 3.18|cmake_ok|cmake|1"
    "pkg-config|command -v pkg-config|pkg-config|1"
    "htslib|pkg-config --exists htslib|libhts-dev|1"
    "hwloc|pkg-config --exists hwloc|libhwloc-dev|1"
    "zlib|pkg-config --exists zlib|zlib1g-dev|1"
    "libdeflate|pkg-config --exists libdeflate|libdeflate-dev|"
    "tcmalloc|pkg-config --exists libtcmalloc|libgoogle-perftools-dev|-DSEQSHARD_ALLOCATOR=glibc"
    "Open MPI|command -v mpicc && command -v mpirun|libopenmpi-dev openmpi-bin|-DSEQSHARD_MPI=OFF"
    "CUnit|pkg-config --exists cunit|libcunit1-dev|-DSEQSHARD_TESTS=OFF"
    "samtools (make demo compares with it)|command -v samtools|samtools|"
)

cmake_ok() {
    local v
    v=$(cmake --version 2>/dev/null | awk 'NR == 1 { print $3 }')
    [ -n "$v" ] && [ "$(printf '%s\n3.18\n' "$v" | sort -V | head -1)" = 3.18 ]
}

missing() { # prints the checks that fail, one per line
    local c how
    for c in "${checks[@]}"; do
        IFS='|' read -r _ how _ _ <<<"$c"
        eval "$how" >/dev/null 2>&1 || printf '%s\n' "$c"
    done
}

mapfile -t miss < <(missing)
if [ "${#miss[@]}" -gt 0 ]; then
    pkgs=()
    for c in "${miss[@]}"; do
        IFS='|' read -r name _ p _ <<<"$c"
        say "missing: $name (Debian/Ubuntu: $p)"
        read -ra words <<<"$p"
        pkgs+=("${words[@]}")
    done
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        say "installing with apt-get: ${pkgs[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update >&2 && apt-get install -y --no-install-recommends "${pkgs[@]}" </dev/null >&2 ||
            say "apt-get failed (see above); trying the build with what is there"
        mapfile -t miss < <(missing)
    else
        say "not installing: $([ "$(id -u)" = 0 ] && echo "no apt-get here" || echo "not root");" \
            "install them (e.g. sudo apt-get install ${pkgs[*]}) or point PKG_CONFIG_PATH at them;" \
            "trying the build with what is there"
    fi
fi

fatal=0
args=()
for c in "${miss[@]}"; do
    IFS='|' read -r name _ _ need <<<"$c"
    if [ "$need" = 1 ]; then
        say "still missing, and the build needs it: $name"
        fatal=1
    elif [ -n "$need" ]; then
        say "still missing: $name; building with $need"
        args+=("$need")
    fi
done
[ "$cmake_args" = 1 ] && echo "${args[*]}"
[ "${#miss[@]}" -eq 0 ] && say "everything the build uses is there"
exit $fatal
