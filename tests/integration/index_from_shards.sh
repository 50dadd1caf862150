#!/usr/bin/env bash
# index_from_shards.sh -- the output's index merged from the shards' pieces, not
# read back (framework/out/shard_index.h): every index has the bytes that
# samtools index (-c, -b, and .crai), tabix -s1 -b2 -e2 (--csi) and bcftools index (-t)
# write for the same file: BAM copied block for block and re-encoded (view, and realign's
# moved records), SAM.gz (.csi, and .bai when named so), CRAM (the .crai's gzip bytes too;
# from BAM, and from a CRAM whose containers hold several contigs), text .gz from pileup
# and depth, BCF and VCF.gz from mpileup (gVCF blocks, --call); at 1-3 threads
# and shard sizes of 2 kb, 7 kb and whole contigs, over contigs with
# no reads (empty shards), unplaced reads at the end and regions; with shard
# output leaving memory mid-line (SEQSHARD_SPILL_AT); and the .bai limit of
# 2^29 bp still refused with samtools' reason.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_index.sh"
ss_setup
W=$SS_WORK

# Each thread count and each shard size, not every pair: the pieces' bytes follow the
# shard edges, and the threads only the order in which shards finish. 2 kb shards (the
# most edges) run at one and three threads; whole contigs at several threads are
# mpi_index_from_shards.sh's (two ranks, -@2, 1m).
idx_matrix one "1" "2000 1m"
idx_matrix one "2" "7000"
idx_matrix one "3" "2000 7000"

# Records that move (realign's step sorts them into their shard): the same bytes.
idx_check realign_csi csi "$W/ra.bam" "$W/ra.bam.csi" \
    realign -f "$REF" -@ 2 --shard-size 7000 --write-index -o "$W/ra.bam" "$TD/s1.bam"
idx_check realign_bai bai "$W/ra.bam" "$W/ra.bai" \
    realign -f "$REF" -@ 3 --shard-size 2000 --write-index -o "$W/ra.bam##idx##$W/ra.bai" \
    "$TD/s1.bam"

# Shard output past the spill size leaves memory in whole blocks, a line or record across the cut.
export SEQSHARD_SPILL_AT=64k
idx_check spill_pileup_tbi tbi "$W/p.txt.gz" "$W/p.txt.gz.tbi" \
    pileup -f "$REF" -@ 2 -o "$W/p.txt.gz" "$TD/s1.bam"
idx_check spill_view_csi csi "$W/l.bam" "$W/l.bam.csi" \
    view -b --output-fmt-option level=1 -@ 2 --write-index -o "$W/l.bam" "$TD/s1.bam"
idx_check spill_view_samgz_csi csi "$W/s.sam.gz" "$W/s.sam.gz.csi" \
    view -@ 2 --write-index -o "$W/s.sam.gz" "$TD/s1.bam"
idx_check spill_view_samgz_bai bai "$W/s.sam.gz" "$W/s.bai" \
    view -@ 3 --shard-size 7000 --write-index -o "$W/s.sam.gz##idx##$W/s.bai" "$TD/s1.bam"
idx_check spill_mpileup_bcf bcsi "$W/m.bcf" "$W/m.bcf.csi" \
    mpileup -f "$REF" -@ 2 -Ob1 --write-index -o "$W/m.bcf" "$TD/s1.bam"
idx_check spill_mpileup_bcf0 bcsi "$W/m.bcf" "$W/m.bcf.csi" \
    mpileup -f "$REF" -@ 2 -Ob0 --write-index -o "$W/m.bcf" "$TD/s1.bam"
idx_check spill_mpileup_vcf bcsi "$W/m.vcf.gz" "$W/m.vcf.gz.csi" \
    mpileup -f "$REF" -@ 2 -Oz --write-index -o "$W/m.vcf.gz" "$TD/s1.bam"
unset SEQSHARD_SPILL_AT

# A read past 2^29 on a long contig: a .bai cannot hold it, as samtools index -b says.
idx_big_bam "$W/big.bam"
ss_run_seqshard /dev/null "$W/big.err" view -b --write-index --quiet \
    -o "$W/bigout.bam##idx##$W/bigout.bai" "$W/big.bam"
if [ "$ss_rc" != 0 ] && grep -q '2^29' "$W/big.err" && [ ! -e "$W/bigout.bam" ] &&
    [ ! -e "$W/bigout.bai" ]; then
    ss_ok bai_limit
else
    ss_bad bai_limit "status $ss_rc, output $(ls "$W" | grep -c bigout) files" \
        "$(head -2 "$W/big.err")"
fi
idx_check big_csi csi "$W/bigout.bam" "$W/bigout.bam.csi" \
    view -b --write-index -o "$W/bigout.bam" "$W/big.bam"

ss_summary
exit $?
