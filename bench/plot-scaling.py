#!/usr/bin/env python3
"""Turn bench-mpi.sh results into a markdown table and a scaling plot.

    python3 bench/plot-scaling.py --results bench/results \
        --table bench/results/mpi.md --png bench/results/scaling.png

Reads from --results: mpi.json (hyperfine --export-json, or the same shape from
bench-mpi.sh's shell-clock fallback), mpi-env.json (machine, load, versions) and
mpi-reports/<RxT>.json (seqshard --report of each configuration's last run);
with --prefix mpi-baq, the same files named mpi-baq*.
Commands are named "RxT" (ranks x threads per rank); the "1x1" command is the
baseline. Speed-up = median(1x1) / median(RxT); efficiency = speed-up / (R*T).
A command named otherwise (the run without mpirun) is listed in the table but not
plotted.
"""
import argparse
import json
import os
import re
import statistics
import sys

import matplotlib

matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)

CONFIG = re.compile(r'^(\d+)x(\d+)$')


def load(path, default=None):
    if not os.path.exists(path):
        if default is not None:
            return default
        sys.exit('plot-scaling.py: %s not found; run bench/bench-mpi.sh first' % path)
    with open(path) as f:
        return json.load(f)


def rows_of(hf, reports_dir):
    """One dict per command: name, ranks, threads, median/min/max s, report fields."""
    rows = []
    for r in hf['results']:
        name = r.get('command_name') or r['command']
        times = r.get('times') or []
        med = r.get('median')
        if med is None:
            med = statistics.median(times)
        m = CONFIG.match(name)
        row = {'name': name, 'median': med,
               'min': min(times) if times else med, 'max': max(times) if times else med,
               'ranks': int(m.group(1)) if m else 1, 'threads': int(m.group(2)) if m else 1,
               'config': bool(m)}
        rep_name = name if m else 'plain-1x1'
        rep = load(os.path.join(reports_dir, rep_name + '.json'), default={})
        row['shards'] = rep.get('shards')
        row['imbalance'] = rep.get('rank_load_imbalance', rep.get('load_imbalance'))
        rows.append(row)
    base = next((x['median'] for x in rows if x['name'] == '1x1'), None)
    if base is None:
        sys.exit('plot-scaling.py: no "1x1" run in mpi.json: it is the baseline')
    for x in rows:
        x['workers'] = x['ranks'] * x['threads']
        x['speedup'] = base / x['median']
        x['efficiency'] = x['speedup'] / x['workers']
    return rows


def table(rows, env):
    out = ['| ranks | threads/rank | median s | min-max s | speed-up vs 1x1 | efficiency '
           '| shards | load imbalance |',
           '|---:|---:|---:|---:|---:|---:|---:|---:|']
    for x in rows:
        label = '' if x['config'] else ' (no mpirun)'
        imb = '%.2f' % x['imbalance'] if x['imbalance'] is not None else '-'
        eff = '%.0f%%' % (100 * x['efficiency']) if x['config'] else '-'
        out.append('| %d%s | %d | %.2f | %.2f-%.2f | %.2fx | %s | %s | %s |' % (
            x['ranks'], label, x['threads'], x['median'], x['min'], x['max'], x['speedup'],
            eff, x['shards'] if x['shards'] is not None else '-', imb))
    out.append('')
    out.append('`seqshard pileup %s -@ T --bind %s -o FILE ecoli30x.bam` under `%s -np R`, '
               'median of %s timed runs (%s) after one warm-up. Efficiency = speed-up / '
               '(ranks x threads). Load imbalance: max/mean busy time over ranks (over worker '
               'threads for one rank), from `--report` of the last run.' % (
                   env.get('pileup_args', '-B'), env.get('bind', 'auto'),
                   env.get('launcher', 'mpirun').strip(),
                   env.get('runs', '?'), env.get('timer', '?')))
    out.append('')
    out.append('Outputs identical across configurations: %s; equal to `samtools mpileup %s`: '
               '%s; output %.0f MB.' % (env.get('outputs_identical', '?'),
                                        env.get('pileup_args', '-B'),
                                        env.get('equals_samtools', '?'),
                                        env.get('output_bytes', 0) / 1e6))
    out.append('')
    out.append('Machine: %s, %s cores, load average %s before and %s after; %s; MPI %s; '
               'allocator %s; shard size %s; %s; %s.' % (
                   env.get('cpu', '?'), env.get('cores', '?'), env.get('load_before', '?'),
                   env.get('load_after', '?'), env.get('seqshard', '?'), env.get('mpi', '?'),
                   env.get('allocator', '?'), env.get('shard_size', '?'), env.get('data', '?'),
                   env.get('date', '?')))
    return '\n'.join(out) + '\n'


def plot(rows, env, png):
    pts = sorted((x for x in rows if x['config']), key=lambda x: (x['workers'], x['ranks']))
    fig, (ax_t, ax_e) = plt.subplots(1, 2, figsize=(10, 4))
    for ax, key, ylabel in ((ax_t, 'median', 'wall time, median (s)'),
                            (ax_e, 'efficiency', 'parallel efficiency')):
        for x in pts:
            style = 'o' if x['ranks'] == 1 else 's'
            color = 'tab:blue' if x['ranks'] == 1 else 'tab:orange'
            ax.plot(x['workers'], x[key], style, color=color, markersize=8)
            ax.annotate('%dx%d' % (x['ranks'], x['threads']), (x['workers'], x[key]),
                        textcoords='offset points', xytext=(6, 4), fontsize=9)
        ax.set_xlabel('ranks x threads per rank')
        ax.set_ylabel(ylabel)
        ax.set_xticks(sorted({x['workers'] for x in pts}))
        ax.grid(True, alpha=0.3)
    if pts:
        base = next(x for x in pts if x['name'] == '1x1')
        ws = sorted({x['workers'] for x in pts})
        ax_t.plot(ws, [base['median'] / w for w in ws], '--', color='gray',
                  label='ideal (1x1 / workers)')
        ax_e.axhline(1.0, ls='--', color='gray', label='ideal')
    top = max([x['median'] for x in pts] + [1e-9])
    ax_t.set_ylim(0, 1.3 * top)
    ax_e.set_ylim(0, 1.15)
    for ax in (ax_t, ax_e):
        ax.set_xlim(0.5, max([x['workers'] for x in pts] + [1]) + 0.5)
    ax_t.plot([], [], 'o', color='tab:blue', label='1 rank (threads)')
    ax_t.plot([], [], 's', color='tab:orange', label='several ranks (MPI)')
    ax_t.legend(fontsize=8, loc='lower left')
    ax_e.legend(fontsize=8, loc='lower left')
    fig.suptitle('seqshard pileup %s, E. coli 30x: %s cores, load %s' % (
        env.get('pileup_args', '-B'), env.get('cores', '?'), env.get('load_before', '?')),
        fontsize=10)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--results', default='bench/results')
    ap.add_argument('--table', required=True)
    ap.add_argument('--png', required=True)
    ap.add_argument('--prefix', default='mpi', help='mpi (pileup -B) or mpi-baq')
    a = ap.parse_args()
    hf = load(os.path.join(a.results, a.prefix + '.json'))
    env = load(os.path.join(a.results, a.prefix + '-env.json'), default={})
    rows = rows_of(hf, os.path.join(a.results, a.prefix + '-reports'))
    with open(a.table, 'w') as f:
        f.write(table(rows, env))
    plot(rows, env, a.png)


if __name__ == '__main__':
    main()
