#!/usr/bin/env bash
# mpi_records_move.sh -- the framework's contract for kernels that move
# records: the test kernel "shift" (tests/kernels/shift.c, in the test program
# seqshard-test) moves every read by a hash of its name; its output must be
# the same records as shifting every record and `samtools sort`-ing the
# result, at any shard size, thread count and rank count, as SAM and as BAM.
set -u
. "$(dirname "$0")/lib.sh"
ss_setup
SEQSHARD_TEST=${SEQSHARD_TEST:-$SS_SRC/build/tests/seqshard-test}
[ -x "$SEQSHARD_TEST" ] || { echo "FAIL setup: no test program $SEQSHARD_TEST"; exit 1; }
W=$SS_WORK

expect() { # IN OUT: the shifted, sorted records (no header)
    "$SAMTOOLS" view -h "$1" | python3 "$SS_SRC/tests/integration/shift_expect.py" |
        "$SAMTOOLS" sort --no-PG -O sam - | grep -v '^@' >"$2"
}

check() { # NAME EXPECTED OUT_FORMAT RUNNER... : run, compare the records
    local name=$1 exp=$2 fmt=$3
    shift 3
    local out=$W/out.$ss_case_no.$fmt
    ss_case_no=$((ss_case_no + 1))
    timeout "$SS_TIMEOUT" "$@" -O "$fmt" -o "$out" >"$W/stdout" 2>"$W/err" </dev/null
    local rc=$?
    if [ $rc != 0 ]; then
        ss_bad "$name" "exit status $rc" "$(head -2 "$W/err")"
        return
    fi
    "$SAMTOOLS" view "$out" >"$W/got" 2>"$W/view.err" || {
        ss_bad "$name" "samtools cannot read the $fmt output" "$(head -2 "$W/view.err")"
        return
    }
    if cmp -s "$exp" "$W/got"; then ss_ok "$name"; else
        ss_bad "$name" "records differ from shift + samtools sort"
        ss_show_diff "$exp" "$W/got"
    fi
}

for in in s1 edge; do
    expect "$TD/$in.bam" "$W/$in.exp"
    for fmt in sam bam; do
        for t in 1 2 3; do
            for s in 2k 7k 50k 1g; do
                check "$in $fmt -@$t --shard-size $s" "$W/$in.exp" "$fmt" \
                    "$SEQSHARD_TEST" shift --quiet -@ "$t" --shard-size "$s" "$TD/$in.bam"
            done
        done
    done
done

if [ "${SS_MPI:-1}" != 0 ] && command -v mpirun >/dev/null; then
    MPIRUN=(mpirun --oversubscribe --bind-to none)
    [ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
    export OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
    for np in 1 2 3; do
        for s in 2k 50k; do
            check "s1 bam mpirun -np $np --shard-size $s" "$W/s1.exp" bam \
                "${MPIRUN[@]}" -np "$np" "$SEQSHARD_TEST" shift --quiet --bind none -@ 1 \
                --shard-size "$s" "$TD/s1.bam"
        done
    done
fi
ss_summary
exit $?
