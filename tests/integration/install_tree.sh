#!/usr/bin/env bash
# install_tree.sh -- `cmake --install BUILD --prefix P` into a temporary prefix puts the
# program, the man pages, the bash completion, the Slurm scripts with their helper and
# the licence, the README and docs/ (every page, and every file a page links to) where
# the docs say; the installed binary keeps a RUNPATH to the library folders it was linked
# from outside the system's, and runs without LD_LIBRARY_PATH; the installed array script
# finds its helper; scripts/check-deps.sh, as a user who cannot install, names what
# is missing and lets the build go on (make demo); and make test works for such a user:
# scripts/install-deps.sh --test succeeds when everything is there and installs nothing,
# slurm_jobs.sh skips (exit 77) saying why, and scripts/test-summary.py lists the
# skipped tests with their reasons.
set -u
. "$(dirname "$0")/lib.sh"
ss_setup

BUILD=$(dirname "$SEQSHARD")
P=$SS_WORK/prefix
if ! cmake --install "$BUILD" --prefix "$P" >"$SS_WORK/install.log" 2>&1; then
    ss_bad "cmake --install" "failed" "$(tail -3 "$SS_WORK/install.log")"
    ss_summary
    exit 1
fi
ss_ok "cmake --install"

for f in bin/seqshard share/man/man1/seqshard.1 share/man/man1/seqshard-pileup.1 \
    share/man/man1/seqshard-view.1 share/man/man1/seqshard-depth.1 share/man/man1/seqshard-realign.1 \
    share/bash-completion/completions/seqshard share/seqshard/seqshard.sbatch \
    share/seqshard/seqshard-mpirun.sbatch share/seqshard/seqshard-array.sbatch \
    share/seqshard/slurm-array-summary.sh share/seqshard/plot-report.py \
    share/doc/seqshard/LICENSE; do
    [ -s "$P/$f" ] && ss_ok "installed $f" || ss_bad "installed $f" "missing or empty"
done
for f in bin/seqshard share/seqshard/seqshard-array.sbatch share/seqshard/slurm-array-summary.sh; do
    [ -x "$P/$f" ] && ss_ok "executable $f" || ss_bad "executable $f" "not executable"
done

