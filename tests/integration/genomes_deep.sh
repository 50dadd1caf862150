#!/usr/bin/env bash
# genomes_deep.sh -- a whole small genome at high coverage with a deep plasmid: 150 kb of
# E. coli 536, sample 1 at ~100x and samples 2 and 3 at ~20x, and pDeep, a 4 kb contig at
# ~3000x and ~800x (see lib_genomes.sh). Every record of seqshard mpileup (one sample and
# three, with and without -B, -Ob read back by bcftools view), --call -mv and --call -m
# -g 10, and seqshard pileup -f (BAQ on) against bcftools mpileup [| bcftools call] and
# samtools mpileup; pDeep at -d 10000 (no subsampling to 250, but bcftools' random draws
# past 255 bases per sample) too.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_mpileup.sh"
. "$(dirname "$0")/lib_genomes.sh"
ss_setup
mp_setup
gn_make deep
gn_all deep
R=(-f "$GN/ref.fa")
three=("$GN/deep1.bam" "$GN/deep2.bam" "$GN/deep3.bam")
gn_mpileup "mpileup -d 10000 -r pDeep, one sample" -d 10000 -r pDeep "${R[@]}" "$GN/deep1.bam"
gn_mpileup "mpileup -d 10000 -r pDeep, three samples" -d 10000 -r pDeep "${R[@]}" "${three[@]}"
gn_call "--call -mv -d 10000 -r pDeep, three samples" "-mv" -d 10000 -r pDeep "${R[@]}" "${three[@]}"
gn_call "--call -m -g 10 -d 10000 -r pDeep" "-m -g 10" -a FORMAT/DP -d 10000 -r pDeep "${R[@]}" \
    "$GN/deep1.bam"
gn_pileup "pileup -d 10000 -r pDeep, three samples" -d 10000 -r pDeep "${R[@]}" "${three[@]}"
ss_summary
exit $?
