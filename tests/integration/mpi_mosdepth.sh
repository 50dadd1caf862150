#!/usr/bin/env bash
# mpi_mosdepth.sh -- seqshard depth --mosdepth under mpirun: every file (the
# BGZF streams and their .csi indexes byte for byte, the summary and dist
# files) is identical to the single-process run at the same shard size, with
# 2 and 3 ranks, 1-2 threads, shard sizes 2k and whole contigs, spill files
# forced; a failing rank leaves no file.
#
# Skipped (status 77) in a build without MPI (SS_MPI=0).
set -u
. "$(dirname "$0")/lib.sh"
ss_mpi_setup
W=$SS_WORK
printf 'ctgA\t0\t500\tfirst\nctgA\t450\t2000\nctgB\t29950\t30050\tgap\nctgEmpty\t0\t100\tnone\n' >"$W/r.bed"

# files PREFIX: the names a run left (sorted), for the comparison and the "nothing left" test
files() { (cd "${1%/*}" && ls -A | sort); }

check() { # NAME NP THREADS SIZE ARGS...
    local name=$1 np=$2 t=$3 s=$4
    shift 4
    rm -rf "$W/one" "$W/many"
    mkdir -p "$W/one" "$W/many"
    "$SEQSHARD" depth --mosdepth "$W/one/x" -@ 2 --shard-size "$s" --quiet "$@" \
        2>"$W/err1" || { ss_bad "$name" "single process failed" "$(head -2 "$W/err1")"; return; }
    timeout "$SS_TIMEOUT" "${MPIRUN[@]}" -np "$np" "$SEQSHARD" depth --mosdepth "$W/many/x" \
        --bind none -@ "$t" --shard-size "$s" --quiet "$@" </dev/null >"$W/log" 2>"$W/err"
    local rc=$? f bad=0
    if [ $rc != 0 ]; then
        ss_bad "$name" "exit status $rc" "$(head -3 "$W/err")"
        return
    fi
    if [ "$(files "$W/one/x")" != "$(files "$W/many/x")" ]; then
        ss_bad "$name" "different files" "$(files "$W/one/x" | tr '\n' ' ')" \
            "$(files "$W/many/x" | tr '\n' ' ')"
        return
    fi
    for f in $(files "$W/one/x"); do
        cmp -s "$W/one/$f" "$W/many/$f" || { ss_bad "$name" "$f differs"; bad=1; }
    done
    [ $bad = 0 ] && ss_ok "$name"
}

TD1=$TD/s1.bam
for np in 2 3; do
    # every thread count and shard size at each rank count (make test: one per option set)
    for opts in default by-bed; do
        ss_sweep "1:2k 1:1g 2:2k 2:1g"
        for cell in $SWEEP; do
            t=${cell%%:*} s=${cell#*:}
            if [ $opts = default ]; then
                check "np=$np -@$t $s default" $np $t $s "$TD1"
                continue
            fi
            check "np=$np -@$t $s --by BED -T -q -m" $np $t $s --by "$W/r.bed" -T 1,10,20 \
                -q 0:1:10: -m "$TD1"
        done
    done
    check "np=$np -x -n --by 500 -T 5" $np 1 3k -x -n --by 500 -T 5 "$TD1"
    SEQSHARD_STORE_MEM=0 check "np=$np spilled" $np 2 2k --by 1000 -q 5: "$TD1"
    check "np=$np CRAM" $np 1 5k -f "$REF" "$TD/s1.cram"
done

# the kernel guide's tally (side stream, values, histogram, finish): the same files
SEQSHARD_GUIDE=${SEQSHARD_GUIDE:-$SS_SRC/build/tests/seqshard-guide}
if [ -x "$SEQSHARD_GUIDE" ]; then
    for np in 2 3; do
        rm -rf "$W/one" "$W/many" && mkdir -p "$W/one" "$W/many"
        "$SEQSHARD_GUIDE" tally -@ 2 --shard-size 3k --quiet "$W/one/t" "$TD/edge.bam" &&
            timeout "$SS_TIMEOUT" "${MPIRUN[@]}" -np $np "$SEQSHARD_GUIDE" tally --bind none \
                -@ 1 --shard-size 3k --quiet "$W/many/t" "$TD/edge.bam" </dev/null >/dev/null \
                2>"$W/err"
        bad=$?
        for f in $(files "$W/one/t"); do cmp -s "$W/one/$f" "$W/many/$f" || bad=1; done
        [ "$(files "$W/one/t")" = "$(files "$W/many/t")" ] || bad=1
        if [ $bad = 0 ]; then ss_ok "np=$np guide tally"
        else ss_bad "np=$np guide tally" "differs from one process" "$(head -2 "$W/err")"; fi
    done
else
    ss_bad "guide tally" "no $SEQSHARD_GUIDE"
fi

# a failing rank: no file, non-zero exit
rm -rf "$W/f" && mkdir -p "$W/f"
SEQSHARD_FAIL_SHARD=7 timeout "$SS_TIMEOUT" "${MPIRUN[@]}" -np 3 "$SEQSHARD" depth \
    --mosdepth "$W/f/x" --bind none -@ 1 --shard-size 5k --quiet --by 500 "$TD1" \
    </dev/null >/dev/null 2>"$W/err"
rc=$?
if [ $rc = 0 ] || [ -n "$(ls -A "$W/f")" ]; then
    ss_bad "np=3 failing shard" "exit $rc, left: $(ls -A "$W/f" | tr '\n' ' ')"
else ss_ok "np=3 failing shard leaves nothing"; fi

# a killed rank (rank 0 too, which created the files): mpirun's SIGTERM to the others
# removes them; nothing is left
for kill in "" 0; do
    for k in 3 20; do
        rm -rf "$W/f" && mkdir -p "$W/f"
        SEQSHARD_KILL_RANK=$kill SEQSHARD_KILL_SHARD=$k timeout "$SS_TIMEOUT" "${MPIRUN[@]}" \
            -np 3 "$SEQSHARD" depth --mosdepth "$W/f/x" --bind none -@ 1 --shard-size 3k \
            --quiet --by 500 "$TD1" </dev/null >/dev/null 2>&1
        rc=$?
        sleep 0.5 # the other ranks' handlers
        if [ $rc = 0 ] || [ -n "$(ls -A "$W/f")" ]; then
            ss_bad "np=3 rank ${kill:-any} killed at shard $k" "exit $rc, left: $(ls -A "$W/f" | tr '\n' ' ')"
        else ss_ok "np=3 rank ${kill:-any} killed at shard $k leaves nothing"; fi
    done
done

ss_summary
exit $?
