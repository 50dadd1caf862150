#!/usr/bin/env bash
# mpi_stdout.sh -- standard output under mpirun: with no -o, rank 0 writes
# every shard in order while the other ranks send theirs when asked
# (framework/out/funnel.c). The stream must be one process's bytes for text
# (pileup, depth, view SAM, view -c) and the same records for BAM and CRAM,
# at 1-3 ranks, 1-2 threads and shard sizes from 2 kb to whole contigs, and to
# -o /dev/stdout or a FIFO; at -np 3 with 2 kb shards, pileup is samtools mpileup's bytes,
# and view -b (BAM) and mpileup -Ou/-Ob/-Oz/-Ov (BCF, BGZF VCF) one process's bytes at the
# same shard size; a failing shard on any rank stops every rank with status 1, no hang.
#
# Skipped (status 77) in a build without MPI (SS_MPI=0).
set -u
. "$(dirname "$0")/lib.sh"
ss_mpi_setup
W=$SS_WORK
S1=$TD/s1.bam REF=$TD/ref.fa

# run_np NAME EXPECTED NP THREADS SHARD ARGS...: seqshard ARGS on NP ranks into $W/got; 0 when
# it worked, else 1 after saying why. READ, when set, is the command turning the stream into
# what EXPECTED holds (samtools view for BAM and CRAM); unset, the bytes themselves.
run_np() {
    local name=$1 np=$3 t=$4 sz=$5
    shift 5
    timeout "$SS_TIMEOUT" "${MPIRUN[@]}" -np "$np" "$SEQSHARD" "$@" --quiet -@ "$t" \
        --shard-size "$sz" </dev/null >"$W/got.bin" 2>"$W/err"
    local rc=$?
    if [ $rc != 0 ]; then
        ss_bad "$name" "exit status $rc" "$(head -2 "$W/err")"
        return 1
    fi
    if [ -z "${READ:-}" ]; then
        mv "$W/got.bin" "$W/got"
    elif ! $READ "$W/got.bin" >"$W/got" 2>"$W/view.err"; then
        ss_bad "$name" "samtools cannot read the stream" "$(head -2 "$W/view.err")"
        return 1
    fi
}

# check NAME EXPECTED NP THREADS SHARD ARGS...: the stream equals EXPECTED's bytes
check() {
    local name=$1 exp=$2
    READ= run_np "$@" || return
    if cmp -s "$exp" "$W/got"; then ss_ok "$name"; else
        ss_bad "$name" "the stream differs from one process's"
        ss_show_diff "$exp" "$W/got"
    fi
}

# records NAME EXPECTED_SAM NP THREADS SHARD ARGS...: the stream's records (samtools view)
records() {
    local name=$1 exp=$2
    READ="$SAMTOOLS view --no-PG -h -T $REF" run_np "$@" || return
    if cmp -s "$exp" "$W/got"; then ss_ok "$name"; else
        ss_bad "$name" "records differ from one process's"
        ss_show_diff "$exp" "$W/got"
    fi
}

"$SEQSHARD" pileup --quiet -f "$REF" "$S1" >"$W/pileup.exp"
"$SEQSHARD" depth --quiet -a "$S1" "$TD/s2.bam" >"$W/depth.exp"
"$SEQSHARD" view --quiet -h "$S1" >"$W/sam.exp"
"$SEQSHARD" view --quiet -c "$S1" >"$W/count.exp"
"$SEQSHARD" view --quiet -O bam "$S1" | "$SAMTOOLS" view --no-PG -h - >"$W/bam.exp"
"$SEQSHARD" view --quiet -O cram -T "$REF" "$S1" |
    "$SAMTOOLS" view --no-PG -h -T "$REF" - >"$W/cram.exp"
for np in 2 3; do
    for run in "1 2k" "2 7k" "1 1g"; do
        set -- $run
        t=$1 sz=$2
        check "pileup np=$np -@$t $sz" "$W/pileup.exp" "$np" "$t" "$sz" pileup -f "$REF" "$S1"
        check "depth -a np=$np -@$t $sz" "$W/depth.exp" "$np" "$t" "$sz" depth -a "$S1" \
            "$TD/s2.bam"
        check "view -h np=$np -@$t $sz" "$W/sam.exp" "$np" "$t" "$sz" view -h "$S1"
        records "view -O bam np=$np -@$t $sz" "$W/bam.exp" "$np" "$t" "$sz" view -O bam "$S1"
    done
    check "view -c np=$np" "$W/count.exp" "$np" 1 2k view -c "$S1"
    records "view -O cram np=$np" "$W/cram.exp" "$np" 2 7k view -O cram -T "$REF" "$S1"
done

# Every kind of output a kernel writes to standard output, at -np 3 with 2 kb shards (many
# shards cross ranks): the bytes of one process's standard output at the same shard size,
# and for pileup samtools mpileup's own.
same_np1() { # NAME ARGS...: np=3 stream equals one process's stream, byte for byte
    local name=$1
    shift
    "$SEQSHARD" "$@" --quiet -@ 2 --shard-size 2k </dev/null >"$W/one.bin" 2>"$W/err" ||
        { ss_bad "$name" "one process failed" "$(head -2 "$W/err")"; return; }
    check "$name" "$W/one.bin" 3 1 2k "$@"
}
"$SAMTOOLS" mpileup -f "$REF" "$S1" 2>/dev/null >"$W/samtools.pileup"
check "pileup np=3 = samtools mpileup" "$W/samtools.pileup" 3 1 2k pileup -f "$REF" "$S1"
same_np1 "view -b np=3: BAM bytes" view -b "$S1"
for t in u b z v; do
    same_np1 "mpileup -O$t np=3" mpileup --no-version -O$t -f "$REF" "$S1" "$TD/s2.bam"
