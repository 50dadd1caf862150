#!/usr/bin/env bash
# markdup_vs_samtools.sh -- seqshard markdup against Debian's samtools markdup
# on bwa mem reads with injected duplicates (lib_markdup.sh): records, header
# and -f statistics, for each option set, at threads 1-3 and shard sizes from
# 2 kb (edges inside duplicate groups) to whole contigs; -c on a marked file;
# CRAM output; refusals (a read longer than -l, no MC tag) with exit 1.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_markdup.sh"
ss_setup
W=$SS_WORK
md_input "$W" || { ss_bad input "cannot make the input"; ss_summary; exit 1; }

# compare NAME IN OPTS...: samtools markdup OPTS, then seqshard at three scales.
compare() {
    local name=$1 in=$2
    shift 2
    "$SAMTOOLS" markdup "$@" -f "$W/ref.stats" "$in" "$W/ref.bam" 2>"$W/ref.err" ||
        { ss_bad "$name" "samtools markdup failed" "$(head -2 "$W/ref.err")"; return; }
    local scale
    for scale in "1 2k" "3 10k" "2 1g"; do
        local t=${scale% *} ss=${scale#* }
        md_run "$W/err" markdup -@ "$t" --shard-size "$ss" --quiet "$@" -f "$W/out.stats" \
            "$in" "$W/out.bam" ||
            { ss_bad "$name -@$t $ss" "exit status $?" "$(head -2 "$W/err")"; continue; }
        md_same "$name -@$t --shard-size $ss" "$W/ref.bam" "$W/ref.stats" "$W/out.bam" \
            "$W/out.stats"
    done
}

IN=$W/in.bam
compare "default" "$IN"
compare "-r" "$IN" -r
compare "-t -d 100" "$IN" -t -d 100
compare "-S -t -d 100" "$IN" -S -t -d 100
compare "-S -r" "$IN" -S -r
compare "-m s -d 50" "$IN" -m s -d 50
compare "--include-fails -d 100" "$IN" --include-fails -d 100
compare "--no-multi-dup -d 100 -t" "$IN" --no-multi-dup -d 100 -t
compare "--barcode-name -d 100" "$IN" --barcode-name -d 100
compare "-l 200" "$IN" -l 200

# -c on a file samtools already marked, with other options
"$SAMTOOLS" markdup -t -d 100 "$IN" "$W/marked.bam" 2>/dev/null && "$SAMTOOLS" index "$W/marked.bam"
compare "-c on a marked file" "$W/marked.bam" -c -S

# CRAM out: the records samtools' CRAM holds (CRAM moves RG, MD and NM to the end)
"$SAMTOOLS" markdup --reference "$TD/ref.fa" -O cram "$IN" "$W/ref.cram" 2>/dev/null
if md_run "$W/err" markdup --quiet --shard-size 5k --reference "$TD/ref.fa" -O cram "$IN" \
    "$W/out.cram"; then
    if cmp -s <("$SAMTOOLS" view -T "$TD/ref.fa" "$W/ref.cram") \
        <("$SAMTOOLS" view -T "$TD/ref.fa" "$W/out.cram"); then
        ss_ok "CRAM output"
    else
        ss_bad "CRAM output" "records differ"
    fi
else
    ss_bad "CRAM output" "exit status $?"
fi

# The step: --markdup in front of view, pileup and realign reads samtools markdup's records.
"$SAMTOOLS" markdup -d 100 -t "$IN" "$W/m.bam" 2>/dev/null && "$SAMTOOLS" index "$W/m.bam"
for ss in 2k 100k; do
    md_run "$W/err" view --quiet --shard-size $ss --markdup --markdup-optical 100 --markdup-tag \
        -o "$W/v.sam" "$IN" ctgA ctgB:20000-30000 '*'
    if cmp -s <(grep -v '^@' "$W/v.sam") <("$SAMTOOLS" view "$W/m.bam" ctgA ctgB:20000-30000 '*'); then
        ss_ok "view --markdup, --shard-size $ss: samtools markdup's records, region by region"
    else
        ss_bad "view --markdup, --shard-size $ss" "records differ from samtools markdup's"
    fi
    md_run "$W/err" pileup --quiet --shard-size $ss -f "$TD/ref.fa" --markdup -o "$W/p.txt" "$IN"
    if cmp -s "$W/p.txt" <("$SAMTOOLS" mpileup -f "$TD/ref.fa" "$W/m.bam" 2>/dev/null); then
        ss_ok "pileup --markdup, --shard-size $ss: samtools markdup | samtools mpileup"
    else
        ss_bad "pileup --markdup, --shard-size $ss" "differs from samtools markdup | samtools mpileup"
    fi
done
md_run "$W/err" realign --quiet -f "$TD/ref.fa" -o "$W/r.bam" "$W/m.bam" && "$SAMTOOLS" index "$W/r.bam"
md_run "$W/err" pileup --quiet --shard-size 7k -f "$TD/ref.fa" --markdup --realign -o "$W/p.txt" "$IN"
if cmp -s "$W/p.txt" <("$SAMTOOLS" mpileup -f "$TD/ref.fa" "$W/r.bam" 2>/dev/null); then
    ss_ok "pileup --markdup --realign: markdup, then realign, then mpileup"
else
    ss_bad "pileup --markdup --realign" "differs from the three steps run one by one"
fi

# Refusals: one line, exit 1, no output left.
md_run "$W/err" markdup --quiet -l 100 "$IN" "$W/no.bam"
rc=$?
if [ $rc = 1 ] && grep -q "give -l" "$W/err" && [ ! -e "$W/no.bam" ]; then
    ss_ok "a read longer than -l: refused"
else
    ss_bad "a read longer than -l" "exit $rc" "$(head -2 "$W/err")"
fi
"$SAMTOOLS" view -h "$TD/s1.bam" | "$SAMTOOLS" view -b -o "$W/nomc.bam" - && "$SAMTOOLS" index "$W/nomc.bam"
md_run "$W/err" markdup --quiet "$W/nomc.bam" "$W/no.bam"
rc=$?
if [ $rc = 1 ] && grep -q "fixmate -m" "$W/err" && [ ! -e "$W/no.bam" ]; then
    ss_ok "no MC tag: refused with the samtools step to run"
else
    ss_bad "no MC tag" "exit $rc" "$(head -2 "$W/err")"
fi
ss_summary
exit $?
