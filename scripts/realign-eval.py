#!/usr/bin/env python3
"""realign-eval.py -- how well reads hold true indels (python3, no extra modules).

Usage: samtools view in.bam | realign-eval.py [--misses] ref.fa truth.vcf [NAME]
(--misses: print each covering read that does not hold its indel on stderr)

Reads SAM text on stdin (mapped primary reads with MAPQ >= 1 that are not
duplicates or QC failures count: a MAPQ 0 read over a repeat is mostly one
from another copy, which no realigner can or should fix; covering_all and
holding_all count them too) and a truth VCF (dwgsim's: INFO pl=3 or AF=1 marks a
homozygous variant). Indels, in the truth and in the reads' CIGARs, are
compared left-normalised on ref.fa.

Prints one line of key=value figures:
  covering  reads whose clipped span (POS minus leading soft clip to the end
            plus trailing soft clip) covers a homozygous true indel with at
            least 5 bases each side (a read counts once per such indel);
  holding   of those, how many hold exactly that indel in their alignment;
  share     holding / covering;
  equiv     holding, plus the covering reads that hold an insertion of the true
            length at most one base from it, placed so that moving it onto the true
            position changes no aligned base's match to the reference: the same
            alignment score, so the two differ only in the read's own inserted
            bases (a sequencing error there), which no aligner can change;
  share_equiv equiv / covering;
  false     indels in those reads' CIGARs that match no true indel (any genotype).
"""
import sys

FLANK = 5
SKIP = 0x4 | 0x100 | 0x200 | 0x400 | 0x200


def read_fasta(path):
    seqs, name, parts = {}, None, []
    with open(path) as f:
        for line in f:
            if line.startswith('>'):
                if name is not None:
                    seqs[name] = ''.join(parts).upper()
                name, parts = line[1:].split()[0], []
            else:
                parts.append(line.strip())
    if name is not None:
        seqs[name] = ''.join(parts).upper()
    return seqs


def normalise(ref, pos, length, seq):
    """Shift an indel left while the haplotype is unchanged.
    length < 0: deletion of ref[pos:pos-length]; > 0: insertion of seq before ref[pos]."""
    if length < 0:
        k = -length
        while pos > 1 and ref[pos - 1] == ref[pos + k - 1]:
            pos -= 1
        return (pos, length, '')
    while pos > 1 and ref[pos - 1] == seq[-1] and seq[-1] != 'N':
        seq = ref[pos - 1] + seq[:-1]
        pos -= 1
    return (pos, length, seq)


def from_alleles(pos0, r, a):
    if len(r) == len(a) or a.startswith('<') or a == '*':
        return None
    lr, la, p = len(r), len(a), 0
    while lr > 0 and la > 0 and r[lr - 1] == a[la - 1]:
        lr, la = lr - 1, la - 1
    while p < lr and p < la and r[p] == a[p]:
        p += 1
    dl, il = lr - p, la - p
    if (dl > 0 and il > 0) or dl + il == 0:
        return None
    return (pos0 + p, il if il > 0 else -dl, a[p:p + il].upper() if il > 0 else '')


def read_truth(path, ref):
    hom, every = {}, set()
    with open(path) as f:
        for line in f:
            if line.startswith('#'):
                continue
            t = line.rstrip('\n').split('\t')
            ctg, pos0, r, alts, info = t[0], int(t[1]) - 1, t[3].upper(), t[4], t[7]
            is_hom = 'pl=3' in info.split(';') or 'AF=1' in info.split(';') or \
                'AF=1.0' in info.split(';')
            for a in alts.split(','):
                e = from_alleles(pos0, r, a.upper())
                if e is None or ctg not in ref:
                    continue
                e = normalise(ref[ctg], *e)
                every.add((ctg,) + e)
                if is_hom:
                    hom.setdefault(ctg, []).append(e)
    for ctg in hom:
        hom[ctg].sort()
    return hom, every


def parse_cigar(c):
    ops, n = [], 0
    for ch in c:
        if ch.isdigit():
            n = n * 10 + ord(ch) - 48
        else:
            ops.append((ch, n))
            n = 0
    return ops


def read_indels(ref, pos, ops, seq):
    out, rp, qp = [], pos, 0
    for op, n in ops:
        if op == 'I':
            out.append(normalise(ref, rp, n, seq[qp:qp + n].upper()))
        elif op == 'D':
            out.append(normalise(ref, rp, -n, ''))
        if op in 'MIS=X':
            qp += n
        if op in 'MDN=X':
            rp += n
    return out


