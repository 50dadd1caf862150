#!/usr/bin/env bash
# bind_shared_node.sh -- --bind auto on a shared node: a process that may run on every CPU
# (started by Snakemake, GNU parallel, xargs -P, or mpirun --bind-to none) leaves its
# threads to the scheduler, so two runs side by side do not stack their workers on the
# same cores; a process the launcher restricted (taskset, mpirun --bind-to, srun
# --cpu-bind) pins one worker per core of its set; --bind core pins as asked.
set -u
. "$(dirname "$0")/lib.sh"
ss_setup
W=$SS_WORK
BAM=$TD/s1.bam
INPUTS=("$BAM" "$BAM" "$BAM" "$BAM" "$BAM" "$BAM" "$BAM" "$BAM") # a run of a few seconds
n_cpus=$(nproc --all)
full=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)

# ---- what --print-binding says -----------------------------------------------------------------
"$SEQSHARD" pileup --quiet -@ 2 -f "$REF" -o /dev/null --print-binding "$BAM" 2>"$W/auto.err"
if grep -q "^rank 0: 2 workers not pinned (--bind auto" "$W/auto.err" &&
    ! grep -q "worker 0: core" "$W/auto.err"; then
    ss_ok "auto, every CPU: not pinned"
else
    ss_bad "auto, every CPU: not pinned" "stderr: $(head -c 300 "$W/auto.err")"
fi
"$SEQSHARD" pileup --quiet -@ 1 --bind none -f "$REF" -o /dev/null --print-binding "$BAM" \
    2>"$W/none.err"
grep -q "^rank 0: 1 worker not pinned (--bind none)" "$W/none.err" &&
    ss_ok "--bind none: not pinned" ||
    ss_bad "--bind none: not pinned" "stderr: $(head -c 300 "$W/none.err")"
if [ "$n_cpus" -ge 2 ]; then
    last=$((n_cpus - 1))
    taskset -c "$last" "$SEQSHARD" pileup --quiet -@ 1 -f "$REF" -o /dev/null --print-binding \
        "$BAM" 2>"$W/taskset.err"
    grep -q "^rank 0 worker 0: core .*(PU $last)" "$W/taskset.err" &&
        ss_ok "auto under taskset -c $last: pinned there" ||
        ss_bad "auto under taskset -c $last: pinned there" "stderr: $(head -c 300 "$W/taskset.err")"
    "$SEQSHARD" pileup --quiet -@ 2 --bind core -f "$REF" -o /dev/null --print-binding "$BAM" \
        2>"$W/core.err"
    [ "$(grep -c "^rank 0 worker [01]: core" "$W/core.err")" = 2 ] &&
        ss_ok "--bind core: one core per worker" ||
        ss_bad "--bind core: one core per worker" "stderr: $(head -c 300 "$W/core.err")"
fi

# ---- two runs side by side: every thread of both may use every CPU -------------------------
# The CPU sets of both processes' threads, sampled while they run; before, the first worker
# of each was pinned to CPU 0.
sets() { # PID: "TID LIST" for each thread
    local t
    for t in /proc/"$1"/task/*; do
        printf '%s %s\n' "${t##*/}" "$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$t/status" 2>/dev/null)"
    done
}
"$SEQSHARD" pileup --quiet -@ 1 -f "$REF" -o "$W/a.txt" "${INPUTS[@]}" 2>"$W/a.err" &
pa=$!
"$SEQSHARD" pileup --quiet -@ 1 -f "$REF" -o "$W/b.txt" "${INPUTS[@]}" 2>"$W/b.err" &
pb=$!
: >"$W/sets"
for _ in $(seq 1 40); do
    sets "$pa" >>"$W/sets" 2>/dev/null
    sets "$pb" >>"$W/sets" 2>/dev/null
    kill -0 "$pa" 2>/dev/null || kill -0 "$pb" 2>/dev/null || break
    sleep 0.05
done
wait "$pa"
ra=$?
wait "$pb"
rb=$?
threads=$(awk 'NF == 2' "$W/sets" | sort -u | awk '{print $1}' | sort -u | wc -l)
narrow=$(awk -v full="$full" 'NF == 2 && $2 != full' "$W/sets" | sort -u)
if [ "$ra" = 0 ] && [ "$rb" = 0 ] && [ "$threads" -ge 4 ] && [ -z "$narrow" ]; then
    ss_ok "two concurrent runs: $threads threads, all on CPUs $full"
else
    ss_bad "two concurrent runs: every thread on CPUs $full" \
        "exit $ra and $rb, $threads threads seen; narrowed: $(echo "$narrow" | head -4 | tr '\n' ';')"
fi
cmp -s "$W/a.txt" "$W/b.txt" && ss_ok "two concurrent runs: same output" ||
    ss_bad "two concurrent runs: same output" "a.txt and b.txt differ"

ss_summary
