#!/usr/bin/env python3
"""seqstar_reads.py REF.fa OUT_WITH.sam OUT_WITHOUT.sam

Reads on ctgA of REF (the test data's reference) with a SNP at 2151 and a
2 bp deletion in a few, and, in OUT_WITH only, three valid records without a
sequence (SEQ and QUAL '*'): 150M forward, 20S130M reverse and 60M5I85M.
OUT_WITHOUT is the same file without them: seqshard mpileup on OUT_WITH must
give what bcftools mpileup 1.16 (which aborts on OUT_WITH) gives on it.
"""
import sys


def read_fasta(path):
    seqs, name, parts = {}, None, []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith(">"):
                if name:
                    seqs[name] = "".join(parts)
                name, parts = line[1:].split()[0], []
            elif line:
                parts.append(line.upper())
    if name:
        seqs[name] = "".join(parts)
    return seqs


def main():
    ref_path, out_with, out_without = sys.argv[1:4]
    seqs = read_fasta(ref_path)
    ctg = seqs["ctgA"]
    header = ["@HD\tVN:1.6\tSO:coordinate"]
    header += ["@SQ\tSN:%s\tLN:%d" % (n, len(s)) for n, s in seqs.items()]
    header.append("@RG\tID:rg1\tSM:sampleA")
    recs = []
    for i in range(40):
        pos = 2000 + 4 * i  # 0-based
        seq = list(ctg[pos:pos + 100])
        if i % 2 and pos <= 2150 < pos + 100:
            base = seq[2150 - pos]
            seq[2150 - pos] = "A" if base != "A" else "C"
        cigar = "100M"
        if i % 7 == 3 and pos + 60 < 2200:
            seq = list(ctg[pos:pos + 50]) + list(ctg[pos + 52:pos + 102])
            cigar = "50M2D50M"
        flag = 16 if i % 3 == 0 else 0
        qual = "".join(chr(33 + 20 + (j * 7 + i) % 21) for j in range(100))
        recs.append((pos, "r%02d\t%d\tctgA\t%d\t60\t%s\t*\t0\t0\t%s\t%s\tRG:Z:rg1"
                     % (i, flag, pos + 1, cigar, "".join(seq), qual)))
    star = [(2050, "star1\t0\tctgA\t2051\t60\t150M\t*\t0\t0\t*\t*\tRG:Z:rg1"),
            (2080, "star2\t16\tctgA\t2081\t60\t20S130M\t*\t0\t0\t*\t*\tRG:Z:rg1"),
            (2100, "star3\t0\tctgA\t2101\t60\t60M5I85M\t*\t0\t0\t*\t*\tRG:Z:rg1")]
    for path, rows in ((out_with, recs + star), (out_without, recs)):
        rows = sorted(rows, key=lambda r: r[0])
        with open(path, "w") as f:
            f.write("\n".join(header) + "\n")
            for _, line in rows:
                f.write(line + "\n")


main()
