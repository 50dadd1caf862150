#!/usr/bin/env bash
# view_vs_samtools.sh -- seqshard view must give the records samtools view
# gives: `samtools view` of our output prints what `samtools view` of
# samtools' own output prints, for every conversion (BAM/CRAM in, SAM/BAM/
# CRAM out), filter and region, at any thread count and shard size. BAM
# output is checked harder: its decompressed bytes equal samtools' (header
# and records). Both sides run with --no-PG except in the @PG checks.
#
# Thread/shard combinations (T:S) as in pileup_vs_samtools.sh: small shards
# (2k, 7k) put boundaries inside reads, 1m gives one shard per contig.
# Expected output is computed here from samtools, never stored.
set -u
. "$(dirname "$0")/lib.sh"
ss_setup

FULL="1:1m 2:2k 3:7k 2:50k"
SMALL="2:2k 3:7k"
S1=$TD/s1.bam
EDGE=$TD/edge.bam
S1C=$TD/s1.cram
EDGEC=$TD/edge.cram
HAVE_BGZIP=0
command -v bgzip >/dev/null && HAVE_BGZIP=1
VIEW_LAUNCH=()   # e.g. (mpirun -np 2) for the MPI cases

# run_view OUT ERR ARGS...: seqshard view with a timeout; sets ss_rc.
run_view() {
    local out=$1 err=$2
    shift 2
    timeout "$SS_TIMEOUT" "${VIEW_LAUNCH[@]}" "$SEQSHARD" view "$@" >"$out" 2>"$err"
    ss_rc=$?
    [ $ss_rc = 124 ] && echo "seqshard: timed out after ${SS_TIMEOUT}s (hang?)" >>"$err"
    return 0
}

# as_text FILE OUT: a SAM/BAM/CRAM file's header and records as SAM text.
as_text() {
    "$SAMTOOLS" view -h --no-PG -T "$REF" "$1" >"$2" 2>"$2.err"
}

# check_file NAME EXP GOT FMT CMD...: compare two BAM/CRAM files.
check_file() {
    local name=$1 exp=$2 got=$3 fmt=$4
    shift 4
    if ! "$SAMTOOLS" quickcheck "$got" 2>/dev/null; then
        ss_bad "$name" "samtools quickcheck fails on the output" "seqshard: $(ss_quote "$@")"
        return
    fi
    as_text "$exp" "$exp.txt"
    as_text "$got" "$got.txt"
    if ! cmp -s "$exp.txt" "$got.txt"; then
        ss_bad "$name" "records differ from samtools' (samtools view of both files)" \
            "seqshard: $(ss_quote "$@")"
        ss_show_diff "$exp.txt" "$got.txt"
        return
    fi
    if [ "$fmt" = bam ] && [ $HAVE_BGZIP = 1 ] &&
        ! cmp -s <(bgzip -dc "$exp") <(bgzip -dc "$got"); then
        ss_bad "$name" "decompressed BAM bytes differ from samtools' (same records as text)" \
            "seqshard: $(ss_quote "$@")"
        return
    fi
    ss_ok "$name"
    rm -f "$got" "$got.txt" "$got.txt.err"
}

