#!/usr/bin/env python3
"""paired_stats.py TSV BASE TITLE NOTE -- a Markdown table of paired rounds.

TSV has the columns round, case, config, wall_s, user_s, sys_s. For every
case and every config other than BASE: the ratio of BASE's wall time over the
other's within each round, its median over the rounds and a 95% bootstrap
interval (seeded, so a table is reproducible from its TSV); the same for CPU
time (user + sys), which a busy machine disturbs less than wall time. Used by
bench-alloc-ab.sh and bench-build-ab.sh."""
import csv
import random
import statistics
import sys


def interval(q, rng, n=2000):
    meds = sorted(statistics.median(rng.choices(q, k=len(q))) for _ in range(n))
    return meds[int(0.025 * n)], meds[int(0.975 * n) - 1]


def ratios(b, o):
    return [b[i] / o[i] for i in b if i in o and o[i] > 0]


def main():
    path, base, title, note = sys.argv[1:5]
    wall, cpu = {}, {}
    for r in csv.DictReader(open(path), delimiter="\t"):
        by = wall.setdefault(r["case"], {}).setdefault(r["config"], {})
        by[int(r["round"])] = float(r["wall_s"])
        by = cpu.setdefault(r["case"], {}).setdefault(r["config"], {})
        by[int(r["round"])] = float(r["user_s"]) + float(r["sys_s"])
    rng = random.Random(1)
    print("# " + title)
    print()
    print(note)
    print()
    print("| case | %s median s | against | other median s | %s/other wall | 95%% interval "
          "| %s/other CPU | 95%% interval |" % (base, base, base))
    print("|---|---:|---|---:|---:|---|---:|---|")
    for case, by in wall.items():
        b = by[base]
        for other, o in by.items():
            if other == base:
                continue
            q = ratios(b, o)
            lo, hi = interval(q, rng)
            c = ratios(cpu[case][base], cpu[case][other])
            clo, chi = interval(c, rng)
            print("| %s | %.3f | %s | %.3f | %.3f | %.3f-%.3f | %.3f | %.3f-%.3f |" % (
                case, statistics.median(b.values()), other, statistics.median(o.values()),
                statistics.median(q), lo, hi, statistics.median(c), clo, chi))


if __name__ == "__main__":
    main()