done
# the BGZF stream (-Oz) decompresses to the plain one (-Ov)
"${MPIRUN[@]}" -np 3 "$SEQSHARD" mpileup --no-version --quiet --shard-size 2k -Oz -f "$REF" \
    "$S1" "$TD/s2.bam" </dev/null 2>"$W/err" | bgzip -dc >"$W/z.vcf"
"$SEQSHARD" mpileup --no-version --quiet -Ov -f "$REF" "$S1" "$TD/s2.bam" >"$W/v.vcf" 2>>"$W/err"
if [ -s "$W/v.vcf" ] && cmp -s "$W/z.vcf" "$W/v.vcf"; then
    ss_ok "mpileup -Oz np=3 decompressed = -Ov"
else
    ss_bad "mpileup -Oz np=3 decompressed" "differs from -Ov" "$(head -2 "$W/err")"
fi

# Rank 0 writes to mpirun's own standard output (launcher.c): the same open file, so a
# shell's redirect around it keeps its offset; and the pipe through mpirun still works.
{
    echo before
    timeout "$SS_TIMEOUT" "${MPIRUN[@]}" -np 3 "$SEQSHARD" pileup --quiet --shard-size 2k \
        -f "$REF" "$S1" </dev/null 2>"$W/err"
    echo after
} >"$W/around.got"
{ echo before; cat "$W/samtools.pileup"; echo after; } >"$W/around.exp"
if cmp -s "$W/around.exp" "$W/around.got"; then
    ss_ok "{ echo; mpirun -np 3 ...; echo; } > FILE: in place"
else
    ss_bad "{ echo; mpirun -np 3 ...; echo; } > FILE" "differs" "$(head -2 "$W/err")"
fi
check "mpirun -np 1 = samtools mpileup" "$W/samtools.pileup" 1 2 2k pileup -f "$REF" "$S1"
SEQSHARD_STDOUT_DIRECT=0 check "through mpirun (SEQSHARD_STDOUT_DIRECT=0) np=3" \
    "$W/samtools.pileup" 3 1 2k pileup -f "$REF" "$S1"
"${MPIRUN[@]}" -np 3 "$SEQSHARD" pileup --quiet --shard-size 2k -f "$REF" "$S1" </dev/null \
    2>"$W/err" | md5sum >"$W/md5.got"
md5sum <"$W/samtools.pileup" >"$W/md5.exp"
if cmp -s "$W/md5.exp" "$W/md5.got"; then
    ss_ok "mpirun -np 3 pileup | md5sum = samtools mpileup | md5sum"
else
    ss_bad "mpirun -np 3 pileup | md5sum" "$(cat "$W/md5.got")" "$(head -2 "$W/err")"
fi

# -o naming a stream: standard output itself, and a FIFO read by another process.
check "-o /dev/stdout np=2" "$W/pileup.exp" 2 1 2k pileup -f "$REF" -o /dev/stdout "$S1"
rm -f "$W/fifo" && mkfifo "$W/fifo"
cat "$W/fifo" >"$W/fifo.out" &
reader=$!
timeout "$SS_TIMEOUT" "${MPIRUN[@]}" -np 3 "$SEQSHARD" pileup --quiet --shard-size 2k \
    -f "$REF" -o "$W/fifo" "$S1" </dev/null >/dev/null 2>"$W/err"
rc=$?
wait "$reader"
if [ $rc = 0 ] && cmp -s "$W/pileup.exp" "$W/fifo.out"; then
    ss_ok "-o FIFO np=3: one process's bytes"
else
    ss_bad "-o FIFO np=3" "status $rc, or the stream differs" "$(head -2 "$W/err")"
fi

# A shard failing on whichever rank takes it: every rank stops, status 1, in time.
for fs in 0 7 25; do
    SEQSHARD_FAIL_SHARD=$fs timeout "$SS_TIMEOUT" "${MPIRUN[@]}" -np 3 "$SEQSHARD" pileup \
        --quiet -f "$REF" --shard-size 2k "$S1" </dev/null >"$W/got" 2>"$W/err"
    rc=$?
    if [ $rc = 1 ] && grep -q "failure injected by SEQSHARD_FAIL_SHARD" "$W/err"; then
        ss_ok "shard $fs fails: every rank stops (status 1)"
    else
        ss_bad "shard $fs fails" "status $rc (124: a hang)" "$(head -2 "$W/err")"
    fi
done

# --write-index needs a file, under mpirun as in one process.
timeout "$SS_TIMEOUT" "${MPIRUN[@]}" -np 2 "$SEQSHARD" view -O bam --write-index --quiet "$S1" \
    </dev/null >/dev/null 2>"$W/err"
rc=$?
if [ $rc != 0 ] && grep -q "needs an output file" "$W/err"; then
    ss_ok "--write-index to standard output is refused (status $rc)"
else
    ss_bad "--write-index to standard output" "status $rc" "$(head -2 "$W/err")"
fi

ss_summary
exit $?
