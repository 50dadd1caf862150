#!/usr/bin/env bash
# mpileup_call_ploidy.sh -- --call's --ploidy-file and -S sexes and own ploidies, against
# `bcftools mpileup | bcftools call` 1.16 (--no-version on both sides), with shard edges
# everywhere:
#   - ploidy files read as bcftools reads them: comments, lines of blanks, CRLF, tabs,
#     leading blanks, rules in any order, overlapping rules, a ploidy followed by other
#     characters, an empty line (which ends the file: the rules after it are not read, with
#     a warning), with and without -S sexes, -m and -c;
#   - a sample's own ploidy in -S ("s1 1") without ploidy rules is called (bcftools runs it);
#     under rules that vary along the genome it is refused before any work (one line);
#   - what bcftools refuses or cannot call is refused before any work, in one line naming
#     FILE:LINE and quoting the line, exit 2, no output: a cut line, a ploidy of -1, 3 or
#     1000000 (bcftools keeps it in a byte and stops at the first variant or miscalls),
#     a rule for sex '*' without its default;
#   - randomly damaged ploidy files (bytes replaced, inserted, deleted, the file cut;
#     FUZZ_SEEDS="a b" runs others): bcftools' bytes, or one line and exit 2, never other
#     bytes with exit 0.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_mpileup.sh"
ss_setup
mp_setup
W=$SS_WORK
L="2:3k" # shard edges everywhere (two workers; one shard is the easy case)
REG=(-r ctgA:1-12000)
MP=(-f "$REF" "${REG[@]}" "$TD/rg2.bam") # two samples, s1 and s2
"$BCFTOOLS" mpileup --no-version -Ou "${MP[@]}" >"$W/mp.bcf" 2>/dev/null || {
    echo "FAIL setup: bcftools mpileup"
    exit 1
}
printf 's1 M\ns2 F\n' >"$W/sexes.txt"
printf 's1 1\ns2 2\n' >"$W/own.txt"
printf 's1 M\ns2 1\n' >"$W/own_sex.txt"

