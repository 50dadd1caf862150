#!/usr/bin/env bash
# version_build.sh -- which build made a file: --version names the version (the release at
# its tag, release+gHASH on any other commit, .dirty with changed files), the build type
# and the compiler; --report and every @PG VN / ##seqshardVersion say the same version.
set -u
. "$(dirname "$0")/lib.sh"
ss_setup
W=$SS_WORK
S1=$TD/s1.bam

"$SEQSHARD" --version >"$W/v.txt"
v=$(sed -n '1s/^seqshard //p' "$W/v.txt")
release=$(sed -n 's/^project(seqshard VERSION \([0-9.]*\) .*/\1/p' "$SS_SRC/CMakeLists.txt")
if [[ $v =~ ^${release//./\\.}(\+g[0-9a-f]{7}(\.dirty)?)?$ ]] &&
    grep -qE '^build: (Release|Debug|RelWithDebInfo|MinSizeRel|none), [A-Za-z]+ [0-9.]+$' "$W/v.txt"; then
    ss_ok "--version: $v, $(sed -n 2p "$W/v.txt")"
else
    ss_bad "--version names the version, build type and compiler" "$(head -2 "$W/v.txt")"
fi
# in a git checkout, a commit of this repository (the one it was built from)
if git -C "$SS_SRC" rev-parse --short=7 HEAD >/dev/null 2>&1; then
    hash=$(sed -n 's/.*+g\([0-9a-f]\{7\}\).*/\1/p' <<<"$v")
    tag=$(git -C "$SS_SRC" describe --tags --exact-match 2>/dev/null || true)
    if [ "$tag" = "v$release" ] && [ "$v" = "$release" ]; then
        ss_ok "--version: the release at its tag"
    elif [ -n "$hash" ] && git -C "$SS_SRC" cat-file -e "$hash^{commit}" 2>/dev/null; then
        ss_ok "--version: commit $hash of this repository"
    else
        ss_bad "--version names a commit of this repository" "$v"
    fi
fi
"$SEQSHARD" view --quiet -H "$S1" | grep '^@PG	ID:seqshard' >"$W/pg.txt"
"$SEQSHARD" mpileup --quiet -f "$REF" -r ctgA:1-100 "$S1" | grep '^##seqshardVersion' >"$W/vcf.txt"
"$SEQSHARD" pileup --quiet -f "$REF" -r ctgA:1-100 -o "$W/p.txt" --report "$W/r.json" "$S1"
rv=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["version"], d["build"]["type"], d["build"]["compiler"])' "$W/r.json" 2>&1)
if grep -q "	VN:$v	" "$W/pg.txt" && grep -qx "##seqshardVersion=$v+htslib-[0-9.]*" "$W/vcf.txt" &&
    [ "$rv" = "$v $(sed -n 's/^build: \(.*\), \(.*\)$/\1 \2/p' "$W/v.txt")" ]; then
    ss_ok "@PG VN, ##seqshardVersion and --report name $v"
else
    ss_bad "@PG VN, ##seqshardVersion and --report name $v" "$(cut -c1-120 "$W/pg.txt")" \
        "$(cat "$W/vcf.txt")" "report: $rv"
fi

ss_summary
