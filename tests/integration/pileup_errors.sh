#!/usr/bin/env bash
# pileup_errors.sh -- every failure exits 1 (2 for usage errors), says what
# went wrong in one line on stderr naming the file (or option, region, line),
# writes nothing on stdout, and leaves no output or temporary file behind;
# an existing output file survives a failed run untouched.
set -u
. "$(dirname "$0")/lib.sh"
ss_setup

S1=$TD/s1.bam
NOPE=$SS_WORK/no-such-dir/nope.bam

# ---- inputs that cannot be used ----------------------------------------------
ss_fails "missing input"            1 'nope\.bam'        "$NOPE"
ss_fails "missing second input"     1 'nope\.bam'        "$S1" "$NOPE"
ss_fails "input is a directory"     1 'dir\.bam'         "$TD/dir.bam"
if [ "$(id -u)" != 0 ]; then
    # Root reads anything, so only an unprivileged run can test modes.
    cp "$S1" "$SS_WORK/locked.bam"
    cp "$S1.bai" "$SS_WORK/locked.bam.bai"
    chmod 000 "$SS_WORK/locked.bam"
    ss_fails "unreadable input (mode 000)" 1 'locked\.bam' "$SS_WORK/locked.bam"
fi
ss_fails "not a BAM"                1 'notbam\.bam'      "$TD/notbam.bam"
ss_fails "unsorted (queryname)"     1 'unsorted\.bam'    "$TD/unsorted.bam"
ss_fails "unsorted records"         1 'disorder\.bam'    "$TD/disorder.bam"
ss_fails "missing index"            1 'noindex\.bam'     "$TD/noindex.bam"
ss_fails "missing index, 2nd input" 1 'noindex\.bam'     "$S1" "$TD/noindex.bam"
ss_fails "truncated BAM"            1 'truncated\.bam'   "$TD/truncated.bam"
ss_fails "truncated BAM -@2 2k"     1 'truncated\.bam'   -@ 2 --shard-size 2k "$TD/truncated.bam"
ss_fails "truncated BAM -@3 -r"     1 'truncated\.bam'   -@ 3 --shard-size 7k -r ctgA \
    "$TD/truncated.bam"
# Damage found only while reading, in a worker, in the middle of the run.
ss_fails "garbled BAM (CRC error)"  1 'garbled\.bam'     "$TD/garbled.bam"
ss_fails "garbled BAM -@3 2k"       1 'garbled\.bam'     -@ 3 --shard-size 2k "$TD/garbled.bam"
ss_fails "cut BAM (EOF block kept)" 1 'cut\.bam'         -@ 2 --shard-size 7k "$TD/cut.bam"
ss_fails "cut BAM, -r past the cut" 1 'cut\.bam'         -@ 2 --shard-size 2k -r ctgB \
    "$TD/cut.bam"
ss_keeps_target "existing -o kept: garbled input"  -@ 2 --shard-size 2k "$TD/garbled.bam"
printf '%s\n%s\n' "$S1" "$NOPE" >"$SS_WORK/list.txt"
ss_fails "-b list names a missing file" 1 'nope\.bam'    -b "$SS_WORK/list.txt"
ss_fails "-b list missing"          1 'nolist\.txt'      -b "$SS_WORK/nolist.txt"

# CRAM needs its reference: no -f, and nothing for htslib to look it up with.
ss_env=(-u REF_PATH -u REF_CACHE)
ss_fails "CRAM without reference"   1 's1\.cram'         "$TD/s1.cram"
ss_fails "CRAM without reference -@2" 1 's1\.cram'       -@ 2 --shard-size 2k "$TD/s1.cram"
ss_env=()

# ---- reference, regions, -l files -------------------------------------------
ss_fails "missing -f reference"     1 'nope\.fa'         -f "$SS_WORK/nope.fa" "$S1"
ss_fails "malformed region"         1 'ctgA:abc-x'       -r 'ctgA:abc-x' "$S1"
ss_fails "region end before start"  1 'ctgA:500-100'     -r 'ctgA:500-100' "$S1"
ss_fails "unknown contig"           1 'ctgZ'             -r ctgZ "$S1"
ss_fails "unknown contig with range" 1 'ctgZ'            -r ctgZ:1-100 "$S1"
BEDLINE3='malformed\.bed.*(line 3|:3\b)|(line 3|:3\b).*malformed\.bed'
ss_fails "malformed BED"            1 "$BEDLINE3" -l "$TD/malformed.bed" "$S1"
ss_fails "missing -l file"          1 'nope\.bed'        -l "$SS_WORK/nope.bed" "$S1"

# ---- the BAQ path: a value that names no path is refused before any work (usage) --
ss_env=(SEQSHARD_BAQ_PATH=avx512)
ss_fails "SEQSHARD_BAQ_PATH=avx512" 2 'SEQSHARD_BAQ_PATH' -f "$TD/ref.fa" "$S1"
ss_env=()

# ---- usage errors: status 2 -----------------------------------------------------
ss_fails "unknown option"           2 'bogus'            --bogus "$S1"
ss_fails "unknown short option"     2 '-J|J'             -J "$S1"
ss_fails "bad -@ value"             2 'abc'              -@ abc "$S1"
ss_fails "bad --shard-size"         2 '12x'              --shard-size 12x "$S1"
ss_fails "bad -d value"             2 'lots'             -d lots "$S1"
ss_fails "option without value"     2 'shard-size'       "$S1" --shard-size
ss_fails "no input"                 2 '.'
ss_fails "-X with an odd file count" 2 '-X'              -X "$S1"
ss_fails "-X index file missing"    1 'nope\.bai'         -X "$S1" "$SS_WORK/nope.bai"

# ---- output side -------------------------------------------------------------------
ss_case_no=$((ss_case_no + 1))
d=$SS_WORK/outdir.$ss_case_no
mkdir -p "$d"
timeout "$SS_TIMEOUT" "$SEQSHARD" pileup --quiet -o "$d/missing-dir/out.txt" "$S1" \
    >"$d/stdout" 2>"$d/stderr"
rc=$?
if [ $rc = 1 ] && [ "$(wc -l <"$d/stderr")" = 1 ] && grep -q 'missing-dir' "$d/stderr"; then
    ss_ok "-o into a missing directory"
else
    ss_bad "-o into a missing directory" "status $rc (want 1), stderr: $(head -2 "$d/stderr")"
fi

ss_keeps_target "existing -o kept: truncated input"  -@ 2 --shard-size 2k "$TD/truncated.bam"
ss_keeps_target "existing -o kept: missing input"    "$NOPE"
ss_keeps_target "existing -o kept: bad region"       -r ctgZ "$S1"

# ---- fault injection: shard 3 fails in a worker ----------------------------------
ss_env=(SEQSHARD_FAIL_SHARD=3)
ss_fails "SEQSHARD_FAIL_SHARD=3 -@2 2k"  1 'shard'       -@ 2 --shard-size 2k "$S1"
ss_fails "SEQSHARD_FAIL_SHARD=3 -@3 7k"  1 'shard'       -@ 3 --shard-size 7k -f "$REF" "$S1"
ss_fails "SEQSHARD_FAIL_SHARD=3 -@1 2k"  1 'shard'       -@ 1 --shard-size 2k "$S1" \
    "$TD/edge.bam"
ss_keeps_target "existing -o kept: SEQSHARD_FAIL_SHARD=3" -@ 2 --shard-size 2k "$S1"
ss_env=()

ss_summary
exit $?
