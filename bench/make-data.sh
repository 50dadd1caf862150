#!/usr/bin/env bash
# make-data.sh [DATADIR] -- benchmark input: the whole E. coli 536 genome
# (Debian bowtie-examples, 4.94 Mb), dwgsim 2x150 read pairs at 30x with SNPs
# and indels, bwa mem -t 2, samtools sort/index, and a CRAM copy.
#
# DATADIR defaults to bench/data. Idempotent: DATADIR/.stamp holds the
# version; a complete set is left alone. Built in a temporary directory and
# moved into place, so an interrupted run leaves nothing half made. About
# 4 minutes on 2 cores. Needs: samtools bwa dwgsim python3 flock.
set -euo pipefail

VERSION="seqshard-bench-data 1"
GENOME_GZ=${SS_ECOLI_FNA:-/usr/share/doc/bowtie/examples/genomes/NC_008253.fna.gz}
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-$HERE/data}
THREADS=${SS_BENCH_THREADS:-2}

die() { echo "make-data: $*" >&2; exit 1; }
for t in samtools bwa dwgsim python3 flock; do
    command -v "$t" >/dev/null || die "$t not found; apt-get install samtools bwa dwgsim python3"
done
[ -r "$GENOME_GZ" ] || die "$GENOME_GZ not found; apt-get install bowtie-examples"

mkdir -p "$(dirname "$OUT")"
OUT=$(cd "$(dirname "$OUT")" && pwd)/$(basename "$OUT")
. "$(dirname "$0")/../scripts/lib-data.sh"
data_begin make-data "$OUT" "$VERSION"

# One contig named by its accession (the FASTA header is a gi|...| string).
python3 - "$GENOME_GZ" <<'PY'
import gzip, sys
seq = ''.join(l.strip() for l in gzip.open(sys.argv[1], 'rt') if not l.startswith('>'))
with open('ref.fa', 'w') as f:
    f.write('>NC_008253.1 Escherichia coli 536, complete genome\n')
    for i in range(0, len(seq), 60):
        f.write(seq[i:i + 60] + '\n')
PY
samtools faidx ref.fa
echo "make-data: bwa index"
bwa index ref.fa 2>bwa-index.log || { cat bwa-index.log >&2; die "bwa index failed"; }

echo "make-data: dwgsim 2x150 30x"
dwgsim -z 30 -1 150 -2 150 -C 30 -d 400 -s 50 -r 0.001 -R 0.2 -y 0.005 \
    -e 0.001-0.01 -E 0.002-0.02 -o 1 ref.fa sim >dwgsim.log 2>&1 \
    || { tail dwgsim.log >&2; die "dwgsim failed"; }

echo "make-data: bwa mem -t $THREADS | samtools sort"
bwa mem -t "$THREADS" -K 10000000 -R '@RG\tID:ecoli\tSM:ecoli536\tPL:ILLUMINA' ref.fa \
    sim.bwa.read1.fastq.gz sim.bwa.read2.fastq.gz 2>bwa.log \
    | samtools sort --no-PG -@ "$THREADS" -m 1G -o ecoli30x.bam - \
    || { tail bwa.log >&2; die "bwa mem | samtools sort failed"; }
samtools index ecoli30x.bam
rm -f sim.bwa.read*.fastq.gz

echo "make-data: CRAM"
samtools view -@ "$THREADS" -C -T ref.fa --no-PG -o ecoli30x.cram.tmp ecoli30x.bam
samtools view -H --no-PG ecoli30x.cram.tmp | sed -e 's/\tUR:[^\t]*//' >cram.hdr
samtools reheader --no-PG cram.hdr ecoli30x.cram.tmp >ecoli30x.cram
rm -f ecoli30x.cram.tmp cram.hdr
samtools index ecoli30x.cram

samtools quickcheck ecoli30x.bam ecoli30x.cram || die "quickcheck failed"
samtools flagstat ecoli30x.bam >flagstat.txt
mv sim.mutations.vcf mutations.vcf
rm -f ./*.log sim.mutations.txt
echo "$VERSION" >.stamp

if [ -e "$OUT" ]; then mv "$OUT" "$OUT.old.$$"; fi
cd /
mv "$TMP" "$OUT"
trap - EXIT
rm -rf "$OUT.old.$$"
echo "make-data: done in $((SECONDS - T0)) s: $OUT ($(du -sh "$OUT" | cut -f1))"
