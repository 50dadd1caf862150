#!/usr/bin/env bash
# bench-realign-ce.sh -- realign's read figures on a second data set, so its costs are
# not fitted to the E. coli benchmark alone: the first megabase of C. elegans that
# samtools' test data ships (7 contigs, /usr/share/samtools/test/mpileup/ce.fa),
# dwgsim 2x100 bp at 25x with more and longer indels than make-data.sh's (-r 0.002
# -R 0.3 -X 0.4) and another error profile, bwa mem. Prints scripts/realign-eval.py's
# line for bwa's BAM and for the realigned one (docs/benchmarks.md#realign).
#
# Environment: SEQSHARD [<repo>/build/seqshard], SS_CE_FA [the path above], TMPDIR.
# About a minute on 2 cores. Needs: samtools bwa dwgsim python3.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/.." && pwd)
SEQSHARD=${SEQSHARD:-$SRC/build/seqshard}
CE=${SS_CE_FA:-/usr/share/samtools/test/mpileup/ce.fa}

die() { echo "bench-realign-ce: $*" >&2; exit 1; }
[ -x "$SEQSHARD" ] || die "SEQSHARD=$SEQSHARD is not executable; build seqshard first"
[ -r "$CE" ] || die "$CE not found; apt-get install samtools (its test data), or set SS_CE_FA"
for t in samtools bwa dwgsim python3; do
    command -v "$t" >/dev/null || die "$t not found"
done
W=$(mktemp -d "${TMPDIR:-/tmp}/bench-realign-ce.XXXXXX")
trap 'rm -rf "$W"' EXIT
cd "$W"

awk '/^>/ {print $1; next} {print}' "$CE" >ref.fa
samtools faidx ref.fa
bwa index ref.fa 2>bwa-index.log || die "bwa index failed"
dwgsim -z 7 -1 100 -2 100 -C 25 -d 350 -s 40 -r 0.002 -R 0.3 -X 0.4 -y 0 \
    -e 0.002-0.015 -E 0.003-0.025 -o 1 ref.fa sim >dwgsim.log 2>&1 || die "dwgsim failed"
bwa mem -t 2 -K 10000000 -R '@RG\tID:ce\tSM:ce' ref.fa sim.bwa.read1.fastq.gz \
    sim.bwa.read2.fastq.gz 2>bwa.log | samtools sort -o ce.bam - || die "bwa mem | sort failed"
samtools index ce.bam
"$SEQSHARD" realign --quiet -f ref.fa -o realigned.bam ce.bam
EVAL=$SRC/scripts/realign-eval.py
samtools view ce.bam | python3 "$EVAL" ref.fa sim.mutations.vcf bwa
samtools view realigned.bam | python3 "$EVAL" ref.fa sim.mutations.vcf realigned
