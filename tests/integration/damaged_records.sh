#!/usr/bin/env bash
# damaged_records.sh -- one damaged record in a BAM whose blocks and index are sound,
# read by every kernel: each exits 1 with the same true message (the file and what is
# wrong with the record), nothing on stdout, nothing left in the output's directory.
#   - a CIGAR whose query length disagrees with SEQ (htslib's reader refuses it:
#     "CIGAR and query sequence lengths differ"); mpileup used to call it out of memory;
#   - optional fields that run past the record's end (an RG:Z string without its NUL),
#     or of a type SAM does not have:
#     samtools view refuses the record ("Corrupted aux data"), samtools mpileup and
#     bcftools mpileup read on (the read's RG is lost); every kernel refuses it, naming
#     the record.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_inputs.sh"
ss_setup
W=$SS_WORK
K=2000 # the damaged record: in ctgA, in the middle of the first shard

# damage U NAME K AT HEX: the damaged copies of level-0 BAM U, each beside U's index:
# $W/NAME.cig.bam (record K's first CIGAR operation 1M) and $W/NAME.aux.bam (record K's
# bytes from AT, counted from its end, set to HEX).
damage() {
    local u=$1 name=$2 k=$3
    python3 "$BAM_PATCH" set "$u" "$W/$name.cig.bam" "$k" cigar0 16 &&
        python3 "$BAM_PATCH" poke "$u" "$W/$name.aux.bam" "$k" "$4" "$5" &&
        cp "$u.bai" "$W/$name.cig.bam.bai" && cp "$u.bai" "$W/$name.aux.bam.bai" ||
        { echo "FAIL setup: bam_patch.py on $u"; exit 1; }
}
ss_level0 "$TD/s1.bam" "$W/u.bam" || { echo "FAIL setup: a level-0 copy of s1.bam"; exit 1; }
damage "$W/u.bam" s1 $K -1 78 # its last tag, RG:Z:s1, loses its NUL
# markdup's input: mate-fixed (ms tags) and sorted, level 0
"$SAMTOOLS" view -u "$TD/s1.bam" ctgA:1-30000 | "$SAMTOOLS" collate -O -u - |
    "$SAMTOOLS" fixmate -m -u - - | "$SAMTOOLS" sort -l 0 -o "$W/md.bam" - 2>/dev/null &&
    "$SAMTOOLS" index "$W/md.bam" || { echo "FAIL setup: markdup's input"; exit 1; }
damage "$W/md.bam" md 500 -5 21 # its last tag, ms:i, gets type '!'

# The message a damage gives, whichever kernel reads it.
says_cig='s1\.cig\.bam: reading shard [0-9]+ .*a record is damaged: its lengths do not add up'
says_aux="s1\\.aux\\.bam: a record's optional fields run past its end.*record ctgA_"
for d in cig aux; do
    f=$W/s1.$d.bam
    if [ $d = cig ]; then says=$says_cig; else says=$says_aux; fi
    ss_fails_with "$d: mpileup" "$says" out.vcf mpileup -@ 2 -f "$REF" "$f"
    ss_fails_with "$d: pileup" "$says" out.txt pileup -@ 2 -f "$REF" "$f"
    ss_fails_with "$d: depth" "$says" out.txt depth -@ 2 "$f"
    ss_fails_with "$d: view to SAM" "$says" out.sam view -@ 2 "$f"
    ss_fails_with "$d: view -b (block copy)" "$says" out.bam view -b -@ 2 "$f"
    ss_fails_with "$d: realign" "$says" out.bam realign -@ 2 -f "$REF" "$f"
    ss_fails_with "$d: markdup" "${says//s1\\./md\\.}" out.bam markdup -@ 2 "$W/md.$d.bam"
done

ss_summary
exit $?
