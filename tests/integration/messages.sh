#!/usr/bin/env bash
# messages.sh -- every failure is one line that names the file (and the shard and region
# where there is one), the cause as samtools would say it, and the fix; the exit status
# says what kind of failure it was; nothing is left under the output's name:
#   - a BGZF block failing its CRC32 (garbled.bam), in every kernel: depth, depth -a,
#     --mosdepth, pileup, pileup --realign, view, realign; samtools quickcheck passes
#     that file, so the advice is samtools view, not quickcheck;
#   - a record whose lengths do not add up, one whose aux data is damaged (view, pileup);
#   - an index whose magic is damaged ("does not load", not "no index found");
#   - random bytes, and an index, given as the input;
#   - the file-size limit (ulimit -f): SIGXFSZ names the output and the limit;
#   - a message with a path of 2.4 kB still ends with its advice, within 2 kB;
#   - bad SEQSHARD_SHARD_OUTPUT, SEQSHARD_SPILL_AT, SEQSHARD_STALL_SHARD,
#     SEQSHARD_BAQ_PATH and MOSDEPTH_PRECISION values are refused (exit 2), and the
#     precisions mosdepth 0.3.3 reads (-1, +3, 1_0) give its files.
# The damaged files are made here (bam_patch.py, python3). The MPI case (a full disk
# under mpirun) is in mpi_messages.sh.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_inputs.sh"
ss_setup
W=$SS_WORK
S1=$TD/s1.bam
REFFA=$TD/ref.fa

# msg_case NAME STATUS PATTERN KERNEL ARGS...: `seqshard KERNEL --quiet ARGS` run in a fresh directory
# ($W/c.N, as the current directory: ARGS may name out.* files there) must exit with
# STATUS, print one line on stderr matching PATTERN (extended regex) and nothing on
# stdout, and leave no out* file (temporaries for --resume, .out*, may stay).
msg_case() {
    local name=$1 want=$2 pattern=$3
    shift 3
    ss_case_no=$((ss_case_no + 1))
    local d=$W/c.$ss_case_no rc left
    mkdir -p "$d"
    (cd "$d" && exec timeout "$SS_TIMEOUT" env "${ss_env[@]}" "$SEQSHARD" "$1" --quiet "${@:2}") \
        </dev/null \
        >"$d/stdout.log" 2>"$d/stderr.log"
    rc=$?
    left=$(find "$d" -mindepth 1 -maxdepth 1 -name 'out*' -printf '%f ')
    check_message "$name" "$want" "$pattern" "$rc" "$d" "$left" "$(ss_quote "$SEQSHARD" "$@")"
}

# check_message NAME STATUS PATTERN RC DIR LEFT SHOWN: the checks of msg_case.
check_message() {
    local name=$1 want=$2 pattern=$3 rc=$4 d=$5 left=$6 shown=$7
    if [ "$rc" != "$want" ]; then
        ss_bad "$name" "exit status $rc, want $want" "$shown" \
            "stderr: $(head -3 "$d/stderr.log" | cut -c1-300)"
    elif [ "$(ss_lines "$d/stderr.log")" != 1 ]; then
        ss_bad "$name" "$(ss_lines "$d/stderr.log") lines on stderr, want one" "$shown" \
            "stderr: $(head -4 "$d/stderr.log" | cut -c1-300)"
    elif ! grep -qE -- "$pattern" "$d/stderr.log"; then
        ss_bad "$name" "the message does not match '$pattern'" "$shown" \
            "stderr: $(cut -c1-600 "$d/stderr.log")"
    elif [ -s "$d/stdout.log" ] || [ -n "$left" ]; then
        ss_bad "$name" "left output: stdout $(wc -c <"$d/stdout.log") bytes, files: $left" \
            "$shown"
    else
        ss_ok "$name"
        [ "$SS_VERBOSE" = 1 ] && echo "     $(cut -c1-400 "$d/stderr.log")"
        rm -rf "$d"
    fi
    return 0
}
ss_env=()

# ---- a BGZF block that fails its CRC32 ---------------------------------------------------
cp "$TD/garbled.bam" "$W/g.bam" && cp "$TD/garbled.bam.bai" "$W/g.bam.bai"
"$SAMTOOLS" quickcheck "$W/g.bam" ||
    ss_bad "setup" "samtools quickcheck fails g.bam: the CRC cases test nothing new"