# ss_view NAME COMBOS FMT ARGS...
#   FMT sam: compare the bytes printed. FMT bam|cram: both write -O FMT -o FILE;
#   compare the files as check_file does. ARGS go to both tools unchanged.
ss_view() {
    local name=$1 combos=$2 fmt=$3
    shift 3
    ss_case_no=$((ss_case_no + 1))
    local d=$SS_WORK/view.$ss_case_no
    mkdir -p "$d"
    local exp=$d/exp.$fmt exprc
    local -a fmtargs=()
    [ "$fmt" = sam ] || fmtargs=(-O "$fmt" -o "$exp")
    "$SAMTOOLS" view --no-PG "${fmtargs[@]}" "$@" >"$d/exp.out" 2>"$d/exp.err"
    exprc=$?
    [ "$fmt" = sam ] && exp=$d/exp.out
    if [ $exprc != 0 ]; then
        ss_bad "$name" "samtools itself failed (status $exprc): the test is wrong" \
            "$(ss_quote "$SAMTOOLS" view --no-PG "${fmtargs[@]}" "$@")" "$(head -3 "$d/exp.err")"
        return 1
    fi
    local combo t s got cmd before=$ss_failed
    ss_sweep "$combos"
    for combo in $SWEEP; do
        t=${combo%%:*}
        s=${combo#*:}
        got=$d/got.$t.$s.$fmt
        local label="$name [$fmt -@$t --shard-size $s]"
        if [ "$fmt" = sam ]; then
            cmd=(-@ "$t" --shard-size "$s" --quiet --no-PG "$@")
            run_view "$got" "$got.err" "${cmd[@]}"
        else
            cmd=(-@ "$t" --shard-size "$s" --quiet --no-PG -O "$fmt" -o "$got" "$@")
            run_view "$d/stdout" "$got.err" "${cmd[@]}"
        fi
        if [ $ss_rc != 0 ]; then
            ss_bad "$label" "exit status $ss_rc, samtools 0" \
                "seqshard: $(ss_quote "$SEQSHARD" view "${cmd[@]}")" "stderr: $(head -3 "$got.err")"
        elif [ "$fmt" != sam ] && [ -s "$d/stdout" ]; then
            ss_bad "$label" "wrote to stdout although -o was given"
        elif [ "$fmt" != sam ]; then
            check_file "$label" "$exp" "$got" "$fmt" "$SEQSHARD" view "${cmd[@]}"
        elif ! cmp -s "$exp" "$got"; then
            ss_bad "$label" "output differs from samtools" \
                "seqshard: $(ss_quote "$SEQSHARD" view "${cmd[@]}")" \
                "samtools: $(ss_quote "$SAMTOOLS" view --no-PG "$@")"
            ss_show_diff "$exp" "$got"
        else
            ss_ok "$label"
            rm -f "$got" "$got.err"
        fi
    done
    [ "$ss_failed" = "$before" ] && rm -rf "$d"
    return 0
}

# ss_view_fails NAME PATTERN ARGS...: must exit non-zero with a "seqshard:" line
# matching PATTERN (grep -E) and leave no output file. Env from VIEW_ENV.
VIEW_ENV=()
ss_view_fails() {
    local name=$1 pattern=$2
    shift 2
    ss_case_no=$((ss_case_no + 1))
    local d=$SS_WORK/fail.$ss_case_no
    mkdir -p "$d/out"
    local cmd=(-@ 2 --shard-size 7k --quiet -o "$d/out/out.bam" "$@")
    timeout "$SS_TIMEOUT" env "${VIEW_ENV[@]}" "$SEQSHARD" view "${cmd[@]}" >"$d/stdout" \
        2>"$d/stderr"
    local rc=$? line
    line=$(grep '^seqshard: ' "$d/stderr" | head -1)
    if [ $rc = 0 ] || [ $rc = 124 ]; then
        ss_bad "$name" "exit status $rc, expected a failure" \
            "$(ss_quote "$SEQSHARD" view "${cmd[@]}")"
    elif ! grep -Eq -- "$pattern" <<<"$line"; then
        ss_bad "$name" "error message does not match /$pattern/" \
            "$(ss_quote "$SEQSHARD" view "${cmd[@]}")" "stderr: $(head -c 600 "$d/stderr")"
    elif [ -n "$(ls -A "$d/out")" ]; then
        ss_bad "$name" "left files behind: $(ls -A "$d/out" | tr '\n' ' ')" \
            "$(ss_quote "$SEQSHARD" view "${cmd[@]}")"
    else
        ss_ok "$name"
        rm -rf "$d"
    fi
}

# ---- conversions: every input/output pair ----------------------------------------
for f in sam bam cram; do
    ss_view "BAM->${f^^} s1"            "$FULL"  "$f" -T "$REF" "$S1"
    ss_view "BAM->${f^^} edge"          "$FULL"  "$f" -T "$REF" "$EDGE"
    ss_view "CRAM->${f^^} s1"           "$FULL"  "$f" -T "$REF" "$S1C"
    ss_view "CRAM->${f^^} edge"         "$SMALL" "$f" -T "$REF" "$EDGEC"
done
ss_view "--reference edge"              "$SMALL" bam --reference "$REF" "$EDGEC"
ss_view "CSI-indexed input"             "$SMALL" bam "$TD/s1csi.bam"

# ss_view_stdout NAME FMT ARGS...: both write FMT (-b, -C, -1, -u in ARGS) to stdout.
ss_view_stdout() {
    local name=$1 fmt=$2
    shift 2
    ss_case_no=$((ss_case_no + 1))
    local d=$SS_WORK/stdout.$ss_case_no
    mkdir -p "$d"
    local cmd=(-@ 2 --shard-size 2k --quiet --no-PG "$@")
    "$SAMTOOLS" view --no-PG "$@" >"$d/exp.$fmt" 2>"$d/exp.err"
    run_view "$d/got.$fmt" "$d/got.err" "${cmd[@]}"
    if [ $ss_rc != 0 ]; then
        ss_bad "$name" "exit status $ss_rc" "seqshard: $(ss_quote "$SEQSHARD" view "${cmd[@]}")" \
            "stderr: $(head -3 "$d/got.err")"
    else
        check_file "$name" "$d/exp.$fmt" "$d/got.$fmt" "$fmt" "$SEQSHARD" view "${cmd[@]}"
    fi
}
# ss_view_samfile NAME FILE ARGS...: both write -o FILE (.sam, or .sam.gz compared
# decompressed); nothing but FILE may be left in its directory.
ss_view_samfile() {
    local name=$1 file=$2
    shift 2
    ss_case_no=$((ss_case_no + 1))
    local d=$SS_WORK/samfile.$ss_case_no
    mkdir -p "$d/exp" "$d/got"
    "$SAMTOOLS" view --no-PG -o "$d/exp/$file" "$@" 2>"$d/exp.err"
    local cmd=(-@ 3 --shard-size 2k --quiet --no-PG -o "$d/got/$file" "$@")
    run_view "$d/stdout" "$d/got.err" "${cmd[@]}"
    local cat=cat
    [ "${file%.gz}" != "$file" ] && cat="bgzip -dc"
    if [ $ss_rc != 0 ] || [ ! -f "$d/got/$file" ]; then
        ss_bad "$name" "exit status $ss_rc or no file" "stderr: $(head -2 "$d/got.err")"
    elif [ "$(ls -A "$d/got")" != "$file" ] || [ -s "$d/stdout" ]; then
        ss_bad "$name" "other files next to the output, or bytes on stdout"
    elif ! cmp -s <($cat "$d/exp/$file") <($cat "$d/got/$file"); then
        ss_bad "$name" "file differs from samtools -o" \
            "seqshard: $(ss_quote "$SEQSHARD" view "${cmd[@]}")"
    else
        ss_ok "$name"
        rm -rf "$d"
    fi
}
ss_view_samfile "-o FILE.sam (no header)" out.sam "$EDGE"
ss_view_samfile "-h -o FILE.sam"        out.sam -h "$EDGE"
ss_view_samfile "-h -o FILE.sam from CRAM" out.sam -h -T "$REF" "$EDGEC"

ss_view_stdout "-b to stdout"           bam -b "$S1"
ss_view_stdout "-u to stdout"           bam -u "$EDGE"
ss_view_stdout "-1 to stdout"           bam -1 "$EDGE"
ss_view_stdout "-C to stdout"           cram -C -T "$REF" "$S1"

# ---- header ------------------------------------------------------------------------
ss_view "-h s1"                         "$SMALL" sam -h "$S1"
ss_view "-h CRAM"                       "$SMALL" sam -h -T "$REF" "$S1C"
ss_view "-H s1"                         "$SMALL" sam -H "$S1"
ss_view "-H BAM"                        "$SMALL" bam -H "$EDGE"
ss_view "-H CRAM"                       "$SMALL" cram -H -T "$REF" "$EDGE"

# ---- filters -----------------------------------------------------------------------
ss_view "-q 20 edge"                    "$FULL"  sam -q 20 "$EDGE"
ss_view "-q 30 s1 BAM"                  "$SMALL" bam -q 30 "$S1"
ss_view "-f 2 s1"                       "$SMALL" sam -f 2 "$S1"
ss_view "-f PAIRED,REVERSE"             "$SMALL" sam -f PAIRED,REVERSE "$EDGE"
ss_view "-F 0x904 edge"                 "$SMALL" bam -F 0x904 "$EDGE"
ss_view "-F UNMAP s1"                   "$SMALL" sam -F UNMAP "$S1"
ss_view "-F 4 CRAM"                     "$SMALL" cram -F 4 -T "$REF" "$S1C"
ss_view "--rf 0x900 edge"               "$SMALL" sam --rf 0x900 "$EDGE"
ss_view "-G 0x3 s1"                     "$SMALL" sam -G 0x3 "$S1"
ss_view "-L regions.bed s1"             "$FULL"  sam -L "$TD/regions.bed" "$S1"
ss_view "-L regions.bed edge BAM"       "$SMALL" bam -L "$TD/regions.bed" "$EDGE"
ss_view "-L positions.txt edge"         "$SMALL" sam -L "$TD/positions.txt" "$EDGE"
ss_view "-L CRAM"                       "$SMALL" sam -L "$TD/regions.bed" -T "$REF" "$S1C"
ss_view "filters combined"              "$SMALL" bam -q 10 -f 1 -F 0x400 -L "$TD/regions.bed" \
    "$EDGE"

# ---- regions (one region each; several below) -----------------------------------------
ss_view "region ctgA"                   "$FULL"  sam "$S1" ctgA
ss_view "region ctgA:10000-20000"       "$FULL"  sam "$S1" ctgA:10000-20000
ss_view "region ctgA:13990-14100 edge"  "$SMALL" bam "$EDGE" ctgA:13990-14100
ss_view "region ctgA:1951 (to end)"     "$SMALL" sam "$EDGE" ctgA:1951
ss_view "region ctgB:39950-40000"       "$SMALL" sam "$EDGE" ctgB:39950-40000
ss_view "region ctgA:17000-17200 (unmapped placed)" "$SMALL" sam "$EDGE" ctgA:17000-17200
ss_view "region ctgTiny:1-100"          "$SMALL" sam "$EDGE" ctgTiny:1-100
ss_view "region ctgEmpty"               "$SMALL" sam "$EDGE" ctgEmpty
ss_view "region CRAM"                   "$SMALL" cram -T "$REF" "$S1C" ctgB:5000-15000
ss_view "region + -L + -q"              "$SMALL" sam -L "$TD/regions.bed" -q 20 "$S1" ctgA

# ---- CRAM input read by container ----------------------------------------------------------
# A CRAM shard decodes the containers that start in it (kernels/view/view_crai.c): records
# past the shard's end in its last container are its own, the next shard starts at its
# first container. s1.small.cram has ~90 containers of two slices, so 2k/7k shards cut
# between and inside them; edge.multi.cram has containers of several contigs, which
# fall back to region queries.
S1SC=$TD/s1.small.cram
ss_view "small containers, whole file"  "$FULL"  sam -T "$REF" "$S1SC"
ss_view "small containers, regions"     "$SMALL" sam -T "$REF" "$S1SC" ctgB:5000-15000 \
    ctgA:3001-3001 ctgA:100-9000 '*' ctgA:20000
ss_view "small containers, -M"          "$SMALL" sam -M -T "$REF" "$S1SC" ctgB:5000-15000 \
    ctgA:100-9000 ctgB:1-6000 ctgA:8000-12000
ss_view "small containers to BAM"       "$SMALL" bam -F 16 -T "$REF" "$S1SC"
ss_view "multi-contig containers"       "$FULL"  sam -T "$REF" "$TD/edge.multi.cram"
ss_view "multi-contig containers, regions" "$SMALL" sam -T "$REF" "$TD/edge.multi.cram" \
    ctgB:39950-40000 ctgA:1951 ctgTiny '*'

# ---- BAM to BAM with nothing filtered: the input's blocks are copied -------------------------
# (kernels/view/view_copy.c). The records are checked against samtools above (whole file, every
# thread count and shard size); here: the data blocks really are the input's, -l makes new
# ones, and an input whose header shares a block with records is encoded again.
copy_check() {
    local name=$1 want=$2
    shift 2
    local out=$SS_WORK/copied.bam
    "$SEQSHARD" view --quiet -o "$out" "$@" >/dev/null 2>"$out.err"
    local tailbytes=$(( $(stat -c %s "$S1") / 2 ))
    if cmp -s <(tail -c "$tailbytes" "$S1") <(tail -c "$tailbytes" "$out"); then
        got=copied
    else
        got=encoded
    fi
    if [ "$got" = "$want" ]; then
        ss_ok "$name"
    else
        ss_bad "$name" "the data blocks were $got, expected $want" \
            "seqshard: $(ss_quote "$SEQSHARD" view -o "$out" "$@")"
    fi
}
copy_check "BAM->BAM copies blocks"     copied  -@ 2 --shard-size 7k -b "$S1"
copy_check "level=6 encodes again"    encoded -@ 2 --output-fmt-option level=6 -b "$S1"
copy_check "-q 1 encodes again"         encoded -@ 2 -q 1 -b "$S1"
# the copy still counts the records (the walk through the blocks), for --report
"$SEQSHARD" view --quiet -@ 3 --shard-size 2k -b -o "$SS_WORK/copied.bam" \
    --report "$SS_WORK/copied.json" "$S1"
got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["totals"]["reads"])' \
    "$SS_WORK/copied.json")
