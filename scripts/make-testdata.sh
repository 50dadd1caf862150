#!/usr/bin/env bash
# make-testdata.sh OUTDIR -- build the integration-test data set with real tools.
#
# Everything is made from the E. coli 536 genome in Debian's bowtie-examples
# with dwgsim (seeded), bwa mem and samtools, plus small hand-written SAM
# fixtures for the edge cases samtools mpileup must agree with us on, and a
# hand-made deep amplicon panel (aligned with bwa mem) for bcftools mpileup's.
#
# Idempotent: OUTDIR/.stamp holds the data set version; a complete set of the
# current version is left alone. The set is built in a temporary directory
# next to OUTDIR and moved into place only when complete, so an interrupted
# run never leaves half a data set. Takes about 15 s on 2 idle cores.
#
# Needs: samtools bwa dwgsim python3 gzip flock (util-linux).
# See the end of this file (and `cat OUTDIR/MANIFEST`) for what is made.
set -euo pipefail

VERSION="seqshard-testdata 7"
GENOME_GZ=${SS_ECOLI_FNA:-/usr/share/doc/bowtie/examples/genomes/NC_008253.fna.gz}

die() { echo "make-testdata: $*" >&2; exit 1; }

[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
OUT=$1
mkdir -p "$(dirname "$OUT")"
OUT=$(cd "$(dirname "$OUT")" && pwd)/$(basename "$OUT")

for t in samtools bwa dwgsim python3 gzip flock; do
    command -v "$t" >/dev/null \
        || die "$t not found; apt-get install samtools bwa dwgsim python3 util-linux"
done
[ -r "$GENOME_GZ" ] \
    || die "$GENOME_GZ not found; apt-get install bowtie-examples (or set SS_ECOLI_FNA)"

# One builder at a time (ctest fixtures, parallel make); later ones wait and
# then find the stamp.
. "$(dirname "$0")/lib-data.sh"
data_begin make-testdata "$OUT" "$VERSION"
echo "make-testdata: building $VERSION in $TMP"

# ---------------------------------------------------------------- reference
# ctgA  = genome[0, 60000)          reads
# ctgB  = genome[60000, 100000)     reads; 10 N bases at 30001-30010
# ctgEmpty = genome[2000000, 2005000)  no reads at all (for -aa)
# ctgTiny  = genome[3000000, 3001200)  reads, short contig
# Soft-masked (lower case) stretches test that ref bases keep their case
# and that matches are still found case-insensitively.
python3 - "$GENOME_GZ" <<'PY'
import gzip, sys
seq = ''.join(l.strip() for l in gzip.open(sys.argv[1], 'rt') if not l.startswith('>'))
contigs = [
    ('ctgA', seq[0:60000]),
    ('ctgB', seq[60000:100000]),
    ('ctgEmpty', seq[2000000:2005000]),
    ('ctgTiny', seq[3000000:3001200]),
]
# (contig, 0-based begin, end) made lower case; 41990-42010 straddles a
# multiple of both 2k and 7k, where shard boundaries may fall.
lower = [('ctgA', 20000, 20150), ('ctgA', 41990, 42010), ('ctgB', 10000, 10060),
         ('ctgEmpty', 100, 200), ('ctgTiny', 500, 540)]
d = dict(contigs)
for name, b, e in lower:
    s = d[name]
    d[name] = s[:b] + s[b:e].lower() + s[e:]
s = d['ctgB']
d['ctgB'] = s[:30000] + 'N' * 10 + s[30010:]

def write(path, names, upper=False):
    with open(path, 'w') as f:
        for n in names:
            s = d[n].upper() if upper else d[n]
            f.write('>%s\n' % n)
            for i in range(0, len(s), 60):
                f.write(s[i:i + 60] + '\n')

write('ref.fa', [n for n, _ in contigs])
# dwgsim simulates on every contig it is given: leave ctgEmpty out.
write('sim.fa', ['ctgA', 'ctgB', 'ctgTiny'], upper=True)
# The deep amplicon contig has a reference of its own, so the other data
# sets' headers and plans do not change with it.
d['ctgAmp'] = seq[4000000:4003000]
write('amp.fa', ['ctgAmp'], upper=True)
PY
samtools faidx ref.fa
bwa index ref.fa 2>bwa-index.log || { cat bwa-index.log >&2; die "bwa index failed"; }

# ---------------------------------------------------------------- simulated samples
# 2x150, ~25x, outer distance 300 so many mates overlap; SNPs and indels
# (rate 0.002, 20% indels); error rate rising along the read so base
# qualities span the -Q thresholds; 1% random reads (unmapped pairs).
# bwa mem -K fixes the batch size so the output does not depend on -t.
simulate() { # name seed
    local name=$1 seed=$2
    dwgsim -z "$seed" -1 150 -2 150 -C 25 -d 300 -s 50 -r 0.002 -R 0.2 -y 0.01 \
        -e 0.001-0.01 -E 0.002-0.02 -o 1 sim.fa "$name" >"$name.dwgsim.log" 2>&1 \
        || { cat "$name.dwgsim.log" >&2; die "dwgsim failed"; }
    bwa mem -t 2 -K 10000000 -R "@RG\tID:$name\tSM:$name\tPL:ILLUMINA" ref.fa \
        "$name.bwa.read1.fastq.gz" "$name.bwa.read2.fastq.gz" 2>"$name.bwa.log" \
        | samtools sort --no-PG -l 6 -o "$name.bam" - \
        || { tail "$name.bwa.log" >&2; die "bwa mem | samtools sort failed for $name"; }
    samtools index "$name.bam"
    rm -f "$name".bwa.read*.fastq.gz "$name.bwa.log"
}
simulate s1 11
simulate s2 22

# The empty contig must really be empty, or the -aa tests lose their point.
for s in s1 s2; do
    n=$(samtools idxstats "$s.bam" | awk '$1=="ctgEmpty"{print $3}')
    [ "$n" = 0 ] || die "$s.bam has $n reads on ctgEmpty; pick another slice"
done

# Same records, CSI index instead of BAI.
cp s1.bam s1csi.bam
samtools index -c s1csi.bam

# CRAM against ref.fa. htslib writes UR:<absolute path of the reference>
# into @SQ; strip it so nothing points into this temporary directory and
# the reference must be given explicitly (-f), as the tests expect.
to_cram() { # in.bam out.cram [--output-fmt-option OPT ...]
    local in=$1 out=$2
    shift 2
    samtools view -C -T ref.fa --no-PG "$@" -o "$out.tmp" "$in"
    set -- "$in" "$out"
    samtools view -H --no-PG "$2.tmp" | sed -e 's/\tUR:[^\t]*//' >"$2.hdr"
    samtools reheader --no-PG "$2.hdr" "$2.tmp" >"$2"
    rm -f "$2.tmp" "$2.hdr"
    samtools index "$2"
}
to_cram s1.bam s1.cram
# Many small containers of two slices each: shards cut between and inside
# containers (a CRAM shard owns whole containers, kernels/view/view_crai.c).
to_cram s1.bam s1.small.cram --output-fmt-option seqs_per_slice=100 \
    --output-fmt-option slices_per_container=2

# ---------------------------------------------------------------- edge-case fixtures
# Hand-made reads (SAM text from the reference) for what simulated data
# rarely hits. Positions below are 1-based. Boundaries: multiples of 2k, 7k
# and 50k (2000, 4000, 6000, 7000, 14000, 28000, 42000, 50000), where shards
# of --shard-size 2k/7k/50k may end if the planner cuts on base pairs.
python3 - <<'PY'
import random
rnd = random.Random(7)
ref = {}
name = None
for line in open('ref.fa'):
    line = line.strip()
    if line.startswith('>'):
        name = line[1:].split()[0]
        ref[name] = []
    else:
        ref[name].append(line)
ref = {k: ''.join(v) for k, v in ref.items()}
order = ['ctgA', 'ctgB', 'ctgEmpty', 'ctgTiny']

recs = []
COMP = {'A': 'T', 'C': 'G', 'G': 'C', 'T': 'A', 'N': 'N'}

def parse_cigar(c):
    out, num = [], ''
    for ch in c:
        if ch.isdigit():
            num += ch
        else:
            out.append((int(num), ch))
            num = ''
    return out

def ref_len(cig):
    return sum(n for n, op in parse_cigar(cig) if op in 'MDN=X')

def make_seq(ctg, pos, cig, subs):
    """Read bases for CIGAR at pos: reference bases (upper case) for M/=,
    a different base for X, seeded random bases for I/S."""
    r = ref[ctg].upper()
    p = pos - 1
    s = []
    for n, op in parse_cigar(cig):
        if op in 'M=':
            s.append(r[p:p + n]); p += n
        elif op == 'X':
            s.append(''.join('ACGT'[('ACGT'.find(b) + 1) % 4] for b in r[p:p + n])); p += n
        elif op in 'IS':
            s.append(''.join(rnd.choice('ACGT') for _ in range(n)))
        elif op in 'DN':
            p += n
    s = list(''.join(s))
    for off, b in subs.items():
        s[off] = b
    return ''.join(s)

def qual_string(n, q):
    if isinstance(q, int):
        return chr(q + 33) * n
    if q == 'vary':
        return ''.join(chr(rnd.randint(2, 41) + 33) for _ in range(n))
    return q

def add(qname, flag, ctg, pos, cig, mapq=60, rnext='*', pnext=0, tlen=0, subs=None,
        qual='vary', tags=('RG:Z:edge',), seq=None):
    if cig == '*':
        assert seq is not None
        sq = seq
    else:
        sq = seq or make_seq(ctg, pos, cig, subs or {})
    ql = qual_string(len(sq), qual)
    assert len(ql) == len(sq), (qname, cig)
    recs.append((order.index(ctg) if ctg != '*' else 99, pos, qname, flag, ctg, cig, mapq,
                 rnext, pnext, tlen, sq, ql, list(tags)))

def pair(qname, ctg, pos1, cig1, pos2, cig2, subs1=None, subs2=None, q1='vary', q2='vary',
         proper=True, mapq=60, tags=('RG:Z:edge',)):
    """A forward read 1 and reverse read 2 on one contig."""
    end2 = pos2 + ref_len(cig2) - 1
    tlen = end2 - pos1 + 1
    f1 = 1 | 32 | 64 | (2 if proper else 0)
    f2 = 1 | 16 | 128 | (2 if proper else 0)
    add(qname, f1, ctg, pos1, cig1, mapq, '=', pos2, tlen, subs1, q1, tags)
    add(qname, f2, ctg, pos2, cig2, mapq, '=', pos1, -tlen, subs2, q2, tags)

# A: deep piles, for -d 50/100/250 capping; some across shard boundaries.
for i in range(300):
    add('pileA_%03d' % i, 16 if i % 3 == 0 else 0, 'ctgA', 10001, '100M',
        subs={50: 'A' if ref['ctgA'][10050].upper() != 'A' else 'C'} if i % 7 == 0 else None)
for i in range(300):
    add('pileB_%03d' % i, 16 if i % 2 else 0, 'ctgA', 1951, '100M')
for i in range(260):   # staggered starts 13990..14009 across 14000
    add('pileC_%03d' % i, 16 if i % 4 == 0 else 0, 'ctgA', 13990 + i % 20, '100M')
for i in range(300):   # ends exactly at the end of ctgB (length 40000)
    add('pileD_%03d' % i, 0 if i % 5 else 16, 'ctgB', 39901, '100M')
for i in range(150):   # straddles 50000
    add('pileE_%03d' % i, 16 if i % 2 else 0, 'ctgA', 49951 + i % 3, '100M')

# B: soft and hard clips, including a clip hanging off the contig start.
for i, (pos, cig, fl) in enumerate([
        (3001, '5H10S80M5S', 0), (3001, '20S80M', 16), (3011, '80M20S', 0),
        (3021, '3H97M', 16), (3021, '97M3H', 0), (3031, '10S80M10S', 16),
        (3971, '30S70M', 0), (4001, '30S70M', 16), (3931, '70M30S', 0),
        (1, '20S80M', 0), (1, '100M', 16), (1, '5H95M', 0)]):
    add('clip_%02d' % i, fl, 'ctgA', pos, cig)

# C: indels and ref skips right at candidate shard boundaries b: the last
# matched base is b (deletion/insertion begins just after it), or b+1, or
# the deletion starts at b so it straddles the boundary.
k = 0
for ctg, b in [('ctgA', 2000), ('ctgA', 4000), ('ctgA', 6000), ('ctgA', 7000),
               ('ctgA', 8000), ('ctgA', 14000), ('ctgA', 21000), ('ctgA', 28000),
               ('ctgA', 42000), ('ctgA', 50000), ('ctgB', 2000), ('ctgB', 7000),
               ('ctgB', 14000)]:
    for j, cig in enumerate(['50M3D50M', '49M3D51M', '51M3D49M', '50M2I48M', '51M2I47M',
                             '49M2I49M', '50M500N50M', '50M1D50M']):
        for strand in (0, 16):
            add('bnd_%03d_%d' % (k, strand // 16), strand, ctg, b - 49, cig)
        k += 1

# D: reference skips, short and long (the long one spans many shards).
add('skip_1', 0, 'ctgA', 5001, '30M500N70M')
add('skip_2', 16, 'ctgA', 1501, '40M3000N60M')
add('skip_3', 0, 'ctgA', 30001, '50M20000N50M')
add('skip_4', 16, 'ctgA', 5101, '20M10N2D78M')

# E: contig ends: a deletion reaching the last base, a trailing deletion,
# a trailing insertion, and reads at the very first bases of ctgTiny.
add('end_1', 0, 'ctgTiny', 1101, '90M3D7M')
add('end_2', 16, 'ctgTiny', 1106, '90M5D')
add('end_3', 0, 'ctgTiny', 1101, '100M')
add('end_4', 16, 'ctgTiny', 1103, '98M2I')
add('end_5', 0, 'ctgTiny', 1, '100M')
add('end_6', 16, 'ctgTiny', 1, '2I98M')
add('end_7', 0, 'ctgA', 59901, '97M3D')

# F: overlapping proper pairs. Agreeing bases, disagreeing bases (with
# either mate having the higher quality, and equal), names chosen to hash
# differently, a deletion inside the overlap, and one pair across 28000.
names = ['ovA', 'frag/1', 'HWI-ST:8:1101:1234:5678', 'r0', 'zz_top', 'q', 'ERR000001.77',
         'mate_x9', 'Q', 'readname_with_a_rather_long_tail_0123456789']
rb = ref['ctgA'][16079].upper()
alt = 'G' if rb != 'G' else 'T'
for i, nm in enumerate(names):
    pair('agree:' + nm, 'ctgA', 16001 + i, '100M', 16051 + i, '100M')
    q1, q2 = [(40, 20), (20, 40), (30, 30), (13, 13), (2, 41)][i % 5]
    pair('disagree:' + nm, 'ctgA', 16001, '100M', 16051, '100M',
         subs1={79: alt}, q1=q1, q2=q2)
    pair('both_alt:' + nm, 'ctgA', 16002, '100M', 16052, '100M',
         subs1={78: alt}, subs2={28: alt}, q1=35, q2=25)
pair('ov_del', 'ctgA', 16101, '60M4D40M', 16131, '100M')
pair('ov_ins', 'ctgA', 16101, '100M', 16131, '30M3I67M')
for nm in names[:4]:
    pair('ov_bnd:' + nm, 'ctgA', 27931, '100M', 27981, '100M')
    pair('ov_bnd2:' + nm, 'ctgB', 6951, '100M', 6991, '100M')
# Same positions but not a proper pair, and mates on another contig:
# dropped unless -A (anomalous pairs).
pair('improper', 'ctgA', 16001, '100M', 16051, '100M', proper=False)
add('other_chr', 1 | 64, 'ctgA', 16011, '100M', rnext='ctgB', pnext=500)
add('other_chr', 1 | 128 | 16, 'ctgB', 500, '100M', rnext='ctgA', pnext=16011)

# G: unmapped reads placed at their mapped mate (flag 4 with RNAME/POS),
# and unmapped single reads with a position; plus unplaced ones at the end.
add('orphan_1', 1 | 8 | 64, 'ctgA', 17001, '100M', rnext='=', pnext=17001)
add('orphan_1', 1 | 4 | 128, 'ctgA', 17001, '*', 0, '=', 17001, seq='ACGT' * 25)
add('orphan_2', 1 | 8 | 128 | 16, 'ctgA', 17051, '100M', rnext='=', pnext=17051)
add('orphan_2', 1 | 4 | 64 | 32, 'ctgA', 17051, '*', 0, '=', 17051, seq='TTGCA' * 20)
add('unmapped_placed', 4, 'ctgA', 17101, '*', 0, seq='A' * 100)
add('unplaced_1', 4, '*', 0, '*', 0, seq='C' * 50)
add('unplaced_2', 4, '*', 0, '*', 0, seq='G' * 50)

# H: flags the default --ff drops (and --rf/--ff choose): secondary, QC
# fail, duplicate, supplementary, and combinations.
for i, fl in enumerate([256, 512, 1024, 2048, 256 | 16, 512 | 1024, 2048 | 16, 0, 16]):
    for j in range(3):
        add('flag_%d_%d' % (fl, j), fl, 'ctgA', 18001 + 10 * i + j, '100M',
            mapq=0 if fl & 256 else 50)

# I: mapping qualities 0, 255 (unknown), and around -q 20 / -C 50.
for mq in (0, 1, 15, 19, 20, 21, 30, 59, 60, 254, 255):
    for j in range(2):
        add('mapq_%d_%d' % (mq, j), 16 * j, 'ctgA', 19001 + j, '100M', mapq=mq,
            subs={40: 'A' if ref['ctgA'][19040 + j].upper() != 'A' else 'T'})

# J: low and extreme base qualities around -Q 13/20.
for q in (0, 1, 10, 12, 13, 14, 19, 20, 21, 30, 41, 60, 93):
    add('bq_%d' % q, 0, 'ctgA', 19501 + q, '100M', qual=q)
add('bq_mixed', 16, 'ctgA', 19601, '100M', qual='!#+-./0125?I~' * 7 + '!' * 9)

# K: soft-masked reference stretch 20001-20150 and 41991-42010.
for i in range(6):
    add('lower_%d' % i, 16 * (i % 2), 'ctgA', 19951 + 20 * i, '100M',
        subs={60: 'N', 61: 'A'} if i == 2 else None)
    add('lower42_%d' % i, 16 * (i % 2), 'ctgA', 41941 + 10 * i, '100M')

# L: N in reads, reads over the N stretch of ctgB (30001-30010).
add('nread_1', 0, 'ctgA', 21501, '100M', subs={0: 'N', 10: 'N', 99: 'N'})
add('nread_2', 16, 'ctgA', 21511, '100M', seq='N' * 100)
for i in range(4):
    add('over_n_%d' % i, 16 * (i % 2), 'ctgB', 29951 + 5 * i, '100M')

# M: leading/trailing insertions, adjacent insertion+deletion (htslib 1.17+
# merges them; 1.16 does not), =/X operators, padding.
add('ins_lead', 0, 'ctgA', 22001, '2I98M')
add('ins_trail', 16, 'ctgA', 22001, '98M2I')
add('clip_ins', 0, 'ctgA', 22011, '5S3I92M')
add('ins_del', 0, 'ctgA', 22001, '50M2I3D48M')
add('del_ins', 16, 'ctgA', 22001, '50M3D2I48M')
add('ins_skip', 0, 'ctgA', 22021, '40M2I30N58M')
add('eqx', 0, 'ctgA', 22501, '50=1X49=')
add('eqx_r', 16, 'ctgA', 22511, '30=2X68=')
add('pad', 0, 'ctgA', 22601, '50M2P2I48M')
add('long_del', 16, 'ctgA', 22701, '30M60D70M')

# N: optional fields present on some reads only (for --output-extra),
# one read without a read group.
add('tags_1', 0, 'ctgA', 23001, '100M', tags=('RG:Z:edge', 'AS:i:100', 'XS:i:20'))
add('tags_2', 16, 'ctgA', 23011, '100M', tags=('AS:i:87',))
add('tags_3', 0, 'ctgA', 23021, '100M', tags=())

recs.sort(key=lambda r: (r[0], r[1]))
with open('edge.sam', 'w') as f:
    f.write('@HD\tVN:1.6\tSO:coordinate\n')
    for n in order:
        f.write('@SQ\tSN:%s\tLN:%d\n' % (n, len(ref[n])))
    f.write('@RG\tID:edge\tSM:edge\tPL:ILLUMINA\n')
    for r in recs:
        (_, pos, qn, fl, ctg, cig, mq, rn, pn, tl, sq, ql, tags) = r
        f.write('\t'.join([qn, str(fl), ctg, str(pos), str(mq), cig, rn, str(pn), str(tl),
                           sq, ql] + tags) + '\n')
PY
# calmd adds NM/MD (from the reference) like an aligner would.
samtools sort --no-PG -o edge.sorted.bam edge.sam
samtools calmd --no-PG -b edge.sorted.bam ref.fa >edge.bam 2>calmd.log \
    || { cat calmd.log >&2; die "samtools calmd failed"; }
rm -f edge.sorted.bam calmd.log
samtools index edge.bam
to_cram edge.bam edge.cram
# Containers holding several references (and the unplaced reads): those
# contigs are read by region queries.
to_cram edge.bam edge.multi.cram --output-fmt-option seqs_per_slice=300 \
    --output-fmt-option multi_seq_per_slice=1

# ---------------------------------------------------------------- mpileup fixtures
# A deep amplicon panel on a contig of its own (amp.fa, ctgAmp, 3000 bp):
# tiled amplicons of 230-290 bp read 2x150 (mates overlap by 10-70 bp),
# 900-1300 pairs each, ~1650x: past 255 bases per sample at every site, where
# bcftools mpileup (with -d 10000) draws random numbers to subsample. Hand-made
# molecules carry SNPs and indels at 4-100%, several across 1000, 1500 and
# 2000, where shards of --shard-size 1k and 2k end; qualities fall along the
# read and errors follow them. bwa mem aligns them as it would a real panel.
python3 - <<'PY'
import math, random
rnd = random.Random(31)
ref = ''.join(l.strip() for l in open('amp.fa') if not l.startswith('>'))
L = len(ref)
COMP = str.maketrans('ACGTN', 'TGCAN')
def other(b, pref):
    return pref if b != pref else 'G' if pref != 'G' else 'C'
# (0-based position, reference bases replaced, replacement, fraction of molecules)
variants = [(212, 1, other(ref[212], 'T'), 0.5),      # SNP 213, het
            (480, 1, other(ref[480], 'A'), 1.0),      # SNP 481, hom
            (655, 1, other(ref[655], 'C'), 0.04),     # SNP 656, 4%
            (999, 2, ref[999], 0.5),                  # 1-bp deletion of 1001
            (1230, 1, ref[1230] + 'GAT', 0.3),        # 3-bp insertion after 1231
            (1494, 13, ref[1494], 0.25),              # 12-bp deletion 1496-1507
            (1501, 1, other(ref[1501], 'G'), 0.5),    # SNP 1502, where no deletion
            (1999, 1, ref[1999] + 'A', 0.5),          # 1-bp insertion after 2000
            (2003, 1, other(ref[2003], 'T'), 0.12),   # SNP 2004, 12%
            (2610, 4, ref[2610], 0.08)]               # 3-bp deletion 2612-2614, 8%

def molecule(beg, end):
    """One molecule of the amplicon [beg, end): each variant with its fraction,
    but none inside a deletion the molecule already has."""
    out, p = [], beg
    for pos, rl, alt, frac in variants:
        if p <= pos and pos + rl <= end and rnd.random() < frac:
            out.append(ref[p:pos])
            out.append(alt)
            p = pos + rl
    out.append(ref[p:end])
    return ''.join(out)

# A pool of quality strings (falling along the read, 1% very low) with their
# cumulative error probabilities: a read takes one and a Poisson number of
# errors placed by those probabilities, so errors follow the qualities.
POOL = []
for _ in range(1500):
    qs = []
    for i in range(150):
        q = max(2, min(41, int(rnd.gauss(38 - i / 12, 4))))
        qs.append(rnd.randint(2, 12) if rnd.random() < 0.01 else q)
    cum, c = [], 0.0
    for q in qs:
        c += 10 ** (-q / 10)
        cum.append(c)
    POOL.append((''.join(chr(q + 33) for q in qs), cum))

def sequenced(s):
    ql, cum = POOL[rnd.randrange(len(POOL))]
    lam, k, u = cum[len(s) - 1], 0, rnd.random()
    term = acc = math.exp(-lam)
    while u > acc:
        k += 1
        term *= lam / k
        acc += term
    if k:
        b = list(s)
        for i in rnd.choices(range(len(s)), cum_weights=cum[:len(s)], k=k):
            b[i] = rnd.choice([c for c in 'ACGT' if c != b[i]])
        s = ''.join(b)
    return s, ql[:len(s)]

amps, beg = [], 20
while beg + 230 < L - 20:
    amps.append((beg, min(beg + rnd.randint(230, 290), L - 20)))
    beg += rnd.randint(170, 210)
with open('amp_1.fq', 'w') as f1, open('amp_2.fq', 'w') as f2:
    for a, (beg, end) in enumerate(amps):
        for k in range(rnd.randint(900, 1300)):
            m = molecule(beg, end)
            s1, q1 = sequenced(m[:150])
            s2, q2 = sequenced(m[-150:].translate(COMP)[::-1])
            f1.write('@amp%02d_%04d\n%s\n+\n%s\n' % (a, k, s1, q1))
            f2.write('@amp%02d_%04d\n%s\n+\n%s\n' % (a, k, s2, q2))
PY
samtools faidx amp.fa
bwa index amp.fa 2>bwa-index.log || { cat bwa-index.log >&2; die "bwa index amp.fa failed"; }
bwa mem -t 2 -K 10000000 -R '@RG\tID:amp\tSM:amp\tPL:ILLUMINA' amp.fa amp_1.fq amp_2.fq \
    2>amp.bwa.log | samtools sort --no-PG -l 6 -o amp.bam - \
    || { tail amp.bwa.log >&2; die "bwa mem | samtools sort failed for amp"; }
samtools index amp.bam
rm -f amp_1.fq amp_2.fq amp.fa.amb amp.fa.ann amp.fa.bwt amp.fa.pac amp.fa.sa

# Samples and read groups, from s1 and s2 over ctgA:1-20000 (kept small: the
# mpileup tests run every case at three shard layouts):
#   rg2.bam      one BAM, read groups s1 (SM s1) and s2 (SM s2): two samples
#   rgsame.bam   the same records, both read groups of one sample (SM pool)
#   split1.bam   half of s1's pairs (samtools view -s 7.5), RG s1, SM split;
#   split2.bam   the other half, RG lane2, SM split: one sample in two files
samtools merge --no-PG -R ctgA:1-20000 -o rg2.bam s1.bam s2.bam
samtools view -H --no-PG rg2.bam | sed -e '/^@RG/s/\tSM:s[12]\t/\tSM:pool\t/' >rgsame.hdr
samtools reheader --no-PG rgsame.hdr rg2.bam >rgsame.bam
samtools view -b --no-PG -s 7.5 -U split2.tmp.bam -o split1.tmp.bam s1.bam ctgA:1-20000
samtools view -h --no-PG split1.tmp.bam | sed -e '/^@RG/s/\tSM:s1\t/\tSM:split\t/' \
    | samtools view -b --no-PG -o split1.bam -
samtools view -h --no-PG split2.tmp.bam \
    | sed -e '/^@RG/s/\tID:s1\tSM:s1\t/\tID:lane2\tSM:split\t/' -e 's/\tRG:Z:s1\(\t\|$\)/\tRG:Z:lane2\1/' \
    | samtools view -b --no-PG -o split2.bam -
rm -f rgsame.hdr split1.tmp.bam split2.tmp.bam
# edge.bam with BQ tags (samtools calmd -r: full BAQ), which BAQ uses as they are
# unless -E recomputes them.
samtools calmd --no-PG -r -b edge.bam ref.fa >edge.bq.bam 2>calmd.log \
    || { cat calmd.log >&2; die "samtools calmd -r failed"; }
for f in rg2 rgsame split1 split2 edge.bq; do samtools index "$f.bam"; done

# ---------------------------------------------------------------- error fixtures
samtools sort -n --no-PG -o unsorted.bam s2.bam     # queryname order, no index
cp s2.bam noindex.bam                               # valid BAM, no index
# Cut in the middle of the records, but keep a valid-looking index, so the
# failure shows up while reading, not while opening.
head -c $(( $(stat -c %s s1.bam) * 2 / 3 )) s1.bam >truncated.bam
cp s1.bam.bai truncated.bam.bai
# Damage that only reading finds: both pass quickcheck (EOF block present)
# and keep s1's index. garbled.bam has 200 bytes overwritten in the middle
# (a CRC error); cut.bam is the first 1.4 MB of s1.bam plus an EOF block.
cp s1.bam garbled.bam
printf '%*s' 200 '' | tr ' ' '\377' | dd of=garbled.bam bs=1 seek=1000000 conv=notrunc status=none
cp s1.bam.bai garbled.bam.bai  # after the damage: an index older than its file is refused
head -c 1400000 s1.bam >cut.bam
tail -c 28 s1.bam >>cut.bam                         # the BGZF EOF block
cp s1.bam.bai cut.bam.bai
printf 'this is not a BAM file\n' >notbam.bam
mkdir dir.bam                                       # a directory named like a BAM
# Header claims SO:coordinate but the records are not in order. (No index:
# samtools index refuses unsorted input, so neither unsorted file has one.)
samtools view -H --no-PG s2.bam >disorder.sam
samtools view --no-PG s2.bam | awk 'NR<=2000' | sort -t "$(printf '\t')" -k4,4nr -s >>disorder.sam
samtools view --no-PG -b -o disorder.bam disorder.sam
rm disorder.sam

# Sorted and indexed, but no @HD line (so no SO:coordinate), as many older
# BAMs are: samtools mpileup reads it, so must we.
samtools view -H --no-PG s2.bam | grep -v '^@HD' >nohd.sam
samtools view --no-PG s2.bam >>nohd.sam
samtools view --no-PG -b -o nohd.bam nohd.sam
rm nohd.sam
samtools index nohd.bam

# -l files: BED (0-based, half-open) and positions (1-based).
cat >regions.bed <<'EOF'
ctgA	0	150
ctgA	1990	2010
ctgA	9999	10005
ctgA	13995	14050
ctgA	16000	16200
ctgA	49990	50010
ctgA	59950	60000
ctgB	6990	7010
ctgB	29995	30015
ctgB	39990	40000
ctgEmpty	100	120
ctgTiny	1150	1200
EOF
cat >positions.txt <<'EOF'
ctgA	1
ctgA	2000
ctgA	2001
ctgA	10001
ctgA	10050
ctgA	14000
ctgA	16080
ctgA	19041
ctgA	20001
ctgA	60000
ctgB	7000
ctgB	30005
ctgEmpty	50
ctgTiny	1200
EOF
printf 'ctgA\t100\t200\nctgA\t300\t400\nctgA\tabc\t500\nctgB\t1\t10\n' >malformed.bed
# Read groups to drop with -G.
printf 's2\n' >exclude-rg.txt

# ---------------------------------------------------------------- validate
for f in s1.bam s2.bam s1csi.bam s1.cram s1.small.cram edge.bam edge.cram edge.multi.cram \
         noindex.bam unsorted.bam \
         disorder.bam nohd.bam amp.bam rg2.bam rgsame.bam split1.bam split2.bam edge.bq.bam; do
    samtools quickcheck "$f" || die "$f fails samtools quickcheck"
done
samtools quickcheck truncated.bam 2>/dev/null && die "truncated.bam passes quickcheck"
for f in garbled.bam cut.bam; do
    samtools quickcheck "$f" || die "$f should pass quickcheck (damage is inside)"
    samtools mpileup "$f" >/dev/null 2>&1 && die "samtools mpileup reads $f without error"
done
for f in s1.bam s2.bam edge.bam; do
    samtools view -c "$f" >/dev/null 2>err.log || { cat err.log >&2; die "$f unreadable"; }
    samtools mpileup -B -f ref.fa "$f" >/dev/null 2>err.log \
        || { cat err.log >&2; die "samtools mpileup fails on $f"; }
done
samtools mpileup -f ref.fa s1.cram edge.cram >/dev/null 2>err.log \
    || { cat err.log >&2; die "samtools mpileup fails on the CRAMs"; }
# The amplicons must stay deep: past 255 bases, where bcftools subsamples.
low=$(samtools depth -a -r ctgAmp:100-2900 amp.bam | awk '$3 < 300 { n++ } END { print n + 0 }')
[ "$low" = 0 ] || die "amp.bam has $low positions in ctgAmp:100-2900 below 300x"
[ "$(samtools view -H rgsame.bam | grep -c $'^@RG.*\tSM:pool\t')" = 2 ] \
    || die "rgsame.bam does not have two read groups of sample pool"
[ "$(samtools view -c split1.bam) $(samtools view -c split2.bam)" != "0 0" ] \
    || die "split1.bam and split2.bam are empty"
rm -f err.log
rm -f sim.fa ./*.log ./*.mutations.txt edge.sam

cat >MANIFEST <<'EOF'
ref.fa(.fai, bwa index)  ctgA 60000, ctgB 40000 (NNNNNNNNNN at 30001-30010), ctgEmpty 5000
                         (no reads), ctgTiny 1200; lower case at ctgA 20001-20150,
                         41991-42010, ctgB 10001-10060, ctgEmpty 101-200, ctgTiny 501-540
s1.bam(.bai)             dwgsim -z 11 2x150 ~25x, SNPs+indels, bwa mem, RG s1
s1.bam.mutations.vcf     the variants dwgsim put into s1 (s1.mutations.vcf)
s2.bam(.bai)             same with -z 22, RG s2
s1csi.bam(.csi)          s1.bam with a CSI index
s1.cram(.crai)           s1.bam as CRAM against ref.fa, no UR (needs -f)
s1.small.cram(.crai)     the same with ~90 containers of 2 slices of 100 reads
edge.bam(.bai)/edge.cram hand-made edge cases (see make-testdata.sh, section edge-case)
edge.multi.cram(.crai)   edge.bam as CRAM with multi-reference containers
unsorted.bam             s2 in queryname order, no index
disorder.bam             SO:coordinate header but records out of order, no index
nohd.bam(.bai)           s2.bam without an @HD line (sorted, indexed)
noindex.bam              s2.bam without an index
truncated.bam(.bai)      first 2/3 of s1.bam, with s1's index
garbled.bam(.bai)        s1.bam with 200 bytes overwritten at offset 1000000 (CRC error)
cut.bam(.bai)            first 1400000 bytes of s1.bam + EOF block, s1's index
notbam.bam               a text file
dir.bam/                 a directory
regions.bed positions.txt  -l files (BED 0-based; positions 1-based)
malformed.bed            line 3 has a non-numeric start
exclude-rg.txt           read group list for -G (s2)
amp.fa(.fai)             ctgAmp 3000 bp = genome[4000000, 4003000), the deep contig's reference
amp.bam(.bai)            hand-made amplicon panel on ctgAmp, 2x150, ~1650x (past 255 bases
                         per sample everywhere), bwa mem, RG/SM amp; SNPs at 213 (50%), 481
                         (100%), 656 (4%), 1502 (50% of molecules without the deletion
                         over it), 2004 (12%); deletions of 1001 (50%), 1496-1507 (25%),
                         2612-2614 (8%); insertions after 1231 (GAT, 30%), 2000 (A, 50%)
rg2.bam(.bai)            s1+s2 reads of ctgA:1-20000 in one BAM: RG s1 SM s1, RG s2 SM s2
rgsame.bam(.bai)         the same, both read groups SM pool (one sample)
split1.bam split2.bam    half of s1's pairs of ctgA:1-20000 each (RG s1 / RG lane2), both SM
                         split: one sample in two files (indexed)
edge.bq.bam(.bai)        edge.bam with BQ tags from samtools calmd -r (for -E)
EOF
mv s1.mutations.vcf s1.bam.mutations.vcf 2>/dev/null || true
rm -f s2.mutations.vcf

echo "$VERSION" >.stamp
# Swap into place: the old (stale or partial) set goes only after the new
# one is complete.
if [ -e "$OUT" ]; then
    mv "$OUT" "$OUT.old.$$"
fi
cd /
mv "$TMP" "$OUT"
trap - EXIT
rm -rf "$OUT.old.$$"
echo "make-testdata: done in $((SECONDS - T0)) s: $OUT"
