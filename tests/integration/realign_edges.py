#!/usr/bin/env python3
"""realign_edges.py OUTDIR -- hand-made inputs for pileup_realign_edges.sh.

Writes OUTDIR/ref.fa (three random contigs of 3-5 kb, one per case) and one SAM per
case, with reads as a bwa-style aligner might place them around a true indel:
reads spanning the indel carry it in their CIGAR; reads that start or end just
past it have those bases soft-clipped or aligned ungapped with mismatches, and
`seqshard realign` gives them the indel and a new POS or CIGAR. Reads clipped
at their start share the clip point in twos, as bwa mem clips them: realign
scores a read that starts after its window's targets only when the clip point
is a target, and a clip point is one only when two reads share it. Every base
is Q30 and every MAPQ 60, so a few reads meet realignment's LOD.
OUTDIR/targets.tsv names the reads that must move: case, name, flag.

  case1 (c1): equal-bp shards of a 3 kb contig put edges on multiples of 100
              (100 bp shards), at 1000 and 2000 (1 kb): two clipped reads move
              left over 1000 onto a 3 bp deletion, a read aligned with
              mismatches moves right over 2000 onto a 20 bp insertion.
  case2 (c2): eight reads stacked at 1000 under a small -d, and two clipped
              reads that move from after the stack to before it, so the cap
              keeps fewer stacked reads; eight more at 2000 and a read that
              moves from before them to after them, so it keeps more; three
              at 2560, where a read ends once realigned, over the edge 2600.
  case3 (c3): a pair whose mates swap their order (the reverse mate came first
              until the forward one moves before it), so the other mate keeps
              the overlap's base qualities, across the edge at 1000; a pair
              that overlaps only once realignment extends mate 1's end; a pair
              whose mate 1 gets a deletion ending at the edge 1500, where mate
              2 starts; a pair whose mate 2 starts 1.2 kb into a long deletion
              of mate 1.
"""
import os
import random
import sys

CONTIG_LEN = {'c1': 3000, 'c2': 3000, 'c3': 5000}
READ_LEN = 50
QUAL = '?' * READ_LEN  # Q30
INS = 'GATTACAGATTACAGATTAC'  # the inserted bases, 20 bp


def random_contig(rng, length):
    return ''.join(rng.choice('ACGT') for _ in range(length))


def fix_deletion_context(ref, pos, length):
    """Make ref[pos, pos+length) a deletion no left shift can move: the base
    before it differs from its last base."""
    s = list(ref)
    if s[pos - 1] == s[pos + length - 1]:
        s[pos - 1] = 'A' if s[pos + length - 1] != 'A' else 'C'
    return ''.join(s)


def fix_insertion_context(ref, pos, ins):
    """Make the insertion of ins before ref[pos] one no left shift can move."""
    s = list(ref)
    if s[pos - 1] == ins[-1]:
        s[pos - 1] = 'A' if ins[-1] != 'A' else 'C'
    return ''.join(s)


class Sam:
    def __init__(self, contigs):
        self.contigs = contigs
        self.lines = []

    def add(self, name, flag, ctg, pos0, cigar, seq, mpos0=-1, tlen=0):
        assert len(seq) == READ_LEN, (name, len(seq))
        rnext = '=' if mpos0 >= 0 else '*'
        self.lines.append('\t'.join(map(str, [
            name, flag, ctg, pos0 + 1, 60, cigar, rnext, mpos0 + 1, tlen, seq, QUAL])))

    def write(self, path):
        with open(path, 'w') as f:
            f.write('@HD\tVN:1.6\tSO:unsorted\n')
            for name, seq in self.contigs:
                f.write(f'@SQ\tSN:{name}\tLN:{len(seq)}\n')
            f.write('@RG\tID:edges\tSM:edges\n')
            for line in self.lines:
                f.write(line + '\tRG:Z:edges\n')


def clipped_reads(sam, ctg, ref, d, dlen, lefts, tag, targets, case):
    """Reads truly starting lefts[i] bases before the deletion ref[d, d+dlen),
    aligned after it with those bases soft-clipped; all must move left."""
    for i, left in enumerate(lefts):
        seq = ref[d - left:d] + ref[d + dlen:d + dlen + READ_LEN - left]
        sam.add(f'{tag}{i}', 0, ctg, d + dlen, f'{left}S{READ_LEN - left}M', seq)
        targets.append((case, f'{tag}{i}', 0))


