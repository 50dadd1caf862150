#!/usr/bin/env bash
# genomes_celegans.sh -- a whole small genome of another kind than the E. coli the other tests
# use: C. elegans (220 kb of chromosome I at ~30x per sample, its 5 kb MtDNA at ~300x per
# sample, a 5 kb contig X without reads; three samples; see lib_genomes.sh). Every record of
# seqshard mpileup (one sample and three, with and without -B, -Ob read back by bcftools
# view), --call -mv and --call -m -g 10, and seqshard pileup -f (BAQ on) against bcftools
# mpileup [| bcftools call] and samtools mpileup; the deep MtDNA at -d 10000 too.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_mpileup.sh"
. "$(dirname "$0")/lib_genomes.sh"
ss_setup
mp_setup
gn_make celegans
gn_all celegans
R=(-f "$GN/ref.fa")
three=("$GN/celegans1.bam" "$GN/celegans2.bam" "$GN/celegans3.bam")
gn_mpileup "mpileup -d 10000 -r MtDNA, three samples" -d 10000 -r MtDNA "${R[@]}" "${three[@]}"
gn_call "--call -mv -d 10000 -r MtDNA, three samples" "-mv" -d 10000 -r MtDNA "${R[@]}" "${three[@]}"
gn_pileup "pileup -d 10000 -r MtDNA, three samples" -d 10000 -r MtDNA "${R[@]}" "${three[@]}"
# the contig without reads: -aa prints each of its positions
gn_pileup "pileup -aa -r X (no reads)" -aa -r X "${R[@]}" "$GN/celegans1.bam"
ss_summary
exit $?
