#!/usr/bin/env python3
"""markdup_inject.py SEED < name-collated SAM > SAM

Makes duplicates the way a library does, for the markdup tests and
benchmark: every template is renamed Illumina-style
(machine:run:flowcell:lane:tile:x:y:UMI) and about 10% are copied, some
several times: a copy on the same tile within 80 pixels (an optical
duplicate at -d 100), or anywhere on four tiles; with the same base
qualities (a tie broken by name), lower or higher ones; some copies fail QC
(flag 0x200) and some carry another UMI (not a duplicate with
--barcode-name). Mates stay together, so samtools fixmate -m can follow."""
import random
import sys

rng = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else 7)
UMIS = ["ACGTAC", "TTGACA", "GGCATT", "CATGCA"]


def name(tile, x, y, umi):
    return "M1:7:FC1:1:%d:%d:%d:%s" % (tile, x, y, umi)


def emit(recs, qname, qual_shift=0, qcfail=False):
    for f in recs:
        g = list(f)
        g[0] = qname
        if qcfail:
            g[1] = str(int(g[1]) | 0x200)
        if qual_shift and g[10] != "*":
            g[10] = "".join(chr(max(33, min(74, ord(c) + qual_shift))) for c in g[10])
        sys.stdout.write("\t".join(g) + "\n")


def flush(recs):
    tile, x, y = 1101 + rng.randrange(4), rng.randrange(1000, 30000), rng.randrange(1000, 30000)
    umi = rng.choice(UMIS)
    emit(recs, name(tile, x, y, umi))
    if rng.random() >= 0.10:
        return
    copies = 1 + (rng.random() < 0.2) * rng.randrange(1, 5)
    for _ in range(copies):
        if rng.random() < 0.3:
            t, cx, cy = tile, x + rng.randrange(-80, 80), y + rng.randrange(-80, 80)
        else:
            t, cx, cy = 1101 + rng.randrange(4), rng.randrange(1000, 30000), rng.randrange(1000, 30000)
        u = umi if rng.random() < 0.9 else rng.choice(UMIS)
        emit(recs, name(t, cx, cy, u), rng.choice([0, 0, -3, 2]), rng.random() < 0.03)


group, current = [], None
for line in sys.stdin:
    if line.startswith("@"):
        sys.stdout.write(line)
        continue
    f = line.rstrip("\n").split("\t")
    if f[0] != current and group:
        flush(group)
        group = []
    current = f[0]
    group.append(f)
if group:
    flush(group)
