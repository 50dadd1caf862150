#!/usr/bin/env bash
# report_fields.sh -- --report of one process: schema, status, where and when
# (hosts, Slurm job, array task and nodes, timestamps, CPU times and
# efficiency), what (inputs and their sizes, output, shard size, binding, setup
# time) and one record per shard whose bytes and reads add up to the output and
# the totals; only the counters the run counts (pileup: realign's with
# --realign alone); the framework's own figures under "diagnostics", none of
# them at the top; a failed run writes the report under its name
# with "status": "failed" and the error, and no output; scripts/plot-report.py
# draws it. (Several ranks: mpi_report_log.sh.)
set -u
. "$(dirname "$0")/lib.sh"
ss_setup

S1=$TD/s1.bam
W=$SS_WORK
PY=python3
/usr/bin/python3 -c 'import matplotlib' 2>/dev/null && PY=/usr/bin/python3

# check NAME REPORT OUTPUT PYTHON-ASSERTIONS: each assertion line "expr, message"
check() {
    local name=$1 rep=$2 out=$3 asserts=$4 msg
    msg=$("$PY" - "$rep" "$out" <<PYEOF 2>&1
import json, os, re, socket, sys
d = json.load(open(sys.argv[1]))
out = sys.argv[2]
recs = d.get('shard_records', [])
ts = re.compile(r'^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$')
bad = []
for expr, what in [
$asserts
]:
    try:
        ok = eval(expr)
    except Exception as e:
        ok, what = False, f'{what} ({type(e).__name__}: {e})'
    if not ok:
        bad.append(what)
print('; '.join(bad))
PYEOF
)
    [ -z "$msg" ] && ss_ok "$name" || ss_bad "$name" "$msg"
}

# ---- a run that worked ----------------------------------------------------------------
timeout "$SS_TIMEOUT" env SLURM_JOB_ID=4242 SLURM_ARRAY_JOB_ID=4240 SLURM_ARRAY_TASK_ID=2 \
    SLURM_JOB_NODELIST='node[01-02]' "$SEQSHARD" pileup --quiet -@ 2 --shard-size 5k \
    -f "$REF" -o "$W/ok.txt" --report "$W/ok.json" "$S1" "$TD/s2.bam" 2>"$W/ok.err"
rc=$?
if [ $rc != 0 ] || [ ! -f "$W/ok.json" ]; then
    ss_bad "report of a run that worked" "status $rc, report: $(ls "$W")" "$(head -3 "$W/ok.err")"
