#!/usr/bin/env bash
# ref_env_errors.sh -- references and environment: a CRAM that cannot be
# decoded is diagnosed the same way by pileup and view (wrong reference, or a
# damaged file with the right one), naming the running kernel's reference
# option; contigs that differ name both lengths; a -f/-T that lacks the
# inputs' contigs is found at the start (a warning for pileup, which keeps
# samtools' bytes; an error for CRAM output); a .fai missing in a read-only
# directory says where to make one; bad SEQSHARD_* values are refused.
set -u
. "$(dirname "$0")/lib.sh"
ss_setup

d=$SS_WORK/ref
mkdir -p "$d"
S1=$TD/s1.bam

# fails NAME STATUS PATTERN KERNEL ARGS...: exit STATUS, one stderr line matching PATTERN,
# nothing in the output directory (ss_env applies, as for ss_fails).
fails() {
    local name=$1 want=$2 pattern=$3 kernel=$4
    shift 4
    ss_case_no=$((ss_case_no + 1))
    local o=$d/fail.$ss_case_no ext=txt
    [ "$kernel" = view ] && ext=sam
    mkdir -p "$o/out"
    local cmd=("$kernel" --quiet -o "$o/out/out.$ext" "$@")
    [ "$kernel" = view ] && cmd=(view -o "$o/out/out.$ext" "$@")
    timeout "$SS_TIMEOUT" env "${ss_env[@]}" "$SEQSHARD" "${cmd[@]}" </dev/null \
        >"$o/stdout" 2>"$o/stderr"
    local rc=$? left
    left=$(find "$o/out" -mindepth 1 -printf '%f ')
    if [ $rc != "$want" ]; then
        ss_bad "$name" "exit status $rc, want $want" "$(ss_quote "$SEQSHARD" "${cmd[@]}")" \
            "stderr: $(head -2 "$o/stderr" | cut -c1-300)"
    elif [ "$(ss_error_lines "$o/stderr" | wc -l)" != 1 ] ||
        ! ss_error_lines "$o/stderr" | grep -qE -- "$pattern"; then
        ss_bad "$name" "want one line matching: $pattern" \
            "$(ss_quote "$SEQSHARD" "${cmd[@]}")" "stderr: $(head -3 "$o/stderr" | cut -c1-300)"
    elif [ -n "$left" ]; then
        ss_bad "$name" "left files in the output directory: $left"
    else
        ss_ok "$name"
    fi
}

# warns NAME PATTERN EXPECTED ARGS...: pileup exits 0 with EXPECTED's bytes and one warning.
warns() {
    local name=$1 pattern=$2 exp=$3
    shift 3
    ss_case_no=$((ss_case_no + 1))
    local got=$d/warn.$ss_case_no
    ss_run_seqshard "$got" "$got.err" pileup --quiet "$@"
    if [ $ss_rc != 0 ]; then
        ss_bad "$name" "exit status $ss_rc" "stderr: $(head -2 "$got.err" | cut -c1-300)"
    elif ! cmp -s "$exp" "$got"; then
        ss_bad "$name" "output differs from samtools mpileup"
        ss_show_diff "$exp" "$got"
    elif [ "$(grep -c 'warning' "$got.err")" != 1 ] || ! grep -qE -- "$pattern" "$got.err"; then
        ss_bad "$name" "want one warning matching: $pattern" "stderr: $(head -3 "$got.err")"
    else
        ss_ok "$name"
    fi
}

# ---- CRAM decoding failures: the same diagnosis in both kernels --------------------------
# A reference whose ctgA differs from the one the CRAM was made with (every 7th base).
awk '/^>/ { c = $1; print; next }
     c == ">ctgA" { s = ""; for (i = 1; i <= length($0); i++) { b = substr($0, i, 1);
                    if (i % 7 == 0) b = (b == "A" ? "C" : b == "C" ? "G" : b == "G" ? "T" : "A");
                    s = s b } print s; next } { print }' "$REF" >"$d/other.fa"
"$SAMTOOLS" faidx "$d/other.fa"
WRONG='s1\.cram: cannot decode CRAM records in shard [0-9]+ .*other\.fa is not the reference '
WRONG+='the CRAM was made with \(@SQ SN:ctgA M5:[0-9a-f]+, FASTA MD5 [0-9a-f]+\)'
fails "pileup: CRAM, wrong -f"      1 "$WRONG; give the right FASTA with -f\$" pileup \
    -f "$d/other.fa" -r ctgA:1-20000 "$TD/s1.cram"
