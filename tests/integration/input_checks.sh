#!/usr/bin/env bash
# input_checks.sh -- inputs whose blocks are sound but whose records or index
# are not: every reader fails with one line naming the file, the shard and
# the record, exit 1, nothing left behind; never a shorter output and exit 0.
#   - records out of order (a POS far too large, or too small, in the middle
#     of a contig), contig ids and mate contig ids past the header, negative
#     positions: pileup (every shard size, -a), view to SAM, to BAM by block
#     copy and by re-encoding;
#   - an index older than its BAM, or that does not cover records appended
#     after it was made (BAI, CSI, -X), a CRAM with an older .crai, the index
#     of another file.
# The damaged files are made here from s1.bam: an uncompressed copy, indexed,
# with one record's field overwritten in place (bam_patch.py), so the index
# still points at the same blocks, as when a file is damaged after indexing.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_inputs.sh"
ss_setup
W=$SS_WORK

ss_level0 "$TD/s1.bam" "$W/u.bam" || { echo "FAIL setup: cannot make u.bam"; exit 1; }
K=5000 # ctgA:29026, in the middle of ctgA

# ---- the undamaged copy reads as samtools reads it (no false alarms) ---------------
ss_pileup "level-0 copy: pileup as samtools" "1:1m 2:2k" "$W/u.bam"
"$SAMTOOLS" view "$W/u.bam" >"$W/u.sam"
for args in "-@2 --shard-size 2k" ""; do
    # shellcheck disable=SC2086
    "$SEQSHARD" view --quiet $args -o "$W/got.sam" "$W/u.bam" &&
        cmp -s "$W/u.sam" "$W/got.sam" && ss_ok "level-0 copy: view $args" ||
        ss_bad "level-0 copy: view $args" "differs from samtools view"
done

# bad_record NAME FIELD VALUE MENTION: every reader fails on record K with FIELD=VALUE.
bad_record() {
    local name=$1 field=$2 value=$3 mention=$4
    ss_patched "$name" "$K" "$field" "$value" || { ss_bad "$name" "cannot patch"; return; }
    local f=$W/$name.bam m="$name\\.bam: .*$mention.*\\(shard [0-9]+, record .* at .*\\); "
    ss_fails_with "$name: pileup"              "$m" out.txt pileup "$f"
    ss_fails_with "$name: pileup -@2 2k"       "$m" out.txt pileup -@ 2 --shard-size 2k "$f"
    ss_fails_with "$name: pileup -a -@2 7k"    "$m" out.txt pileup -a -@ 2 --shard-size 7k "$f"
    ss_fails_with "$name: view SAM"            "$m" out.sam view "$f"
    ss_fails_with "$name: view SAM -@2 2k"     "$m" out.sam view -@ 2 --shard-size 2k "$f"
    ss_fails_with "$name: view BAM (copy)"     "$m" out.bam view -b "$f"
    ss_fails_with "$name: view BAM (copy) 2k"  "$m" out.bam view -b -@ 2 --shard-size 2k "$f"
    ss_fails_with "$name: view BAM -l 1"       "$m" out.bam view -b -l 1 -@ 2 --shard-size 5k "$f"
}

bad_record pos_far   pos 436472740 'records out of coordinate order: this one comes after one at ctgA:436472741'
bad_record pos_back  pos 100       'records out of coordinate order: this one comes after one at ctgA:'
bad_record tid_out   tid 57        "contig id 57 is not in the header"
bad_record mtid_out  mtid 99       "mate contig id 99 is not in the header"
bad_record tid_neg   tid -7        "contig id -7 is not in the header"
bad_record pos_neg   pos -5        "position or mate position is negative"

# Reads that never reach the damaged record are unaffected, as with samtools.
ss_pileup "damaged record outside -r" "1:1m 2:2k" -r ctgB "$W/pos_far.bam"

# ---- indexes that do not describe the file -----------------------------------------
STALE='its index .* is older than the file \(or does not cover it\); re-index with samtools index'
"$SAMTOOLS" view -b -o "$W/two.bam" "$TD/s1.bam" ctgA ctgB && "$SAMTOOLS" index "$W/two.bam" &&
    "$SAMTOOLS" index -c -o "$W/two.csi" "$W/two.bam" &&
    "$SAMTOOLS" view -b -o "$W/tiny.bam" "$TD/s1.bam" ctgTiny &&
    python3 "$BAM_PATCH" append "$W/two.bam" "$W/tiny.bam" "$W/grown.bam" ||
    { echo "FAIL setup: cannot make grown.bam"; exit 1; }