want=$("$SAMTOOLS" view -c "$S1")
if [ "$got" = "$want" ]; then ss_ok "block copy counts the records"
else ss_bad "block copy counts the records" "--report says $got reads, samtools view -c $want"; fi
"$SAMTOOLS" view -u --no-PG "$S1" | bgzip -dc | bgzip -c >"$SS_WORK/oneblock.bam"
"$SAMTOOLS" index "$SS_WORK/oneblock.bam"
ss_view "header shares a block"         "$SMALL" bam "$SS_WORK/oneblock.bam"

# ---- several regions ---------------------------------------------------------------------
# samtools view (without -M) queries each region in the order given and prints its
# records, so a record in two regions is printed twice; "*" is the unplaced unmapped
# reads, "." the whole file. -@ 1 to 3 at two shard sizes (2k cuts inside the regions).
MULTI="1:2k 2:7k 3:2k 3:7k"
ss_view "regions overlapping"           "$MULTI" sam "$S1" ctgA:1-1000 ctgA:500-1500
ss_view "regions nested, repeated"      "$MULTI" sam "$S1" ctgA:1000-20000 ctgA:5000-6000 \
    ctgA:1000-20000
ss_view "regions out of order"          "$MULTI" sam "$S1" ctgB:1-300 ctgA:1-300
ss_view "regions on three contigs"      "$MULTI" sam "$S1" ctgTiny ctgB:20000-30000 ctgA
ss_view "region * (unplaced)"           "$MULTI" sam "$EDGE" '*'
ss_view "regions with * first and twice" "$MULTI" sam "$EDGE" '*' ctgA:1900-2100 '*'
ss_view "regions * mixed"               "$MULTI" sam "$S1" ctgB:39000-40000 '*' ctgA:1-5000
ss_view "regions without reads"         "$MULTI" sam "$EDGE" ctgEmpty ctgA:1-100 \
    ctgB:30000-30010 ctgA:70000-80000 ctgTiny