fails "pileup: CRAM, wrong -f, -@2 2k" 1 "$WRONG; give the right FASTA with -f\$" pileup \
    -@ 2 --shard-size 2k -f "$d/other.fa" -r ctgA:1-20000 "$TD/s1.cram"
fails "view: CRAM, wrong -T"        1 "$WRONG; give the right FASTA with -T\$" view \
    -T "$d/other.fa" "$TD/s1.cram" ctgA:1-20000

# The right reference, a damaged block: htslib's CRC32 check fails. quickcheck passes it.
cp "$TD/s1.cram" "$d/bad.cram"
cp "$TD/s1.cram.crai" "$d/bad.cram.crai"
printf '\377\000\377' | dd of="$d/bad.cram" bs=1 seek=600000 conv=notrunc 2>/dev/null
DAMAGED='bad\.cram: cannot decode CRAM records in shard [0-9]+ \(ctgA:[0-9-]+\): the file is '
DAMAGED+='truncated or corrupt \(.*the reference for @SQ SN:ctgA matches\)'
fails "pileup: damaged CRAM, right -f" 1 "$DAMAGED" pileup -f "$REF" "$d/bad.cram"
fails "pileup: damaged CRAM, -@2 2k"  1 "$DAMAGED" pileup -@ 2 --shard-size 2k -f "$REF" \
    "$d/bad.cram"
fails "view: damaged CRAM, right -T"  1 "$DAMAGED" view -T "$REF" "$d/bad.cram"
if grep -q 'needs the reference it was made with' "$d"/fail.*/stderr 2>/dev/null; then
    ss_bad "no 'needs the reference' with the right one" "a message blames the reference"
fi

# No reference at all: each kernel names its own option (view's -f is required flags).
ss_env=(-u REF_PATH -u REF_CACHE)
NOUR='s1\.cram: CRAM input needs its reference, and @SQ SN:ctgA names no readable local FASTA in UR; pass'
fails "view: CRAM without -T"   1 "$NOUR -T ref\\.fa" view "$TD/s1.cram"
fails "pileup: CRAM without -f" 1 "$NOUR -f ref\\.fa" pileup "$TD/s1.cram"

# ... but a CRAM whose @SQ UR names a readable local FASTA is read from it, as samtools does
cp "$REF" "$REF.fai" "$d/" # (samtools view -C writes -T's path as UR)
"$SAMTOOLS" view -h "$S1" | awk -v OFS='\t' -v ur="$d/ref.fa" \
    '/^@SQ/ { print $0, "UR:file://" ur; next } { print }' |
    "$SAMTOOLS" view -C -T "$d/ref.fa" -o "$d/ur.cram" - && "$SAMTOOLS" index "$d/ur.cram"
for k in pileup view depth; do
    case $k in
    pileup) "$SAMTOOLS" mpileup "$d/ur.cram" ;;
    view) "$SAMTOOLS" view "$d/ur.cram" ;;
    depth) "$SAMTOOLS" depth "$d/ur.cram" ;;
    esac >"$d/exp.ur.$k" 2>/dev/null
    env "${ss_env[@]}" "$SEQSHARD" "$k" --quiet -@ 2 --shard-size 5k "$d/ur.cram" \
        >"$d/got.ur.$k" 2>"$d/err.ur.$k"
    if [ -s "$d/exp.ur.$k" ] && cmp -s "$d/exp.ur.$k" "$d/got.ur.$k"; then
        ss_ok "$k: CRAM with @SQ UR: a local FASTA, no -f/-T = samtools"
    else
        ss_bad "$k: CRAM with @SQ UR: a local FASTA, no -f/-T = samtools" "$(head -2 "$d/err.ur.$k")"
    fi
done
mv "$d/ref.fa" "$d/ref.moved.fa"
fails "CRAM whose UR names a missing FASTA" 1 \
    'ur\.cram: CRAM input needs its reference, and @SQ SN:ctgA names no readable local FASTA in UR' \
    pileup "$d/ur.cram"
ss_env=()