# same NAME "CALL OPTS" [FILE TEXT]: with FILE (in W) holding TEXT (printf's format), the
# pipe's bytes at each layout, or both fail (bcftools on this file, seqshard before any work).
n_case=0
same() {
    local name=$1 copts=$2 exp=$W/exp.$((++n_case)) got layout
    [ $# -gt 2 ] && printf "$4" >"$W/$3"
    # shellcheck disable=SC2086 # copts is a word list
    (cd "$W" && "$BCFTOOLS" call --no-version $copts mp.bcf) >"$exp" 2>"$exp.err"
    local brc=$?
    for layout in $L; do
        got=$W/got.$n_case.${layout//:/.}
        # shellcheck disable=SC2086
        (cd "$W" && timeout "$SS_TIMEOUT" "$SEQSHARD" mpileup --no-version --quiet \
            -@ "${layout%%:*}" --shard-size "${layout#*:}" "${MP[@]}" --call --no-version $copts \
            -o "$got") </dev/null 2>"$got.err"
        local rc=$?
        if [ $brc = 0 ] && [ $rc = 0 ] && cmp -s "$exp" "$got"; then
            ss_ok "$name [$layout]"
        elif [ $brc = 0 ]; then
            ss_bad "$name [$layout]" "exit status $rc, or other bytes than bcftools'" \
                "$(grep -v '^Note' "$got.err" | head -2)"
            [ -f "$got" ] && ss_show_diff "$exp" "$got"
        else
            ss_bad "$name [$layout]" "bcftools fails here (status $brc): the test is wrong" \
                "$(head -2 "$exp.err")"
        fi
    done
}

# refused NAME WANT "CALL OPTS" [FILE TEXT]: seqshard stops before any work, exit 2 (or RC),
# one line (bcftools' notes aside) matching WANT, no output.
refused() {
    local name=$1 want=$2 copts=$3
    [ $# -gt 3 ] && printf "$5" >"$W/$4"
    rm -f "$W/out.vcf"
    # shellcheck disable=SC2086
    (cd "$W" && timeout "$SS_TIMEOUT" "$SEQSHARD" mpileup --quiet "${MP[@]}" --call $copts \
        -o out.vcf) </dev/null >/dev/null 2>"$W/err"
    local rc=$?
    if [ $rc != "${RC:-2}" ]; then
        ss_bad "$name" "exit status $rc, want ${RC:-2}" "$(head -3 "$W/err")"
    elif [ "$(grep -vc '^Note: ' "$W/err")" != 1 ] || ! grep -qE -- "$want" "$W/err"; then
        ss_bad "$name" "want one line matching '$want'" "$(head -3 "$W/err")"
    elif [ -e "$W/out.vcf" ]; then
        ss_bad "$name" "an output was left"
    else
        ss_ok "$name"
    fi
}

# ---- files bcftools reads: the same calls -------------------------------------------------
base='ctgA 1 5000 M 1\n* * * M 2\n* * * F 2\n'
same "rules and defaults, -S sexes" "-m -S sexes.txt --ploidy-file p.txt" p.txt "$base"
same "the same, -c" "-c -S sexes.txt --ploidy-file p.txt" p.txt "$base"
same "no -S: every sample the last sex" "-m --ploidy-file p.txt" p.txt 'ctgA 1 5000 F 1\n* * * M 2\n* * * F 2\n'
same "comments, a line of blanks" "-m -S sexes.txt --ploidy-file p.txt" p.txt \
    '# sexes\nctgA 1 5000 M 1\n   \n* * * M 2\n# end\n* * * F 2\n'
same "CRLF line ends" "-m -S sexes.txt --ploidy-file p.txt" p.txt \
    'ctgA 1 5000 M 1\r\n* * * M 2\r\n* * * F 2\r\n'
same "tabs, leading blanks, no final newline" "-m -S sexes.txt --ploidy-file p.txt" p.txt \
    '  ctgA\t1\t5000\tM\t1\n\t* * * M 2\n* * * F 2'
same "defaults first, the rule last" "-m -S sexes.txt --ploidy-file p.txt" p.txt \
    '* * * F 2\n* * * M 2\nctgA 1 5000 M 1\n'
same "overlapping rules, later wins" "-m -S sexes.txt --ploidy-file p.txt" p.txt \
    'ctgA 1000 3000 M 2\nctgA 1 5000 M 1\nctgA 2000 2500 F 1\nctgA 2000 2500 M 0\n* * * M 2\n'
same "TO before FROM (no position)" "-m -S sexes.txt --ploidy-file p.txt" p.txt \
    'ctgA 5000 1 M 1\n* * * M 2\n'
same "a ploidy with characters after it" "-m -S sexes.txt --ploidy-file p.txt" p.txt \
    'ctgA 1 5000 M 1x\n* * * M 2\n'
same "an empty line first: nothing read" "-m -S sexes.txt --ploidy-file p.txt" p.txt \
    '\nctgA 1 5000 M 1\n* * * M 2\n* * * F 2\n'
same "an empty line before a rule ends the file" "-m -S sexes.txt --ploidy-file p.txt" p.txt \
    '* * * M 2\n\nctgA 1 5000 M 1\n* * * F 2\n'
same "the same, -c" "-c -S sexes.txt --ploidy-file p.txt" p.txt \
    '* * * M 2\n\nctgA 1 5000 M 1\n* * * F 2\n'
grep -q "p.txt:2: an empty line ends the --ploidy-file" "$W/got.$n_case.2.3k.err" &&
    ss_ok "an empty line before more lines: a warning names it" ||
    ss_bad "an empty line before more lines: no warning" "$(head -2 "$W/got.$n_case.2.3k.err")"
same "empty lines at the end" "-m -S sexes.txt --ploidy-file p.txt" p.txt \
    'ctgA 1 5000 M 1\n* * * M 2\n\n\n'
same "an empty file" "-m --ploidy-file p.txt" p.txt ''

# ---- a sample's own ploidy ---------------------------------------------------------------
same "-S own ploidy, no --ploidy" "-m -S own.txt"
same "-S own ploidy, no --ploidy, -c" "-c -S own.txt"
same "-S a sex and an own ploidy, --ploidy X" "-m -S own_sex.txt --ploidy X"
same "-S own ploidy, a file of defaults" "-m -S own_sex.txt --ploidy-file p.txt" p.txt \
    '* * * M 1\n* * * F 2\n'
RC=1 refused "-S own ploidy under --ploidy GRCh37's rules" "ploidy rules that vary along the genome" \
    "-m -S own.txt --ploidy GRCh37"

# ---- refused before any work: the file and line, quoted ------------------------------------
refused "a cut line" '^seqshard mpileup --call: p\.txt:2: "ctgA 1 200 M": give CHROM FROM TO SEX PLOIDY$' \
    "-m --ploidy-file p.txt" p.txt '* * * M 2\nctgA 1 200 M'
refused "a line of CHROM alone" 'p\.txt:1: "ctgA": give CHROM' "-m --ploidy-file p.txt" p.txt 'ctgA\n'
refused "FROM 0" 'p\.txt:1: "ctgA 0 5 M 1": FROM and TO are 1-based' "-m --ploidy-file p.txt" \
    p.txt 'ctgA 0 5 M 1\n'
refused "ploidy -1" 'p\.txt:2: "ctgA 1 5000 M -1": ploidy -1 is not one .*; give 0, 1 or 2$' \
    "-m --ploidy-file p.txt" p.txt '* * * M 2\nctgA 1 5000 M -1\n'
refused "ploidy 1000000" 'p\.txt:1: .*ploidy 1000000 is not one' "-m --ploidy-file p.txt" p.txt \
    'ctgA 1 5000 M 1000000\n* * * M 2\n'
refused "ploidy 3, -c" 'p\.txt:1: .*ploidy 3 is not one' "-c --ploidy-file p.txt" p.txt \
    'ctgA 1 5000 M 3\n* * * M 2\n'
refused "* * * M -1" 'p\.txt:1: .*ploidy -1 is not one' "-m --ploidy-file p.txt" p.txt '* * * M -1\n'
refused "a rule for sex '*' without its default" "p\\.txt: a rule names sex '\\*' but no" \
    "-m --ploidy-file p.txt" p.txt 'ctgA 1 5000 * 1\n'
refused "no such file" 'nothere\.txt: cannot open the --ploidy-file' "-m --ploidy-file nothere.txt"

# ---- damaged files: bcftools' bytes, or one line and exit 2 -------------------------------
# mutate SEED IN OUT: one kind of damage to IN (mutate_text.py, characters for ploidy files)
mutate() { python3 "$(dirname "$0")/mutate_text.py" ploidy "$@"; }
printf '# ploidy\nctgA 1 3000 M 1\nctgA 2000 9000 F 1\nctgA 4000 5000 M 0\n* * * M 2\n* * * F 2\n' \
    >"$W/clean.txt"
for seed in ${FUZZ_SEEDS:-1 2 3 4 5 6 7 8}; do
    mutate "$seed" "$W/clean.txt" "$W/d.txt"
    (cd "$W" && "$BCFTOOLS" call --no-version -m -S sexes.txt --ploidy-file d.txt mp.bcf) \
        >"$W/d.exp" 2>/dev/null
    brc=$?
    (cd "$W" && timeout "$SS_TIMEOUT" "$SEQSHARD" mpileup --no-version --quiet -@ 2 \
        --shard-size 3k "${MP[@]}" --call --no-version -m -S sexes.txt --ploidy-file d.txt \
        -o d.got) </dev/null 2>"$W/d.err"
    rc=$?
    name="seed $seed: a damaged --ploidy-file"
    if [ $rc = 0 ] && [ $brc = 0 ] && cmp -s "$W/d.exp" "$W/d.got"; then
        ss_ok "$name (the same bytes)"
    elif [ $rc = 2 ] && [ "$(grep -vc '^Note: ' "$W/d.err")" = 1 ] && [ ! -e "$W/d.got" ]; then
        ss_ok "$name (refused: $(grep -v '^Note: ' "$W/d.err" | cut -c1-100))"
    else
        ss_bad "$name" "exit $rc (bcftools $brc): want bcftools' bytes, or one line and exit 2" \
            "$(grep -v '^Note: ' "$W/d.err" | head -2)" "$(od -c "$W/d.txt" | head -5)"
    fi
    rm -f "$W/d.got"
done

ss_summary
exit $?
