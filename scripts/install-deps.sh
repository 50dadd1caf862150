#!/usr/bin/env bash
# install-deps.sh [--test] -- install the Debian packages seqshard needs, and only the
# missing ones. As root: apt-get installs them (apt-get update first, only when something
# is missing). As another user: prints the exact sudo line and exits 1.
#   --test   also the tools the tests and benchmarks compare against and make data with.
# Exit status: 0 when everything is installed afterwards, 1 otherwise, 2 on bad usage.
set -euo pipefail

build_pkgs=(build-essential cmake pkg-config libhts-dev libdeflate-dev libhwloc-dev libopenmpi-dev openmpi-bin
    libgoogle-perftools-dev libcunit1-dev zlib1g-dev libjemalloc-dev)
test_pkgs=(samtools mosdepth bcftools bwa dwgsim tabix hyperfine bowtie-examples samtools-test sambamba time
    slurmctld slurmd slurm-client munge snakemake
    python3-matplotlib clang-format)

usage() {
    echo "usage: scripts/install-deps.sh [--test]"
    echo "  installs the missing build packages (with --test: also the test tools) via apt-get"
}

want=("${build_pkgs[@]}")
for arg in "$@"; do
    case "$arg" in
    --test) want+=("${test_pkgs[@]}") ;;
    -h | --help)
        usage
        exit 0
        ;;
    *)
        echo "install-deps: unknown option '$arg'; run with --help" >&2
        exit 2
        ;;
    esac
done

if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "install-deps: dpkg-query not found: this script supports Debian/Ubuntu only;" \
        "install the equivalents of: ${want[*]}" >&2
    exit 1
fi

# A package counts as present only when dpkg says "install ok installed" (not merely
# known, half-configured or removed with its config files left).
missing_pkgs() {
    local p status
    for p in "$@"; do
        status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
        [ "$status" = "install ok installed" ] || printf '%s\n' "$p"
    done
}

mapfile -t missing < <(missing_pkgs "${want[@]}")
if [ "${#missing[@]}" -eq 0 ]; then
    echo "install-deps: all ${#want[@]} packages are installed"
    exit 0
fi

echo "install-deps: missing: ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: not root; install them with:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update
# </dev/null: CI has no terminal; nothing may wait for an answer.
apt-get install -y --no-install-recommends "${missing[@]}" </dev/null

mapfile -t still < <(missing_pkgs "${want[@]}")
if [ "${#still[@]}" -ne 0 ]; then
    echo "install-deps: still missing after apt-get install: ${still[*]};" \
        "check the apt sources (/etc/apt/sources.list*)" >&2
    exit 1
fi
echo "install-deps: installed ${missing[*]}"
