#!/usr/bin/env bash
# pileup_vs_samtools.sh -- seqshard pileup must print exactly what
# `samtools mpileup` prints, for every option, at any thread count and
# shard size.
#
# Thread/shard combinations (T:S): every option runs at least at 2:2k and
# 3:7k (small shards, so boundaries fall inside reads, piles and indels);
# the main ones also at 1:1m (one shard per contig); the defaults at every
# combination, 2:50k (one edge inside a long contig) among them.
# Expected output is computed here from samtools, never stored.
set -u
. "$(dirname "$0")/lib.sh"
ss_setup

FULL="1:1m 2:2k 3:7k"
SMALL="2:2k 3:7k"
ALL="1:1m 2:2k 3:2k 1:7k 3:7k 2:50k 3:1m"

S1=$TD/s1.bam
S2=$TD/s2.bam
EDGE=$TD/edge.bam

# ---- defaults, BAQ, base/mapping quality -----------------------------------
ss_pileup "default s1"                  "$ALL"   "$S1"
ss_pileup "default edge"                "$ALL"   "$EDGE"
ss_pileup "-f (BAQ) s1"                 "$FULL"  -f "$REF" "$S1"
ss_pileup "-f (BAQ) edge"               "$FULL"  -f "$REF" "$EDGE"
ss_pileup "-B -f s1"                    "$FULL"  -B -f "$REF" "$S1"
ss_pileup "-B -f edge"                  "$SMALL" -B -f "$REF" "$EDGE"
ss_pileup "-B (no ref) s1"              "$SMALL" -B "$S1"
ss_pileup "-E -f s1"                    "$SMALL" -E -f "$REF" "$S1"
ss_pileup "-E -f edge"                  "$SMALL" -E -f "$REF" "$EDGE"
ss_pileup "-C 50 -f edge"               "$SMALL" -C 50 -f "$REF" "$EDGE"
ss_pileup "-C 50 -f s1"                 "$SMALL" -C 50 -f "$REF" "$S1"
ss_pileup "-C 50 (no ref) edge"         "$SMALL" -C 50 "$EDGE"
ss_pileup "-q 20 edge"                  "$SMALL" -q 20 "$EDGE"
ss_pileup "-q 20 s1"                    "$SMALL" -q 20 "$S1"
ss_pileup "-Q 0 edge"                   "$SMALL" -Q 0 "$EDGE"
ss_pileup "-Q 0 s1"                     "$SMALL" -Q 0 -B -f "$REF" "$S1"
ss_pileup "-Q 20 edge"                  "$SMALL" -Q 20 "$EDGE"
ss_pileup "-Q 20 -f s1"                 "$SMALL" -Q 20 -f "$REF" "$S1"

# ---- depth cap (edge.bam has piles of 300 reads, some across boundaries) ---
ss_pileup "-d 50 edge"                  "$FULL"  -d 50 "$EDGE"
ss_pileup "-d 100 -B -f edge"           "$SMALL" -d 100 -B -f "$REF" "$EDGE"
ss_pileup "-d 250 edge"                 "$FULL"  -d 250 "$EDGE"
ss_pileup "-d 50 s1+edge"               "$SMALL" -d 50 "$S1" "$EDGE"
ss_pileup "-d 1 s1"                     "$SMALL" -d 1 "$S1"

# ---- read filters -----------------------------------------------------------
ss_pileup "-A edge"                     "$SMALL" -A "$EDGE"
ss_pileup "-A s1"                       "$SMALL" -A "$S1"
ss_pileup "-x edge"                     "$FULL"  -x "$EDGE"
ss_pileup "-x -f s1"                    "$SMALL" -x -f "$REF" "$S1"
ss_pileup "--rf 2048 edge"              "$SMALL" --rf 2048 "$EDGE"
ss_pileup "--rf SECONDARY,SUPPLEMENTARY" "$SMALL" --rf SECONDARY,SUPPLEMENTARY "$EDGE"
ss_pileup "--ff 0 edge"                 "$SMALL" --ff 0 "$EDGE"
ss_pileup "--ff UNMAP,DUP edge"         "$SMALL" --ff UNMAP,DUP "$EDGE"
ss_pileup "--ff 0x704 edge"             "$SMALL" --ff 0x704 "$EDGE"
ss_pileup "--ff 3844 edge"              "$SMALL" --ff 3844 "$EDGE"
ss_pileup "--rf PAIRED --ff QCFAIL"     "$SMALL" --rf PAIRED --ff QCFAIL "$EDGE"
ss_pileup "--rf 16 s1"                  "$SMALL" --rf 16 "$S1"
ss_pileup "--ff 0 -A edge"              "$SMALL" --ff 0 -A "$EDGE"

