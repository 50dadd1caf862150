#!/usr/bin/env bash
# mpi_realign.sh -- seqshard realign under mpirun: 1-3 ranks, shard sizes 2k and 50k,
# as BAM and SAM, must write the same records as one process on a whole contig
# (BAM compared as its records, SAM byte for byte), and a rank-count-independent
# --report kernel_counts.
set -u
. "$(dirname "$0")/lib.sh"
ss_setup
[ "${SS_MPI:-1}" != 0 ] && command -v mpirun >/dev/null || { echo "skip: no MPI"; exit 77; }
W=$SS_WORK
IN=$TD/s1.bam
MPIRUN=(mpirun --oversubscribe --bind-to none)
[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
export OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo

counts() { grep -o '"kernel_counts": {[^}]*}' "$1"; }

mkdir -p "$W/one"
timeout "$SS_TIMEOUT" "$SEQSHARD" realign --quiet -f "$REF" -@ 1 --shard-size 1g \
    --report "$W/one.json" -O sam -o "$W/one/out.sam" "$IN" 2>"$W/one.err" </dev/null ||
    { ss_bad "single process" "failed" "$(head -2 "$W/one.err")"; ss_summary; exit 1; }
for np in 1 2 3; do
    for s in 2k 50k; do
        for fmt in sam bam; do
            name="mpirun -np $np --shard-size $s -O $fmt"
            d=$W/np$np.$s.$fmt
            mkdir -p "$d"
            timeout "$SS_TIMEOUT" "${MPIRUN[@]}" -np "$np" "$SEQSHARD" realign --quiet --bind none \
                -f "$REF" -@ 1 --shard-size "$s" --report "$d/r.json" -O "$fmt" -o "$d/out.$fmt" \
                "$IN" >"$d/stdout" 2>"$d/err" </dev/null
            rc=$?
            if [ $rc != 0 ]; then
                ss_bad "$name" "exit status $rc" "$(head -2 "$d/err")"
                continue
            fi
            if [ "$fmt" = sam ]; then
                # the @PG CL names -o: compare with it written to the same name
                sed "s|$d/out.sam|$W/one/out.sam|" "$d/out.sam" >"$d/cmp.sam"
                cmp -s "$W/one/out.sam" "$d/cmp.sam" && ss_ok "$name" ||
                    { ss_bad "$name" "differs from one process"; ss_show_diff "$W/one/out.sam" "$d/cmp.sam"; }
            else
                cmp -s <(grep -v '^@' "$W/one/out.sam") <("$SAMTOOLS" view "$d/out.bam") &&
                    ss_ok "$name" || ss_bad "$name" "records differ from one process"
            fi
            [ "$(counts "$d/r.json")" = "$(counts "$W/one.json")" ] && ss_ok "$name: kernel_counts" ||
                ss_bad "$name: kernel_counts" "$(counts "$d/r.json")" "one process: $(counts "$W/one.json")"
        done
    done
done
ss_summary
exit $?
