#!/usr/bin/env bash
# fuzz_readers.sh -- random damage to records must never give a wrong file.
#
# A small BAM (5% of s1.bam, uncompressed blocks, indexed) gets 1-4 random
# byte runs overwritten inside one data block, with the block's CRC made
# right again (bam_patch.py fuzz), for a fixed list of seeds. Each file goes
# through seqshard pileup, view to SAM and view to BAM (block copy), several
# shards each. Each run must either
#   - exit 0 with the output samtools gives for the same file (samtools
#     succeeding: mpileup, view, view -b decoded again), or
#   - exit 1 with exactly one line on stderr,
# and never die of a signal, hang, or leave a temporary file. A failure
# prints its seed: `bam_patch.py fuzz small.bam x.bam SEED` makes the file.
# FUZZ_SEEDS="a b c" runs other seeds. Then the sound small.bam goes through
# the same runs with its .bai damaged (`index_patch.py bai fuzz small.bam.bai
# x.bai SEED`; FUZZ_INDEX_SEEDS="a b c" for others): fewer records with exit
# 0 is a failure there too.
#
# The seeds are 1-200 for the blocks and 1-40 for the index. `make test` runs this
# script twice, in the normal build and under ASan, so ctest gives each pass half of them
# (SS_FUZZ_HALF, tests/CMakeLists.txt): 1 runs seeds 1-100 and index seeds 1-20, 2 runs
# 101-200 and 21-40. Every seed still runs once per `make test`; unset, all run.
# FUZZ_SEEDS and FUZZ_INDEX_SEEDS win over SS_FUZZ_HALF.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_inputs.sh"
ss_setup
W=$SS_WORK
FUZZ_TIMEOUT=${FUZZ_TIMEOUT:-60}
case ${SS_FUZZ_HALF:-} in
1) DEF_SEEDS=$(seq 1 100) DEF_INDEX_SEEDS=$(seq 1 20) ;;
2) DEF_SEEDS=$(seq 101 200) DEF_INDEX_SEEDS=$(seq 21 40) ;;
'') DEF_SEEDS=$(seq 1 200) DEF_INDEX_SEEDS=$(seq 1 40) ;;
*) echo "FAIL setup: SS_FUZZ_HALF=$SS_FUZZ_HALF, want 1, 2 or nothing"; exit 1 ;;
esac
SEEDS=${FUZZ_SEEDS:-$DEF_SEEDS}

"$SAMTOOLS" view -u -s 11.05 -o "$W/small.bam" "$TD/s1.bam" && "$SAMTOOLS" index "$W/small.bam" ||
    { echo "FAIL setup: cannot make small.bam"; exit 1; }
n_refused=0 # runs that failed where samtools did not: allowed, counted

# bam_records BAM OUT: BAM's records as samtools decodes and encodes them again
# (bins recomputed, names mended), without the header, whose @PG lines differ.
bam_records() {
    "$SAMTOOLS" view -u --no-PG -o "$2.u.bam" "$1" && python3 "$BAM_PATCH" records "$2.u.bam" "$2"
}

# run_one SEED WHAT EXPECTED EXPECTED_RC OUTNAME ARGS...: seqshard ARGS -o DIR/OUTNAME;
# for BAM output the records, decoded by samtools, are compared.
run_one() {
    local seed=$1 what=$2 exp=$3 exprc=$4 outname=$5
    shift 5
    local d=$W/run.$seed.$what
    mkdir -p "$d/out"
    timeout "$FUZZ_TIMEOUT" "$SEQSHARD" "$@" --quiet -o "$d/out/$outname" "$W/m.bam" \
        </dev/null >"$d/stdout" 2>"$d/stderr"
    local rc=$? name="seed $seed: $what" left got=$d/out/$outname
    left=$(find "$d/out" -mindepth 1 -maxdepth 1 ! -name "$outname" -printf '%f ')
    [ $rc != 0 ] && [ -e "$got" ] && left+="$outname"
    if [ $rc = 124 ]; then
        ss_bad "$name" "hung (killed after ${FUZZ_TIMEOUT}s)"
    elif [ $rc -ge 128 ]; then
        ss_bad "$name" "killed by signal $((rc - 128))" "$(head -3 "$d/stderr" | cut -c1-200)"
    elif [ -n "$left" ]; then
        ss_bad "$name" "left files behind: $left (exit $rc)"
    elif [ $rc = 1 ]; then
        if [ "$(ss_lines "$d/stderr")" != 1 ]; then
            ss_bad "$name" "exit 1 with $(ss_lines "$d/stderr") lines on stderr, want one" \
                "$(head -4 "$d/stderr" | cut -c1-200)"
        else
            [ "$exprc" = 0 ] && n_refused=$((n_refused + 1))
            ss_ok "$name"
        fi
    elif [ $rc != 0 ]; then
        ss_bad "$name" "exit status $rc, want 0 or 1" "$(head -2 "$d/stderr" | cut -c1-200)"
    elif [ "$exprc" != 0 ]; then
        ss_bad "$name" "exit 0 where samtools fails" "samtools: $(head -1 "$exp.err")"
    else
        if [ "$outname" = out.bam ]; then
            if [ "$e_sam" = 0 ]; then
                "$SAMTOOLS" view "$got" >"$d/got.rec" 2>&1
            else
                bam_records "$got" "$d/got.rec" 2>&1
            fi
            got=$d/got.rec
        fi
        if cmp -s "$exp" "$got"; then
            ss_ok "$name"
        else
            ss_bad "$name" "exit 0 but the output differs from samtools'"
            ss_show_diff "$exp" "$got"
            return
        fi
    fi
    [ "$ss_failed" = 0 ] && rm -rf "$d"
}