ss_view "regions to the contig end"     "$MULTI" sam "$EDGE" ctgA:1951 ctgA:13990-14100 \
    ctgA:17000-17200
ss_view "region . (whole file) mixed"   "$SMALL" sam "$EDGE" ctgTiny . ctgA:1-100
ss_view "regions + filters"             "$SMALL" sam -q 20 -F 0x10 -L "$TD/regions.bed" "$S1" \
    ctgB ctgA:1-20000 ctgA:10000-30000
ss_view "regions BAM"                   "$SMALL" bam "$EDGE" ctgA:1900-2100 ctgTiny '*' ctgA:1-100
ss_view "regions CRAM"                  "$SMALL" cram -T "$REF" "$S1" ctgB:5000-15000 '*' \
    ctgA:100-9000 ctgB:1-6000
ss_view "regions from CRAM"             "$SMALL" sam -T "$REF" "$EDGEC" ctgB:1-300 '*' \
    ctgA:1-300 ctgA:100-200
ss_view "regions -h"                    "$SMALL" sam -h "$S1" ctgB:1-500 ctgA:1-500
# Records placed past their contig's end (c1 is 100 bp; r3 at 150): a region query
# returns them when the region's END reaches them ("c1", "c1:90", "c1:40-200"), not for
# "c1:40-100", whose END is the contig's end.
PAST=$SS_WORK/past.bam
printf '@HD\tVN:1.6\tSO:coordinate\n@SQ\tSN:c1\tLN:100\n@SQ\tSN:c2\tLN:100\n%s' \
    "$(printf 'r%s\t0\t%s\t%s\t60\t10M\t*\t0\t0\tACGTACGTAC\t*\n' 1 c1 50 2 c1 95 3 c1 150 \
        4 c2 10)"$'\n'"$(printf 'u5\t4\t*\t0\t0\t*\t*\t0\t0\tACGT\t*')"$'\n' |
    "$SAMTOOLS" view -b -o "$PAST" - && "$SAMTOOLS" index "$PAST"