else
    check "report: run fields" "$W/ok.json" "$W/ok.txt" "
    (\"d['schema'] == 3\", 'schema 3'),
    (\"d['status'] == 'ok' and d['error'] is None\", 'status ok, error null'),
    (\"d['slurm_job_id'] == '4242'\", 'slurm_job_id from SLURM_JOB_ID'),
    (\"d['slurm_array_job_id'] == '4240' and d['slurm_array_task_id'] == 2\", 'array job and task from SLURM_ARRAY_*'),
    (\"d['slurm_nodelist'] == 'node[01-02]'\", 'slurm_nodelist from SLURM_JOB_NODELIST'),
    (\"d['hosts'] == [socket.gethostname()]\", 'hosts: this host'),
    (\"ts.match(d['start_time']) and ts.match(d['end_time']) and d['start_time'] <= d['end_time']\", 'start/end times'),
    (\"[os.path.basename(p) for p in d['inputs']] == ['s1.bam', 's2.bam']\", 'inputs'),
    (\"d['input_bytes'] == [os.path.getsize(p) for p in d['inputs']]\", 'input_bytes: each input size'),
    (\"d['input_bytes_total'] == sum(d['input_bytes'])\", 'input_bytes_total'),
    (\"d['output'] == out\", 'output path'),
    (\"d['shard_size'] == 5000\", 'effective shard size'),
    (\"d['binding']['asked'] == 'auto' and d['binding']['mode'] in ('core', 'none')\", 'binding'),
    (\"0 < d['setup_s'] < d['wall_s'] + 60\", 'setup_s'),
    (\"0 <= d['index_merge_s'] < d['wall_s']\", 'index_merge_s'),
    (\"d['cpu']['user_s'] > 0 and d['cpu']['sys_s'] >= 0\", 'cpu user/sys'),
    (\"abs(d['cpu']['efficiency'] - (d['cpu']['user_s'] + d['cpu']['sys_s']) / (d['wall_s'] * len(d['workers']))) < 0.01\", 'cpu efficiency = CPU / (wall x workers)'),
    (\"'kernel_counts' not in d\", 'no realign counters without --realign'),
    (\"set(d['diagnostics']) == {'output_buffers', 'alloc_counting'} and d['diagnostics']['alloc_counting'] == 'not measured'\", 'diagnostics: buffers, allocator calls not measured'),
    (\"d['diagnostics']['output_buffers']['cap'] >= d['diagnostics']['output_buffers']['peak'] >= 1\", 'diagnostics: output_buffers'),
    (\"d['diagnostics']['output_buffers']['budget_bytes'] >= 64000 and d['diagnostics']['output_buffers']['peak_bytes'] > 0\", 'diagnostics: output buffer budget and peak'),
    (\"not {'output_buffers', 'alloc_counting', 'malloc_calls', 'free_calls', 'allocs_per_read'} & set(d)\", 'no developer fields at the top'),"
    check "report: shard records" "$W/ok.json" "$W/ok.txt" "
    (\"sorted(r['index'] for r in recs) == list(range(d['shards']))\", 'one record per shard'),
    (\"sum(r['bytes'] for r in recs) == os.path.getsize(out)\", 'shard bytes add up to the output'),
    (\"sum(r['reads'] for r in recs) == d['totals']['reads']\", 'shard reads add up to the totals'),
    (\"all(0 <= r['start_s'] <= r['end_s'] <= d['wall_s'] + d['setup_s'] + 1 for r in recs)\", 'start <= end within the run'),
    (\"{r['worker'] for r in recs} <= {0, 1} and {r['rank'] for r in recs} == {0}\", 'workers and rank'),
    (\"recs[0]['region'].startswith('ctgA:1-')\", 'regions named'),"
fi

# outside Slurm the Slurm fields are null; standard input has no size
timeout "$SS_TIMEOUT" env -u SLURM_JOB_ID -u SLURM_ARRAY_JOB_ID -u SLURM_ARRAY_TASK_ID \
    -u SLURM_JOB_NODELIST "$SEQSHARD" pileup --quiet -@ 1 -f "$REF" -o "$W/in.txt" \
    --report "$W/in.json" - <"$S1" 2>"$W/in.err" &&
    check "report: outside Slurm, standard input" "$W/in.json" "$W/in.txt" "
    (\"[d[k] for k in ('slurm_job_id', 'slurm_array_job_id', 'slurm_array_task_id', 'slurm_nodelist')] == [None] * 4\", 'Slurm fields null'),
    (\"d['inputs'] == ['-'] and d['input_bytes'] == [None] and d['input_bytes_total'] == 0\", 'standard input: size null')," ||
    ss_bad "report: outside Slurm, standard input" "status $?" "$(head -2 "$W/in.err")"

# pileup --realign counts what realignment did, and only then
timeout "$SS_TIMEOUT" "$SEQSHARD" pileup --quiet -@ 2 --realign -f "$REF" -r ctgA \
    -o "$W/rl.txt" --report "$W/rl.json" "$S1" 2>"$W/rl.err" &&
    check "report: pileup --realign has realign's counters" "$W/rl.json" "$W/rl.txt" "
    (\"set(d['kernel_counts']) == {'realign_windows', 'realign_windows_skipped', 'realign_windows_cleaned', 'reads_realigned', 'ends_unclipped'}\", 'the five counters'),
    (\"d['kernel_counts']['realign_windows'] > 0\", 'windows counted'),"  ||
    ss_bad "report: pileup --realign has realign's counters" "status $?" "$(head -2 "$W/rl.err")"

# BGZF output: the shards' compressed bytes and the 28-byte EOF block make the file
timeout "$SS_TIMEOUT" "$SEQSHARD" pileup --quiet -@ 2 --shard-size 5k -f "$REF" \
    -o "$W/ok.txt.gz" --report "$W/gz.json" "$S1" 2>"$W/gz.err" &&
    check "report: shard bytes of .gz output" "$W/gz.json" "$W/ok.txt.gz" "
    (\"sum(r['bytes'] for r in recs) + 28 == os.path.getsize(out)\", 'compressed shard bytes + EOF'),"

# ---- a failed run: the report says so, the output does not appear ------------------------
timeout "$SS_TIMEOUT" env SEQSHARD_FAIL_SHARD=4 "$SEQSHARD" pileup --quiet -@ 2 --shard-size 5k \
    -o "$W/f.txt" --report "$W/f.json" "$S1" 2>"$W/f.err"
rc=$?
if [ $rc != 1 ] || [ -e "$W/f.txt" ] || [ ! -f "$W/f.json" ]; then
    ss_bad "report of a failed run" "status $rc; files: $(ls "$W" | tr '\n' ' ')" "$(head -2 "$W/f.err")"
else
    check "report of a failed run" "$W/f.json" "$W/f.txt" "
    (\"d['status'] == 'failed'\", 'status failed'),
    (\"'shard 4' in d['error'] and 'SEQSHARD_FAIL_SHARD' in d['error']\", 'the error'),
    (\"4 not in [r['index'] for r in recs]\", 'the failed shard has no record'),
    (\"d['output'] == out\", 'output path'),"
    leftover=$(find "$W" -name '.*tmp*' | head -1)
    [ -z "$leftover" ] && ss_ok "failed run: no temporary files" ||
        ss_bad "failed run: no temporary files" "$leftover"
fi

# ---- the plot ----------------------------------------------------------------------------
if "$PY" -c 'import matplotlib' 2>/dev/null; then
    if "$PY" "$SS_SRC/scripts/plot-report.py" "$W/ok.json" "$W/ok.png" 2>"$W/plot.err" &&
        [ "$(head -c 8 "$W/ok.png" | od -An -tx1 | tr -d ' ')" = 89504e470d0a1a0a ]; then
        ss_ok "plot-report.py draws a PNG"
    else
        ss_bad "plot-report.py draws a PNG" "$(head -3 "$W/plot.err")"
    fi
    "$PY" "$SS_SRC/scripts/plot-report.py" "$W/f.json" "$W/f.png" 2>/dev/null &&
        ss_ok "plot-report.py draws a failed run's shards" ||
        ss_bad "plot-report.py draws a failed run's shards" "exit status $?"
    # a long run (shard times of 5000-5017 s): no two tick labels of a panel run together
    cat >"$W/ticks.py" <<'PYEOF'
import json, runpy, sys
import matplotlib
matplotlib.use('Agg')
from matplotlib.figure import Figure
script, out = sys.argv[1], sys.argv[2]
recs = [{'index': i, 'region': f'c:{i}', 'worker': i % 2, 'rank': 0,
         'start_s': 10 + 5100 * (i // 2), 'end_s': 10 + 5100 * (i // 2) + 5000 + (i * 7) % 17,
         'reads': 1, 'bytes': 1} for i in range(40)]
json.dump({'schema': 3, 'kernel': 'pileup', 'threads': 2, 'shards': 40, 'wall_s': 102100,
           'status': 'ok', 'shard_records': recs}, open(out + '.json', 'w'))
bad, save = [], Figure.savefig
def check(self, *a, **k):
    self.canvas.draw()
    r = self.canvas.get_renderer()
    for ax in self.axes:
        boxes = sorted((t.get_window_extent(r) for t in ax.xaxis.get_ticklabels()
                        if t.get_visible() and t.get_text()), key=lambda b: b.x0)
        bad.extend(f'{ax.get_title()!r}: tick labels at {p.x1:.0f}/{q.x0:.0f} px'
                   for p, q in zip(boxes, boxes[1:]) if q.x0 < p.x1 + 4)
    return save(self, *a, **k)
Figure.savefig = check
sys.argv = [script, out + '.json', out]
try:
    runpy.run_path(script, run_name='__main__')
except SystemExit as e:
    if e.code:
        bad.append(f'exit {e.code}')
print('; '.join(bad))
PYEOF
    msg=$("$PY" "$W/ticks.py" "$SS_SRC/scripts/plot-report.py" "$W/long.png" 2>&1)
    [ -z "$msg" ] && ss_ok "plot-report.py: tick labels apart on a long run" ||
        ss_bad "plot-report.py: tick labels apart on a long run" "$msg"
else
    echo "note: matplotlib missing; plot-report.py not drawn"
fi

# without matplotlib: one line that says what to install, exit 1, no traceback
mkdir -p "$W/nompl/matplotlib"
echo 'raise ImportError("No module named matplotlib")' >"$W/nompl/matplotlib/__init__.py"
PYTHONPATH=$W/nompl "$PY" "$SS_SRC/scripts/plot-report.py" "$W/ok.json" "$W/n.png" 2>"$W/nompl.err"
rc=$?
if [ $rc = 1 ] && [ "$(wc -l <"$W/nompl.err")" = 1 ] && grep -q 'python3-matplotlib' "$W/nompl.err" &&
    ! grep -q Traceback "$W/nompl.err" && [ ! -e "$W/n.png" ]; then
    ss_ok "plot-report.py without matplotlib: one line, exit 1"
else
    ss_bad "plot-report.py without matplotlib: one line, exit 1" "status $rc" "$(head -3 "$W/nompl.err")"
fi

# the final line and "input_records" count the input's records once: realign's and
# pileup --realign's margins re-read reads around every shard ("reads" counts those)
want=$("$SAMTOOLS" view -c "$S1")
for k in "realign -o $W/ir.bam" "pileup --realign -o $W/ip.txt"; do
    # shellcheck disable=SC2086 # k is a word list
    "$SEQSHARD" $k -f "$REF" --shard-size 5k --report "$W/ir.json" "$S1" 2>"$W/ir.err"
    got=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["input_records"], d["totals"]["reads"] > d["input_records"])' "$W/ir.json" 2>&1)
    line=$(grep -o 'shards, [0-9.]* k reads' "$W/ir.err")
    if [ "$got" = "$want True" ] && [ "$line" = "shards, $(awk -v n="$want" 'BEGIN { printf "%.1f", n / 1000 }') k reads" ]; then
        ss_ok "${k%% *}: the final line and input_records count $want records once"
    else
        ss_bad "${k%% *}: the final line and input_records count $want records once" \
            "report: $got; final line: $line"
    fi
done

ss_summary
exit $?
