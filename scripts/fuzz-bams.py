#!/usr/bin/env python3
"""fuzz-bams.py -- small adversarial BAMs for the whole-tool differential fuzzer.

tests/integration/mpileup_fuzz.sh runs `seqshard mpileup` against `bcftools mpileup`
(and `| bcftools call`) and `seqshard pileup` against `samtools mpileup` on what this
script writes. Everything is deterministic from --seed (python's own random module; no
third-party modules); samtools sorts and indexes, dwgsim and bwa make the real reads.

    scripts/fuzz-bams.py --seed 17 --out DIR [--scale 1.0] [--real]

writes into DIR:
  ref.fa (+ .fai)   2-4 contigs of 2-20 kb (times --scale): random bases with long
                    homopolymers, short tandem repeats of unit 2-6, N runs, soft-masked
                    (lower-case) stretches, a few IUPAC codes; one contig (any) gets no reads
  s1.bam .. sK.bam  K = 1-3 files, one sample each (now and then one sample in two files),
                    coordinate-sorted and indexed: reads of length 1-300 and a few of
                    1,000-5,000, reads at the contigs' first and last bases; SNPs and
                    indels planted as variants (indels mostly in the repeats), random
                    errors, indels at read starts and ends, long insertions and deletions,
                    soft and hard clips, =/X and N operations, N bases, qualities 0-93
                    (some reads one quality, some '*'), MAPQ 0-255, one deep locus (up to
                    a few thousand reads, sometimes in two files), duplicates,
                    secondary/supplementary/QC-fail flags, proper, improper and
                    overlapping pairs, unmapped mates, unpaired reads, 1-3 read groups
                    per file (a few reads without RG or with one the header lacks), NM
                    tags (mostly right, some wrong or missing: NMBZ), a few BQ tags (BAQ
                    already applied).
                    Half the seeds have a theme, one feature at an extreme: indels (ten
                    times as many), short (reads of 1-40), lowq (qualities 0-10), clips,
                    overlap (every pair overlapping), mapq (0, 1, 255), errors
  case.txt          the seed, its theme and the shape of the case (samples, contigs, reads)
With --real instead: real.fa (a repeat-rich reference) and real1.bam (and real2.bam, a
second sample), dwgsim pairs of 70-250 bases with indels aligned by `bwa mem`, sorted
and indexed.
"""
import argparse
import os
import random
import subprocess
import sys

BASES = "ACGT"
# A theme pushes a case to one extreme (drawn from its own stream, so half the seeds make
# the same case as without themes): see THEMES.
THEMES = ("indels", "short", "lowq", "clips", "overlap", "mapq", "errors")
THEME = None
ODD = random.Random(0)  # its own stream for the odd read groups, so the rest stays as it was


def die(msg):
    sys.stderr.write("fuzz-bams.py: %s\n" % msg)
    sys.exit(1)


def run(cmd, **kw):
    try:
        subprocess.run(cmd, check=True, **kw)
    except (OSError, subprocess.CalledProcessError) as e:
        die("'%s' failed: %s; is it installed and on PATH?" % (" ".join(cmd), e))


# ---- reference --------------------------------------------------------------------------
def make_contig(rng, length):
    """A contig and its repeats [(start, end, unit)]."""
    seq, reps = [], []
    n = 0
    while n < length:
        r = rng.random()
        if r < 0.05:  # long homopolymer
            chunk = rng.choice(BASES) * rng.randint(6, 45)
            reps.append((n, n + len(chunk), 1))
        elif r < 0.13:  # short tandem repeat, unit 2-6
            unit = "".join(rng.choice(BASES) for _ in range(rng.randint(2, 6)))
            chunk = unit * rng.randint(3, 20)
            reps.append((n, n + len(chunk), len(unit)))
        elif r < 0.14:  # N run
            chunk = "N" * rng.randint(1, 80)
        elif r < 0.15:  # soft-masked stretch
            chunk = "".join(rng.choice("acgt") for _ in range(rng.randint(5, 60)))
        elif r < 0.152:  # an IUPAC code
            chunk = rng.choice("RYKMSWBDHV")
        else:
            chunk = "".join(rng.choice(BASES) for _ in range(rng.randint(10, 150)))
        seq.append(chunk)
        n += len(chunk)
    s = "".join(seq)[:length]
    reps = [(a, min(b, length), u) for a, b, u in reps if a < length - 1]
    return s, reps