ss_view "past the contig end, whole file" "$SMALL" sam "$PAST"
ss_view "past the contig end, regions" "$MULTI" sam "$PAST" c1:40-100 c1:90 c1 c1:40-200 \
    c1:1-100 '*' c2:5-300
# A region samtools cannot parse: it warns, skips it and exits 0; seqshard stops with
# one line naming the region (a deliberate difference, docs/user-guide.md).
ss_view_fails "regions with a bad one"  "unknown contig 'bogus' in region 'bogus'" \
    "$S1" ctgA:1-1000 bogus ctgA:500-1500
ss_view_fails "regions with a malformed one" "malformed region 'ctgA:20-10'" \
    "$S1" ctgA:1-1000 ctgA:20-10

# ---- -M: the regions as one set ------------------------------------------------------------
# samtools view -M sorts the regions (header order, "*" last), merges those that overlap
# and prints each record once, in file order.
ss_view "-M overlapping"                "$MULTI" sam -M "$S1" ctgA:1-1000 ctgA:500-1500
ss_view "-M out of order, short gaps"   "$MULTI" sam -M "$S1" ctgA:1250-1300 ctgA:1000-1100 \
    ctgA:1150-1200 ctgB:1-300
ss_view "-M touching, nested, repeated" "$MULTI" sam -M "$EDGE" ctgA:1-10 ctgA:11-20 ctgA:5-8 \
    ctgA:1-10
