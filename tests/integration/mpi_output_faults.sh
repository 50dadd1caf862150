#!/usr/bin/env bash
# mpi_output_faults.sh -- output faults under mpirun -np 2: a full disk (the
# output, or the spill files in --tmp-dir) fails every rank with a message
# and leaves nothing; a SIGTERM or SIGKILL to mpirun leaves no seqshard
# process half a second after mpirun is gone, and no final file: only the
# resumable temporary and the manifests beside it (for --resume).
#
# Skipped (status 77) in a build without MPI (SS_MPI=0); the full-disk cases
# need root (they mount a tmpfs) and are skipped otherwise.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_output.sh"
if [ "${SS_MPI:-1}" = 0 ]; then
    echo "SKIP: built without MPI"
    exit 77
fi
ss_setup
command -v mpirun >/dev/null || { echo "FAIL setup: mpirun not found"; exit 1; }

MPIRUN=(mpirun --oversubscribe --bind-to none -np 2)
[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
export OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
S1=$TD/s1.bam
RUN=("${MPIRUN[@]}" "$SEQSHARD")
FW=(--quiet --bind none -@ 1)

# ---- full disk: Open MPI's write_at reports success on a short write ----------------
FULL=$SS_WORK/full
if ss_full_fs "$FULL" 1m; then
    # Open MPI prints lines of its own (mca_fbtl_posix_pwritev, the job's abort notice)
    SS_ANY_LINES=1
    ss_keep=()
    ss_cmd_fails "np=2 pileup into a full disk" 1 'out\.txt.*(space|full)' "$FULL" \
        "${RUN[@]}" pileup "${FW[@]}" -B -r ctgA -o "$FULL/out.txt" "$S1"
    rm -rf "${FULL:?}"/* "$FULL"/.[!.]*
    ss_cmd_fails "np=2 view into a full disk" 1 'out\.sam.*(space|full)' "$FULL" \
        "${RUN[@]}" view "${FW[@]}" -o "$FULL/out.sam" "$S1"
    rm -rf "${FULL:?}"/* "$FULL"/.[!.]* # what a failing case left must not fail the next
    mkdir -p "$SS_WORK/spill-out"
    ss_cmd_fails "np=2 spill files into a full --tmp-dir" 1 'spill.*(space|full)' "$FULL" \
        env SEQSHARD_STORE_MEM=0 "${RUN[@]}" view "${FW[@]}" --tmp-dir "$FULL" \
        -o "$SS_WORK/spill-out/out.sam" "$S1"
    left=$(ss_left "$SS_WORK/spill-out")
    [ -z "$left" ] && ss_ok "np=2 full --tmp-dir: no output" ||
        ss_bad "np=2 full --tmp-dir: no output" "left: $left"
    SS_ANY_LINES=0
    # Every rank's write fails at about the same time: one line of seqshard's, not one
    # per rank (the first rank to raise the stop tells; Open MPI's own lines aside).
    for np in 3 4; do
        rm -rf "${FULL:?}"/* "$FULL"/.[!.]*
        nprun=(mpirun --oversubscribe --bind-to none -np "$np")
        [ "$(id -u)" = 0 ] && nprun+=(--allow-run-as-root)
        timeout "$SS_TIMEOUT" "${nprun[@]}" "$SEQSHARD" pileup "${FW[@]}" --shard-size 20k -B \
            -o "$FULL/out.txt" "$S1" "$TD/s2.bam" </dev/null >/dev/null 2>"$SS_WORK/np.err"
        rc=$?
        n=$(grep -c '^seqshard: ' "$SS_WORK/np.err")
        if [ $rc != 0 ] && [ $rc != 124 ] && [ "$n" = 1 ] &&
            grep -q '^seqshard: .*out\.txt.*\(space\|full\)' "$SS_WORK/np.err"; then
            ss_ok "np=$np pileup into a full disk: one line"
        else
            ss_bad "np=$np pileup into a full disk" "exit $rc, $n lines of seqshard's, want 1" \
                "$(grep '^seqshard: ' "$SS_WORK/np.err" | head -4 | cut -c1-200)"
        fi
    done
fi

# ---- signals to mpirun ----------------------------------------------------------------
# Shard 2 never finishes (SEQSHARD_STALL_SHARD), so the job is surely running.
# Live processes only: a rank that has exited may stay a zombie until init reaps
# it, and pgrep -f does not list zombies (their command line is empty).
TERM_LINE='seqshard: interrupted by SIGTERM; no output written; rerun the same command'
TERM_LINE+=' with --resume to continue'
signal_mpirun() { # NAME SIGNAL
    local name=$1 sig=$2 d=$SS_WORK/sig.$2 pid i rc
    mkdir -p "$d"
    SEQSHARD_STALL_SHARD=2 timeout "$SS_TIMEOUT" "${RUN[@]}" pileup "${FW[@]}" --shard-size 2k \
        -o "$d/out.txt" "$S1" </dev/null >"$d/stdout" 2>"$d/stderr" &
    pid=$!
    for i in $(seq 200); do [ -n "$(ss_left "$d" stdout stderr)" ] && break; sleep 0.05; done
    sleep 0.3 # past setup: the ranks are in the run
    # timeout(1) runs mpirun as its child: signal mpirun itself
    kill -"$sig" "$(pgrep -P "$pid" -x mpirun)" 2>/dev/null
    wait "$pid" 2>/dev/null # no "Killed" note from the shell
    rc=$?
    sleep 0.5
    local live left
    live=$(pgrep -f "$d/out.txt" | tr '\n' ' ')
    left=$(ss_left "$d" stdout stderr .out.txt.tmp.seqshard .out.txt.resume .out.txt.resume.rank1)
    if [ "$rc" = 0 ] || [ "$rc" = 124 ]; then
        ss_bad "$name" "mpirun exit status $rc, want a failure" "$(head -3 "$d/stderr")"
    elif [ -n "$live" ]; then
        ss_bad "$name" "seqshard processes still running 0.5 s after mpirun ended: $live"
        pkill -KILL -f "$d/out.txt"
    elif [ -n "$left" ]; then
        ss_bad "$name" "left files: $left" "$(head -3 "$d/stderr")"
    elif [ ! -f "$d/.out.txt.tmp.seqshard" ] || [ ! -f "$d/.out.txt.resume" ]; then
        ss_bad "$name" "the temporary and its manifest are not kept for --resume" \
            "left: $(ss_left "$d" stdout stderr)"
    elif [ "$sig" = TERM ] && ! grep -qx "$TERM_LINE" "$d/stderr"; then
        ss_bad "$name" "no 'interrupted by SIGTERM' line" "stderr: $(head -3 "$d/stderr")"
    else
        ss_ok "$name"
    fi
}
signal_mpirun "SIGTERM to mpirun: ranks gone, only the resumable files left" TERM
signal_mpirun "SIGKILL to mpirun: ranks gone, only the resumable files left" KILL

ss_summary
exit $?
