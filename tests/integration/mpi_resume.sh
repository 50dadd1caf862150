#!/usr/bin/env bash
# mpi_resume.sh -- --resume under mpirun: one rank of mpirun -np 2 is killed
# (SIGKILL) when the manifests show about half of the shards (mpirun then
# stops the other); the same command with --resume, under -np 2, -np 3 or as
# one process, gives the bytes of an uninterrupted run and recomputes at most
# 60% of the shards. Shards are slowed by the test hook
# SEQSHARD_TEST_SHARD_DELAY_MS so the run can be stopped part way.
#
# Skipped (status 77) in a build without MPI (SS_MPI=0).
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_output.sh"
ss_mpi_setup
S1=$TD/s1.bam
W=$SS_WORK
DELAY=150
FW=(--quiet --bind none -@ 1 --shard-size 5k) # 28 shards

# records DIR OUT: the shard records in the manifest and every rank's record file.
records() {
    local f at size n=0
    for f in "$1/.$2.resume" "$1/.$2.resume.rank"*; do
        [ -f "$f" ] || continue
        at=$(grep -abo -m1 $'^end [0-9a-f]\\{8\\}$' "$f" | cut -d: -f1)
        size=$(stat -c %s "$f")
        [ -n "$at" ] && n=$((n + (size - at - 13) / SS_RESUME_REC))
    done
    echo "$n"
}

# The seqshard process of rank R among those writing PATH.
rank_pid() {
    local p
    for p in $(pgrep -f -- "-o $2"); do
        tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1" &&
            echo "$p" && return
    done
}

# kill_rank DIR OUT ARGS...: mpirun -np 2 seqshard ARGS -o DIR/OUT; SIGKILL rank 1 at half.
kill_rank() {
    local d=$1 out=$2 pid i p
    shift 2
    SEQSHARD_TEST_SHARD_DELAY_MS=$DELAY timeout "$SS_TIMEOUT" "${MPIRUN[@]}" -np 2 "$SEQSHARD" \
        "$@" -o "$d/$out" </dev/null >/dev/null 2>"$d/killed.err" &
    pid=$!
    for i in $(seq 600); do
        [ "$(records "$d" "$out")" -ge 14 ] && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
    done
    p=$(rank_pid 1 "$d/$out")
    [ -n "$p" ] && kill -KILL "$p"
    wait "$pid" 2>/dev/null
    rc=$?
    sleep 0.3 # the other rank's SIGTERM handler is done
}

# mpi_case NAME OUT EXTS ARGS...
mpi_case() {
    local name=$1 out=$2 exts=$3 d=$W/$2 how ext reused total saved
    shift 3
    mkdir -p "$d/ref" "$d/saved"
    "$SEQSHARD" "$@" "${FW[@]}" -o "$d/$out" && mv "$d/$out" "$d/ref/"
    for ext in ${exts//,/ }; do mv "$d/$out$ext" "$d/ref/"; done
    kill_rank "$d" "$out" "$@" "${FW[@]}"
    if [ "$rc" = 0 ] || [ -e "$d/$out" ] || [ ! -f "$d/.$out.tmp.seqshard" ]; then
        ss_bad "$name: kill rank 1" "mpirun status $rc; left: $(ss_left "$d" ref saved)" \
            "$(head -3 "$d/killed.err")"
        return
    fi
    ss_ok "$name: rank 1 killed at $(records "$d" "$out") records; files kept"
    cp -p "$d"/.??* "$d/saved/" # each resume below starts from what the kill left
    for how in "np=2" "np=3" "one process"; do
        rm -f "$d"/.??* "$d/$out"*
        cp -p "$d"/saved/.??* "$d/"
        case $how in
        np=2) run=("${MPIRUN[@]}" -np 2 "$SEQSHARD") ;;
        np=3) run=("${MPIRUN[@]}" -np 3 "$SEQSHARD") ;;
        *) run=("$SEQSHARD") ;;
        esac
        timeout "$SS_TIMEOUT" env SEQSHARD_TEST_SHARD_DELAY_MS=$DELAY "${run[@]}" "$@" "${FW[@]}" \
            --resume --report "$d/r.json" -o "$d/$out" </dev/null >/dev/null 2>"$d/resume.err"
        rc=$?
        reused=$(grep -o '"reused_shards": [0-9]*' "$d/r.json" 2>/dev/null | grep -o '[0-9]*$')
        total=$(grep -o '"shards": [0-9]*' "$d/r.json" 2>/dev/null | head -1 | grep -o '[0-9]*$')
        if [ "$rc" != 0 ]; then
            ss_bad "$name: resume $how" "status $rc" "$(head -3 "$d/resume.err")"
            continue
        fi
        saved=ok
        cmp -s "$d/ref/$out" "$d/$out" || saved="the output differs"
        for ext in ${exts//,/ }; do
            cmp -s "$d/ref/$out$ext" "$d/$out$ext" || saved="its $ext differs"
        done
        if [ "$saved" != ok ]; then
            ss_bad "$name: resume $how" "$saved from an uninterrupted run's"
        elif [ -n "$(ls -A "$d" | grep -E '^\.')" ]; then
            ss_bad "$name: resume $how" "left files: $(ls -A "$d" | grep -E '^\.' | tr '\n' ' ')"
        elif [ $(( (total - reused) * 100 )) -gt $(( total * 60 )) ]; then
            ss_bad "$name: resume $how" "recomputed $((total - reused)) of $total shards"
        else
            ss_ok "$name: resume $how (reused $reused of $total)"
            [ "$SS_VERBOSE" = 1 ] || echo "     $name: resume $how: reused $reused of $total shards"
        fi
    done
}

mpi_case "pileup text" out.txt "" pileup -B "$S1"
mpi_case "pileup .gz + .tbi" out.txt.gz ".tbi" pileup -B "$S1"
mpi_case "view BAM --write-index" out.bam ".csi" view -b --write-index "$S1"

ss_summary
exit $?
