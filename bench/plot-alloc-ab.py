#!/usr/bin/env python3
"""Draw bench-alloc-ab.sh tables: default/other per case, with 95% intervals.

    /usr/bin/python3 bench/plot-alloc-ab.py --png bench/results/alloc-ab.png \\
        "before:bench/results/alloc-ab-before-fix.md" "after:bench/results/alloc-ab.md"

Each argument is LABEL:PATH of an alloc-ab.md that bench-alloc-ab.sh wrote. One panel
per allocator compared against; in each, one row per case and one marker per table, so
two runs of the script (before and after a change) sit side by side. The shaded band is
the 3% target: a case meets it when its whole interval stays left of 1.03.
"""
import argparse
import sys

import matplotlib

matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402


def read_table(path):
    """{(case, against): (ratio, lo, hi)} from the markdown table."""
    rows = {}
    with open(path) as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip('|').split('|')]
            if len(cells) != 7 or not cells[4].replace('.', '', 1).isdigit():
                continue
            lo, hi = (float(x) for x in cells[5].split('-'))
            rows[(cells[0], cells[2])] = (float(cells[4]), lo, hi)
    if not rows:
        sys.exit('plot-alloc-ab.py: no table rows in %s' % path)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--png', required=True)
    ap.add_argument('tables', nargs='+', metavar='LABEL:PATH')
    a = ap.parse_args()
    runs = []
    for t in a.tables:
        label, _, path = t.partition(':')
        if not path:
            sys.exit('plot-alloc-ab.py: %s: expected LABEL:PATH' % t)
        runs.append((label, read_table(path)))
    cases = sorted({k[0] for _, r in runs for k in r})
    others = sorted({k[1] for _, r in runs for k in r})
    fig, axes = plt.subplots(1, len(others), figsize=(4.2 * len(others), 0.5 * len(cases) + 1.6),
                             sharey=True, squeeze=False)
    step = 0.8 / len(runs)
    for ax, other in zip(axes[0], others):
        ax.axvspan(0.9, 1.03, color='#e8f4e8')
        ax.axvline(1.0, color='grey', lw=0.8)
        ax.axvline(1.03, color='green', lw=0.8, ls='--')
        for i, (label, rows) in enumerate(runs):
            ys, xs, err = [], [], [[], []]
            for y, case in enumerate(cases):
                if (case, other) not in rows:
                    continue
                r, lo, hi = rows[(case, other)]
                ys.append(y - 0.4 + step * (i + 0.5))
                xs.append(r)
                err[0].append(r - lo)
                err[1].append(hi - r)
            ax.errorbar(xs, ys, xerr=err, fmt='o', ms=4, capsize=2, label=label)
        ax.set_title('default / %s' % other, fontsize=9)
        ax.set_xlabel('wall time ratio (median, 95% interval)', fontsize=8)
        ax.set_xlim(0.9, 1.25)
        ax.set_xticks([0.95, 1.0, 1.05, 1.1, 1.15, 1.2])
    axes[0][0].set_yticks(range(len(cases)))
    axes[0][0].set_yticklabels(cases, fontsize=8)
    axes[0][0].invert_yaxis()
    # below the panels, so no run's points hide behind it
    handles, labels = axes[0][-1].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=8, loc='lower center', ncol=min(len(runs), 3))
    fig.tight_layout(rect=(0, 0.06 * ((len(runs) + 2) // 3), 1, 1))
    fig.savefig(a.png, dpi=110)


if __name__ == '__main__':
    main()