ss_view "-M with *"                     "$MULTI" sam -M "$EDGE" '*' ctgA:1900-2100 ctgTiny '*' \
    ctgA:1-100
ss_view "-M to the contig end"          "$SMALL" sam -M "$EDGE" ctgA:17000-17200 ctgA:1951 \
    ctgA:13990-14100
ss_view "-M ."                          "$SMALL" sam -M "$EDGE" ctgA:1-100 .
ss_view "-M past the contig end"        "$SMALL" sam -M "$PAST" c1:40-100 c1:90 c2:5-300 c1:40-60
ss_view "-M BAM"                        "$SMALL" bam -M "$S1" ctgB:5000-15000 '*' ctgA:100-9000 \
    ctgB:1-6000
ss_view "-M CRAM in and out"            "$SMALL" cram -M -T "$REF" "$S1C" ctgB:5000-15000 '*' \
    ctgA:100-9000 ctgB:1-6000
ss_view "-M -L (the BED's regions)"     "$SMALL" sam -M -L "$TD/regions.bed" "$S1"
# samtools: "No regions or BED file have been provided. Aborting." (status 1)
ss_view_fails "-M without regions"      'view -M: no regions' -M "$S1"

# ---- empty input -----------------------------------------------------------------------
"$SAMTOOLS" view -b --no-PG -H -o "$SS_WORK/empty.bam" "$S1" &&
    "$SAMTOOLS" index "$SS_WORK/empty.bam"
for f in sam bam cram; do
    ss_view "empty input ${f^^}"        "$SMALL" "$f" -T "$REF" "$SS_WORK/empty.bam"
done

# ---- @PG line and header ------------------------------------------------------------------
pg_check() { # NAME FMT INPUT: header = input's + one @PG ID:seqshard line, chained with PP
    local name=$1 fmt=$2 in=$3 d=$SS_WORK/pg.$1
    mkdir -p "$d"
    run_view "$d/stdout" "$d/err" -@ 2 --shard-size 7k --quiet -h -O "$fmt" -T "$REF" \
        -o "$d/out.$fmt" "$in"
    "$SAMTOOLS" view -H --no-PG -T "$REF" "$in" | grep -v '^@SQ' >"$d/in.h"
    "$SAMTOOLS" view -H --no-PG -T "$REF" "$d/out.$fmt" | grep -v '^@SQ' >"$d/out.h"
    local last pp
    last=$(tail -1 "$d/out.h")
    pp=$(grep '^@PG' "$d/in.h" | tail -1 | sed -n 's/.*\tID:\([^\t]*\).*/\1/p')
    local want="^@PG	ID:seqshard	PN:seqshard	${pp:+PP:$pp	}VN:[^	]+	CL:seqshard view "
    if [ $ss_rc != 0 ]; then
        ss_bad "@PG $name" "exit status $ss_rc" "stderr: $(head -2 "$d/err")"
    elif ! cmp -s "$d/in.h" <(head -n -1 "$d/out.h"); then
        ss_bad "@PG $name" "header lines other than @SQ and the new @PG differ from the input's"
        ss_show_diff "$d/in.h" "$d/out.h"
    elif ! grep -Eq "$want" <<<"$last"; then
        ss_bad "@PG $name" "last header line is not the seqshard @PG line" "got: $last" \
            "want: /$want/"
    else
        ss_ok "@PG $name"
        rm -rf "$d"
    fi
}
pg_check bam-s1 bam "$S1"
pg_check bam-edge bam "$EDGE"
pg_check cram-s1 cram "$S1C"
pg_check sam-s1 sam "$S1"

