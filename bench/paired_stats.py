#!/usr/bin/env python3
"""paired_stats.py TSV BASE TITLE NOTE -- a Markdown table of paired rounds.

TSV has the columns round, case, config, wall_s (more are ignored). For every
case and every config other than BASE: the ratio of BASE's wall time over the
other's within each round, its median over the rounds and a 95% bootstrap
interval (seeded, so a table is reproducible from its TSV). Used by
bench-alloc-ab.sh and bench-build-ab.sh."""
import csv
import random
import statistics
import sys


def interval(q, rng, n=2000):
    meds = sorted(statistics.median(rng.choices(q, k=len(q))) for _ in range(n))
    return meds[int(0.025 * n)], meds[int(0.975 * n) - 1]


def main():
    path, base, title, note = sys.argv[1:5]
    wall = {}
    for r in csv.DictReader(open(path), delimiter="\t"):
        by = wall.setdefault(r["case"], {}).setdefault(r["config"], {})
        by[int(r["round"])] = float(r["wall_s"])
    rng = random.Random(1)
    print("# " + title)
    print()
    print(note)
    print()
    print("| case | %s median s | against | other median s | %s/other | 95%% interval |"
          % (base, base))
    print("|---|---:|---|---:|---:|---|")
    for case, by in wall.items():
        b = by[base]
        for other, o in by.items():
            if other == base:
                continue
            q = [b[i] / o[i] for i in b if i in o and o[i] > 0]
            lo, hi = interval(q, rng)
            print("| %s | %.3f | %s | %.3f | %.3f | %.3f-%.3f |" % (
                case, statistics.median(b.values()), other, statistics.median(o.values()),
                statistics.median(q), lo, hi))


if __name__ == "__main__":
    main()
