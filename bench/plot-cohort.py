#!/usr/bin/env python3
"""Turn bench-cohort.sh's runs into a markdown table (medians, floors) and a plot of
peak RSS and wall time against the number of inputs.

    python3 bench/plot-cohort.py --tsv bench/results/cohort.tsv \
        --md bench/results/cohort.md --png bench/results/cohort.png
"""
import argparse
import csv
import statistics

import matplotlib

matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)

FIELDS = ('wall_s', 'user_s', 'sys_s', 'max_rss_kb')
# (case, N, RSS floor in MB, speed-up floor): the floors
FLOORS = (('floor30', 30, 256, 3.5), ('cohort', 1000, 512, 3.5))


def medians(rows):
    """{(case, n, tool): {field: median}, 'runs': count}."""
    keys = sorted({(r['case'], int(r['n']), r['tool']) for r in rows})
    out = {}
    for k in keys:
        mine = [r for r in rows if (r['case'], int(r['n']), r['tool']) == k]
        out[k] = {f: statistics.median(float(r[f]) for r in mine) for f in FIELDS}
        out[k]['runs'] = len(mine)
    return out


def table(med, load, threads):
    lines = ['| case | N | tool | runs | wall (s) | user (s) | sys (s) | peak RSS (MB) '
             '| speed-up |', '|---|---:|---|---:|---:|---:|---:|---:|---:|']
    for (case, n, tool), m in sorted(med.items(), key=lambda kv: (kv[0][0] != 'floor30',
                                                                  kv[0][1], kv[0][2])):
        base = med.get((case, n, 'samtools'))
        speed = base['wall_s'] / m['wall_s'] if base else float('nan')
        lines.append('| %s | %d | %s | %d | %.1f | %.1f | %.1f | %.0f | %.2fx |' % (
            case, n, tool if tool == 'samtools' else 'seqshard -@%s' % threads, m['runs'],
            m['wall_s'], m['user_s'], m['sys_s'], m['max_rss_kb'] / 1024, speed))
    lines += ['', 'Medians of the runs listed (tools alternating); load average at the end: '
              '%s. Speed-up = samtools wall / seqshard wall.' % load, '']
    for case, n, rss_floor, speed_floor in FLOORS:
        ss, st = med.get((case, n, 'seqshard')), med.get((case, n, 'samtools'))
        if not ss or not st:
            continue
        rss, speed = ss['max_rss_kb'] / 1024, st['wall_s'] / ss['wall_s']
        cpu = (st['user_s'] + st['sys_s']) / (ss['user_s'] + ss['sys_s'])
        lines.append('- %s N=%d: peak RSS %.0f MB (floor %d: %s); %.2fx faster (floor %.1fx: '
                     '%s); %.2fx less CPU' % (case, n, rss, rss_floor,
                                              'met' if rss <= rss_floor else 'NOT met', speed,
                                              speed_floor,
                                              'met' if speed >= speed_floor else 'NOT met', cpu))
    return '\n'.join(lines) + '\n'


def plot(med, png, threads):
    fig, (ax_rss, ax_wall) = plt.subplots(1, 2, figsize=(10, 4))
    for tool, style in (('samtools', 'o--'), ('seqshard', 's-')):
        pts = sorted((n, m) for (c, n, t), m in med.items() if c == 'cohort' and t == tool)
        if not pts:
            continue
        label = tool + ('' if tool == 'samtools' else ' -@%s' % threads)
        ns = [n for n, _ in pts]
        ax_rss.plot(ns, [m['max_rss_kb'] / 1024 for _, m in pts], style, label=label)
        ax_wall.plot(ns, [m['wall_s'] for _, m in pts], style, label=label)
    for ax, title in ((ax_rss, 'peak RSS (MB)'), (ax_wall, 'wall time (s)')):
        ax.set_xscale('log')
        ax.set_yscale('log')
        ax.set_xlabel('inputs (two BAMs to a CRAM), 20 kb region, -B')
        ax.set_title(title)
        ax.grid(True, which='both', alpha=0.3)
        ax.legend()
    ax_rss.axhline(512, color='grey', lw=0.8, ls=':')
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--tsv', required=True)
    ap.add_argument('--md', required=True)
    ap.add_argument('--png', required=True)
    ap.add_argument('--load', default='?')
    ap.add_argument('--threads', default='2')
    a = ap.parse_args()
    rows = list(csv.DictReader(open(a.tsv), delimiter='\t'))
    med = medians(rows)
    text = table(med, a.load, a.threads)
    open(a.md, 'w').write('# Cohort benchmark\n\n' + text)
    print(text)
    plot(med, a.png, a.threads)


if __name__ == '__main__':
    main()
