#!/usr/bin/env bash
# mpileup_call_words.sh -- the words after --call are bcftools call's. seqshard's own options
# given there (the run's, the steps', mpileup's) are refused in one line that says to give
# them before --call (exit 2, no output); so is an option bcftools call does not have, or
# one without its value. -o, -O and --write-index after --call name the output, as before
# it, and bcftools call's --threads is taken.
set -u
. "$(dirname "$0")/lib.sh"
ss_setup
W=$SS_WORK
R=(-f "$REF" "$TD/s1.bam")

# refused NAME WANT WORDS...: seqshard mpileup R --call -m WORDS -o OUT: exit 2, one line
# matching WANT, no output.
refused() {
    local name=$1 want=$2
    shift 2
    rm -f "$W/out.vcf"
    timeout "$SS_TIMEOUT" "$SEQSHARD" mpileup "${R[@]}" --call -m "$@" -o "$W/out.vcf" \
        </dev/null >/dev/null 2>"$W/err"
    local rc=$?
    if [ $rc != 2 ]; then
        ss_bad "$name" "exit status $rc, want 2" "$(head -3 "$W/err")"
    elif [ "$(grep -c '' "$W/err")" != 1 ] || ! grep -qE -- "$want" "$W/err"; then
        ss_bad "$name" "want one line matching '$want'" "$(head -3 "$W/err")"
    elif [ -e "$W/out.vcf" ]; then
        ss_bad "$name" "an output was written"
    else
        ss_ok "$name"
    fi
}
before='is an option of seqshard mpileup, not of bcftools call: give it before --call'
refused "--call ... --resume" "^seqshard mpileup --call: --resume $before\$" --resume
refused "--call ... -@ 2" "^seqshard mpileup --call: -@ $before\$" -@ 2
refused "--call ... -@2" "-@ $before" -@2
refused "--call ... --shard-size 5k" "--shard-size $before" --shard-size 5k
refused "--call ... --quiet" "--quiet $before" --quiet
refused "--call ... --report=F" "--report $before" --report="$W/r.json"
refused "--call ... --tmp-dir" "--tmp-dir $before" --tmp-dir "$W"
refused "--call ... --bind none" "--bind $before" --bind none
refused "--call ... --realign" "--realign $before" --realign
refused "--call ... --known F" "--known $before" --known "$W/k.vcf.gz"
refused "--call ... --markdup" "--markdup $before" --markdup
refused "--call ... -B (mpileup's)" "-B $before" -B
refused "--call -mB (in a bundle)" "-B $before" -vB
refused "--call ... --max-depth" "--max-depth $before" --max-depth 10
refused "--call ... --foo" "unknown option '--foo' \\(the words after --call are bcftools call's" --foo
refused "--call ... -z" "unknown option '-z'" -z
refused "--call ... --ploidy (no value)" "option '--ploidy' needs a value" --ploidy
refused "--call ... --samples-file (no value)" "option '--samples-file' needs a value" --samples-file
refused "--call ... --no-version -Bm" "-B $before" --no-version -Bm

# -o/-O/--write-index after --call name the output; --threads after it is bcftools call's
"$SEQSHARD" mpileup --quiet --no-version -o "$W/a.vcf.gz" -Oz --write-index "${R[@]}" --call -m \
    --no-version 2>"$W/a.err"
"$SEQSHARD" mpileup --quiet --no-version "${R[@]}" --call -m --no-version --threads 2 \
    -o "$W/b.vcf.gz" -Oz --write-index 2>"$W/b.err"
if [ -s "$W/a.vcf.gz" ] && cmp -s "$W/a.vcf.gz" "$W/b.vcf.gz" && [ -s "$W/b.vcf.gz.csi" ]; then
    ss_ok "-o -Oz --write-index after --call: the same output as before it"
else
    ss_bad "-o -Oz --write-index after --call" "outputs differ or are missing" \
        "$(head -2 "$W/a.err")" "$(head -2 "$W/b.err")"
fi

ss_summary
exit $?
