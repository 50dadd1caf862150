#!/usr/bin/env bash
# genomes_lowcov.sh -- a whole small genome at low coverage with many errors: 300 kb of
# E. coli 536 at ~5x per sample, error rates 1-4%, mutation rate 0.004 with half of them
# indels, three samples (see lib_genomes.sh). Every record of seqshard mpileup (one sample
# and three, with and without -B, -Ob read back by bcftools view), --call -mv and --call -m
# -g 10, and seqshard pileup -f (BAQ on) against bcftools mpileup [| bcftools call] and
# samtools mpileup.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_mpileup.sh"
. "$(dirname "$0")/lib_genomes.sh"
ss_setup
mp_setup
gn_make lowcov
gn_all lowcov
R=(-f "$GN/ref.fa")
three=("$GN/lowcov1.bam" "$GN/lowcov2.bam" "$GN/lowcov3.bam")
# every position, covered or not, and the --call -m -g blocks across three samples
gn_pileup "pileup -aa, three samples" -aa "${R[@]}" "${three[@]}"
gn_call "--call -m -g 2,5 three samples" "-m -g 2,5" -a FORMAT/DP "${R[@]}" "${three[@]}"
ss_summary
exit $?