# the README and every page of docs/, and what their relative links point to
D=$P/share/doc/seqshard
for f in "$SS_SRC"/README.md "$SS_SRC"/docs/*.md; do
    rel=${f#"$SS_SRC"/}
    cmp -s "$f" "$D/$rel" && ss_ok "installed doc $rel" ||
        ss_bad "installed doc $rel" "missing or different under $D"
done
broken=$(cd "$D" && python3 - README.md docs/*.md <<'PY'
import os, re, sys
for page in sys.argv[1:]:
    text = re.sub(r'```.*?```', '', open(page).read(), flags=re.S)
    for target in re.findall(r'\]\(([^)\s]+)\)', text):
        path = target.split('#')[0]
        if not path or re.match(r'[a-z]+:', path):
            continue
        if not os.path.exists(os.path.join(os.path.dirname(page), path)):
            print(f'{page} -> {target}')
PY
) || broken="cannot read the installed pages under $D"

[ -z "$broken" ] && ss_ok "installed docs: every relative link resolves" ||
    ss_bad "installed docs: every relative link resolves" "$(echo "$broken" | head -5)"

# RUNPATH: the build links from these folders; the installed copy keeps those that are
# not the system's (the build tree's own are CMake's business and go)
runpath() { readelf -d "$1" 2>/dev/null | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p' | tr ':' '\n'; }
want=$(runpath "$SEQSHARD" | grep -v -e '^$' -e "^$BUILD" | grep -vxE '/(usr/)?lib(64|/x86_64-linux-gnu)?' | sort -u)
got=$(runpath "$P/bin/seqshard" | grep -v '^$' | sort -u)
missing=$(comm -23 <(echo "$want") <(echo "$got") | grep -v '^$')
if ! command -v readelf >/dev/null; then
    echo "note: no readelf (binutils): RUNPATH not checked"
elif [ -z "$missing" ]; then
    ss_ok "installed RUNPATH keeps the link folders (${want:-none here})"
else
    ss_bad "installed RUNPATH keeps the link folders" "missing: $missing" "installed: ${got:-none}"
fi
out=$(env -u LD_LIBRARY_PATH "$P/bin/seqshard" --version 2>&1) &&
    ss_ok "installed seqshard runs without LD_LIBRARY_PATH" ||
    ss_bad "installed seqshard runs without LD_LIBRARY_PATH" "$(echo "$out" | head -2)"

out=$("$P/bin/seqshard" --version 2>&1)
[[ $out == "seqshard "[0-9]*htslib:* ]] && ss_ok "installed seqshard --version" ||
    ss_bad "installed seqshard --version" "$out"
if command -v man >/dev/null; then
    for k in seqshard seqshard-pileup seqshard-view seqshard-depth; do
        man -l "$P/share/man/man1/$k.1" 2>&1 >/dev/null | grep -q . &&
            ss_bad "man page $k.1 renders" "$(man -l "$P/share/man/man1/$k.1" 2>&1 >/dev/null | head -2)" ||
            ss_ok "man page $k.1 renders"
    done
fi

# the completion offers the kernels and a kernel's options
comp=$(bash -c '. "$1"; COMP_WORDS=("$2" ""); COMP_CWORD=1; _seqshard; echo "${COMPREPLY[*]}";
    COMP_WORDS=("$2" view --wri); COMP_CWORD=2; _seqshard; echo "${COMPREPLY[*]}"' _ \
    "$P/share/bash-completion/completions/seqshard" "$P/bin/seqshard" 2>&1)
[[ $comp == *pileup*view*depth*$'\n'--write-index* ]] && ss_ok "bash completion" ||
    ss_bad "bash completion" "$comp"

# the installed array script submits with the helper beside it (a stand-in sbatch records it)
mkdir -p "$SS_WORK/bin"
cat >"$SS_WORK/bin/sbatch" <<'SB'
#!/bin/bash
echo "$*" >>"$SBATCH_LOG"
echo 101
SB
chmod +x "$SS_WORK/bin/sbatch"
printf '%s %s\n' "$TD/s1.bam" "$SS_WORK/o1.txt" >"$SS_WORK/sheet.txt"
(cd "$SS_WORK" && PATH=$SS_WORK/bin:$PATH SBATCH_LOG=$SS_WORK/sbatch.log \
    bash "$P/share/seqshard/seqshard-array.sbatch" --submit sheet.txt -B) >"$SS_WORK/sub.out" 2>&1
rc=$?
if [ $rc = 0 ] && grep -q "$P/share/seqshard/slurm-array-summary.sh" "$SS_WORK/sbatch.log"; then
    ss_ok "installed seqshard-array.sbatch finds its helper"
else
    ss_bad "installed seqshard-array.sbatch finds its helper" "status $rc" \
        "$(cat "$SS_WORK/sub.out" "$SS_WORK/sbatch.log" 2>/dev/null | head -4)"
fi

# check-deps.sh as a user who cannot install, on a machine without CUnit and htslib:
# stand-ins for id and pkg-config say so
cat >"$SS_WORK/bin/id" <<'ID'
#!/bin/bash
echo 1000
ID
cat >"$SS_WORK/bin/pkg-config" <<PC
#!/bin/bash
case "\$*" in *cunit*|*htslib*) exit 1 ;; esac
exec $(command -v pkg-config) "\$@"
PC
chmod +x "$SS_WORK/bin/id" "$SS_WORK/bin/pkg-config"
args=$(PATH=$SS_WORK/bin:$PATH bash "$SS_SRC/scripts/check-deps.sh" --cmake-args 2>"$SS_WORK/deps.err")
rc=$?
if [ $rc = 1 ] && [ "$args" = "-DSEQSHARD_TESTS=OFF" ] &&
    grep -q 'missing: htslib (Debian/Ubuntu: libhts-dev)' "$SS_WORK/deps.err" &&
    grep -q 'not root' "$SS_WORK/deps.err" && ! grep -q 'installing with apt' "$SS_WORK/deps.err"; then
    ss_ok "check-deps.sh: not root, names what is missing, installs nothing"
else
    ss_bad "check-deps.sh: not root, names what is missing, installs nothing" \
        "status $rc, args '$args'" "$(head -5 "$SS_WORK/deps.err")"
fi

# ---- make test as a user without root --------------------------------------------------
# stand-ins: dpkg-query says every package is installed (or all but samtools), apt-get and
# sudo record that they were called
cat >"$SS_WORK/bin/dpkg-query" <<'DQ'
#!/bin/bash
[ "${SS_MISSING:-}" = "${*: -1}" ] && exit 1
printf 'install ok installed'
DQ
for t in apt-get sudo; do
    printf '#!/bin/bash\necho "%s $*" >>"$SS_CALLS"\n' "$t" >"$SS_WORK/bin/$t"
done
chmod +x "$SS_WORK/bin/dpkg-query" "$SS_WORK/bin/apt-get" "$SS_WORK/bin/sudo"
export SS_CALLS=$SS_WORK/calls.log
out=$(PATH=$SS_WORK/bin:$PATH bash "$SS_SRC/scripts/install-deps.sh" --test 2>&1)
rc=$?
if [ $rc = 0 ] && [[ $out == *"packages are installed"* ]] && [ ! -e "$SS_CALLS" ]; then
    ss_ok "install-deps.sh --test, not root, everything there: status 0, installs nothing"
else
    ss_bad "install-deps.sh --test, not root, everything there" "status $rc" "$out" \
        "$(cat "$SS_CALLS" 2>/dev/null)"
fi
out=$(PATH=$SS_WORK/bin:$PATH SS_MISSING=samtools bash "$SS_SRC/scripts/install-deps.sh" --test 2>&1)
rc=$?
if [ $rc = 1 ] && [[ $out == *"sudo apt-get"*"install"*samtools* ]] && [ ! -e "$SS_CALLS" ]; then
    ss_ok "install-deps.sh --test, not root, samtools missing: says how, installs nothing"
else
    ss_bad "install-deps.sh --test, not root, samtools missing" "status $rc" "$out"
fi

# slurm_jobs.sh as a user: skipped (77) with its reason, before it starts anything
out=$(PATH=$SS_WORK/bin:$PATH SS_SLURM_DIR=$SS_WORK/slurm timeout 60 \
    bash "$SS_SRC/tests/integration/slurm_jobs.sh" 2>&1)
rc=$?
if [ $rc = 77 ] && [[ $out == "SKIP: starting munged/slurmctld/slurmd needs root"* ]] &&
    [ ! -e "$SS_WORK/slurm" ] && [ ! -e "$SS_WORK/slurm.lock" ]; then
    ss_ok "slurm_jobs.sh, not root: exit 77 and why"
else
    ss_bad "slurm_jobs.sh, not root: exit 77 and why" "status $rc" "$(echo "$out" | head -3)"
fi

# test-summary.py on a real ctest run: a test that passed leaving cases out, one skipped,
# one failed
mkdir -p "$SS_WORK/ct"
cat >"$SS_WORK/ct/CMakeLists.txt" <<'CT'
cmake_minimum_required(VERSION 3.18)
project(t NONE)
enable_testing()
add_test(NAME t_notes COMMAND sh -c "echo ok; echo 'note: not root: skipping the full-disk cases'")
add_test(NAME t_skip COMMAND sh -c "echo 'SKIP: starting munged needs root'; exit 77")
add_test(NAME t_fail COMMAND sh -c "echo 'SKIP: not this one'; exit 1")
set_tests_properties(t_skip PROPERTIES SKIP_RETURN_CODE 77)
CT
if cmake -S "$SS_WORK/ct" -B "$SS_WORK/ct/b" >/dev/null 2>&1 &&
    { ctest --test-dir "$SS_WORK/ct/b" --output-junit r.xml >/dev/null 2>&1; true; } &&
    sum=$(python3 "$SS_SRC/scripts/test-summary.py" "$SS_WORK/ct/b/r.xml" 2>&1); then
    want=$'\nSkipped tests (1), and why:\n  t_skip: SKIP: starting munged needs root\n\n'
    want+=$'Cases left out by tests that passed (1):\n'
    want+='  t_notes: note: not root: skipping the full-disk cases'
    [ "$sum"$'\n' = "$want"$'\n' ] && ss_ok "test-summary.py: skipped tests and left-out cases" ||
        ss_bad "test-summary.py: skipped tests and left-out cases" "got: $sum"
else
    ss_bad "test-summary.py: skipped tests and left-out cases" "$sum"
fi

ss_summary
exit $?