# ---- -a / -aa (ctgEmpty has no reads; ctgA/ctgB have gaps) -----------------
ss_pileup "-a edge"                     "$FULL"  -a "$EDGE"
ss_pileup "-a s1"                       "$SMALL" -a "$S1"
ss_pileup "-aa edge"                    "$FULL"  -aa "$EDGE"
ss_pileup "-a -a s1"                    "$SMALL" -a -a "$S1"
ss_pileup "-aa -f edge"                 "$FULL"  -aa -f "$REF" "$EDGE"
ss_pileup "-a -f s1"                    "$SMALL" -a -f "$REF" "$S1"
ss_pileup "-aa -r ctgEmpty"             "$SMALL" -aa -r ctgEmpty "$EDGE"
ss_pileup "-a -r ctgEmpty"              "$SMALL" -a -r ctgEmpty "$EDGE"
ss_pileup "-aa -r ctgB:39000-40500"     "$SMALL" -aa -r ctgB:39000-40500 "$EDGE"
ss_pileup "-aa -f -r ctgA:1900-2100"    "$SMALL" -aa -f "$REF" -r ctgA:1900-2100 "$EDGE"
ss_pileup "-aa -l regions.bed"          "$SMALL" -aa -l "$TD/regions.bed" "$EDGE"
ss_pileup "-a -l positions.txt"         "$SMALL" -a -l "$TD/positions.txt" "$S1"
ss_pileup "-aa -f -l regions.bed"       "$SMALL" -aa -f "$REF" -l "$TD/regions.bed" "$S1"

# ---- output columns -----------------------------------------------------------
ss_pileup "-s edge"                     "$SMALL" -s "$EDGE"
ss_pileup "-O edge"                     "$SMALL" -O "$EDGE"
ss_pileup "--output-BP-5 edge"          "$SMALL" --output-BP-5 "$EDGE"
ss_pileup "-s -O s1"                    "$SMALL" -s -O "$S1"
ss_pileup "--output-QNAME edge"         "$FULL"  --output-QNAME "$EDGE"
ss_pileup "--output-extra fields"       "$SMALL" \
    --output-extra FLAG,MAPQ,RNAME,POS,RNEXT,PNEXT "$EDGE"
ss_pileup "--output-extra tags"         "$SMALL" --output-extra NM,MD,RG,AS "$EDGE"
ss_pileup "--output-extra all s1"       "$SMALL" \
    --output-extra QNAME,FLAG,MAPQ,RNAME,POS,RNEXT,PNEXT,NM,MD,RG,AS "$S1"
ss_pileup "--output-extra missing tag"  "$SMALL" --output-extra XS,ZZ,AS "$EDGE"
ss_pileup "--output-extra sep/empty"    "$SMALL" --output-extra XS,MD,POS \
    --output-sep ';' --output-empty - "$EDGE"
ss_pileup "--output-extra + -s -O QNAME" "$SMALL" -s -O --output-QNAME \
    --output-extra FLAG,NM "$EDGE"
ss_pileup "-M edge"                     "$SMALL" -M "$EDGE"
ss_pileup "--reverse-del edge"          "$SMALL" --reverse-del -f "$REF" "$EDGE"
ss_pileup "--no-output-ins"             "$SMALL" --no-output-ins "$EDGE"
ss_pileup "--no-output-ins x2"          "$SMALL" --no-output-ins --no-output-ins "$EDGE"
ss_pileup "--no-output-ins x2 s1"       "$SMALL" --no-output-ins --no-output-ins -f "$REF" "$S1"
ss_pileup "--no-output-del"             "$SMALL" --no-output-del "$EDGE"
ss_pileup "--no-output-del x2"          "$SMALL" --no-output-del --no-output-del "$EDGE"
ss_pileup "--no-output-del x2 s1"       "$SMALL" --no-output-del --no-output-del "$S1"
ss_pileup "--no-output-ends"            "$SMALL" --no-output-ends "$EDGE"
ss_pileup "--no-output-ends s1"         "$SMALL" --no-output-ends "$S1"
ss_pileup "all --no-output-*"           "$SMALL" --no-output-ins --no-output-del \
    --no-output-ends -f "$REF" "$EDGE"

