#!/usr/bin/env bash
# option_grammar.sh -- every kernel speaks the shared options the same way, as samtools
# spells them: -o FILE[##idx##INDEX], -O FMT[,level=N], --output-fmt-option level=N,
# --write-index, the reference as -f/-T/--reference where samtools has no other meaning
# for the letter, the format from -o's extension; each form gives the bytes of its
# equivalent, each index the bytes samtools/tabix make, each misuse one line and exit
# 1 or 2 with nothing written; unknown options are named with the seqshard prefix.
set -u
. "$(dirname "$0")/lib.sh"
ss_setup
W=$SS_WORK
cd "$W" || exit 1
S1=$TD/s1.bam

# same NAME A B: the two files hold the same bytes (SAM text of BAM/CRAM records).
# (tags sorted: a CRAM decoder rebuilds NM and MD at the end of the tags)
records() {
    "$SAMTOOLS" view --no-PG -T "$REF" "$1" 2>/dev/null |
        perl -F'\t' -lane 'print join("\t", @F[0 .. 10], sort @F[11 .. $#F])'
}
same_records() {
    records "$2" >"$W/a.rec"
    records "$3" >"$W/b.rec"
    if [ -s "$W/a.rec" ] && cmp -s "$W/a.rec" "$W/b.rec"; then
        ss_ok "$1"
    else
        ss_bad "$1" "records of $2 and $3 differ (or one is missing)"
    fi
}
# run ARGS...: seqshard, quiet; ss_rc its status
run() { "$SEQSHARD" "$@" --quiet >"$W/out.txt" 2>"$W/err.txt"; ss_rc=$?; }
# refused NAME STATUS PATTERN ARGS...: exit STATUS, one line matching PATTERN, no file left
refused() {
    local name=$1 want=$2 pattern=$3
    shift 3
    rm -rf "$W/r" && mkdir "$W/r"
    (cd "$W/r" && "$SEQSHARD" "$@" >/dev/null 2>"$W/err.txt")
    local rc=$? left
    left=$(ls -A "$W/r")
    if [ $rc = "$want" ] && [ "$(grep -c . "$W/err.txt")" -le 2 ] &&
        grep -qE -- "$pattern" "$W/err.txt" && [ -z "$left" ]; then
        ss_ok "$name"
    else
        ss_bad "$name" "exit $rc (want $want), left: ${left:-nothing}" "$(head -2 "$W/err.txt")"
    fi
}

# ---- realign: -O forms, the level, -o's extension, -T ------------------------------------------
run realign -f "$REF" -o r.bam "$S1"
run realign -T "$REF" -o r_T.bam "$S1"
same_records "realign -T = -f" r.bam r_T.bam
run realign -f "$REF" -O bam,level=1 -o r_O1.bam "$S1"
run realign -f "$REF" --output-fmt-option level=1 -o r_opt1.bam "$S1"
run realign -f "$REF" -l 1 -o r_l1.bam "$S1"
same_records "realign -O bam,level=1 = default records" r.bam r_O1.bam
same_records "realign --output-fmt-option level=1 = default records" r.bam r_opt1.bam
same_records "realign -l 1 = default records" r.bam r_l1.bam
# the level took: level 1 makes a larger file than the default either way of asking
if [ "$(stat -c %s r_O1.bam)" -gt "$(stat -c %s r.bam)" ] &&
    [ "$(stat -c %s r_opt1.bam)" -gt "$(stat -c %s r.bam)" ]; then
    ss_ok "realign -O bam,level=1 and --output-fmt-option level=1 compress at level 1"
else
    ss_bad "realign level 1" "sizes $(stat -c %s r_O1.bam r_opt1.bam r.bam | tr '\n' ' ')"
fi
run realign -f "$REF" -o r.cram "$S1"
if [ "$(head -c 4 r.cram)" = CRAM ]; then ss_ok "realign -o x.cram writes CRAM"; else
    ss_bad "realign -o x.cram writes CRAM" "first bytes: $(head -c 4 r.cram | od -c | head -1)"; fi
same_records "realign CRAM = BAM records" r.bam r.cram
run realign -f "$REF" -o r.sam "$S1"
if head -1 r.sam | grep -q '^@HD'; then ss_ok "realign -o x.sam writes SAM"; else
    ss_bad "realign -o x.sam writes SAM" "$(head -c 40 r.sam | od -c | head -1)"; fi