G=$W/g.bam
# the file, shard and region, samtools view's words, and the fixes (never quickcheck's)
CRC="g\\.bam: reading shard [0-9]+ \\(ctgA:[0-9]+-[0-9]+\\) failed: the BGZF block at byte \
[0-9]+ fails its CRC32 checksum \\(samtools view stops there: \"CRC32 checksum mismatch\".*\
re-create it.*samtools view [^ ]*g\\.bam > /dev/null.*samtools index [^ ]*g\\.bam'$"
msg_case "CRC: depth"                1 "$CRC" depth -o out.txt "$G"
msg_case "CRC: depth -@2 3k"         1 "$CRC" depth -@ 2 --shard-size 3k -o out.txt "$G"
msg_case "CRC: depth -a"             1 "$CRC" depth -a -o out.txt "$G"
msg_case "CRC: depth --mosdepth"     1 "$CRC" depth --mosdepth out -@ 2 --shard-size 2k "$G"
msg_case "CRC: pileup"               1 "$CRC" pileup -o out.txt "$G"
msg_case "CRC: pileup --realign"     1 "$CRC" pileup --realign -f "$REFFA" -o out.txt "$G"
msg_case "CRC: pileup --realign -@2" 1 "$CRC" pileup --realign -f "$REFFA" -@ 2 \
    --shard-size 5k -o out.txt "$G"
msg_case "CRC: view"                 1 "$CRC" view -o out.sam "$G"
msg_case "CRC: view -b -@2 3k"       1 "$CRC" view -b -@ 2 --shard-size 3k -o out.bam "$G"
msg_case "CRC: realign"              1 "$CRC" realign -f "$REFFA" -o out.bam "$G"

# ---- damaged records -----------------------------------------------------------------------
ss_level0 "$S1" "$W/u.bam" || { echo "FAIL setup: cannot make u.bam"; exit 1; }
# patch_byte OUT K WHAT VALUE: record K of u.bam with one byte set: l_read_name, or the
# type of its first aux field; beside u.bam's index.
patch_byte() {
    python3 - "$W/u.bam" "$W/$1" "$2" "$3" "$4" "$BAM_PATCH" <<'EOF' && cp "$W/u.bam.bai" "$W/$1.bai"
import os, struct, sys
sys.path.insert(0, os.path.dirname(sys.argv[6]))
import bam_patch
src, out, k, what, value = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
b = bam_patch.Bam(src)
p = b.records()[k] + 4  # after block_size
if what == "l_read_name":
    at, byte = p + 8, int(value)
else:  # the first aux field's type: after name, CIGAR, SEQ, QUAL
    d = b.data
    n_cigar, l_seq = struct.unpack_from("<H", d, p + 12)[0], struct.unpack_from("<i", d, p + 16)[0]
    at, byte = p + 32 + d[p + 8] + 4 * n_cigar + (l_seq + 1) // 2 + l_seq + 2, ord(value)
b.patch(at, bytes([byte]))
b.save(out)
EOF
}
K=5000 # ctgA:29026
if patch_byte lname.bam $K l_read_name 0 && patch_byte aux.bam $K aux X; then
    LEN="lname\\.bam: reading shard [0-9]+ \\(ctgA:[0-9]+-[0-9]+\\) failed: a record is \
damaged: its lengths do not add up \\(samtools view stops there.*re-create it"
    msg_case "damaged l_read_name: view"   1 "$LEN" view -o out.sam "$W/lname.bam"
    msg_case "damaged l_read_name: pileup" 1 "$LEN" pileup -o out.txt "$W/lname.bam"
    AUX="aux\\.bam: a record's optional fields run past its end or have an unknown type \
\\(samtools view stops there: \"Corrupted aux data\"\\) \\(shard [0-9]+, record ctgA_[^ ]* at \
ctgA:29026\\); the file is corrupt \\(samtools quickcheck .*\\): re-create it"
    msg_case "damaged aux: view to SAM"     1 "$AUX" view -o out.sam "$W/aux.bam"
    msg_case "damaged aux: pileup"          1 "$AUX" pileup -o out.txt "$W/aux.bam"
    msg_case "damaged aux: view -@2 2k"     1 "$AUX" view -@ 2 --shard-size 2k -o out.sam \
        "$W/aux.bam"
else
    ss_bad "setup" "cannot patch u.bam"
fi

