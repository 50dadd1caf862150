#!/usr/bin/env python3
"""markdup-stack.py N CONTIG LENGTH > SAM

N read pairs at one position (read 1 forward at 1001, read 2 reverse at
1201, 2x150), named Illumina-style on one tile, x and y spread over a few
thousand pixels so that -d 100 finds optical neighbours: the deep duplicate
stack samtools markdup is slow on. Name-collated; run it through samtools
fixmate -m and sort."""
import random
import sys

n, contig, length = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
rng = random.Random(3)
seq = "".join(rng.choice("ACGT") for _ in range(350))
sys.stdout.write("@HD\tVN:1.6\tSO:unsorted\n@SQ\tSN:%s\tLN:%d\n" % (contig, length))
for i in range(n):
    name = "M1:7:FC1:1:1101:%d:%d" % (rng.randrange(1000, 6000), rng.randrange(1000, 6000))
    q1 = "".join(chr(33 + rng.randrange(20, 41)) for _ in range(150))
    q2 = "".join(chr(33 + rng.randrange(20, 41)) for _ in range(150))
    sys.stdout.write("%s\t99\t%s\t1001\t60\t150M\t=\t1201\t350\t%s\t%s\n" % (name, contig, seq[:150], q1))
    sys.stdout.write("%s\t147\t%s\t1201\t60\t150M\t=\t1001\t-350\t%s\t%s\n" % (name, contig, seq[200:350], q2))