refused "realign: an unknown option is named, with the prefix" 2 \
    "^seqshard realign: unknown option '-Z'; see 'seqshard realign --help'$" realign -Z x.bam
# --threads is the worker count in every kernel, mpileup too (it had bcftools' compression
# threads there, listed beside -@/--threads, so --threads 1 ran 2 workers)
for k in pileup mpileup; do
    run "$k" -f "$REF" --threads 1 -o "$W/t.out" --report "$W/t.json" "$S1"
    if [ "$ss_rc" = 0 ] && grep -q '"threads": 1,' "$W/t.json" &&
        [ "$("$SEQSHARD" "$k" --help | grep -cE -- '^ +(-@, )?--threads ')" = 1 ]; then
        ss_ok "$k --threads 1: one worker, one --threads in --help"
    else
        ss_bad "$k --threads 1: one worker, one --threads in --help" "exit $ss_rc;" \
            "$(grep '"threads"' "$W/t.json" 2>/dev/null)" \
            "$("$SEQSHARD" "$k" --help | grep -E -- '^ +(-@, )?--threads ' | tr '\n' ';')"
    fi
done
# a mistyped long option names the one it most likely meant (a slip of up to two letters)
refused "pileup --ouput: did you mean --output" 2 \
    "^seqshard pileup: unknown option '--ouput'; did you mean '--output'\\? \\(see 'seqshard pileup --help'\\)$" \
    pileup --ouput x "$S1"
refused "depth --min-MAPQ=3: did you mean --min-MQ" 2 "did you mean '--min-MQ'" \
    depth --min-MAPQ=3 "$S1"
refused "mpileup --max-depht: did you mean --max-depth" 2 "did you mean '--max-depth'" \
    mpileup --max-depht 5 "$S1"
refused "view --zzzzz: nothing near, no guess" 2 \
    "^seqshard view: unknown option '--zzzzz'; see 'seqshard view --help'$" view --zzzzz "$S1"
refused "realign -O vcf" 2 "seqshard realign: -O 'vcf': need sam, bam or cram" \
    realign -f "$REF" -O vcf -o x "$S1"

# ---- --write-index and ##idx## -------------------------------------------------------------
run view --write-index -o 'v.bam##idx##v.bam.bai' "$S1"
"$SAMTOOLS" index -b -o exp.bai v.bam
if [ $ss_rc = 0 ] && cmp -s exp.bai v.bam.bai && [ ! -e v.bam.csi ]; then
    ss_ok "view -o 'v.bam##idx##v.bam.bai' --write-index: samtools index -b's .bai"
else
    ss_bad "view ##idx## .bai" "exit $ss_rc; $(head -1 err.txt)"
fi
run realign -f "$REF" --write-index -o 'r2.bam##idx##elsewhere.csi' "$S1"
"$SAMTOOLS" index -c -o exp.csi r2.bam
if [ $ss_rc = 0 ] && cmp -s exp.csi elsewhere.csi; then
    ss_ok "realign ##idx## NAME.csi: samtools index -c's .csi"
else ss_bad "realign ##idx## NAME.csi" "exit $ss_rc; $(head -1 err.txt)"; fi
run view -T "$REF" --write-index -o 'v.cram##idx##v.crai' "$S1"
"$SAMTOOLS" index -o exp.crai v.cram
if [ $ss_rc = 0 ] && cmp -s exp.crai v.crai; then ss_ok "view CRAM ##idx## NAME.crai"
else ss_bad "view CRAM ##idx## NAME.crai" "exit $ss_rc; $(head -1 err.txt)"; fi
run view --write-index -o v.sam.gz "$S1"
if [ $ss_rc = 0 ] && [ -s v.sam.gz.csi ] &&
    [ "$("$SAMTOOLS" view -c v.sam.gz ctgB 2>&1)" = "$("$SAMTOOLS" view -c "$S1" ctgB)" ] &&
    [ "$("$SAMTOOLS" view -c v.sam.gz ctgA:30000-30100 2>&1)" = \
        "$("$SAMTOOLS" view -c "$S1" ctgA:30000-30100)" ]; then
    ss_ok "view --write-index -o x.sam.gz: a CSI samtools queries, with samtools' records"