# ---- indexes, and files that are not alignments ----------------------------------------------
cp "$S1" "$W/b.bam" && cp "$S1.bai" "$W/b.bam.bai"
printf 'XXXX' | dd of="$W/b.bam.bai" bs=1 seek=0 conv=notrunc status=none
BAI="b\\.bam: its index [^ ]*b\\.bam\\.bai does not load: Invalid argument, so it is damaged \
or not an index \\(samtools says \"Could not load local index file\"\\); re-index with \
'samtools index [^ ]*b\\.bam'"
msg_case "damaged BAI magic: pileup" 1 "$BAI" pileup -o out.txt "$W/b.bam"
msg_case "damaged BAI magic: view"   1 "$BAI" view -o out.sam "$W/b.bam"
msg_case "no index"                  1 "noindex\\.bam: no index found.*samtools index" \
    view -o out.sam "$TD/noindex.bam"

head -c 100000 /dev/urandom >"$W/rand.bam"
RAND="rand\\.bam: is not a SAM, BAM or CRAM file: htslib does not recognise its first bytes \
\\(samtools view says \"Exec format error\"\\); give a coordinate-sorted, indexed BAM or CRAM"
msg_case "random bytes as input: pileup" 1 "$RAND" pileup -o out.txt "$W/rand.bam"
msg_case "random bytes as input: depth"  1 "$RAND" depth -o out.txt "$W/rand.bam"
IDX="s1\\.bam\\.bai: is an index \\(BAI index data\\), not alignments \\(samtools view says \
\"Exec format error\"\\); give the BAM or CRAM file it indexes"
msg_case "a .bai as input"  1 "$IDX" view -o out.sam "$S1.bai"
msg_case "a .crai as input" 1 "s1\\.cram\\.crai: is an index \\(CRAI" view -o out.sam \
    "$TD/s1.cram.crai"

# ---- the file-size limit ------------------------------------------------------------------------
# pileup of s1.bam is ~6 MB: a 100-block limit (102400 bytes) stops it part way
ss_case_no=$((ss_case_no + 1))
d=$W/c.$ss_case_no
mkdir -p "$d"
(cd "$d" && ulimit -f 100 && exec timeout "$SS_TIMEOUT" "$SEQSHARD" pileup --quiet -o out.txt \
    "$S1") </dev/null >"$d/stdout.log" 2>"$d/stderr.log"
rc=$?
check_message "ulimit -f 100" 153 "out\\.txt: writing it or its temporary files passed the \
file-size limit \\(ulimit -f: 102400 bytes; SIGXFSZ\\); no output written; raise the limit \
\\(ulimit -f unlimited\\) and rerun the same command with --resume" "$rc" "$d" \
    "$(find "$d" -maxdepth 1 -name out.txt -printf '%f ')" "(ulimit -f 100; seqshard pileup -o out.txt s1.bam)"

# ---- a message over 2 kB keeps its advice ------------------------------------------------------
long=$W/L
for _ in 1 2 3 4 5 6 7 8 9 10 11 12; do long=$long/$(printf 'd%.0s' {1..200}); done
mkdir -p "$long" && cp "$TD/garbled.bam" "$long/g.bam" && cp "$TD/garbled.bam.bai" "$long/g.bam.bai"
ss_case_no=$((ss_case_no + 1))
d=$W/c.$ss_case_no
mkdir -p "$d"
(cd "$d" && exec timeout "$SS_TIMEOUT" "$SEQSHARD" pileup --quiet -o out.txt "$long/g.bam") \
    </dev/null >"$d/stdout.log" 2>"$d/stderr.log"
rc=$?
bytes=$(wc -c <"$d/stderr.log")
if [ "$bytes" -gt 2048 ]; then
    ss_bad "2.4 kB path: length" "the message is $bytes bytes, over 2 kB"
else
    # the path's start and its file name, its middle cut; the advice whole, at the end
    check_message "2.4 kB path: the advice stays" 1 "^seqshard: $W/L/d+\\.\\.\\.d+/d+/g\\.bam: \
reading shard 0 .*CRC32 checksum.*samtools index $W/L/d+\\.\\.\\.d+/d+/g\\.bam'$" "$rc" "$d" \
        "$(find "$d" -maxdepth 1 -name 'out*' -printf '%f ')" "seqshard pileup -o out.txt <2.4 kB path>/g.bam"
fi

