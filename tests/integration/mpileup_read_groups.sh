#!/usr/bin/env bash
# mpileup_read_groups.sh -- seqshard mpileup's -s/-S (samples) and -G (read groups)
# against bcftools mpileup 1.16 with the same lists:
#   - lists that keep no read group of any input: bcftools stops ("failed to find a file
#     header with usable read groups"); seqshard exits 1 with one line naming the list
#     and the fix, and leaves nothing behind;
#   - an empty list file (or one of blank lines) is no list: every record, as bcftools;
#   - the words of each line as bam_sample.c reads them: a later -S line for the same
#     sample renames it again, a line starting with white space reuses the last first
#     word (and is refused where bcftools crashes on it), "ID FILE SAMPLE" lines, "*",
#     '^' lists, comments that are just names;
#   - damaged list files (bytes replaced, inserted, deleted, cut, lines shuffled):
#     the same bytes as bcftools, or both refuse.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_inputs.sh"
. "$(dirname "$0")/lib_mpileup.sh"
ss_setup
mp_setup
W=$SS_WORK
S1=$TD/s1.bam
S2=$TD/s2.bam
IN=("$S1" "$TD/rg2.bam" "$TD/rgsame.bam")
RG=(-f "$REF" -r ctgA:1000-1200 -a AD,DP)

# vs NAME MENTION ARGS...: bcftools mpileup once on ARGS. Where it succeeds, seqshard
# mpileup gives its bytes; where it fails (or crashes), `seqshard mpileup -o DIR/out.vcf
# ARGS` exits 1 with one line matching MENTION, nothing on stdout, DIR left empty.
vs() {
    local name=$1 mention=$2
    shift 2
    ss_case_no=$((ss_case_no + 1))
    local d=$W/case.$ss_case_no
    mkdir -p "$d/out"
    # (a subshell: the shell's own "Segmentation fault" line stays out of the log)
    (timeout "$SS_TIMEOUT" "$BCFTOOLS" mpileup --no-version "$@" </dev/null >"$d/exp" \
        2>"$d/bcftools.err"; exit $?) 2>/dev/null
    local brc=$?
    local cmd=("$SEQSHARD" mpileup --no-version --quiet -@ 2 --shard-size 2k \
        -o "$d/out/out.vcf" "$@")
    timeout "$SS_TIMEOUT" "${cmd[@]}" </dev/null >"$d/stdout" 2>"$d/stderr"
    local rc=$? left shown
    left=$(find "$d/out" -mindepth 1 -maxdepth 1 ! -name out.vcf -printf '%f ')
    shown=$(ss_quote "${cmd[@]}")
    if [ $brc = 0 ] && [ $rc != 0 ]; then
        ss_bad "$name" "exit status $rc where bcftools succeeds" "$shown" \
            "stderr: $(head -3 "$d/stderr" | cut -c1-240)"
    elif [ $brc = 0 ] && ! cmp -s "$d/exp" "$d/out/out.vcf"; then
        ss_bad "$name" "output differs from bcftools mpileup" "$shown"
        ss_show_diff "$d/exp" "$d/out/out.vcf"
    elif [ $brc = 0 ]; then
        ss_ok "$name"
        rm -rf "$d"
    elif [ $rc != 1 ]; then
        ss_bad "$name" "exit status $rc, want 1 as bcftools fails (status $brc)" "$shown" \
            "bcftools: $(head -1 "$d/bcftools.err" | cut -c1-240)" \
            "stderr: $(head -3 "$d/stderr" | cut -c1-240)"
    elif [ "$(ss_lines "$d/stderr")" != 1 ]; then
        ss_bad "$name" "$(ss_lines "$d/stderr") lines on stderr, want one" "$shown" \
            "stderr: $(head -4 "$d/stderr" | cut -c1-240)"
    elif ! grep -qE -- "$mention" "$d/stderr"; then
        ss_bad "$name" "the message does not mention '$mention'" "$shown" \
            "stderr: $(cut -c1-240 "$d/stderr")"
    elif [ -s "$d/stdout" ] || [ -n "$left" ] || [ -e "$d/out/out.vcf" ]; then
        ss_bad "$name" "left output: stdout $(wc -c <"$d/stdout") bytes, files: $left" "$shown"
    else
        ss_ok "$name"
        [ "$SS_VERBOSE" = 1 ] && echo "     $(cut -c1-240 "$d/stderr")"
        rm -rf "$d"
    fi
}

# ---- lists that keep nothing: refused ---------------------------------------------------
printf 'nobody\n' >"$W/nobody.txt"
vs "-S naming no input's sample" 'nobody\.txt.*(SM|sample)' -S "$W/nobody.txt" \
    "${RG[@]}" "${IN[@]}"
