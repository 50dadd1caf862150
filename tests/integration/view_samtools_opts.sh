#!/usr/bin/env bash
# view_samtools_opts.sh -- samtools view 1.16's -c, -e, -s/--subsample, -x/--remove-tag,
# --keep-tag, -l/--library, -S, -? and the compression options in seqshard view: the same
# records (or count) as samtools view prints, at several thread counts and shard sizes
# (2k and 7k put shard boundaries inside reads; -c must add up every shard). -U is
# refused with a message (one output file only).
set -u
. "$(dirname "$0")/lib.sh"
ss_setup

COMBOS="1:1m 2:2k 3:7k"
S1=$TD/s1.bam
W=$SS_WORK

# same NAME ARGS...: `samtools view ARGS` and `seqshard view -@T --shard-size S ARGS`
# print the same bytes, for each T:S.
same() {
    local name=$1 combo t s
    shift
    "$SAMTOOLS" view "$@" >"$W/exp" 2>"$W/exp.err" || {
        ss_bad "$name" "samtools itself failed: the test is wrong" "$(head -2 "$W/exp.err")"
        return
    }
    ss_sweep "$COMBOS"
    for combo in $SWEEP; do
        t=${combo%%:*} s=${combo#*:}
        timeout "$SS_TIMEOUT" "$SEQSHARD" view --quiet -@ "$t" --shard-size "$s" "$@" \
            >"$W/got" 2>"$W/got.err" </dev/null
        local rc=$?
        if [ $rc != 0 ]; then
            ss_bad "$name [-@$t $s]" "exit status $rc" "$(head -2 "$W/got.err")"
        elif ! cmp -s "$W/exp" "$W/got"; then
            ss_bad "$name [-@$t $s]" "differs from samtools view $(ss_quote "$@")"
            ss_show_diff "$W/exp" "$W/got"
        else
            ss_ok "$name [-@$t $s]"
        fi
    done
}

# ---- -c: one number over every shard --------------------------------------------------
# ---- --region-file (--regions-file): -M -L FILE, each record once -----------------------
same "--region-file" --region-file "$TD/regions.bed" "$S1"
same "--regions-file -c" -c --regions-file "$TD/regions.bed" "$S1"
same "--region-file, then -L: -M -L the last" --region-file "$TD/regions.bed" \
    -L "$TD/positions.txt" "$S1"
same "-L, then --region-file" -L "$TD/positions.txt" --region-file "$TD/regions.bed" "$S1"

same "-c" -c "$S1"
same "-c -q 30 -F 0x10" -c -q 30 -F 0x10 "$S1"
same "-c region" -c "$S1" ctgA:10000-40000
same "-c two regions" -c "$S1" ctgA:1-20000 ctgB
same "-c CRAM" -c -T "$REF" "$TD/s1.cram"
same "-c edge" -c "$TD/edge.bam"
same "-c -o" -c -o /dev/stdout "$S1"

# ---- -e: htslib filter expressions --------------------------------------------------
same "-e mapq" -e 'mapq >= 30' "$S1"
same "-e flags and tags" -e 'flag.paired && !flag.reverse && [NM] <= 1' "$S1"
same "-e pos and rname" -e 'rname == "ctgB" || pos < 1000' "$S1"
same "-e qname regex" -e 'qname =~ "_1[0-9]*_"' "$S1"
same "-c -e" -c -e 'tlen > 400 || tlen < -400' "$S1"
# valid ones the check before the run must let through: tags used as a string and as a
# number, absent tags, functions, escapes
same "-e tag types" -e '[RG] =~ "s1" && [NM] + 1 > 2' "$S1"
same "-e absent tag" -c -e 'exists([SA]) || [XX] + "a"' "$S1"
same "-e length()" -c -e 'length(seq) > 100 && sclen < 5' "$S1"
same "-e escaped quote" -c -e 'qname !~ "a\"b" && library != "x(y"' "$S1"

# ---- -s / --subsample: by read name, seeded as samtools ---------------------------------
same "-s 0.5" -s 0.5 "$S1"
same "-s 1.25" -s 1.25 "$S1"
same "-s 42.1 -c" -c -s 42.1 "$S1"
same "--subsample --subsample-seed" --subsample 0.3 --subsample-seed 7 "$S1"
same "-s 3.0 keeps all" -c -s 3.0 "$S1"

# ---- -x / --keep-tag ---------------------------------------------------------------------
same "-x MD" -x MD "$S1"
same "-x XS,MD -x AS" -x XS,MD -x AS "$S1"
same "-x ^NM" -x ^NM "$S1"
same "--keep-tag NM,RG" --keep-tag NM,RG "$S1"
same "--keep-tag wins over -x" --keep-tag NM -x NM "$S1"
same "-x with a filter" -x MD -q 20 "$S1" ctgB

# BAM output with -x: the same records as samtools' BAM
"$SAMTOOLS" view --no-PG -b -x MD -o "$W/x-exp.bam" "$S1"
"$SEQSHARD" view --quiet --no-PG -@ 2 --shard-size 7k -b -x MD -o "$W/x-got.bam" "$S1"
cmp -s <("$SAMTOOLS" view "$W/x-exp.bam") <("$SAMTOOLS" view "$W/x-got.bam") &&
    ss_ok "-x to BAM" || ss_bad "-x to BAM" "records differ from samtools' BAM"

# ---- -l / --library: a copy of s1 with two libraries ------------------------------------
"$SAMTOOLS" view -h "$S1" | awk 'BEGIN { OFS = "\t" }
    /^@RG/ { print $0 "\tLB:libA"; print "@RG\tID:s1b\tSM:s1\tLB:libB"; next }
    /^@/ { print; next }
    { if (NR % 3 == 0) sub(/RG:Z:s1/, "RG:Z:s1b"); print }' |
    "$SAMTOOLS" view -b -o "$W/lib.bam" - && "$SAMTOOLS" index "$W/lib.bam"
same "-l libA" -l libA "$W/lib.bam"
same "--library libB -c" --library libB -c "$W/lib.bam"
same "-l missing" -c -l nolib "$W/lib.bam"
# the old meaning of -l (a level) is gone: -l 5 is the library "5", as in samtools
same "-l 5 is a library" -c -l 5 "$S1"

# ---- -S, -?, compression -----------------------------------------------------------------
"$SAMTOOLS" view --no-PG -bS -o "$W/bs-exp.bam" "$S1"
"$SEQSHARD" view --quiet --no-PG -bS -o "$W/bs-got.bam" "$S1" &&
    cmp -s <("$SAMTOOLS" view "$W/bs-exp.bam") <("$SAMTOOLS" view "$W/bs-got.bam") &&
    ss_ok "-bS" || ss_bad "-bS" "failed or differs"
out=$("$SEQSHARD" view -? 2>&1)
[ $? = 0 ] && [[ $out == *"--library"*"--output-fmt-option level=N"* ]] && ss_ok "-? prints the help" ||
    ss_bad "-? prints the help" "$(head -2 <<<"$out")"
"$SEQSHARD" view --quiet --no-PG -@ 2 -u -o "$W/u.bam" "$S1"
"$SEQSHARD" view --quiet --no-PG -@ 2 -b --output-fmt-option level=0 -o "$W/l0.bam" "$S1"
"$SEQSHARD" view --quiet --no-PG -@ 2 -b --output-fmt-option level=9 -o "$W/l9.bam" "$S1"
cmp -s "$W/u.bam" "$W/l0.bam" && [ "$(stat -c %s "$W/l9.bam")" -lt "$(stat -c %s "$W/l0.bam")" ] &&
    cmp -s <("$SAMTOOLS" view "$W/l0.bam") <("$SAMTOOLS" view "$W/l9.bam") &&
    ss_ok "--output-fmt-option level=N, -u" || ss_bad "--output-fmt-option level=N, -u" \
    "sizes u=$(stat -c %s "$W/u.bam") l0=$(stat -c %s "$W/l0.bam") l9=$(stat -c %s "$W/l9.bam")"

# ---- refused, with a message naming the option -------------------------------------------
refused() { # NAME PATTERN ARGS...
    local name=$1 pat=$2
    shift 2
    "$SEQSHARD" view "$@" >"$W/r.out" 2>"$W/r.err"
    local rc=$?
    [ $rc = 2 ] && grep -qE -- "$pat" "$W/r.err" && ss_ok "$name" ||
        ss_bad "$name" "status $rc" "$(head -2 "$W/r.err")"
}
refused "-U is not supported" "-U .*second file" -U "$W/un.bam" "$S1"
refused "-s without a fraction" "-s '3'" -s 3 "$S1"
refused "--subsample above 1" "--subsample '1.5'" --subsample 1.5 "$S1"
refused "-x tag of 3 letters" "-x 'ABC'" -x ABC "$S1"
refused "-c -o FILE.gz" "-c writes one line" -c -o "$W/n.txt.gz" "$S1"
refused "--output-fmt-option other" "level=N" --output-fmt-option nthreads=2 "$S1"

# -e that cannot work is refused before any work, exit 2, one line naming the expression:
# a regex that does not compile (htslib 1.16 crashes on the second record, as samtools
# does), and an expression that does not parse (htslib drops every read: 0 and exit 0)
bad_expr() { # NAME EXPR PATTERN
    timeout "$SS_TIMEOUT" "$SEQSHARD" view --quiet -e "$2" "$S1" >"$W/r.out" 2>"$W/r.err" \
        </dev/null
    local rc=$?
    if [ $rc = 2 ] && [ "$(wc -l <"$W/r.err")" = 1 ] && [ ! -s "$W/r.out" ] &&
        grep -qF -- "-e '$2'" "$W/r.err" && grep -qE -- "$3" "$W/r.err"; then
        ss_ok "$1"
    else
        ss_bad "$1" "status $rc, $(wc -l <"$W/r.err") lines on stderr, want 2 and one line" \
            "$(head -3 "$W/r.err" | cut -c1-200)"
    fi
}
bad_expr "-e regex that does not compile" 'qname=~"["' 'regular expression "\[" does not compile'
bad_expr "-e !~ regex that does not compile" 'flag.paired && qname !~ "(a"' 'does not compile'
bad_expr "-e unfinished comparison" 'mapq>' 'not a valid filter expression'
bad_expr "-e missing )" '(mapq > 5 && flag.paired' 'not a valid filter expression'
bad_expr "-e unknown name" 'mapq > 5 && nosuchfield' 'not a valid filter expression'
bad_expr "-e arithmetic on a string" 'qname + 1 > 0' 'not a valid filter expression'
bad_expr "-e unterminated string" 'qname == "abc' 'not a valid filter expression'

ss_summary
exit $?