# ---- regions -------------------------------------------------------------------
ss_pileup "-r ctgA (whole)"             "$FULL"  -r ctgA "$S1"
ss_pileup "-r ctgA:1951-2100"           "$FULL"  -r ctgA:1951-2100 "$EDGE"
ss_pileup "-r ctgA:13000-15000 s1+edge" "$SMALL" -r ctgA:13000-15000 "$S1" "$EDGE"
ss_pileup "-r ctgA:10001 (to end)"      "$SMALL" -r ctgA:10001 "$EDGE"
ss_pileup "-r ctgA:2000-2000"           "$SMALL" -r ctgA:2000-2000 "$EDGE"
ss_pileup "-r ctgA:1,000-3,000"         "$SMALL" -r ctgA:1,000-3,000 "$EDGE"
ss_pileup "-r ctgA:-500 (from start)"   "$SMALL" -r ctgA:-500 "$EDGE"
ss_pileup "-r ctgA:0-100"               "$SMALL" -r ctgA:0-100 "$EDGE"
ss_pileup "-r ctgB:39950-40000 (end)"   "$FULL"  -r ctgB:39950-40000 "$EDGE"
ss_pileup "-r ctgB:39990-45000 (past)"  "$SMALL" -r ctgB:39990-45000 "$EDGE"
ss_pileup "-r ctgB:50000-60000 (beyond)" "$SMALL" -r ctgB:50000-60000 "$EDGE"
ss_pileup "-r ctgTiny"                  "$FULL"  -r ctgTiny "$S1" "$EDGE"
ss_pileup "-r ctgEmpty"                 "$SMALL" -r ctgEmpty "$S1"
ss_pileup "-r ctgA:16000-16200 -f"      "$SMALL" -r ctgA:16000-16200 -f "$REF" "$EDGE"
ss_pileup "-r with -l"                  "$SMALL" -r ctgA:1-20000 -l "$TD/regions.bed" "$EDGE"
ss_pileup "-l regions.bed s1"           "$FULL"  -l "$TD/regions.bed" "$S1"
ss_pileup "-l regions.bed edge"         "$SMALL" -l "$TD/regions.bed" "$EDGE"
ss_pileup "-l positions.txt s1"         "$SMALL" -l "$TD/positions.txt" "$S1"
ss_pileup "-l positions.txt edge -f"    "$SMALL" -l "$TD/positions.txt" -f "$REF" "$EDGE"

# ---- several inputs, lists, read groups, CRAM, CSI ----------------------------
ss_pileup "two files"                   "$FULL"  "$S1" "$S2"
ss_pileup "three files -f"              "$SMALL" -f "$REF" "$S1" "$S2" "$EDGE"
printf '%s\n%s\n' "$S1" "$S2" >"$SS_WORK/bams.txt"
ss_pileup "-b list"                     "$SMALL" -b "$SS_WORK/bams.txt"
ss_pileup "-b list + file"              "$SMALL" -b "$SS_WORK/bams.txt" "$EDGE"
ss_pileup "-G exclude-rg"               "$SMALL" -G "$TD/exclude-rg.txt" "$S1" "$S2"
ss_pileup "-R two files"                "$SMALL" -R "$S1" "$S2"
ss_pileup "CRAM -f s1"                  "$FULL"  -f "$REF" "$TD/s1.cram"
ss_pileup "CRAM -f edge -B"             "$SMALL" -B -f "$REF" "$TD/edge.cram"
ss_pileup "CRAM --reference"            "$SMALL" --reference "$REF" "$TD/s1.cram"
ss_pileup "CRAM + BAM -f"               "$SMALL" -f "$REF" "$TD/s1.cram" "$S2"
ss_pileup "CRAM -r -f"                  "$SMALL" -f "$REF" -r ctgB:1000-9000 "$TD/s1.cram"
ss_pileup "CSI index"                   "$SMALL" "$TD/s1csi.bam"
ss_pileup "no @HD line (no SO)"         "$SMALL" "$TD/nohd.bam"
ss_pileup "CSI index -r"                "$SMALL" -r ctgA:30000-45000 "$TD/s1csi.bam"

# ---- rarely used input options ---------------------------------------------------
ss_pileup "-6 (Illumina 1.3+ quals)"    "$SMALL" -6 "$EDGE"
ss_pileup "-X custom index"             "$SMALL" -X -r ctgA:1000-9000 "$S1" "$TD/s1csi.bam.csi"
# -X: all inputs first, then their index files in the same order.
ss_pileup "-X two files"                "$SMALL" -X "$S1" "$TD/edge.bam" "$TD/s1csi.bam.csi" \
    "$TD/edge.bam.bai"
