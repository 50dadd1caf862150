#!/usr/bin/env bash
# pileup_quick.sh -- a short cross-section of pileup_vs_samtools.sh: BAQ,
# depth cap, overlaps, -aa, extra columns, CRAM and two inputs, at small
# shards and three threads. It is the run the AddressSanitizer/UBSan build
# repeats (make asan), so it stays small.
set -u
. "$(dirname "$0")/lib.sh"
ss_setup

C="3:2k 1:1m"
ss_pileup "quick: -f (BAQ)"               "$C" -f "$REF" "$TD/s1.bam"
ss_pileup "quick: -d 50 edge"             "$C" -d 50 "$TD/edge.bam"
ss_pileup "quick: -aa -f edge"            "$C" -aa -f "$REF" "$TD/edge.bam"
ss_pileup "quick: -x -s -O --output-extra" "$C" -x -s -O --output-QNAME \
    --output-extra FLAG,MAPQ,NM,RG "$TD/edge.bam"
ss_pileup "quick: -M edge"                "$C" -M "$TD/edge.bam"
ss_pileup "quick: CRAM + BAM, -l BED"     "$C" -f "$REF" -l "$TD/regions.bed" \
    "$TD/s1.cram" "$TD/s2.bam"
ss_pileup "quick: -r region, -a"          "$C" -a -r ctgB:29000-31000 -f "$REF" "$TD/s1.bam"
ss_summary
exit $?