def deletion_reads(sam, ctg, ref, d, dlen, starts, tag):
    """Reads carrying the deletion ref[d, d+dlen) in their CIGAR, from each start."""
    for i, st in enumerate(starts):
        left = d - st
        seq = ref[st:d] + ref[d + dlen:d + dlen + READ_LEN - left]
        sam.add(f'{tag}{i}', 0, ctg, st, f'{left}M{dlen}D{READ_LEN - left}M', seq)


def insertion_reads(sam, ctg, ref, i, ins, starts, tag):
    """Reverse reads carrying the insertion of ins before ref[i] in their CIGAR."""
    for k, st in enumerate(starts):
        left, right = i - st, READ_LEN - (i - st) - len(ins)
        seq = ref[st:i] + ins + ref[i:i + right]
        sam.add(f'{tag}{k}', 16, ctg, st, f'{left}M{len(ins)}I{right}M', seq)


def ungapped_mover(sam, ctg, ref, i, ins, left, name, targets, case):
    """A read truly starting left bases before the insertion, aligned ungapped
    (50M) so that its bases after the insertion match: its first
    left + len(ins) bases mismatch. Realigned, it moves right by len(ins)."""
    seq = ref[i - left:i] + ins + ref[i:i + READ_LEN - left - len(ins)]
    sam.add(name, 0, ctg, i - left - len(ins), f'{READ_LEN}M', seq)
    targets.append((case, name, 0))


def case1(ref, sam, targets):
    # A 3 bp deletion at 1004: reads whose true starts are 994 and 992 are
    # clipped 10S40M and 12S38M at 1007 (after the deletion); realigned to
    # 994 and 992 (10M3D40M, 12M3D38M) they cross 1000 to the left.
    deletion_reads(sam, 'c1', ref, 1004, 3, [975, 980, 990], 'c1_del')
    clipped_reads(sam, 'c1', ref, 1004, 3, [10, 12], 'c1_left', targets, 'case1')
    # A 20 bp insertion before 2010: a read whose true start is 2005 is aligned
    # ungapped at 1985, 50M; realigned to 2005 (5M20I25M) it crosses 2000 to
    # the right.
    insertion_reads(sam, 'c1', ref, 2010, INS, [1990, 1995, 2000], 'c1_ins')
    ungapped_mover(sam, 'c1', ref, 2010, INS, 5, 'c1_right', targets, 'case1')


def stack(sam, ctg, ref, pos, tag, n=8):
    for k in range(n):
        sam.add(f'{tag}{k}', 0, ctg, pos, f'{READ_LEN}M', ref[pos:pos + READ_LEN])


def case2(ref, sam, targets):
    # Eight reads start at 1000 (c2_stack0-7, reference bases). A 3 bp
    # deletion at 1005: c2_mover0/1 truly start at 995 and 993 but are clipped
    # at 1008; realigned they start before the stack and hold places in the
    # pileup when the stack's reads arrive under -d: fewer stacked reads kept.
    stack(sam, 'c2', ref, 1000, 'c2_stack')
    deletion_reads(sam, 'c2', ref, 1005, 3, [960, 965], 'c2_del')
    clipped_reads(sam, 'c2', ref, 1005, 3, [10, 12], 'c2_mover', targets, 'case2')
    # The other way at 2000 (c2_later0-7): c2_right starts at 1985 until it
    # moves to 2005 onto a 20 bp insertion before 2010: more stacked reads kept.
    stack(sam, 'c2', ref, 2000, 'c2_later')
    insertion_reads(sam, 'c2', ref, 2010, INS, [1990, 1995], 'c2_ins')
    ungapped_mover(sam, 'c2', ref, 2010, INS, 5, 'c2_right', targets, 'case2')
    # A read that realignment makes end where a stack starts: htslib still holds
    # a read when the reads starting at its end arrive, so it counts against -d
    # there. c2_last0-2 start at 2560; c2_end0 (50M at 2510) ends at 2560, and so
    # does c2_end1 once realigned onto a 3 bp deletion at 2547 (40M10S at 2507,
    # then 40M3D10M). The shard edge 2600 falls inside the stack.
    stack(sam, 'c2', ref, 2560, 'c2_last', 3)
    deletion_reads(sam, 'c2', ref, 2547, 3, [2520, 2525], 'c2_del3_')
    sam.add('c2_end0', 0, 'c2', 2510, '50M', ref[2510:2560])
    sam.add('c2_end1', 0, 'c2', 2507, '40M10S', ref[2507:2547] + ref[2550:2560])
    targets.append(('case2', 'c2_end1', 0))


