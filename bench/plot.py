#!/usr/bin/env python3
"""Turn bench-pileup.sh results into a markdown table and a PNG plot.

    python3 bench/plot.py --results bench/results \
        --table bench/results/pileup.md --png bench/results/pileup.png

Reads from --results: pileup-nobaq.json and pileup-baq.json (hyperfine
--export-json), pileup-rss.json ({"command name": peak RSS in KiB}) and
pileup-env.json (machine and versions). The first command of each hyperfine
file is the baseline (samtools) for the speed-up column.
"""
import argparse
import json
import os
import statistics
import sys

RUNS = [('nobaq', 'no BAQ (-B)'), ('baq', 'BAQ on (-f ref.fa)')]


def load(path, default=None):
    if not os.path.exists(path):
        if default is not None:
            return default
        sys.exit('plot.py: %s not found; run bench/bench-pileup.sh first' % path)
    with open(path) as f:
        return json.load(f)


def rows_of(hf, rss):
    """(name, median, min, max, speed-up vs first, peak RSS MB or None)."""
    rows = []
    base = None
    for r in hf['results']:
        name = r.get('command_name') or r['command']
        med = r.get('median')
        if med is None:  # older hyperfine exports lack the median
            med = statistics.median(r['times'])
        if base is None:
            base = med
        kb = rss.get(name)
        rows.append((name, med, r['min'], r['max'], base / med,
                     kb / 1024.0 if kb is not None else None))
    return rows


def table(results, env):
    out = ['# Pileup benchmark', '']
    out.append('%s; %s, %s cores; samtools %s, sambamba %s, %s; hyperfine %s, '
               'median of the timed runs, output to /dev/null; %s.' % (
                   env.get('data', '?'), env.get('cpu', '?'), env.get('cores', '?'),
                   env.get('samtools', '?'), env.get('sambamba', '?'),
                   env.get('seqshard', '?'), env.get('hyperfine', '?'),
                   env.get('date', '?')))
    out.append('')
    for key, title in RUNS:
        if key not in results:
            continue
        out.append('## %s' % title)
        out.append('')
        out.append('| command | median (s) | min-max (s) | speed-up vs samtools | peak RSS (MB) |')
        out.append('|---|---:|---:|---:|---:|')
        for name, med, lo, hi, up, mb in results[key]:
            out.append('| %s | %.2f | %.2f-%.2f | %.2fx | %s |' % (
                name, med, lo, hi, up, '%.0f' % mb if mb is not None else 'n/a'))
        out.append('')
    out.append('Speed-up = samtools median / this median (above 1 is faster). '
               'Peak RSS from /usr/bin/time -v, one run each; for sambamba it is its '
               'largest process. sambamba output equal to samtools: %s.' %
               env.get('sambamba_output_equals_samtools', '?'))
    out.append('')
    return '\n'.join(out)


def plot(results, png):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    keys = [k for k, _ in RUNS if k in results]
    heights = [len(results[k]) for k in keys]
    fig, axes = plt.subplots(len(keys), 1, figsize=(8, 1.2 + 0.55 * sum(heights)),
                             gridspec_kw={'height_ratios': heights}, squeeze=False)
    for ax, key in zip(axes[:, 0], keys):
        rows = results[key]
        names = [r[0] for r in rows][::-1]
        med = [r[1] for r in rows][::-1]
        err = [[r[1] - r[2] for r in rows][::-1], [r[3] - r[1] for r in rows][::-1]]
        colors = ['#4c72b0' if n.startswith('seqshard') else '#999999' for n in names]
        ax.barh(names, med, xerr=err, color=colors, capsize=3)
        for y, r in enumerate(rows[::-1]):  # label right of the max whisker
            ax.text(r[3], y, '  %.2f s, %.2fx' % (r[1], r[4]), va='center', fontsize=8)
        ax.set_title(dict(RUNS)[key], fontsize=10)
        ax.set_xlim(0, max(r[3] for r in rows) * 1.4)
        ax.set_xlabel('wall time, s (bar: median; whiskers: min-max; label: speed-up vs samtools)')
    fig.tight_layout()
    fig.savefig(png, dpi=120)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--results', default=os.path.join(os.path.dirname(__file__), 'results'))
    ap.add_argument('--table', help='write the markdown table here')
    ap.add_argument('--png', help='write the plot here')
    a = ap.parse_args()
    rss = load(os.path.join(a.results, 'pileup-rss.json'), {})
    env = load(os.path.join(a.results, 'pileup-env.json'), {})
    results = {}
    for key, _ in RUNS:
        p = os.path.join(a.results, 'pileup-%s.json' % key)
        if os.path.exists(p):
            results[key] = rows_of(load(p), rss)
    if not results:
        sys.exit('plot.py: no pileup-*.json in %s; run bench/bench-pileup.sh first' % a.results)
    text = table(results, env)
    if a.table:
        with open(a.table, 'w') as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    if a.png:
        plot(results, a.png)


if __name__ == '__main__':
    main()
