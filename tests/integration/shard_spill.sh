#!/usr/bin/env bash
# shard_spill.sh -- a shard's output past the output buffers' memory budget
# (SEQSHARD_SPILL_AT) leaves memory for a temporary file and comes back in place: the output's bytes (text, BGZF text
# with its index, SAM, BAM, depth) are the same whether shards spill or not,
# with one process and under mpirun; a spill directory that cannot be written
# fails the run with one line and leaves no output.
set -u
. "$(dirname "$0")/lib.sh"
ss_setup
W=$SS_WORK
SPILL=64k    # the smallest budget allowed: every shard of these runs spills
NOSPILL=1g   # more than all buffers here hold: none spills

# same_spilled NAME OUTNAME ARGS...: the run's files with and without spilling.
same_spilled() {
    local name=$1 out=$2 d=$W/c$((++ss_case_no))
    shift 2
    mkdir -p "$d/a" "$d/b"
    SEQSHARD_SPILL_AT=$NOSPILL ss_run_seqshard /dev/null "$d/a.err" "$@" -o "$d/a/$out"
    local ra=$ss_rc
    SEQSHARD_SPILL_AT=$SPILL ss_run_seqshard /dev/null "$d/b.err" "$@" -o "$d/b/$out"
    local rb=$ss_rc
    if [ $ra != 0 ] || [ $rb != 0 ]; then
        ss_bad "$name" "exit $ra / $rb" "$(head -1 "$d/a.err") $(head -1 "$d/b.err")"
        return
    fi
    local f
    for f in $(ls "$d/a"); do
        if ! cmp -s "$d/a/$f" "$d/b/$f"; then
            ss_bad "$name" "$f differs when shards spill"
            return
        fi
    done
    [ "$(ls "$d/a")" = "$(ls "$d/b")" ] || { ss_bad "$name" "other files: $(ls "$d/b")"; return; }
    [ -s "$d/b/$out" ] || { ss_bad "$name" "empty output"; return; }
    ss_ok "$name"
}

IN2=("$TD/s1.bam" "$TD/s2.bam")
same_spilled "pileup text -@1" p.txt pileup --quiet -@ 1 -f "$REF" "${IN2[@]}"
same_spilled "pileup text -@2 -aa" p.txt pileup --quiet -@ 2 -aa -f "$REF" "${IN2[@]}"
same_spilled "pileup .gz + .tbi -@2" p.gz pileup --quiet -@ 2 -f "$REF" "${IN2[@]}"
same_spilled "pileup CRAM input -@2" p.txt pileup --quiet -@ 2 -f "$REF" "$TD/s1.cram"
# --no-PG: the @PG line holds the -o path, which differs between the two runs
same_spilled "view SAM -@2" v.sam view --quiet --no-PG -@ 2 -h "$TD/s1.bam"
same_spilled "view SAM.gz -@2" v.sam.gz view --quiet --no-PG -@ 2 -h "$TD/s1.bam"
same_spilled "view BAM records (-q 1) --write-index -@2" v.bam view --quiet --no-PG -@ 2 -b -q 1 \
    --write-index "$TD/s1.bam"
same_spilled "depth -a two inputs -@2" d.txt depth --quiet -@ 2 -a "${IN2[@]}"

if [ "${SS_MPI:-1}" = 1 ] && command -v mpirun >/dev/null; then
    MPIRUN=(mpirun --oversubscribe --bind-to none)
    [ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
    mpi_same() { # NAME OUTNAME ARGS...: -np 2 spilling against one process not spilling
        local name=$1 out=$2 d=$W/m$((++ss_case_no))
        shift 2
        mkdir -p "$d"
        SEQSHARD_SPILL_AT=$NOSPILL "$SEQSHARD" "$@" -o "$d/one.$out" 2>"$d/one.err"
        SEQSHARD_SPILL_AT=$SPILL timeout "$SS_TIMEOUT" "${MPIRUN[@]}" -x SEQSHARD_SPILL_AT \
            -np 2 "$SEQSHARD" "$1" --bind none "${@:2}" -o "$d/two.$out" 2>"$d/two.err" </dev/null
        local rc=$?
        if [ $rc != 0 ]; then
            ss_bad "$name" "mpirun exit $rc" "$(grep -v '^\[' "$d/two.err" | head -2)"
        elif ! cmp -s "$d/one.$out" "$d/two.$out"; then
            ss_bad "$name" "-np 2 with spilled shards differs from one process"
        else
            ss_ok "$name"
        fi
    }
    mpi_same "mpirun -np 2 pileup text" p.txt pileup --quiet -@ 1 -f "$REF" "${IN2[@]}"
    mpi_same "mpirun -np 2 pileup .gz" p.gz pileup --quiet -@ 2 -f "$REF" "${IN2[@]}"
        mpi_same "mpirun -np 2 view BAM records" v.bam view --quiet --no-PG -@ 1 -b -q 1 "$TD/s1.bam"
fi

# The spill directory cannot be written (a directory where no file can be created,
# even by root): one line naming it, exit 1, nothing left.
d=$W/fault
mkdir -p "$d/out"
NOWRITE=/proc
SEQSHARD_SPILL_AT=$SPILL ss_run_seqshard /dev/null "$d/err" pileup --quiet -@ 2 -f "$REF" \
    --tmp-dir "$NOWRITE" -o "$d/out/p.txt" "${IN2[@]}"
if [ $ss_rc = 1 ] && [ "$(ss_error_lines "$d/err" | wc -l)" = 1 ] && grep -q "$NOWRITE" "$d/err" &&
    [ -z "$(ls -A "$d/out")" ]; then
    ss_ok "unwritable spill directory: one line, exit 1, no output"
else
    ss_bad "unwritable spill directory" "exit $ss_rc, left: $(ls -A "$d/out")" "$(head -2 "$d/err")"
fi
# ...and without spilling the same run does not touch it (so the case above did spill)
SEQSHARD_SPILL_AT=$NOSPILL ss_run_seqshard /dev/null "$d/err2" pileup --quiet -@ 2 -f "$REF" \
    --tmp-dir "$NOWRITE" -o "$d/out/p.txt" "${IN2[@]}"
[ $ss_rc = 0 ] && ss_ok "no spill: --tmp-dir unused" ||
    ss_bad "no spill: --tmp-dir unused" "exit $ss_rc" "$(head -1 "$d/err2")"
ss_summary
exit $?
