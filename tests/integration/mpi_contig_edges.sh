#!/usr/bin/env bash
# mpi_contig_edges.sh -- contig_edges.sh's data (lib_edges.sh: contigs of 1-3 bp, reads
# running past contigs' ends, stacks at POS 1) under mpirun: seqshard mpileup gives
# bcftools mpileup's bytes at 1 and 3 ranks, by default, with -d 0 (the first read of
# each contig but the first enters at POS 1), with -d 1000 (the draws past 255 reads
# past plas' end counted across ranks), with --call, to a file and to standard output.
#
# Skipped (status 77) in a build without MPI (SS_MPI=0).
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_mpileup.sh"
. "$(dirname "$0")/lib_edges.sh"
ss_mpi_setup
mp_setup
W=$SS_WORK
edges_make "$W"
IN=$W/in.bam
EF=(-f "$W/ref.fa")

mp_to_file=1
mp_vs "mpileup"                   "1/1:2k 3/1:1500" "${EF[@]}" "$IN"
mp_vs "mpileup -d 0"              "1/2:1500 3/1:2k" -d 0 "${EF[@]}" "$IN"
mp_vs "mpileup -d 1000"           "3/1:1500" -d 1000 "${EF[@]}" "$IN"
mp_to_file=0
mp_vs "mpileup --no-reference -d 0 to standard output" "3/1:1500" --no-reference -d 0 "$IN"

. "$(dirname "$0")/lib_call.sh"
exp=$W/call.exp
"$BCFTOOLS" mpileup --no-version -Ou "${EF[@]}" "$IN" 2>/dev/null |
    "$BCFTOOLS" call --no-version -m >"$exp" 2>/dev/null ||
    ss_bad "--call -m" "the bcftools pipe itself failed: the test is wrong"
timeout "$SS_TIMEOUT" "${MPIRUN[@]}" -np 3 "$SEQSHARD" mpileup --no-version --quiet -@ 1 \
    --shard-size 1500 "${EF[@]}" "$IN" --call -m >"$W/call.got" 2>"$W/call.got.err" </dev/null
verdict "--call -m [-np 3 -@1 1500]" $? "$exp" "$W/call.got"

ss_summary
exit $?