# ctgTiny's records were appended after two.bam was indexed: the index is older ...
cp -p "$W/two.bam.bai" "$W/grown.bam.bai"
touch -d '-1 hour' "$W/grown.bam.bai"
ss_fails_with "appended contig, older .bai: pileup" "grown\\.bam: $STALE .*grown\\.bam" out.txt \
    pileup "$W/grown.bam"
ss_fails_with "appended contig, older .bai: view" "grown\\.bam: $STALE" out.sam view "$W/grown.bam"
# ... and copied (not older) it still does not cover them.
cp "$W/two.bam.bai" "$W/grown.bam.bai"
ss_fails_with "appended contig, .bai not older: pileup" "grown\\.bam: $STALE" out.txt \
    pileup -@ 2 --shard-size 2k "$W/grown.bam"
ss_fails_with "appended contig, .bai not older: view -b" "grown\\.bam: $STALE" out.bam \
    view -b "$W/grown.bam"
rm "$W/grown.bam.bai"
ss_fails_with "appended contig, -X index" "grown\\.bam: $STALE" out.txt \
    pileup -X "$W/grown.bam" "$W/two.bam.bai"
cp "$W/two.csi" "$W/grown.bam.csi"
ss_fails_with "appended contig, CSI" "grown\\.bam: $STALE" out.txt pileup "$W/grown.bam"

# An index made first and the BAM changed later (here: only touched) is older: fail.
cp "$TD/s1.bam" "$W/touched.bam"
cp "$TD/s1.bam.bai" "$W/touched.bam.bai"
touch -d '-1 hour' "$W/touched.bam.bai"
ss_fails_with "index older than its BAM" "touched\\.bam: $STALE" out.txt pileup "$W/touched.bam"
cp "$TD/s1.cram" "$W/touched.cram"
cp "$TD/s1.cram.crai" "$W/touched.cram.crai"
touch -d '-1 hour' "$W/touched.cram.crai"
ss_fails_with "CRAI older than its CRAM" "touched\\.cram: $STALE" out.txt \
    pileup -f "$REF" "$W/touched.cram"
# Copies made with cp, BAM first: the index is not older, all is well.
cp "$TD/s1.bam" "$W/copied.bam"
cp "$TD/s1.bam.bai" "$W/copied.bam.bai"
ss_pileup "BAM then index copied with cp" "1:1m 2:2k" "$W/copied.bam"

# The index of another file beside this one.
OTHER='its index .* does not match the file; re-index with samtools index'
cp "$TD/s1.bam" "$W/wrong.bam"
cp "$TD/s2.bam.bai" "$W/wrong.bam.bai"
ss_fails_with "another BAM's index: pileup" "wrong\\.bam: $OTHER" out.txt pileup "$W/wrong.bam"
ss_fails_with "another BAM's index: view" "wrong\\.bam: $OTHER" out.sam view "$W/wrong.bam"
cp "$TD/edge.bam.bai" "$W/edge.bai"
ss_fails_with "another BAM's index, -X" "copied\\.bam: $OTHER" out.txt \
    pileup -X "$W/copied.bam" "$W/edge.bai"

# ---- a crash (here: a SIGSEGV sent from outside) leaves no temporary file ---------------
# Sanitizer builds (ctest sets ASAN_OPTIONS) leave crashes to the sanitizer's handler.
crash_case() {
    d=$W/crash
    mkdir -p "$d"
    "$SEQSHARD" pileup --quiet -@ 1 -f "$REF" -o "$d/out.txt" "$TD/s1.bam" "$TD/s2.bam" 2>/dev/null &
    pid=$!
    for _ in $(seq 500); do
        [ -n "$(find "$d" -name 'out.txt.tmp.*')" ] && break
        sleep 0.01
    done
    kill -SEGV $pid 2>/dev/null
    wait $pid
    rc=$?
    left=$(find "$d" -mindepth 1 -printf '%f ')
    if [ $rc = 0 ]; then
        echo "note: the run ended before the signal: crash case not exercised"
    elif [ $rc != 139 ] || [ -n "$left" ]; then
        ss_bad "crash leaves no temporary file" "exit status $rc (want 139), left: $left"
    else
        ss_ok "crash leaves no temporary file"
    fi
}
if [ -n "${ASAN_OPTIONS:-}" ]; then
    echo "note: sanitizer build: crash case skipped"
else
    crash_case
fi

ss_summary
exit $?
