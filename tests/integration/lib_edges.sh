# shellcheck shell=bash
# lib_edges.sh -- the hand-made data of the contig-edge tests; source after lib.sh.
#
# edges_make DIR writes DIR/ref.fa(.fai) and DIR/in.bam(.bai), on a random reference:
#   lead   2500 bp, tid 0: coverage along it, reads running past its end (mismatches
#          there, so the columns past the end have ALT alleles), a stack at POS 1
#   one    1 bp: ten reads at POS 1 that overhang it (matching its base, so its SNP
#          record has no ALT and the indel record at 1 carries values from before),
#          soft-clipped ones, and reads with a deletion and an insertion after base 1
#   two    2 bp, three 3 bp: the same, plus reads at POS 2 and 3 and one starting past
#          the end (kept without -f, dropped with it)
#   plas   2000 bp at about 300x, 150 bp reads, a stack at POS 1 and reads past the end:
#          more than 255 reads over the columns past its end
#   tail   1 bp, the last contig: reads at POS 1 that overhang it
# Fails the test (exit 1) when python3 or samtools cannot make them.
edges_make() {
    local d=$1
    command -v python3 >/dev/null || { echo "FAIL setup: python3 not found"; exit 1; }
    python3 - "$d" <<'EOF' || { echo "FAIL setup: could not write the inputs"; exit 1; }
import random, re, sys
d = sys.argv[1]
rng = random.Random(8)
lens = [("lead", 2500), ("one", 1), ("two", 2), ("three", 3), ("plas", 2000), ("tail", 1)]
seqs = {c: "".join(rng.choice("ACGT") for _ in range(n)) for c, n in lens}
with open(d + "/ref.fa", "w") as f:
    for c, _ in lens:
        f.write(">%s\n" % c + "".join(seqs[c][i:i + 60] + "\n" for i in range(0, len(seqs[c]), 60)))
recs = []
def read(name, ctg, pos, cigar, flag=0, err=0.02):
    ref = seqs[ctg]
    n = sum(int(k) for k, op in re.findall(r"(\d+)([MIS=X])", cigar))
    bases = "".join(ref[p] if p < len(ref) and rng.random() > err else rng.choice("ACGT")
                    for p in range(pos - 1, pos - 1 + n))
    qual = "".join(chr(33 + rng.randint(20, 40)) for _ in range(n))
    recs.append((ctg, pos, "%s\t%d\t%s\t%d\t60\t%s\t*\t0\t0\t%s\t%s" %
                 (name, flag, ctg, pos, cigar, bases, qual)))
def tiny(c, n):
    for i in range(10):
        read("%s_a%d" % (c, i), c, 1, "30M", 16 if i % 2 else 0, err=0)
    for i in range(3):
        read("%s_s%d" % (c, i), c, 1, "%dM%dS" % (n, 30 - n))
        read("%s_t%d" % (c, i), c, 1, "4S26M", 16)
    read(c + "_del", c, 1, "1M2D20M")
    read(c + "_ins", c, 1, "1M2I20M")
    for p in range(2, n + 1):
        for i in range(4):
            read("%s_p%d_%d" % (c, p, i), c, p, "25M", 16 if i % 2 else 0)
    if n > 1:
        read(c + "_beyond", c, n + 3, "20M")
for c, n in lens:
    if c == "lead":
        for i in range(8):
            read("lead_h%d" % i, c, 1, "60M")
        for i in range(0, n - 100, 23):
            read("lead_a%d" % i, c, i + 1, "70M", 16 if i % 3 else 0)
        for i in range(30):
            read("lead_p%d" % i, c, n - 60 + 2 * i, "80M", 16 if i % 2 else 0, err=0.2)
    elif c == "plas":
        for i in range(6):
            read("plas_h%d" % i, c, 1, "150M")
        for i in range(4000):
            read("plas_r%d" % i, c, rng.randint(1, n - 10), "150M", rng.choice([0, 16]))
    else:
        tiny(c, n)
order = [c for c, _ in lens]
with open(d + "/in.sam", "w") as f:
    for c, n in lens:
        f.write("@SQ\tSN:%s\tLN:%d\n" % (c, n))
    for r in sorted(recs, key=lambda r: (order.index(r[0]), r[1])):
        f.write(r[2] + "\n")
EOF
    "$SAMTOOLS" faidx "$d/ref.fa" && "$SAMTOOLS" view -b -o "$d/in.bam" "$d/in.sam" &&
        "$SAMTOOLS" index "$d/in.bam" ||
        { echo "FAIL setup: samtools could not index the inputs"; exit 1; }
}