# ---- variants ---------------------------------------------------------------------------
def make_variants(rng, ref, reps, nsamples):
    """Per contig: {pos: (kind, payload, [allele frequency per sample])}."""
    var = {}
    L = len(ref)
    for _ in range(max(1, L // 300)):  # SNPs
        p = rng.randrange(L)
        b = ref[p].upper()
        alt = rng.choice([x for x in BASES if x != b])
        var[p] = ("snp", alt, [rng.choice([0, 0.5, 0.5, 1.0, 0.2]) for _ in range(nsamples)])
    for a, b, u in reps:  # indels in repeats: a unit more or less
        if rng.random() < 0.5 and b - a > u:
            k = rng.randint(1, 3)
            if rng.random() < 0.5:
                payload = ("del", min(u * k, b - a - 1))
            else:
                payload = ("ins", ref[a:a + u].upper() * k)
            pos = a + rng.randrange(0, max(1, (b - a) // u)) * u  # anywhere in the repeat
            var[pos] = ("indel", payload,
                        [rng.choice([0, 0.5, 0.5, 1.0, 0.3]) for _ in range(nsamples)])
    for _ in range(max(1, L // 2000)):  # indels elsewhere, some long
        p = rng.randrange(1, L - 1)
        if rng.random() < 0.5:
            payload = ("del", rng.randint(1, 30))
        else:
            payload = ("ins", "".join(rng.choice(BASES) for _ in range(rng.randint(1, 60))))
        var[p] = ("indel", payload, [rng.choice([0, 0.5, 1.0]) for _ in range(nsamples)])
    return var


# ---- reads ------------------------------------------------------------------------------
def rand_qual(rng, prof):
    if prof >= 10:  # one quality for the whole read: 0, 1 or 93 ...
        return prof - 10
    if prof == 0:
        return rng.randint(0, 93)
    if prof == 1:
        return rng.choice((2, 11, 25, 37, 41))
    return max(0, min(93, int(rng.gauss(32, 8))))


def make_read(rng, ref, var, si, start, qlen):
    """Walk the reference from start; returns (cigar ops, seq) or None."""
    L = len(ref)
    ops, seq = [], []

    def add(op, n):
        if n <= 0:
            return
        if ops and ops[-1][0] == op:
            ops[-1][1] += n
        else:
            ops.append([op, n])

    def rb():
        return rng.choice(BASES)

    if rng.random() < (0.6 if THEME == "clips" else 0.12):  # leading soft clip
        n = rng.randint(1, min(40, max(1, qlen // 2)))
        seq.extend(rb() for _ in range(n))
        add("S", n)
    r = rng.random()
    if r < 0.03:  # insertion at the read's start
        n = rng.randint(1, 8)
        seq.extend(rb() for _ in range(n))
        add("I", n)
    p = start
    if 0.03 <= r < 0.04:  # deletion at the read's start (POS is the deletion's)
        n = rng.randint(1, 4)
        add("D", n)
        p += n
    err = rng.choice((0.002, 0.01, 0.01, 0.05))
    nrate = rng.choice((0, 0, 0.002, 0.05))
    indel_rate = rng.choice((0, 0.001, 0.004))
    if THEME == "indels":
        indel_rate *= 10
        indel_rate += 0.02
    elif THEME == "errors":
        err, nrate = err + 0.1, nrate + 0.03
    eqx = rng.random() < 0.03  # =/X instead of M
    skip_rate = 0.004 if rng.random() < 0.02 else 0  # N (reference skip) operations
    aligned = 0

    def match(b, p):
        add(("=" if b == ref[p].upper() else "X") if eqx else "M", 1)
    while len(seq) < qlen and p < L:
        v = var.get(p)
        if v is not None and aligned > 0 and rng.random() < v[2][si]:
            if v[0] == "snp":
                seq.append(v[1])
                match(v[1], p)
                p += 1
                aligned += 1
                continue
            kind, x = v[1]
            if kind == "del" and p + x < L - 1:
                add("D", x)
                p += x
            elif kind == "ins":
                ins = x[: max(1, qlen - len(seq))]
                seq.extend(ins)
                add("I", len(ins))
            v = None
        if aligned > 0 and rng.random() < indel_rate:  # noise indel, now and then long
            if rng.random() < 0.5:
                n = rng.randint(1, 6) if rng.random() < 0.95 else rng.randint(80, 300)
                if p + n < L - 1:
                    add("D", n)
                    p += n
            else:
                n = rng.randint(1, 6) if rng.random() < 0.8 else rng.randint(20, 120)
                n = min(n, max(1, qlen - len(seq)))
                seq.extend(rb() for _ in range(n))
                add("I", n)
            if len(seq) >= qlen or p >= L:
                break
        if aligned > 0 and rng.random() < skip_rate:
            n = rng.randint(20, 400)
            if p + n < L - 1:
                add("N", n)
                p += n
        b = ref[p].upper()
        if b not in BASES:
            b = rb()
        u = rng.random()
        if u < err:
            b = rng.choice([x for x in BASES if x != b])
        elif u < err + nrate:
            b = "N"
        seq.append(b)
        match(b, p)
        p += 1
        aligned += 1
    if aligned == 0:
        return None
    # trailing events: the last ops must leave at least one M
    while ops[-1][0] not in "M=X":
        op, n = ops.pop()
        if op in "IS":
            del seq[-n:]
    r = rng.random()
    if r < 0.03 and p < L - 5:  # deletion at the read's end
        add("D", rng.randint(1, 4))
    elif r < 0.06:  # insertion at the read's end
        n = rng.randint(1, 10)
        seq.extend(rb() for _ in range(n))
        add("I", n)
    if rng.random() < 0.12:  # trailing soft clip
        n = rng.randint(1, 40)
        seq.extend(rb() for _ in range(n))
        add("S", n)
    if rng.random() < 0.03:  # hard clips
        ops.insert(0, ["H", rng.randint(1, 50)])
    if rng.random() < 0.03:
        ops.append(["H", rng.randint(1, 50)])
    return ops, "".join(seq), start


def ref_span(ops):
    return sum(n for op, n in ops if op in "MD=XN")


def nm_of(ops, seq, ref, start):
    """The edit distance as aligners write NM: mismatches and indel bases."""
    nm, q, p = 0, 0, start
    for op, n in ops:
        if op in "M=X":
            nm += sum(1 for i in range(n) if seq[q + i] != ref[p + i].upper())
            q += n
            p += n
        elif op == "I":
            nm += n
            q += n
        elif op == "S":
            q += n
        elif op == "D":
            nm += n
            p += n
        elif op == "N":
            p += n
    return nm


def extra_tags(rng, ops, seq, qual, ref, start):
    """NM (mostly right, sometimes wrong or missing) and now and then a BQ tag."""
    tags = []
    u = rng.random()
    if u < 0.8:
        tags.append("NM:i:%d" % nm_of(ops, seq, ref, start))
    elif u < 0.9:
        tags.append("NM:i:%d" % rng.choice((0, 1, 7, 40, 300, 70000)))
    if qual != "*" and rng.random() < 0.05:  # a BQ tag as htslib's BAQ writes it, or odd
        if rng.random() < 0.8:
            tags.append("BQ:Z:" + "".join(chr(64 + rng.randint(0, max(0, ord(c) - 33)))
                                          for c in qual))
        else:
            tags.append("BQ:Z:" + "".join(chr(rng.randint(33, 126)) for _ in qual))
    return tags


def cigar_str(ops):
    return "".join("%d%s" % (n, op) for op, n in ops)


def make_sample(rng, contigs, variants, si, nreads, deep, out_sam, sample, nrg, sm, empty):
    rgs = ["%s.rg%d" % (sample, i + 1) for i in range(nrg)]
    recs = []
    qname = [0]

    def new_name():
        qname[0] += 1
        return "%s:r%06d" % (sample, qname[0])

    def qlen_pick():
        if THEME == "short":
            return rng.randint(1, 40)
        u = rng.random()
        if u < 0.04:
            return rng.randint(1, 30)
        if u < 0.5:
            return rng.randint(1, 300)
        return rng.choice((50, 75, 100, 101, 150, 151, 250))

    def one(ci, start, qlen, flag_base, name, rg, mate=None):
        ref = contigs[ci][1]
        r = make_read(rng, ref, variants[ci], si, start, qlen)
        if r is None:
            return None
        ops, seq, start = r
        if start + ref_span(ops) > len(ref):
            return None
        prof = rng.choice((0, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 10, 11, 103))
        if THEME == "lowq":
            prof = rng.choice((10, 11, 12, 13, 15, 20))
        if rng.random() < 0.01:
            qual = "*"
        else:
            qual = "".join(chr(33 + rand_qual(rng, prof)) for _ in seq)
        u = rng.random()
        mapq = 60 if u < 0.6 else (rng.randint(0, 255) if u < 0.9 else rng.choice((0, 255, 1)))
        if THEME == "mapq":
            mapq = rng.choice((0, 1, 255, rng.randint(0, 255)))
        flag = flag_base
        u = rng.random()
        if u < 0.03:
            flag |= 0x400
        elif u < 0.05:
            flag |= 0x100
        elif u < 0.07:
            flag |= 0x800
        elif u < 0.09:
            flag |= 0x200
        if rng.random() < 0.5:
            flag |= 0x10
        return [name, flag, contigs[ci][0], start + 1, mapq, cigar_str(ops), seq, qual,
                "\t".join(["RG:Z:" + rg] + extra_tags(rng, ops, seq, qual, ref, start)),
                start, start + ref_span(ops)]

    read_contigs = [i for i in range(len(contigs)) if i != empty]  # one gets no reads

    def emit_unpaired(ci, start, qlen):
        rec = one(ci, start, qlen, 0, new_name(), rng.choice(rgs))
        if rec:
            recs.append(rec + ["*", 0, 0])

    def emit_pair(ci, start, qlen):
        ref = contigs[ci][1]
        ins = rng.choice((rng.randint(qlen // 2 + 1, 2 * qlen + 1), rng.randint(150, 700)))
        if THEME == "overlap":
            ins = rng.randint(qlen // 2 + 1, qlen + 1)
        mstart = start + max(0, ins - qlen)
        if mstart >= len(ref) - 2:
            return emit_unpaired(ci, start, qlen)
        name, rg = new_name(), rng.choice(rgs)
        proper = 0x2 if rng.random() < 0.85 else 0
        a = one(ci, start, qlen, 0x1 | proper | 0x40, name, rg)
        b = one(ci, mstart, rng.choice((qlen, qlen_pick())), 0x1 | proper | 0x80, name, rg)
        if a is None and b is None:
            return None
        if a is None or b is None or rng.random() < 0.03:  # mate unmapped
            x = a or b
            x[1] |= 0x8
            x[1] &= ~0x2
            recs.append(x + ["=", x[3], 0])
            if rng.random() < 0.5:  # the unmapped mate, placed at its mate's position
                um = [x[0], 0x1 | 0x4 | (0xc0 ^ (x[1] & 0xc0)) | (0x20 if x[1] & 0x10 else 0),
                      x[2], x[3], 0, "*",
                      "".join(rng.choice(BASES) for _ in range(30)), "#" * 30,
                      x[8].split("\t")[0],
                      x[9], x[9], "=", x[3], 0]
                recs.append(um)
            return None
        # forward/reverse as a proper pair mostly
        if rng.random() < 0.9:
            a[1] &= ~0x10
            b[1] |= 0x10
        if a[1] & 0x10:
            b[1] |= 0x20
        if b[1] & 0x10:
            a[1] |= 0x20
        lo, hi = min(a[9], b[9]), max(a[10], b[10])
        tlen = hi - lo
        recs.append(a + ["=", b[3], tlen if a[9] <= b[9] else -tlen])
        recs.append(b + ["=", a[3], -tlen if a[9] <= b[9] else tlen])

    for _ in range(nreads):
        ci = rng.choice(read_contigs)
        L = len(contigs[ci][1])
        qlen = qlen_pick()
        start = rng.randrange(0, max(1, L - 20))
        if THEME == "overlap" or rng.random() < 0.5:
            emit_pair(ci, start, qlen)
        else:
            emit_unpaired(ci, start, qlen)
    for ci in read_contigs:  # reads at the contigs' first and last bases
        L = len(contigs[ci][1])
        for _ in range(rng.randint(0, 4)):
            emit_unpaired(ci, rng.randint(0, 2), qlen_pick())
        for _ in range(rng.randint(0, 4)):
            qlen = qlen_pick()
            emit_unpaired(ci, max(0, L - qlen + rng.randint(0, 3)), qlen)
    for _ in range(rng.randint(1, 6)):  # long reads
        ci = rng.choice(read_contigs)
        L = len(contigs[ci][1])
        qlen = min(rng.randint(1000, 5000), L - 10)
        emit_unpaired(ci, rng.randrange(0, max(1, L - qlen)), qlen)
    if deep:  # one deep locus
        ci, locus, n = deep
        for _ in range(n):
            qlen = rng.choice((100, 150, rng.randint(20, 200)))
            start = max(0, locus - rng.randint(0, qlen))
            if rng.random() < 0.5:
                emit_pair(ci, start, qlen)
            else:
                emit_unpaired(ci, start, qlen)

    with open(out_sam, "w") as f:
        f.write("@HD\tVN:1.6\tSO:unsorted\n")
        for name, seq in contigs:
            f.write("@SQ\tSN:%s\tLN:%d\n" % (name, len(seq)))
        for rg in rgs:
            f.write("@RG\tID:%s\tSM:%s\tPL:ILLUMINA\tLB:%s.lib\n" % (rg, sm, rg))
        for r in recs:
            tags = r[8]
            u = ODD.random()  # a read without RG, or with one the header lacks
            if u < 0.005:
                tags = tags.split("\t", 1)[1] if "\t" in tags else ""
            elif u < 0.01:
                tags = "RG:Z:%s.nosuch" % sample + tags[tags.index("\t"):] if "\t" in tags \
                    else "RG:Z:%s.nosuch" % sample
            f.write("\t".join(str(x) for x in (r[0], r[1], r[2], r[3], r[4], r[5], r[11],
                                               r[12], r[13], r[6], r[7]))
                    + ("\t" + tags if tags else "") + "\n")
    return len(recs)


def write_fasta(path, contigs):
    with open(path, "w") as f:
        for name, seq in contigs:
            f.write(">%s\n" % name)
            for i in range(0, len(seq), 60):
                f.write(seq[i:i + 60] + "\n")
    run(["samtools", "faidx", path])


def sort_index(sam, bam):
    run(["samtools", "sort", "--no-PG", "-o", bam, sam], stderr=subprocess.DEVNULL)
    run(["samtools", "index", bam])
    os.unlink(sam)


def synthetic(args):
    global THEME
    trng = random.Random("theme %d" % args.seed)
    if trng.random() < 0.5:
        THEME = trng.choice(THEMES)
    global ODD
    ODD = random.Random("odd %d" % args.seed)
    rng = random.Random(args.seed)
    ncontigs = rng.randint(2, 4)
    contigs, reps = [], []
    for i in range(ncontigs):
        L = max(500, int(rng.randint(2000, 20000) * args.scale))
        s, r = make_contig(rng, L)
        contigs.append(("ctg%d" % (i + 1), s))
        reps.append(r)
    nsamples = rng.randint(1, 3)
    variants = [make_variants(rng, s, r, nsamples) for (_, s), r in zip(contigs, reps)]
    write_fasta(os.path.join(args.out, "ref.fa"), contigs)
    empty = rng.randrange(ncontigs)
    deep_ci = rng.choice([i for i in range(ncontigs) if i != empty])
    deep = (deep_ci, rng.randrange(200, len(contigs[deep_ci][1]) - 200),
            int(rng.choice((200, 600, 1500, 3000)) * args.scale))
    info = ["seed %d%s" % (args.seed, ", theme %s" % THEME if THEME else ""),
            "contigs %s" % " ".join("%s:%d" % (n, len(s)) for n, s in contigs),
            "deep locus %s:%d x%d (s1.bam)" % (contigs[deep[0]][0], deep[1] + 1, deep[2]),
            "no reads on %s" % contigs[empty][0]]
    # now and then one sample spread over two files (bcftools then draws at 255 bases
    # and more even at the default -d), and the deep locus in a second file too
    split = nsamples >= 2 and rng.random() < 0.3
    deep2 = rng.random() < 0.3
    for si in range(nsamples):
        sample = "S%d" % (si + 1)
        if split and si == 1:
            sample = "S1"
        total_len = sum(len(s) for i, (_, s) in enumerate(contigs) if i != empty)
        nreads = int(total_len / 100 * rng.choice((0.3, 1, 3, 8)))
        sam = os.path.join(args.out, "s%d.sam" % (si + 1))
        n = make_sample(rng, contigs, variants, si, nreads,
                        deep if si == 0 or (si == 1 and deep2) else None, sam,
                        "S%d" % (si + 1), rng.randint(1, 3), sample, empty)
        sort_index(sam, os.path.join(args.out, "s%d.bam" % (si + 1)))
        info.append("s%d.bam: sample %s, %d records%s" % (
            si + 1, sample, n, ", deep locus too" if si == 1 and deep2 else ""))
    with open(os.path.join(args.out, "case.txt"), "w") as f:
        f.write("\n".join(info) + "\n")


def real(args):
    """dwgsim reads with indels on a repeat-rich reference, aligned by bwa mem."""
    rng = random.Random(args.seed)
    contigs = []
    for i in range(2):
        s, _ = make_contig(rng, int(rng.randint(8000, 20000) * args.scale))
        contigs.append(("chr%d" % (i + 1), s.upper().replace("N", "A")
                        .translate(str.maketrans("RYKMSWBDHV", "ACGTACGTAC"))))
    fa = os.path.join(args.out, "real.fa")
    write_fasta(fa, contigs)
    run(["bwa", "index", fa], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    nfiles = rng.randint(1, 2)
    info = ["seed %d real: dwgsim -z %d.., bwa mem" % (args.seed, args.seed)]
    for k in range(nfiles):
        pre = os.path.join(args.out, "dw%d" % (k + 1))
        rlen = rng.choice((70, 100, 150, 250))
        npairs = int(rng.choice((2000, 4000, 8000)) * args.scale)
        run(["dwgsim", "-z", str(args.seed * 10 + k), "-N", str(npairs), "-1", str(rlen),
             "-2", str(rlen), "-d", str(rng.choice((250, 400, 600))), "-r", "0.01",
             "-R", "0.4", "-X", "0.5", "-e", "0.01", "-E", "0.02", "-y", "0", "-o", "1",
             fa, pre], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        sam = os.path.join(args.out, "real%d.sam" % (k + 1))
        with open(sam, "w") as f:
            run(["bwa", "mem", "-t", "1", "-R", "@RG\\tID:dw%d\\tSM:real%d" % (k + 1, k + 1),
                 fa, pre + ".bwa.read1.fastq.gz", pre + ".bwa.read2.fastq.gz"],
                stdout=f, stderr=subprocess.DEVNULL)
        sort_index(sam, os.path.join(args.out, "real%d.bam" % (k + 1)))
        for ext in (".bwa.read1.fastq.gz", ".bwa.read2.fastq.gz", ".bfast.fastq.gz",
                    ".mutations.txt", ".mutations.vcf"):
            if os.path.exists(pre + ext):
                os.unlink(pre + ext)
        info.append("real%d.bam: sample real%d, %d pairs of %d bases" % (
            k + 1, k + 1, npairs, rlen))
    with open(os.path.join(args.out, "case.txt"), "w") as f:
        f.write("\n".join(info) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--out", required=True, help="output directory (created)")
    ap.add_argument("--scale", type=float, default=1.0,
                    help="contig lengths and read counts times this [1.0]")
    ap.add_argument("--real", action="store_true", help="dwgsim + bwa mem reads instead")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    (real if args.real else synthetic)(args)


if __name__ == "__main__":
    main()
