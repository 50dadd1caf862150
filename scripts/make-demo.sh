#!/usr/bin/env bash
# make-demo.sh [DEMODIR] -- (re)build the small demo data committed in demo/:
# a 20 kb slice of the E. coli 536 genome (Debian bowtie-examples), ~20x
# dwgsim 2x150 read pairs with SNPs and indels, bwa mem, samtools sort/index.
# Deterministic (seeded dwgsim, bwa mem -K, no @PG from samtools), so a
# rebuild gives the same files. Needs: samtools bwa dwgsim python3.
set -euo pipefail

GENOME_GZ=${SS_ECOLI_FNA:-/usr/share/doc/bowtie/examples/genomes/NC_008253.fna.gz}
SRC=$(cd "$(dirname "$0")/.." && pwd)
DEMO=${1:-$SRC/demo}
BEG=1000000   # 0-based start of the slice in NC_008253.1
LEN=20000
SEED=536

die() { echo "make-demo: $*" >&2; exit 1; }
for t in samtools bwa dwgsim python3; do
    command -v "$t" >/dev/null || die "$t not found; apt-get install samtools bwa dwgsim python3"
done
[ -r "$GENOME_GZ" ] || die "$GENOME_GZ not found; apt-get install bowtie-examples"

mkdir -p "$DEMO"
DEMO=$(cd "$DEMO" && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$TMP"

python3 - "$GENOME_GZ" "$BEG" "$LEN" <<'PY'
import gzip, sys
seq = ''.join(l.strip() for l in gzip.open(sys.argv[1], 'rt') if not l.startswith('>'))
beg, n = int(sys.argv[2]), int(sys.argv[3])
s = seq[beg:beg + n]
with open('ref.fa', 'w') as f:
    f.write('>ecoli536 NC_008253.1:%d-%d\n' % (beg + 1, beg + n))
    for i in range(0, len(s), 60):
        f.write(s[i:i + 60] + '\n')
PY
samtools faidx ref.fa
bwa index ref.fa 2>/dev/null
dwgsim -z "$SEED" -1 150 -2 150 -C 20 -d 350 -s 50 -r 0.002 -R 0.2 -y 0 \
    -e 0.001-0.01 -E 0.002-0.02 -o 1 ref.fa demo >dwgsim.log 2>&1 \
    || { cat dwgsim.log >&2; die "dwgsim failed"; }
bwa mem -t 2 -K 10000000 -R '@RG\tID:demo\tSM:demo\tPL:ILLUMINA' ref.fa \
    demo.bwa.read1.fastq.gz demo.bwa.read2.fastq.gz 2>bwa.log \
    | samtools sort --no-PG -o demo.bam - || { tail bwa.log >&2; die "bwa mem | sort failed"; }
samtools index demo.bam
samtools quickcheck demo.bam
samtools mpileup -f ref.fa demo.bam >/dev/null 2>&1 || die "samtools mpileup fails on demo.bam"

cp ref.fa ref.fa.fai demo.bam demo.bam.bai "$DEMO/"
KIB=$(( ($(stat -c %s ref.fa) + $(stat -c %s demo.bam)) / 1024 ))
NREADS=$(samtools view -c demo.bam)
V_DWGSIM=$({ dwgsim 2>&1 || true; } | awk '/^Version/{print $2}')
V_BWA=$({ bwa 2>&1 || true; } | awk '/^Version/{print $2}')
V_SAMTOOLS=$(samtools --version | awk 'NR==1{print $2}')
cat >"$DEMO/README.md" <<EOF
# Demo data

Small enough to commit (about $KIB KiB), real enough to show what
\`seqshard pileup\` does:

    seqshard pileup -f demo/ref.fa -@ 2 --shard-size 5k demo/demo.bam | head
    samtools mpileup -f demo/ref.fa demo/demo.bam | head      # the same bytes

| file | what |
|---|---|
| ref.fa, ref.fa.fai | contig \`ecoli536\`: E. coli 536 (NC_008253.1) bases $((BEG + 1))-$((BEG + LEN)) |
| demo.bam, demo.bam.bai | $NREADS reads: ~20x 2x150 pairs, coordinate-sorted, BAI index |

## How it was made

\`scripts/make-demo.sh\` made these files and rebuilds them identically
(seeded simulation, fixed bwa batch size, no samtools @PG lines). Tools:
Debian 12's dwgsim $V_DWGSIM, bwa $V_BWA, samtools $V_SAMTOOLS.

1. Reference: bases [$BEG, $((BEG + LEN))) (0-based) of
   \`$GENOME_GZ\` (package \`bowtie-examples\`), written as
   \`ref.fa\` with the name \`ecoli536\`, then \`samtools faidx ref.fa\`.
2. Reads (20x, SNPs and indels at rate 0.002, 20% of them indels):

       dwgsim -z $SEED -1 150 -2 150 -C 20 -d 350 -s 50 -r 0.002 -R 0.2 -y 0 \\
           -e 0.001-0.01 -E 0.002-0.02 -o 1 ref.fa demo

3. Alignment, sorting, index:

       bwa index ref.fa
       bwa mem -t 2 -K 10000000 -R '@RG\tID:demo\tSM:demo\tPL:ILLUMINA' ref.fa \\
           demo.bwa.read1.fastq.gz demo.bwa.read2.fastq.gz \\
           | samtools sort --no-PG -o demo.bam -
       samtools index demo.bam
EOF
echo "make-demo: wrote $(du -sk "$DEMO" | cut -f1) KiB in $DEMO"