# ---- contigs --------------------------------------------------------------------------------
"$SAMTOOLS" view -H "$S1" | sed 's/SN:ctgB\tLN:40000/SN:ctgB\tLN:40001/' >"$d/len.sam"
"$SAMTOOLS" reheader "$d/len.sam" "$S1" >"$d/len.bam"
"$SAMTOOLS" index "$d/len.bam"
fails "inputs' ctgB lengths differ" 1 \
    'len\.bam: its @SQ contigs differ from .*s1\.bam.s \(contig #2: ctgB, 40001 bp, here; ctgB, 40000 bp, there\)' \
    pileup "$S1" "$d/len.bam"

# -f without ctgB (which has reads): samtools mpileup 1.16 prints N there, exit 0; seqshard
# stops before any work, unless --allow-ref-mismatch asks for samtools' output
"$SAMTOOLS" faidx "$REF" ctgA ctgEmpty ctgTiny >"$d/noB.fa"
"$SAMTOOLS" faidx "$d/noB.fa"
"$SAMTOOLS" mpileup -f "$d/noB.fa" "$S1" >"$d/exp.noB" 2>/dev/null
fails "-f lacking a contig the reads are on: stopped" 1 \
    'noB\.fa has no contig ctgB \(40000 bp in .*s1\.bam\): give the FASTA the reads were aligned to with -f, or --allow-ref-mismatch to go on as samtools mpileup does' \
    pileup -f "$d/noB.fa" "$S1"
fails "mpileup -f lacking a contig the reads are on: stopped" 1 \
    'noB\.fa has no contig ctgB .*--allow-ref-mismatch to go on as bcftools mpileup does' \
    mpileup -f "$d/noB.fa" "$S1"
warns "--allow-ref-mismatch: warned at start, samtools' bytes" \
    'warning: .*noB\.fa has no contig ctgB \(40000 bp in .*s1\.bam\): .*as samtools mpileup does \(--allow-ref-mismatch\)$' \
    "$d/exp.noB" -@ 2 --shard-size 8k --allow-ref-mismatch -f "$d/noB.fa" "$S1"
# -f with a shorter ctgB: samtools skips the reads past its end
{
    "$SAMTOOLS" faidx "$REF" ctgA
    "$SAMTOOLS" faidx "$REF" ctgB:1-30000 | sed 's/^>.*/>ctgB/'
    "$SAMTOOLS" faidx "$REF" ctgEmpty ctgTiny
} >"$d/shortB.fa"
"$SAMTOOLS" faidx "$d/shortB.fa"
"$SAMTOOLS" mpileup -f "$d/shortB.fa" "$S1" >"$d/exp.shortB" 2>/dev/null
fails "-f with another length: stopped" 1 \
    'contig ctgB is 30000 bp in .*shortB\.fa but 40000 bp in .*s1\.bam: give the FASTA' \
    pileup -f "$d/shortB.fa" "$S1"
# (and warned again where reads start past the FASTA's end, as before)
ss_run_seqshard "$d/got.shortB" "$d/got.shortB.err" pileup --quiet --allow-ref-mismatch \
    -f "$d/shortB.fa" "$S1"
[ $ss_rc = 0 ] && cmp -s "$d/exp.shortB" "$d/got.shortB" &&
    grep -qE 'warning: contig ctgB is 30000 bp in .*shortB\.fa but 40000 bp in .*s1\.bam' \
        "$d/got.shortB.err" &&
    ss_ok "-f with another length, --allow-ref-mismatch: warned, samtools' bytes" ||
    ss_bad "-f with another length, --allow-ref-mismatch: warned, samtools' bytes" "exit $ss_rc" \
        "$(head -2 "$d/got.shortB.err")"
# only the contigs the run reads count: a region on ctgA, or a FASTA without ctgEmpty (no
# reads), is no mismatch
"$SAMTOOLS" mpileup -f "$d/shortB.fa" -r ctgA "$S1" >"$d/exp.shortA" 2>/dev/null
ss_run_seqshard "$d/got.shortA" "$d/got.shortA.err" pileup --quiet -f "$d/shortB.fa" -r ctgA "$S1"
[ $ss_rc = 0 ] && cmp -s "$d/exp.shortA" "$d/got.shortA" && [ ! -s "$d/got.shortA.err" ] &&
    ss_ok "-f differing only where the run does not read: no message" ||
    ss_bad "-f differing only where the run does not read: no message" "exit $ss_rc" \
        "$(head -2 "$d/got.shortA.err")"