# With its @PG line, the whole output (decompressed) is the same at any -@ and shard size:
# the CL text leaves out the options that only say how the work is run.
pg_same() { # FMT
    local fmt=$1 d=$SS_WORK/pgsame.$1 k=0 ok=1 t
    mkdir -p "$d"
    for t in "-@ 1 --shard-size 3k" "-@3 --shard-size=50k --quiet" "--threads 2 --report $d/r.json"; do
        k=$((k + 1))
        # shellcheck disable=SC2086
        run_view "$d/stdout" "$d/err" $t -h -O "$fmt" -T "$REF" -o "$d/out.$fmt" "$S1"
        [ $ss_rc = 0 ] || ok=0
        "$SAMTOOLS" view -h --no-PG -T "$REF" "$d/out.$fmt" >"$d/text.$k" 2>/dev/null || ok=0
    done
    if [ $ok = 1 ] && cmp -s "$d/text.1" "$d/text.2" && cmp -s "$d/text.1" "$d/text.3"; then
        ss_ok "@PG and all: same at any -@ and shard size ($fmt)"
        rm -rf "$d"
    else
        ss_bad "@PG and all: same at any -@ and shard size ($fmt)" "outputs differ or failed" \
            "$(grep -h '^@PG' "$d"/text.* | head -3)"
    fi
}
pg_same bam
pg_same sam

# ---- --write-index ------------------------------------------------------------------------
index_check() { # NAME FMT SUFFIX INPUT
    local name=$1 fmt=$2 suffix=$3 in=$4 d=$SS_WORK/idx.$1
    mkdir -p "$d"
    run_view "$d/stdout" "$d/err" -@ 3 --shard-size 2k --quiet --write-index -O "$fmt" \
        -T "$REF" -o "$d/out.$fmt" "$in"
    local r bad=""
    if [ $ss_rc != 0 ] || [ ! -s "$d/out.$fmt.$suffix" ]; then
        ss_bad "--write-index $name" "status $ss_rc, index $d/out.$fmt.$suffix missing" \
            "stderr: $(head -2 "$d/err")"
        return
    fi
    for r in ctgA:1000-5000 ctgB:39000-40000 ctgTiny '*' ctgA:16000-16100; do
        [ "$("$SAMTOOLS" view -c -T "$REF" "$d/out.$fmt" "$r")" = \
            "$("$SAMTOOLS" view -c -T "$REF" "$in" "$r")" ] || bad+=" $r"
    done
    if [ -n "$bad" ]; then
        ss_bad "--write-index $name" "region counts through the new index differ:$bad"
    else
        ss_ok "--write-index $name"
        rm -rf "$d"
    fi
}
index_check bam bam csi "$EDGE"
index_check cram cram crai "$EDGE"

# ---- references: REF_PATH cache and UR, no -T ---------------------------------------------
cache=$SS_WORK/refcache
python3 - "$REF" "$cache" <<'PY'
import hashlib, os, sys
seqs, name = {}, None
for line in open(sys.argv[1]):
    line = line.strip()
    if line.startswith('>'):
        name = line[1:].split()[0]; seqs[name] = []
    elif name:
        seqs[name].append(line.upper())
for s in seqs.values():
    s = ''.join(s).encode()
    m = hashlib.md5(s).hexdigest()
    os.makedirs(os.path.join(sys.argv[2], m[:2], m[2:4]), exist_ok=True)
    open(os.path.join(sys.argv[2], m[:2], m[2:4], m[4:]), 'wb').write(s)
PY
export REF_PATH="$cache/%2s/%2s/%s"
ss_view "CRAM via REF_PATH, no -T"      "$SMALL" bam "$S1C"
ss_view "CRAM->CRAM via REF_PATH"       "$SMALL" cram "$EDGEC"
export REF_PATH="$SS_WORK/no-such-cache/%s"
"$SAMTOOLS" view -C -T "$REF" -o "$SS_WORK/ur.cram" "$EDGE" && "$SAMTOOLS" index "$SS_WORK/ur.cram"
ss_view "CRAM via UR, no -T"            "$SMALL" sam "$SS_WORK/ur.cram"
unset REF_PATH