ss_pileup "--input-fmt-option"          "$SMALL" -f "$REF" --input-fmt-option decode_md=0 \
    "$TD/s1.cram"

# ---- combinations ---------------------------------------------------------------
ss_pileup "combo filters"               "$FULL"  -f "$REF" -C 50 -q 20 -Q 20 -d 100 -A "$EDGE"
ss_pileup "combo columns"               "$SMALL" -B -f "$REF" -s -O --output-QNAME \
    --output-extra FLAG,RG -x "$S1" "$EDGE"
ss_pileup "combo -aa filters"           "$SMALL" -aa -q 30 -Q 25 --ff UNMAP,SECONDARY "$EDGE"
ss_pileup "combo region+bed+2 files"    "$SMALL" -E -f "$REF" -r ctgA -l "$TD/regions.bed" \
    -d 250 "$S1" "$EDGE"

# ---- -o FILE ---------------------------------------------------------------------
ss_pileup_outfile "-o FILE -@1 1m"      1 1m "$S1"
ss_pileup_outfile "-o FILE -@3 2k"      3 2k -f "$REF" "$S1" "$EDGE"
ss_pileup_outfile "-o FILE -@2 7k -aa"  2 7k -aa "$EDGE"

# ---- seqshard's own options must not change the bytes ------------------------------
# --report writes valid JSON; --tmp-dir is left empty; output still matches.
ss_case_no=$((ss_case_no + 1))
d=$SS_WORK/own.$ss_case_no
mkdir -p "$d/tmp" "$d/out"
"$SAMTOOLS" mpileup -f "$REF" "$S1" "$EDGE" >"$d/exp.txt" 2>/dev/null
cmd=(pileup -@ 2 --shard-size 2k --quiet --report "$d/report.json" --tmp-dir "$d/tmp"
    -o "$d/out/out.txt" -f "$REF" "$S1" "$EDGE")
ss_run_seqshard "$d/stdout" "$d/stderr" "${cmd[@]}"
if [ "$ss_rc" != 0 ]; then
    ss_bad "--report/--tmp-dir" "exit status $ss_rc" "$(ss_quote "$SEQSHARD" "${cmd[@]}")" \
        "stderr: $(head -2 "$d/stderr")"
elif ! cmp -s "$d/exp.txt" "$d/out/out.txt"; then
    ss_bad "--report/--tmp-dir" "output differs from samtools" \
        "$(ss_quote "$SEQSHARD" "${cmd[@]}")"
    ss_show_diff "$d/exp.txt" "$d/out/out.txt"
elif ! python3 -m json.tool "$d/report.json" >/dev/null 2>&1; then
    ss_bad "--report/--tmp-dir" "--report did not write valid JSON" \
        "$(ss_quote "$SEQSHARD" "${cmd[@]}")" "$(head -c 300 "$d/report.json" 2>&1)"
elif [ -n "$(find "$d/tmp" -mindepth 1 -printf '%f ')" ]; then
    ss_bad "--report/--tmp-dir" "left files in --tmp-dir: $(find "$d/tmp" -mindepth 1)" \
        "$(ss_quote "$SEQSHARD" "${cmd[@]}")"
elif [ -s "$d/stderr" ]; then
    ss_bad "--quiet" "printed on stderr despite --quiet: $(head -2 "$d/stderr")" \
        "$(ss_quote "$SEQSHARD" "${cmd[@]}")"
else
    ss_ok "--report/--tmp-dir/--quiet"
    rm -rf "$d"
fi

# ---- determinism: threads and shard size never change the bytes -----------------
for opts in "-f $REF" "-B -aa" "-d 50 -x --output-QNAME" "-s -O --output-extra NM,MD"; do
    # shellcheck disable=SC2086  # word splitting of $opts is intended
    ss_same "determinism $opts" \
        pileup -@ 1 --shard-size 1m --quiet $opts "$S1" "$EDGE" -- \
        pileup -@ 3 --shard-size 2k --quiet $opts "$S1" "$EDGE"
done
# Repeat one small-shard run a few times: races show up as varying output.
for i in 1 2 3; do
    ss_same "repeat run $i" \
        pileup -@ 3 --shard-size 2k --quiet -f "$REF" "$S1" "$EDGE" -- \
        pileup -@ 2 --shard-size 7k --quiet -f "$REF" "$S1" "$EDGE"
done

ss_summary
exit $?