def pair(sam, name, m1, cig1, seq1, m2, cig2, seq2, end2):
    """A proper FR pair, mate 1 forward at m1, mate 2 reverse at m2 ending at end2."""
    tlen = end2 - m1  # 5' to 5': mate 1's POS to mate 2's end
    sam.add(name, 99, 'c3', m1, cig1, seq1, m2, tlen)
    sam.add(name, 147, 'c3', m2, cig2, seq2, m1, -tlen)


def case3(ref, sam, targets):
    # A 3 bp deletion at 1002. The pair c3_pair: mate 1 truly starts at 992
    # but is clipped 10S40M at 1005; mate 2 carries the deletion, 5M3D45M at
    # 997. Of overlapping mates, samtools gives the summed base qualities to
    # the one that entered first or second by a hash of the name, the other
    # 0: realigned, mate 1 starts at 992, enters first, and the other mate
    # keeps the qualities. c3_clip0 shares mate 1's clip point.
    d = 1002
    deletion_reads(sam, 'c3', ref, d, 3, [980, 985], 'c3_del')
    clipped_reads(sam, 'c3', ref, d, 3, [12], 'c3_clip', targets, 'case3')
    pair(sam, 'c3_pair', d + 3, '10S40M', ref[d - 10:d] + ref[d + 3:d + 43],
         d - 5, '5M3D45M', ref[d - 5:d] + ref[d + 3:d + 48], d + 48)
    targets.append(('case3', 'c3_pair', 99))
    # A 3 bp deletion at 2002. c3_pair2's mate 1 ends 10 bases past it, clipped
    # 40M10S at 1962, so it stops short of mate 2 (50M at 2007); realigned
    # (40M3D10M) it reaches 2015, and the mates overlap on 2007-2014.
    d = 2002
    deletion_reads(sam, 'c3', ref, d, 3, [1975, 1980], 'c3_del2_')
    pair(sam, 'c3_pair2', d - 40, '40M10S', ref[d - 40:d] + ref[d + 3:d + 13],
         d + 5, '50M', ref[d + 5:d + 55], d + 55)
    targets.append(('case3', 'c3_pair2', 99))
    # A 3 bp deletion at 1497, ending at the shard edge 1500. c3_pair3's mate
    # 1 is clipped 40M10S at 1457 and realigned 40M3D10M; mate 2 starts at
    # 1500 (50M), the first read there. samtools prints the deletion of mate 1
    # at 1497-1499 with the quality of its base at 1500, which mate 2's overlap
    # changes: mate 2 enters (it is the first read past those columns) before
    # they are printed, so the shard ending at 1500 must read it too.
    d = 1497
    deletion_reads(sam, 'c3', ref, d, 3, [1470, 1475], 'c3_del3_')
    pair(sam, 'c3_pair3', d - 40, '40M10S', ref[d - 40:d] + ref[d + 3:d + 13],
         d + 3, '50M', ref[d + 3:d + 53], d + 53)
    targets.append(('case3', 'c3_pair3', 99))
    # Not realigned (a 1200 bp deletion spans more than realign takes): c3_pair4's
    # mate 1 is 20M1200D30M at 3100 and mate 2 starts at 4320, on mate 1's base
    # after the deletion: the first read after 3100, so a shard ending inside
    # the deletion must look more than a kilobase past its end for it.
    pair(sam, 'c3_pair4', 3100, '20M1200D30M', ref[3100:3120] + ref[4320:4350],
         4320, '50M', ref[4320:4370], 4370)


def main():
    out = sys.argv[1]
    rng = random.Random(20240515)
    refs = {name: random_contig(rng, CONTIG_LEN[name]) for name in ('c1', 'c2', 'c3')}
    for ctg, pos, length in (('c1', 1004, 3), ('c2', 1005, 3), ('c2', 2547, 3),
                             ('c3', 1002, 3), ('c3', 1497, 3), ('c3', 2002, 3)):
        refs[ctg] = fix_deletion_context(refs[ctg], pos, length)
    for ctg in ('c1', 'c2'):
        refs[ctg] = fix_insertion_context(refs[ctg], 2010, INS)
    contigs = sorted(refs.items())
    with open(os.path.join(out, 'ref.fa'), 'w') as f:
        for name, seq in contigs:
            f.write(f'>{name}\n')
            for k in range(0, len(seq), 60):
                f.write(seq[k:k + 60] + '\n')
    targets = []
    for name, make in (('case1', case1), ('case2', case2), ('case3', case3)):
        sam = Sam(contigs)
        make(refs[name.replace('case', 'c')], sam, targets)
        sam.write(os.path.join(out, f'{name}.sam'))
    with open(os.path.join(out, 'targets.tsv'), 'w') as f:
        for t in targets:
            f.write('\t'.join(map(str, t)) + '\n')


main()
