#!/usr/bin/env bash
# output_full_disk.sh -- a full file system fails the run: exit 1, one line
# naming the file, and nothing left, neither under the final name nor as a
# temporary file; for the data, the .tbi beside a .gz output, and --report.
# Needs root (it mounts small tmpfs file systems); skipped otherwise.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_output.sh"
ss_setup

S1=$TD/s1.bam
FULL=$SS_WORK/full
ss_full_fs "$FULL" 1m || exit 77

# pileup -B -r ctgA is 3.9 MB of text, view of s1.bam 7 MB of SAM, 2 MB of BAM: none fits.
ss_keep=()
ss_cmd_fails "pileup into a full disk" 1 'out\.txt.*(space|full)' "$FULL" \
    "$SEQSHARD" pileup --quiet -B -r ctgA -o "$FULL/out.txt" "$S1"
ss_cmd_fails "pileup -@2 into a full disk" 1 'out\.txt.*(space|full)' "$FULL" \
    "$SEQSHARD" pileup --quiet -@ 2 --shard-size 20k -B -o "$FULL/out.txt" "$S1"
ss_cmd_fails "view into a full disk" 1 'out\.sam.*(space|full)' "$FULL" \
    "$SEQSHARD" view -o "$FULL/out.sam" "$S1"
ss_cmd_fails "view -b into a full disk" 1 'out\.bam.*(space|full)' "$FULL" \
    "$SEQSHARD" view -b -o "$FULL/out.bam" "$S1"

# The data fits, its tabix index does not: both go, and the message says nothing is kept.
# The resume manifest beside the temporary output (a header and a record per shard) takes
# one page.
MANIFEST_PAGES=1
"$SEQSHARD" pileup --quiet -B -r ctgA -o "$SS_WORK/probe.txt.gz" "$S1"
gz_pages=$(( ($(stat -c %s "$SS_WORK/probe.txt.gz") + 4095) / 4096 + MANIFEST_PAGES ))
FULL2=$SS_WORK/full2
if ss_full_fs "$FULL2" 2m; then
    ss_fill "$FULL2" "$gz_pages"
    ss_keep=(filler)
    ss_cmd_fails "the .tbi does not fit" 1 'out\.txt\.gz.*index.*nothing was written' "$FULL2" \
        "$SEQSHARD" pileup --quiet -B -r ctgA -o "$FULL2/out.txt.gz" "$S1"
    if grep -q kept "$SS_WORK/cmd.$ss_case_no.err" 2>/dev/null; then
        ss_bad "the .tbi does not fit: message" "says the output is kept, but it is removed"
    fi
    rm -f "$FULL2/filler"
fi

# view --write-index: the BAM fits, its .csi does not.
"$SEQSHARD" view -b -o "$SS_WORK/probe.bam" "$S1"
bam_pages=$(( ($(stat -c %s "$SS_WORK/probe.bam") + 4095) / 4096 + MANIFEST_PAGES ))
FULL3=$SS_WORK/full3
if ss_full_fs "$FULL3" 4m; then
    ss_fill "$FULL3" "$bam_pages"
    ss_keep=(filler)
    ss_cmd_fails "view --write-index: the .csi does not fit" 1 'out\.bam.*index.*nothing was written' \
        "$FULL3" "$SEQSHARD" view -b --write-index -o "$FULL3/out.bam" "$S1"
fi

# The report does not fit: the run fails and the output is not renamed into place either.
ss_fill "$FULL" 0
ss_keep=(filler)
mkdir -p "$SS_WORK/out"
ss_cmd_fails "--report into a full disk" 1 'r\.json.*(space|full)' "$FULL" \
    "$SEQSHARD" pileup --quiet -B -r ctgTiny -o "$SS_WORK/out/out.txt" --report "$FULL/r.json" "$S1"
left=$(ss_left "$SS_WORK/out")
[ -z "$left" ] && ss_ok "--report into a full disk: no -o output" ||
    ss_bad "--report into a full disk: no -o output" "left in the -o directory: $left"

ss_summary
exit $?
