#!/usr/bin/env bash
# genomes_short.sh -- a whole small genome read with short overlapping pairs: 250 kb of
# E. coli 536 at ~15x per sample, 2x75 with outer distance 180, sample 3 haploid, and
# ctgNoReads, a 6 kb contig without reads (see lib_genomes.sh). Every record of seqshard
# mpileup (one sample and three, with and without -B, -Ob read back by bcftools view),
# --call -mv and --call -m -g 10, and seqshard pileup -f (BAQ on) against bcftools mpileup
# [| bcftools call] and samtools mpileup; the contig without reads under -aa too.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_mpileup.sh"
. "$(dirname "$0")/lib_genomes.sh"
ss_setup
mp_setup
gn_make short
gn_all short
R=(-f "$GN/ref.fa")
three=("$GN/short1.bam" "$GN/short2.bam" "$GN/short3.bam")
gn_pileup "pileup -aa -r ctgNoReads, three samples" -aa -r ctgNoReads "${R[@]}" "${three[@]}"
gn_call "--call -mv --ploidy 1, three samples" "-mv --ploidy 1" "${R[@]}" "${three[@]}"
ss_summary
exit $?
