#!/usr/bin/env python3
"""realign_mates.py A.sam B.sam -- records (by name, READ1/2, secondary, supplementary)
whose PNEXT, TLEN or MC differ between two SAM files of the same reads (one as
written, one after samtools collate | fixmate). Prints one key per line."""
import sys

KEYFLAGS = 0x40 | 0x80 | 0x100 | 0x800


def fields(path):
    out = {}
    with open(path) as f:
        for line in f:
            if line.startswith('@'):
                continue
            t = line.rstrip('\n').split('\t')
            mc = next((x for x in t[11:] if x.startswith('MC:Z:')), '')
            key = (t[0], int(t[1]) & KEYFLAGS)
            out[key] = (t[7], t[8], mc)
    return out


a, b = fields(sys.argv[1]), fields(sys.argv[2])
for k in sorted(set(a) | set(b)):
    if a.get(k) != b.get(k):
        print(f'{k[0]}\t{k[1]}\t{a.get(k)}\t{b.get(k)}')