# CRAM output against it would be a wrong file: refused before any work
fails "view -C -T with another length" 1 \
    'contig ctgB is 30000 bp in .*shortB\.fa but 40000 bp in .*s1\.bam: CRAM output against it .*with -T$' \
    view -C -T "$d/shortB.fa" "$S1"

# ---- .fai missing beside a FASTA in a read-only directory ---------------------------------
# Root writes anywhere, so run that case as nobody when we are root.
as_user=()
[ "$(id -u)" = 0 ] && command -v setpriv >/dev/null &&
    as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
if [ "$(id -u)" != 0 ] || [ ${#as_user[@]} -gt 0 ]; then
    ro=$d/ro
    mkdir -p "$ro"
    cp "$REF" "$ro/ref.fa"
    cp "$S1" "$S1.bai" "$d/"
    chmod 755 "$SS_WORK" "$d"
    chmod 644 "$d/s1.bam" "$d/s1.bam.bai"
    chmod 555 "$ro"
    ss_case_no=$((ss_case_no + 1))
    "${as_user[@]}" "$SEQSHARD" pileup --quiet -f "$ro/ref.fa" "$d/s1.bam" >/dev/null \
        2>"$d/ro.err"
    rc=$?
    RO="ref\.fa: no \.fai index, and its directory .*/ro is read-only, so 'samtools faidx' cannot "
    RO+="write one there; index a link to it in a writable directory: ln -s .*/ro/ref\.fa "
    RO+="/tmp/ref\.fa && samtools faidx /tmp/ref\.fa, then give /tmp/ref\.fa as the reference"
    if [ $rc = 1 ] && [ "$(wc -l <"$d/ro.err")" = 1 ] && grep -qE "$RO" "$d/ro.err"; then
        ss_ok ".fai missing in a read-only directory"
    else
        ss_bad ".fai missing in a read-only directory" "status $rc" "$(head -2 "$d/ro.err")"
    fi
    chmod 755 "$ro"
fi

# ---- SEQSHARD_* values -------------------------------------------------------------------
bad_env() { # VAR=VALUE PATTERN
    ss_env=("$1")
    fails "$1 refused" 2 "^seqshard: ${1%%=*}='${1#*=}' is not valid: give $2, or unset it\$" \
        pileup -r ctgA:1-100 "$S1"
    ss_env=()
}
bad_env SEQSHARD_MAX_OPEN_FILES=abc 'a whole number of files, 0 or more'
bad_env SEQSHARD_MAX_OPEN_FILES=-3 'a whole number of files, 0 or more'
bad_env SEQSHARD_STORE_MEM=lots 'a size in bytes, 0 or more, with an optional k, m or g \(e\.g\. 512m\)'
bad_env SEQSHARD_PROGRESS_INTERVAL=0 'a number of seconds above 0 \(e\.g\. 0\.5\)'
bad_env SEQSHARD_HTS_LOG=yes '1 \(show htslib.s log lines\) or 0'
bad_env SEQSHARD_FAIL_SHARD=x 'a shard number, 0 or more'
bad_env SEQSHARD_KILL_SHARD=-1 'a shard number, 0 or more'
bad_env SEQSHARD_KILL_RANK=one 'a rank number, 0 or more'
# good values still run
"$SAMTOOLS" mpileup -r ctgA:1-3000 "$S1" >"$d/exp.env" 2>/dev/null
ss_case_no=$((ss_case_no + 1))
SEQSHARD_MAX_OPEN_FILES=0 SEQSHARD_STORE_MEM=1m SEQSHARD_PROGRESS_INTERVAL=0.5 \
    SEQSHARD_HTS_LOG=0 "$SEQSHARD" pileup --quiet -r ctgA:1-3000 "$S1" >"$d/got.env" 2>/dev/null
if [ $? = 0 ] && cmp -s "$d/exp.env" "$d/got.env"; then
    ss_ok "good SEQSHARD_* values run"
else
    ss_bad "good SEQSHARD_* values run" "failed or differs"
fi

ss_summary
exit $?
