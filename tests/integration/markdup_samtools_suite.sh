#!/usr/bin/env bash
# markdup_samtools_suite.sh -- samtools' own markdup tests (Debian's
# samtools-test package, test.pl's command lines): each SAM made a sorted,
# indexed BAM, run at threads 1 and 3 and shard sizes 100 kb (their contigs
# reach 250 Mbp) and whole contigs, and the records compared with samtools' expected SAM. The cases
# samtools expects to fail must fail (exit 1, a message naming the fix).
# The 10 Gbp positions of 7_mark_supp_dup do not fit BAM; they are shifted
# down by 10^10 in the input and the expectation alike.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_markdup.sh"
ss_setup
D=/usr/share/samtools/test/markdup
[ -d "$D" ] || { echo "FAIL setup: $D missing; apt-get install samtools-test"; exit 1; }
W=$SS_WORK

shift_sam() {
    awk 'BEGIN { OFS = "\t"; o = 10000000000 }
        /^@SQ/ { for (i = 1; i <= NF; i++) if ($i ~ /^LN:/ && substr($i, 4) > o) $i = "LN:" (substr($i, 4) - o)
                 print; next }
        /^@/ { print; next }
        { if ($4 > o) $4 -= o; if ($8 > o) $8 -= o; print }' "$1"
}

# bam CASE: $W/CASE.bam and $W/CASE.exp (records expected), or 1 when it cannot be indexed.
bam() {
    shift_sam "$D/$1.sam" | "$SAMTOOLS" view -b -o "$W/$1.bam" - 2>/dev/null &&
        "$SAMTOOLS" index "$W/$1.bam" 2>/dev/null || return 1
    [ -e "$D/$1.expected.sam" ] && shift_sam "$D/$1.expected.sam" | grep -v '^@' >"$W/$1.exp"
    return 0
}

pass() { # CASE OPTS...
    local c=$1 scale
    shift
    bam "$c" || { ss_bad "$c" "cannot make its BAM"; return; }
    for scale in "1 100k" "3 1g"; do
        local t=${scale% *} ss=${scale#* }
        if ! md_run "$W/err" markdup -@ "$t" --shard-size "$ss" --quiet "$@" -O sam --no-PG \
            "$W/$c.bam" "$W/$c.out"; then
            ss_bad "$c -@$t $ss" "exit status $?" "$(head -2 "$W/err")"
        elif ! cmp -s <(grep -v '^@' "$W/$c.out") "$W/$c.exp"; then
            ss_bad "$c -@$t $ss" "records differ from samtools' expected output"
        else
            ss_ok "$c -@$t --shard-size $ss"
        fi
    done
}

refused() { # CASE FIX: samtools fails on it; so must seqshard, naming the fix
    local c=$1 fix=$2
    if ! bam "$c"; then
        ss_ok "$c: refused (cannot be indexed: not sorted)"
        return
    fi
    md_run "$W/err" markdup --quiet -O sam "$W/$c.bam" "$W/$c.out"
    local rc=$?
    if [ $rc = 1 ] && grep -q "$fix" "$W/err" && [ ! -e "$W/$c.out" ]; then
        ss_ok "$c: refused"
    else
        ss_bad "$c" "exit $rc, expected 1 and a line naming '$fix'" "$(head -2 "$W/err")"
    fi
}

refused 1_name_sort "samtools sort"
refused 2_bad_order "samtools sort"
refused 3_missing_mc "fixmate -m"
refused 4_missing_ms "fixmate -m"
pass 5_markdup
pass 6_remove_dups -r
pass 7_mark_supp_dup -S
pass 8_optical_dup -S -d 100 --mode s -t
pass 9_optical_dup_qcfail -S -d 2500 --mode s -t --include-fails
pass 10_optical_chain -S -d 2500 --mode s -t
pass 10_optical_chain -S -d 2500 --mode s -t --read-coords '([[:digit:]]+):([[:digit:]]+):([[:digit:]]+)$'
pass 11_optical_dup_regex -S -d 100 --mode s -t --read-coords '^([0-9]+):([0-9]+):([[:print:]]+)' --coords-order xyt
pass 11_optical_dup_regex -S -d 100 --mode s -t --read-coords '^([0-9]+):([0-9]+)' --coords-order xy
pass 12_optical_chain_regex -S -d 2500 --mode s -t --read-coords '([[:digit:]]+):([[:digit:]]+)$' --coords-order xy
pass 13_optical_barcode_tag -S -d 100 --mode s -t --barcode-tag BX
pass 14_optical_barcode_name -S -d 100 --mode s -t --barcode-name
pass 15_optical_barcode_rgx_name -S -d 100 --mode s -t --barcode-rgx '^([!-9;-?A-~]+):[0-9]+:' \
    --read-coords '^[!-9;-?A-~]+:([0-9]+):([0-9]+)' --coords-order xy
pass 16_optical_barcode_rgx_name_test_2 -S -d 100 --mode s -t \
    --barcode-rgx '^([!-9;-?A-~]+):[0-9]+:' --read-coords '^[!-9;-?A-~]+:([0-9]{4})([0-9]{4})' \
    --coords-order xy
ss_summary
exit $?
