#!/usr/bin/env bash
# mpi_mpileup.sh -- seqshard mpileup under mpirun gives bcftools mpileup's
# bytes whatever the number of ranks: s1+s2, edge.bam and the deep amplicons
# (-d 10000: the random stream continued across ranks) at -np 2 and 3 with
# small shards, written with -o FILE and to standard output (rank 0 streams);
# -Oz --write-index gives the single-process file and index byte for byte at
# the same shard size; a damaged input stops every rank, each message names
# rank, file and shard, and no output is left.
#
# Skipped (status 77) in a build without MPI (SS_MPI=0).
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_mpileup.sh"
ss_mpi_setup
mp_setup
W=$SS_WORK
R=(-f "$REF")

# -o FILE: every rank writes its pieces at their offsets
mp_to_file=1
mp_vs "s1+s2"          "every 2/1:2k 3/1:2k" "${R[@]}" "$TD/s1.bam" "$TD/s2.bam"
mp_vs "edge.bam"       "every 2/2:2k 3/1:2k" "${R[@]}" "$TD/edge.bam"
# ctgAmp is 3 kb: 2k cuts it in two shards, 1k in three (one per rank at -np 3)
mp_vs "deep -d 10000"  "every 2/1:2k 3/1:1k" -f "$AMP" -d 10000 "$TD/amp.bam"
# standard output: rank 0 streams the pieces in order
mp_to_file=0
mp_vs "s1+s2 to standard output"   "every 2/1:2k" "${R[@]}" "$TD/s1.bam" "$TD/s2.bam"
mp_vs "deep to standard output"    "every 3/1:1k" -f "$AMP" -d 10000 "$TD/amp.bam"

# BGZF output and its index: for a given --shard-size the same bytes at any rank count
# (contract 1), as one process with threads writes them.
Z=(mpileup --no-version --quiet --shard-size 2k -Oz --write-index "${R[@]}" "$TD/edge.bam")
timeout "$SS_TIMEOUT" "$SEQSHARD" "${Z[@]}" -@ 2 -o "$W/single.vcf.gz" </dev/null 2>"$W/z.err" ||
    ss_bad "-Oz: single-process run" "failed" "$(head -2 "$W/z.err")"
for np in 2 3; do
    timeout "$SS_TIMEOUT" "${MPIRUN[@]}" -np "$np" "$SEQSHARD" "${Z[@]}" -@ 1 -o "$W/mpi.vcf.gz" \
        </dev/null >/dev/null 2>"$W/z.err"
    rc=$?
    if [ $rc != 0 ]; then
        ss_bad "-Oz --write-index np=$np" "exit status $rc" "$(head -3 "$W/z.err")"
    elif ! cmp -s "$W/single.vcf.gz" "$W/mpi.vcf.gz"; then
        ss_bad "-Oz --write-index np=$np" ".vcf.gz differs from the single-process run's" \
            "$(ss_quote "${MPIRUN[@]}" -np "$np" "$SEQSHARD" "${Z[@]}" -@ 1 -o "$W/mpi.vcf.gz")"
    elif ! cmp -s "$W/single.vcf.gz.csi" "$W/mpi.vcf.gz.csi"; then
        ss_bad "-Oz --write-index np=$np" ".csi differs from the single-process run's"
    else
        ss_ok "-Oz --write-index np=$np: the single-process file and index"
    fi
    rm -f "$W/mpi.vcf.gz" "$W/mpi.vcf.gz.csi"
done

# A BAM damaged in the middle: every rank stops, no output. Each rank whose shards reach
# the damaged block says so on one line naming the file, its rank and the shard.
mkdir -p "$W/fail"
timeout "$SS_TIMEOUT" "${MPIRUN[@]}" -np 3 "$SEQSHARD" mpileup --quiet --shard-size 2k "${R[@]}" \
    -Oz --write-index -o "$W/fail/out.vcf.gz" "$TD/garbled.bam" </dev/null >/dev/null 2>"$W/fail.err"
rc=$?
left=$(find "$W/fail" -mindepth 1 -printf '%f ')
if [ $rc = 0 ] || [ $rc = 124 ]; then
    ss_bad "garbled BAM, np=3" "exit status $rc (0: no failure seen, 124: hang)"
elif ! grep -q '^seqshard: ' "$W/fail.err" ||
    grep '^seqshard: ' "$W/fail.err" | grep -vqE '^seqshard: rank [0-9]+: .*garbled\.bam: .*shard [0-9]+'; then
    ss_bad "garbled BAM, np=3" "want only lines naming the rank, garbled.bam and the shard" \
        "$(head -5 "$W/fail.err")"
elif [ -n "$left" ]; then
    ss_bad "garbled BAM, np=3" "files left behind: $left"
else
    ss_ok "garbled BAM, np=3: every rank stops, no output"
fi

ss_summary
exit $?