else
    ss_bad "view --write-index -o x.sam.gz" "exit $ss_rc; $(head -1 err.txt)" \
        "$("$SAMTOOLS" view -c v.sam.gz ctgB 2>&1 | tail -1)"
fi
refused "view --write-index of plain SAM" 2 "SAM output is indexed only when compressed" \
    view --write-index -o v.sam "$S1"
run pileup --write-index -o 'p.gz##idx##p.csi' "$S1"
cp p.gz q.gz && tabix -C -s1 -b2 -e2 q.gz
if [ $ss_rc = 0 ] && cmp -s q.gz.csi p.csi; then ss_ok "pileup ##idx## NAME.csi: tabix -C's"
else ss_bad "pileup ##idx## NAME.csi" "exit $ss_rc; $(head -1 err.txt)"; fi
run depth --write-index --output-fmt-option level=1 -o d.gz "$S1"
cp d.gz e.gz && tabix -s1 -b2 -e2 e.gz
if [ $ss_rc = 0 ] && cmp -s e.gz.tbi d.gz.tbi && cmp -s <(gzip -dc d.gz) <("$SAMTOOLS" depth "$S1"); then
    ss_ok "depth --write-index --output-fmt-option level=1 -o x.gz: samtools' lines, tabix's .tbi"
else ss_bad "depth --write-index -o x.gz" "exit $ss_rc; $(head -1 err.txt)"; fi
refused "pileup --write-index to plain text" 1 "text output is indexed only when compressed" \
    pileup --write-index -o p.txt "$S1"
refused "##idx## without --write-index" 1 "names an index, but none is written; add --write-index" \
    view -o 'x.bam##idx##x.bai' "$S1"
refused "##idx## of the wrong kind" 1 "a BAM output's index is named \*.bai or \*.csi" \
    view --write-index -o 'x.bam##idx##x.crai' "$S1"
refused "-o ##idx## with no file name" 2 "need a file name" view -o '##idx##x.bai' "$S1"

# ---- the reference: -T and --reference wherever samtools' letter is free --------------------
"$SAMTOOLS" depth "$TD/s1.cram" --reference "$REF" >exp.depth 2>/dev/null
run depth -T "$REF" -o got.depth "$TD/s1.cram"
cmp -s exp.depth got.depth && ss_ok "depth -T ref.fa reads CRAM" ||
    ss_bad "depth -T ref.fa reads CRAM" "$(head -1 err.txt)"
mkdir -p m1 m2
run depth --mosdepth m1/x -f "$REF" "$TD/s1.cram"
run depth --mosdepth m2/x --reference "$REF" "$TD/s1.cram"
cmp -s m1/x.mosdepth.summary.txt m2/x.mosdepth.summary.txt && [ -s m1/x.mosdepth.summary.txt ] &&
    ss_ok "mosdepth mode --reference = -f" || ss_bad "mosdepth mode --reference = -f" "$(head -1 err.txt)"
# mosdepth's own word order: `--mosdepth [options] PREFIX in.bam` (a --mosdepth followed
# by an option names no prefix; the first word that is not an option does)
mkdir -p "$W/mw" && (cd "$W/mw" &&
    "$SEQSHARD" depth --quiet --mosdepth -n --by 500 a "$S1" &&
    "$SEQSHARD" depth --quiet -n --by 500 --mosdepth b "$S1") 2>"$W/mw.err"
if cmp -s <(gzip -dc "$W/mw/a.regions.bed.gz" 2>/dev/null) <(gzip -dc "$W/mw/b.regions.bed.gz") &&
    cmp -s "$W/mw/a.mosdepth.summary.txt" "$W/mw/b.mosdepth.summary.txt" &&
    [ ! -e "$W/mw/a.per-base.bed.gz" ] && [ ! -e "$W/mw/-n.mosdepth.summary.txt" ]; then
    ss_ok "depth --mosdepth -n --by 500 PREFIX in.bam: mosdepth's word order"
else
    ss_bad "depth --mosdepth -n --by 500 PREFIX in.bam: mosdepth's word order" \
        "$(ls "$W/mw" | tr '\n' ' ')" "$(head -2 "$W/mw.err")"
fi
refused "mosdepth mode refuses -o" 2 "unknown option '-o'" depth --mosdepth x -o y "$S1"

ss_summary
exit $?