# shellcheck disable=SC2086
python3 "$BAM_PATCH" fuzz "$W/small.bam" "$W/m" $SEEDS || { echo "FAIL setup: fuzz"; exit 1; }
for seed in $SEEDS; do
    mv "$W/m.$seed.bam" "$W/m.bam" && cp "$W/small.bam.bai" "$W/m.bam.bai" ||
        { ss_bad "seed $seed" "no mutated file"; continue; }
    "$SAMTOOLS" mpileup "$W/m.bam" >"$W/e.pileup" 2>"$W/e.pileup.err"
    e_pileup=$?
    "$SAMTOOLS" view "$W/m.bam" >"$W/e.sam" 2>"$W/e.sam.err"
    e_sam=$?
    # BAM out: decoded by samtools, as SAM when samtools can print it, else record bytes
    if [ $e_sam = 0 ]; then
        cp "$W/e.sam" "$W/e.rec"
        e_bam=0
    else
        bam_records "$W/m.bam" "$W/e.rec" 2>"$W/e.rec.err"
        e_bam=$?
    fi
    before=$ss_failed
    run_one "$seed" pileup "$W/e.pileup" $e_pileup out.txt pileup -@ 2 --shard-size 3k
    run_one "$seed" view-sam "$W/e.sam" $e_sam out.sam view -@ 2 --shard-size 5k
    run_one "$seed" view-bam "$W/e.rec" $e_bam out.bam view -b -@ 2 --shard-size 5k
    [ "$ss_failed" != "$before" ] && cp "$W/m.bam" "$W/failed.$seed.bam"
done

# ---- damaged indexes of a sound file: small.bam with a .bai fuzzed by index_patch.py
# (a bit flipped in a chunk, bin, linear-index entry or pseudo-bin count); samtools reads
# the whole file without the index, so its output is the one to give, or exit 1 and one line
INDEX_SEEDS=${FUZZ_INDEX_SEEDS:-$DEF_INDEX_SEEDS}
cp "$W/small.bam" "$W/m.bam"
"$SAMTOOLS" mpileup "$W/m.bam" >"$W/e.pileup" 2>"$W/e.pileup.err"
e_pileup=$?
"$SAMTOOLS" view "$W/m.bam" >"$W/e.sam" 2>"$W/e.sam.err"
e_sam=$?
for seed in $INDEX_SEEDS; do
    kind=$(python3 "$SS_SRC/tests/integration/index_patch.py" bai fuzz "$W/small.bam.bai" \
        "$W/m.bam.bai" "$seed") || { ss_bad "index seed $seed" "no damaged index"; continue; }
    before=$ss_failed
    run_one "idx$seed" "pileup ($kind)" "$W/e.pileup" $e_pileup out.txt pileup -@ 2 --shard-size 3k
    run_one "idx$seed" "view-sam ($kind)" "$W/e.sam" $e_sam out.sam view -@ 2 --shard-size 5k
    [ "$ss_failed" != "$before" ] && cp "$W/m.bam.bai" "$W/failed.idx$seed.bam.bai"
done
echo "runs that failed (exit 1, one line) where samtools succeeded: $n_refused"

ss_summary
exit $?
