#!/usr/bin/env bash
# mpi_pileup.sh -- seqshard pileup under mpirun: the same bytes (and, for
# .gz output, the same index) for every number of ranks, threads and shard
# size, equal to samtools mpileup; and failures that stop every rank, leave
# no output and never hang.
#
# Skipped (status 77) in a build without MPI (SS_MPI=0).
set -u
. "$(dirname "$0")/lib.sh"
if [ "${SS_MPI:-1}" = 0 ]; then
    echo "SKIP: built without MPI"
    exit 77
fi
ss_setup
command -v mpirun >/dev/null || { echo "FAIL setup: mpirun not found"; exit 1; }

MPIRUN=(mpirun --oversubscribe)
[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
# Open MPI on one host: shared memory and loopback only, no probing of networks.
export OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo

W=$SS_WORK
ARGS=(-f "$REF" "$TD/s1.bam" "$TD/s2.bam")
"$SAMTOOLS" mpileup "${ARGS[@]}" >"$W/expected" 2>/dev/null

mpi_run() { # OUT ERR NP ARGS...
    local out=$1 err=$2 np=$3
    shift 3
    timeout "$SS_TIMEOUT" "${MPIRUN[@]}" -np "$np" "$SEQSHARD" "$@" </dev/null >"$out" 2>"$err"
    ss_rc=$?
}

# Determinism and compatibility: ranks x threads x shard sizes. Two and three ranks run
# every cell; one rank (its shards run as in one process: pileup_vs_samtools.sh) and four
# ranks (more than the cores) one each.
for run in "1 2 3k" "2 1 3k" "2 1 default" "2 2 3k" "2 2 default" \
    "3 1 3k" "3 1 default" "3 2 3k" "3 2 default" "4 1 3k"; do
    read -r np t s <<<"$run"
    name="np=$np -@$t shard=$s"
    size=(--shard-size "$s")
    [ "$s" = default ] && size=()
    mpi_run "$W/log" "$W/err" "$np" pileup -@ "$t" "${size[@]}" --quiet \
        -o "$W/got.txt" "${ARGS[@]}"
    if [ "$ss_rc" != 0 ]; then
        ss_bad "$name" "exit status $ss_rc" "$(head -3 "$W/err")"
    elif ! cmp -s "$W/expected" "$W/got.txt"; then
        ss_bad "$name" "output differs from samtools mpileup"
        ss_show_diff "$W/expected" "$W/got.txt"
    else
        ss_ok "$name"
    fi
    rm -f "$W/got.txt"
done

# BGZF output and its index: identical bytes whatever the ranks, and the
# index equals the one tabix builds.
"$SEQSHARD" pileup -@ 2 --shard-size 5k --quiet -o "$W/single.gz" "${ARGS[@]}"
cp "$W/single.gz" "$W/tabix.gz"
tabix -f -s1 -b2 -e2 "$W/tabix.gz"
if cmp -s "$W/single.gz.tbi" "$W/tabix.gz.tbi"; then ss_ok "tbi equals tabix's"; else
    ss_bad "tbi equals tabix's" "single-process index differs from tabix -s1 -b2 -e2"; fi
if bgzip -dc "$W/single.gz" | cmp -s - "$W/expected"; then ss_ok "gz content"; else
    ss_bad "gz content" "decompressed .gz differs from samtools mpileup"; fi
for np in 2 3; do
    mpi_run "$W/log" "$W/err" "$np" pileup -@ 1 --shard-size 5k --quiet -o "$W/mpi.gz" "${ARGS[@]}"
    if [ "$ss_rc" = 0 ] && cmp -s "$W/single.gz" "$W/mpi.gz" &&
        cmp -s "$W/single.gz.tbi" "$W/mpi.gz.tbi"; then
        ss_ok "gz np=$np"
    else
        ss_bad "gz np=$np" "status $ss_rc; .gz or .tbi differs from the single-process run" \
            "$(head -3 "$W/err")"
    fi
    got=$(tabix "$W/mpi.gz" ctgB:2000-2004 | md5sum)
    want=$(awk '$1=="ctgB" && $2>=2000 && $2<=2004' "$W/expected" | md5sum)
    if [ "$got" = "$want" ]; then ss_ok "tabix query np=$np"; else
        ss_bad "tabix query np=$np" "tabix ctgB:2000-2004 does not return the region"; fi
    rm -f "$W/mpi.gz" "$W/mpi.gz.tbi"
done

# Every piece spilled (SEQSHARD_STORE_MEM=0): written from the spill file,
# still the same bytes.
for out in got.txt mpi.gz; do
    SEQSHARD_STORE_MEM=0 mpi_run "$W/log" "$W/err" 3 pileup -@ 2 --shard-size 5k --quiet \
        --tmp-dir "$W" -o "$W/$out" "${ARGS[@]}"
    want=$W/expected
    [ "$out" = mpi.gz ] && want=$W/single.gz
    if [ "$ss_rc" = 0 ] && cmp -s "$want" "$W/$out"; then ss_ok "all spilled, $out np=3"; else
        ss_bad "all spilled, $out np=3" "status $ss_rc, or output differs" "$(head -3 "$W/err")"
    fi
    rm -f "$W/$out" "$W/$out.tbi"
done

# A failing shard on one rank: every rank exits non-zero promptly, one
# message names rank and shard, no output and no temporary file is left.
check_failed_run() { # NAME EXPECT_MSG
    local left
    left=$(find "$W/fail" -mindepth 1 -printf '%f ' 2>/dev/null)
    if [ "$ss_rc" = 0 ] || [ "$ss_rc" = 124 ]; then
        ss_bad "$1" "exit status $ss_rc (0 = no failure seen, 124 = hang)"
    elif [ -n "$left" ]; then
        ss_bad "$1" "files left behind: $left"
    elif [ -n "$2" ] && [ "$(grep -c "$2" "$W/err")" != 1 ]; then
        ss_bad "$1" "expected exactly one line matching '$2'" "$(head -5 "$W/err")"
    else
        ss_ok "$1"
    fi
}
mkdir -p "$W/fail"
SEQSHARD_FAIL_SHARD=4 mpi_run "$W/log" "$W/err" 3 pileup --shard-size 3k --quiet \
    -o "$W/fail/out.txt" "${ARGS[@]}"
check_failed_run "injected failure, np=3" "rank [0-9]*: shard 4 "
SEQSHARD_FAIL_SHARD=4 mpi_run "$W/log" "$W/err" 2 pileup --shard-size 3k --quiet \
    -o "$W/fail/out.gz" "${ARGS[@]}"
check_failed_run "injected failure, gz, np=2" "rank [0-9]*: shard 4 "
# A rank killed by a signal: mpirun ends the job with SIGTERM to the others,
# which exit keeping the temporary output rank 0 created at setup and the
# manifests beside it (the killed rank may be rank 0): no final file, and
# --resume then finishes the output. Early, middle and late shards, so the
# kill comes while pieces wait for sizes and while ranks finish.
check_killed_run() { # NAME OUT
    local left out=$2
    left=$(find "$W/fail" -mindepth 1 -printf '%f\n' 2>/dev/null |
        grep -vxE "\.$out\.(tmp\.seqshard|resume|resume\.rank[0-9]+)" | tr '\n' ' ')
    if [ "$ss_rc" = 0 ] || [ "$ss_rc" = 124 ]; then
        ss_bad "$1" "exit status $ss_rc (0 = no failure seen, 124 = hang)"
        return
    elif [ -n "$left" ] || [ ! -f "$W/fail/.$out.tmp.seqshard" ]; then
        ss_bad "$1" "want only the resumable files, found: $left" "$(ls -A "$W/fail")"
        return
    fi
    mpi_run "$W/log" "$W/err" 2 pileup --shard-size 3k --quiet --resume -o "$W/fail/$out" \
        "${ARGS[@]}"
    local got=$W/fail/$out
    if [ "${out%.gz}" != "$out" ]; then
        bgzip -dc "$W/fail/$out" >"$W/fail/plain" 2>/dev/null
        got=$W/fail/plain
    fi
    if [ "$ss_rc" != 0 ] || ! cmp -s "$W/expected" "$got"; then
        ss_bad "$1" "--resume afterwards: status $ss_rc, or its output differs" \
            "$(head -3 "$W/err")"
    else
        ss_ok "$1"
    fi
    rm -rf "${W:?}/fail" && mkdir -p "$W/fail"
}
for k in 0 4 20; do
    SEQSHARD_KILL_SHARD=$k mpi_run "$W/log" "$W/err" 3 pileup --shard-size 3k --quiet \
        -o "$W/fail/out.txt" "${ARGS[@]}"
    check_killed_run "rank killed by SIGKILL at shard $k, np=3; then --resume" out.txt
done
# Rank 0 itself killed (SEQSHARD_KILL_RANK: at its first shard >= k, or once
# its workers are done): the temporary file's creator is gone.
for k in 4 30; do
    SEQSHARD_KILL_RANK=0 SEQSHARD_KILL_SHARD=$k mpi_run "$W/log" "$W/err" 3 pileup \
        --shard-size 3k --quiet -o "$W/fail/out.txt" "${ARGS[@]}"
    check_killed_run "rank 0 killed by SIGKILL from shard $k, np=3; then --resume" out.txt
done
SEQSHARD_KILL_RANK=1 SEQSHARD_KILL_SHARD=8 mpi_run "$W/log" "$W/err" 2 pileup -@ 2 \
    --shard-size 3k --quiet -o "$W/fail/out.gz" "${ARGS[@]}"
check_killed_run "rank 1 killed by SIGKILL, gz, np=2 -@2; then --resume" out.gz
# Setup failure on every rank: one message, not one per rank.
mpi_run "$W/log" "$W/err" 3 pileup --quiet -o "$W/fail/out.txt" "$TD/noindex.bam"
check_failed_run "missing index, np=3" "noindex.bam"
# Standard output under several ranks: rank 0 streams samtools' bytes (mpi_stdout.sh
# has more).
mpi_run "$W/stream.txt" "$W/err" 2 pileup --quiet --shard-size 3k "${ARGS[@]}"
if [ "$ss_rc" = 0 ] && cmp -s "$W/expected" "$W/stream.txt"; then
    ss_ok "standard output, np=2: samtools' bytes"
else
    ss_bad "standard output, np=2" "status $ss_rc, or the stream differs" "$(head -2 "$W/err")"
fi

ss_summary
exit $?