def aligned_mismatches(ref, pos, ops, seq, lo, hi):
    """Read bases aligned to ref[lo:hi] that differ from it."""
    rp, qp, n_mm = pos, 0, 0
    for op, n in ops:
        if op in 'M=X':
            n_mm += sum(1 for k in range(n) if lo <= rp + k < hi and seq[qp + k] != ref[rp + k])
        if op in 'MIS=X':
            qp += n
        if op in 'MDN=X':
            rp += n
    return n_mm


def holds_equivalent(ref, pos, ops, seq, e):
    """An insertion of e's length at most one base from e, which moved onto e's position
    aligns every other base as well (see equiv above)."""
    if e[1] <= 0:
        return False
    rp = pos
    for i, (op, n) in enumerate(ops):
        if op == 'I' and n == e[1] and abs(rp - e[0]) <= 1 and 0 < i < len(ops) - 1 \
                and ops[i - 1][0] == 'M' and ops[i + 1][0] == 'M':
            d = e[0] - rp
            moved = list(ops)
            moved[i - 1] = ('M', ops[i - 1][1] + d)
            moved[i + 1] = ('M', ops[i + 1][1] - d)
            if min(moved[i - 1][1], moved[i + 1][1]) <= 0:
                return False
            lo, hi = e[0] - 2 * FLANK, e[0] + 2 * FLANK
            return aligned_mismatches(ref, pos, moved, seq, lo, hi) <= \
                aligned_mismatches(ref, pos, ops, seq, lo, hi)
        if op in 'MDN=X':
            rp += n
    return False


SHOW = False


def main():
    global SHOW
    if len(sys.argv) > 1 and sys.argv[1] == '--misses':
        SHOW = True
        del sys.argv[1]
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    ref = read_fasta(sys.argv[1])
    hom, every = read_truth(sys.argv[2], ref)
    import bisect
    starts = {c: [e[0] for e in v] for c, v in hom.items()}
    covering = holding = false = cov_all = hold_all = equiv = 0
    for line in sys.stdin:
        if line.startswith('@'):
            continue
        t = line.split('\t', 11)
        flag, ctg, cigar = int(t[1]), t[2], t[5]
        if flag & SKIP or cigar == '*' or ctg not in ref:
            continue
        pos, mapq = int(t[3]) - 1, int(t[4])
        ops = parse_cigar(cigar)
        rlen = sum(n for op, n in ops if op in 'MDN=X')
        lclip = ops[0][1] if ops[0][0] == 'S' else 0
        rclip = ops[-1][1] if len(ops) > 1 and ops[-1][0] == 'S' else 0
        ustart, uend = pos - lclip, pos + rlen + rclip
        indels = read_indels(ref[ctg], pos, ops, t[9]) if ('I' in cigar or 'D' in cigar) else []
        for e in indels:
            if mapq > 0 and (ctg,) + e not in every:
                false += 1
        if ctg not in hom:
            continue
        v, s = hom[ctg], starts[ctg]
        i = bisect.bisect_left(s, ustart + FLANK)
        while i < len(v) and v[i][0] <= uend:
            e = v[i]
            end = e[0] + (-e[1] if e[1] < 0 else 0)
            if e[0] - FLANK >= ustart and end + FLANK <= uend:
                cov_all += 1
                hold_all += e in indels
                i += 1
                if mapq == 0:
                    continue
                covering += 1
                holding += e in indels
                equiv += e in indels or holds_equivalent(ref[ctg], pos, ops, t[9].upper(), e)
                if SHOW and e not in indels:
                    print(f'miss {ctg}:{e} {t[0]} {t[1]} {t[3]} {t[4]} {cigar} {indels}',
                          file=sys.stderr)
            else:
                i += 1
    name = sys.argv[3] if len(sys.argv) > 3 else 'reads'
    share = holding / covering if covering else 0.0
    print(f'name={name} covering={covering} holding={holding} share={share:.4f} false={false} '
          f'covering_all={cov_all} holding_all={hold_all} equiv={equiv} '
          f'share_equiv={equiv / covering if covering else 0.0:.4f}')


if __name__ == '__main__':
    main()