# ---- environment variables ------------------------------------------------------------------
# env_refused VALUE WHAT: the variable assignment VALUE is refused, naming it, with exit 2.
env_refused() {
    local assign=$1 var=${1%%=*}
    ss_env=("$assign")
    msg_case "$assign refused" 2 "^seqshard: $var='${assign#*=}' is not valid: give $2.*, or unset it$" \
        pileup -r ctgTiny -f "$REFFA" -o out.txt "$S1"
    ss_env=()
}
env_refused SEQSHARD_SHARD_OUTPUT=abc "a size in bytes above 0"
env_refused SEQSHARD_SHARD_OUTPUT=0 "a size in bytes above 0"
env_refused SEQSHARD_SPILL_AT=1k "a size in bytes of at least 64k"
env_refused SEQSHARD_SPILL_AT=lots "a size in bytes of at least 64k"
env_refused SEQSHARD_STALL_SHARD=x "a shard number, 0 or more"
env_refused SEQSHARD_STALL_SHARD=-3 "a shard number, 0 or more"
env_refused SEQSHARD_BAQ_PATH=avx512 "scalar, sse2, avx2 or htslib"
env_refused "MOSDEPTH_PRECISION= 5" "a whole number of decimals from -1 to 32"
env_refused MOSDEPTH_PRECISION=33 "a whole number of decimals from -1 to 32"
env_refused MOSDEPTH_PRECISION=-2 "a whole number of decimals from -1 to 32"
env_refused MOSDEPTH_PRECISION=abc "a whole number of decimals from -1 to 32"
# mosdepth mode's --by BED stops on a short line as pileup's -l stops on a bad one (mosdepth
# skips it with a warning: fewer regions, exit 0); blank and track lines are skipped
printf 'track name=x\n#c\nctgA\t0\t100\nctgA\t200\n' >"$W/short.bed"
msg_case "--mosdepth --by: a 2-column line stops the run" 1 \
    "short.bed line 4: a BED line needs 3 tab-separated columns .* this one has 2; fix the BED" \
    depth --mosdepth out --by "$W/short.bed" "$S1"
# an empty line ends the BED for mosdepth 0.3.3 (hts_getline returns 0): kept, with a warning
printf 'ctgA\t0\t100\n\nctgA\t200\t300\n' >"$W/blank.bed"
if (cd "$W" && "$SEQSHARD" depth --quiet --mosdepth blank --by "$W/blank.bed" "$S1") \
    2>"$W/blank.err" && [ "$(gzip -dc "$W/blank.regions.bed.gz" | wc -l)" = 1 ] &&
    grep -q "blank.bed line 2: an empty line ends the BED, as mosdepth reads it: the 1 lines" \
        "$W/blank.err"; then
    ss_ok "--mosdepth --by: an empty line ends the BED, as in mosdepth, with a warning"
else
    ss_bad "--mosdepth --by: an empty line ends the BED, as in mosdepth, with a warning" \
        "$(head -2 "$W/blank.err")"
fi
ss_env=(MOSDEPTH_PRECISION=x)
msg_case "MOSDEPTH_PRECISION=x refused by --mosdepth" 2 "MOSDEPTH_PRECISION='x' is not valid" \
    depth --mosdepth out "$S1"
ss_env=()

# The precisions mosdepth 0.3.3 reads: its files (ctgA's lines; contigs without reads are
# one of its known bugs, see depth_vs_mosdepth.sh).
MOSDEPTH=${MOSDEPTH:-mosdepth}
if command -v "$MOSDEPTH" >/dev/null; then
    for p in -1 +3 1_0 0; do
        mkdir -p "$W/md/$p/e" "$W/md/$p/g"
        MOSDEPTH_PRECISION=$p "$MOSDEPTH" -n "$W/md/$p/e/x" "$S1" 2>/dev/null
        MOSDEPTH_PRECISION=$p "$SEQSHARD" depth --mosdepth "$W/md/$p/g/x" -n --quiet -@ 2 \
            --shard-size 7k "$S1"
        rc=$?
        e=$(cd "$W/md/$p/e" && grep -h ^ctgA x.mosdepth.summary.txt x.mosdepth.global.dist.txt)
        g=$(cd "$W/md/$p/g" && grep -h ^ctgA x.mosdepth.summary.txt x.mosdepth.global.dist.txt)
        if [ $rc != 0 ] || [ -z "$e" ] || [ "$e" != "$g" ]; then
            ss_bad "MOSDEPTH_PRECISION=$p as mosdepth" "exit $rc, or other lines than mosdepth's" \
                "mosdepth: $(echo "$e" | head -1)" "seqshard: $(echo "$g" | head -1)"
        else
            ss_ok "MOSDEPTH_PRECISION=$p as mosdepth"
        fi
    done
else
    echo "note: no mosdepth: the MOSDEPTH_PRECISION comparisons are skipped"
fi

ss_summary
exit $?