vs "-s naming no input's sample" '-s nobody.*(SM|sample)' -s nobody "${RG[@]}" "$S1"
printf 'nosuchgroup\n' >"$W/nogroup.txt"
vs "-G keeping no read group" 'nogroup\.txt.*ID' -G "$W/nogroup.txt" "${RG[@]}" \
    "${IN[@]}"
printf 's1\n' >"$W/s1only.txt"
vs "-S and -G keeping nothing together" 's1only\.txt.*nogroup\.txt' \
    -S "$W/s1only.txt" -G "$W/nogroup.txt" "${RG[@]}" "$S1"
vs "-s ^ dropping the only sample" '\^s1' -s ^s1 "${RG[@]}" "$S1"
# a file with no read groups is one sample named by its path, which -s does not keep
"$SAMTOOLS" view -h "$S1" ctgA:900-1400 | grep -v '^@RG' | "$SAMTOOLS" view -b -o "$W/norg.bam" &&
    "$SAMTOOLS" index "$W/norg.bam" || { echo "FAIL setup: a BAM without read groups"; exit 1; }
vs "-s on an input without read groups" 'sample' -s s1 "${RG[@]}" "$W/norg.bam"

# ---- empty lists: no list at all ---------------------------------------------------------
: >"$W/empty.txt"
printf '\n' >"$W/blank.txt"
vs "-G empty file" . -G "$W/empty.txt" "${RG[@]}" "$S1"
vs "-G one blank line" . -G "$W/blank.txt" "${RG[@]}" "$S1"
vs "-S one blank line" . -S "$W/blank.txt" "${RG[@]}" "$S1" "$S2"

# ---- words as bam_sample.c reads them ----------------------------------------------------
printf 's1 X\ns1 Y\n' >"$W/rename2.txt"
vs "-S the same sample renamed twice (the last wins)" . -S "$W/rename2.txt" \
    "${RG[@]}" "${IN[@]}"
printf 's1\n  s2\n' >"$W/lead2.txt"
vs "-S second line starting with white space" . -S "$W/lead2.txt" "${RG[@]}" \
    "${IN[@]}"
printf '\ts2\ns1\n' >"$W/lead1.txt"
vs "-S first line starting with white space" 'lead1\.txt.*entry 1' \
    -S "$W/lead1.txt" "${RG[@]}" "${IN[@]}"
vs "-G first line starting with white space" 'lead1\.txt.*entry 1' \
    -G "$W/lead1.txt" "${RG[@]}" "${IN[@]}"
printf 's2 %s Z\n  Z\n\tZ Q\n' "$TD/rg2.bam" >"$W/lead3.txt"
vs "-G lines starting with white space after an ID FILE SAMPLE line" . \
    -G "$W/lead3.txt" "${RG[@]}" "${IN[@]}"
printf 's1\t\n# s2\ns2 %s Z \n* %s\n' "$TD/rg2.bam" "$TD/rgsame.bam" >"$W/forms.txt"
vs "-G trailing tab, comment-like name, ID FILE SAMPLE, * FILE" . \
    -G "$W/forms.txt" "${RG[@]}" "${IN[@]}"
vs "-G ^ of the same" . -G "^$W/forms.txt" "${RG[@]}" "${IN[@]}"
printf 's1 A\ns1 B\n' >"$W/twice.txt"
vs "-G read group given two samples" 'twice\.txt.*s1' -G "$W/twice.txt" \
    "${RG[@]}" "${IN[@]}"
printf 's\\ 1\ns2\\\n' >"$W/escaped.txt"
vs "-S backslashes" . -S "$W/escaped.txt" "${RG[@]}" "${IN[@]}"

# ---- damaged lists -----------------------------------------------------------------------
# mutate SEED IN OUT: one kind of damage to IN (mutate_text.py, characters for read-group and sample list files)
mutate() { python3 "$(dirname "$0")/mutate_text.py" lists "$@"; }
printf 's1\nlane2 X\n* %s\ns2 %s Z\n?\n# comment\n' "$S2" "$TD/rg2.bam" >"$W/clean.rg"
printf 's1\npool P\nsplit\n# c\ns2 Y\n' >"$W/clean.sm"
for seed in ${FUZZ_SEEDS:-3 8 21}; do
    mutate "$seed" "$W/clean.rg" "$W/m$seed.rg"
    vs "seed $seed: damaged -G" . -G "$W/m$seed.rg" "${RG[@]}" "${IN[@]}"
    mutate "$seed" "$W/clean.sm" "$W/m$seed.sm"
    vs "seed $seed: damaged -S" . -S "$W/m$seed.sm" "${RG[@]}" "${IN[@]}"
done

ss_summary
exit $?