# ---- failures: clear message, no output --------------------------------------------------
python3 - "$REF" "$SS_WORK/wrong.fa" <<'PY'
import sys
out = open(sys.argv[2], 'w')
for line in open(sys.argv[1]):
    if not line.startswith('>'):
        line = ''.join('A' if c in 'CGTcgt' and i % 50 == 0 else c for i, c in enumerate(line))
    out.write(line)
PY
"$SAMTOOLS" faidx "$SS_WORK/wrong.fa"
ss_view_fails "truncated BAM"           'truncated.bam.*(truncated|corrupt)' -b "$TD/truncated.bam"
# Cut inside the records but with an EOF block appended: only reading finds it.
head -c $(($(stat -c %s "$S1") * 2 / 3)) "$S1" >"$SS_WORK/cut.bam"
eof='\037\213\010\004\000\000\000\000\000\377\006\000\102\103\002\000\033\000\003\000'
printf '%b' "$eof"'\000\000\000\000\000\000\000\000' >>"$SS_WORK/cut.bam"
cp "$S1.bai" "$SS_WORK/cut.bam.bai"
# found at open: the index (s1's) points past the cut
ss_view_fails "BAM cut mid-file"        'cut.bam: its index .* points past the end of the file' -b \
    "$SS_WORK/cut.bam"
ss_view_fails "garbled BAM, blocks copied" 'garbled.bam: reading shard [0-9]+ .*CRC32 checksum.*corrupt' -b \
    "$TD/garbled.bam"
ss_view_fails "CRAM, wrong reference"   'not the reference the CRAM was made with.*@SQ SN:' \
    -T "$SS_WORK/wrong.fa" "$S1C"
VIEW_ENV=(REF_PATH="$SS_WORK/no-such-cache/%s" REF_CACHE=)
ss_view_fails "CRAM, no reference"      'no reference found for @SQ SN:ctg.*-T' "$S1C"
ss_view_fails "CRAM out, no reference"  '@SQ SN:ctgA has no M5 or UR.*-T' -O cram "$S1"
VIEW_ENV=()
ss_view_fails "no index"                'index' "$TD/noindex.bam"
ss_view_fails "not a BAM"               'notbam' "$TD/notbam.bam"

# ---- determinism: threads never change the bytes (--no-PG: CL would name -@) ----------
for f in bam cram; do
    ss_same "determinism ${f^^}" \
        view -@ 1 --shard-size 2k --quiet --no-PG -O "$f" -T "$REF" "$S1" -- \
        view -@ 3 --shard-size 2k --quiet --no-PG -O "$f" -T "$REF" "$S1"
done

# ---- MPI: ranks never change the records ----------------------------------------------------
if [ "${SS_MPI:-0}" = 1 ] && command -v mpirun >/dev/null; then
    for np in 2 3; do
        VIEW_LAUNCH=(mpirun -np "$np")
        ss_view "mpirun -np $np BAM"    "1:2k 2:7k" bam -T "$REF" "$S1C"
        ss_view_samfile "mpirun -np $np SAM" out.sam -h "$EDGE"
        ss_view "mpirun -np $np CRAM"   "1:7k" cram -T "$REF" "$S1"
        ss_view "mpirun -np $np BAM block copy" "1:2k 2:7k" bam "$S1"
        ss_view "mpirun -np $np CRAM by container" "1:2k 2:7k" bam -T "$REF" "$S1SC"
    done
    VIEW_LAUNCH=(mpirun --oversubscribe -np 2)
    ss_view "mpirun -np 2 regions BAM" "1:2k 2:7k" bam "$S1" ctgB:1-3000 '*' ctgA:1-1000 \
        ctgA:500-1500
    ss_view_samfile "mpirun -np 2 regions SAM" out.sam "$EDGE" ctgA:1900-2100 '*' ctgTiny \
        ctgA:1-2000
    ss_view "mpirun -np 2 -M BAM" "2:2k" bam -M "$S1" ctgB:1-3000 '*' ctgA:1-1000 ctgA:500-1500
    VIEW_LAUNCH=()
fi

ss_summary
exit $?
