#!/usr/bin/env python3
"""Draw a seqshard --report: each worker's shards over time, and how long shards took.

    python3 scripts/plot-report.py REPORT.json OUT.png

Left: a Gantt chart, one row per worker (grouped by rank: "r1 w3" is rank 1's
worker 3), one bar per shard from its start to its end, in seconds since the
run's start_time; gaps in a row are a worker waiting (for a shard, or for an
output buffer). Right: the distribution of shard times, with the median and the
slowest shard marked. A failed run's report plots the shards that finished.

Needs matplotlib (Debian: python3-matplotlib). Exit status 0, 1 when the report
cannot be read or has no shard records (schema 2 and later have them) or matplotlib
is missing, 2 on bad usage.
"""
import json
import statistics
import sys

try:
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)
    from matplotlib.ticker import MaxNLocator  # noqa: E402
except ImportError as e:
    plt = None
    MISSING = (f'plot-report: {sys.executable} cannot import matplotlib ({e}); install it '
               '(Debian: apt-get install python3-matplotlib; elsewhere: python3 -m pip install '
               '--user matplotlib) or run this script with a python3 that has it')


def load(path):
    try:
        with open(path) as f:
            rep = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f'plot-report: {path}: {e}')
    recs = rep.get('shard_records')
    if recs is None:
        sys.exit(f'plot-report: {path}: no "shard_records" (schema {rep.get("schema", 1)}); '
                 'it needs a report of schema 2 or later: rerun with this seqshard\'s --report')
    if not recs:
        sys.exit(f'plot-report: {path}: no shard finished; nothing to draw')
    return rep, recs


def rows(recs):
    """Each (rank, worker) a row, in rank then worker order."""
    keys = sorted({(r['rank'], r['worker']) for r in recs})
    return {k: i for i, k in enumerate(keys)}, keys


def gantt(ax, recs):
    row, keys = rows(recs)
    cmap = plt.get_cmap('tab10')
    for r in recs:
        y = row[(r['rank'], r['worker'])]
        ax.barh(y, r['end_s'] - r['start_s'], left=r['start_s'], height=0.8,
                color=cmap(r['rank'] % 10), edgecolor='black', linewidth=0.3)
    ax.set_yticks(range(len(keys)))
    ax.set_yticklabels([f'r{k[0]} w{k[1]}' for k in keys])
    ax.invert_yaxis()
    ax.set_xlim(left=0)  # the gap before the first bar is setup: opening, planning
    ax.xaxis.set_major_locator(MaxNLocator(nbins=8))
    ax.set_xlabel('seconds since start')
    ax.set_title('shards per worker (colour: rank)')


def distribution(ax, recs):
    times = [r['end_s'] - r['start_s'] for r in recs]
    ax.hist(times, bins=min(40, max(5, len(times) // 3)), color='tab:blue', edgecolor='black',
            linewidth=0.3)
    med = statistics.median(times)
    ax.axvline(med, color='black', linestyle='--', label=f'median {med:.3f} s')
    ax.axvline(max(times), color='tab:red', linestyle=':', label=f'slowest {max(times):.3f} s')
    # a few ticks only: a narrow panel's default ticks ("0.000 0.002 ...") run together
    ax.xaxis.set_major_locator(MaxNLocator(nbins=4))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel('shard time (s)')
    ax.set_ylabel('shards')
    ax.set_title(f'{len(times)} shards')
    ax.legend(fontsize='small')


def main(argv):
    if len(argv) != 3 or argv[1] in ('-h', '--help'):
        print(__doc__.strip(), file=sys.stderr if len(argv) != 2 else sys.stdout)
        return 0 if len(argv) == 2 else 2
    if plt is None:
        sys.exit(MISSING)
    rep, recs = load(argv[1])
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, max(3.0, 0.35 * len(rows(recs)[1]) + 1.5)),
                               gridspec_kw={'width_ratios': [2, 1]})
    gantt(a, recs)
    distribution(b, recs)
    status = rep.get('status', 'ok')
    fig.suptitle(f"seqshard {rep.get('kernel', '?')}: {rep.get('threads', '?')} threads, "
                 f"{len(rep.get('ranks', [])) or 1} rank(s), {rep.get('shards', '?')} shards, "
                 f"wall {rep.get('wall_s', 0):.2f} s{'' if status == 'ok' else ' (FAILED)'}")
    fig.tight_layout()
    try:
        fig.savefig(argv[2], dpi=100)
    except OSError as e:
        sys.exit(f'plot-report: {argv[2]}: {e}')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
