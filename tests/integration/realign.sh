#!/usr/bin/env bash
# realign.sh -- seqshard realign on the dwgsim+bwa test data (read-only):
#   - the same bytes at -@ 1-3 and shard sizes 2k, 7k, 50k and a whole contig, and at
#     shards far smaller than the halo (-@2 1k, -@3 3k);
#   - a read whose unsupported indel costs more than its mismatches is refitted to the
#     reference (OA holds the indel, the new CIGAR none);
#   - the output is sound: samtools quickcheck, index, flagstat (the input's, since
#     no flag changes), view -c (the input's), every input record out once;
#   - mates agree: collate | fixmate changes no PNEXT, TLEN or MC that the input
#     did not already disagree on;
#   - realigned reads: OA present, BQ gone, NM/MD as samtools calmd computes them;
#   - truth (scripts/realign-eval.py): reads over homozygous true indels hold them at
#     least as often as bwa's and in 98.5% of cases (the misses left on this data are
#     reads with a sequencing error inside the inserted bases: a realigner never
#     changes bases), with no more false indels;
#   - --known sites, regions, the one-line errors before work, --help.
set -u
. "$(dirname "$0")/lib.sh"
ss_setup
W=$SS_WORK
IN=$TD/s1.bam
TRUTH=$TD/s1.bam.mutations.vcf
EVAL=$SS_SRC/scripts/realign-eval.py

run() { # OUT ARGS...: realign to stdout (SAM or BAM) with a timeout; sets ss_rc
    local out=$1
    shift
    ss_run_seqshard "$out" "$out.err" realign --quiet -f "$REF" "$@"
}

# ---- the same bytes at any thread count and shard size ----
run "$W/ref.sam" -O sam -@ 1 --shard-size 1g "$IN"
if [ "$ss_rc" != 0 ]; then
    ss_bad "realign whole contig" "exit status $ss_rc" "$(head -3 "$W/ref.sam.err")"
    ss_summary
    exit 1
fi
for t in 1 2 3; do
    for s in 2k 7k 50k 1g; do
        [ "$t:$s" = 1:1g ] && continue
        run "$W/got.sam" -O sam -@ "$t" --shard-size "$s" "$IN"
        if [ "$ss_rc" != 0 ]; then
            ss_bad "same bytes -@$t --shard-size $s" "exit status $ss_rc" "$(head -2 "$W/got.sam.err")"
        elif cmp -s "$W/ref.sam" "$W/got.sam"; then
            ss_ok "same bytes -@$t --shard-size $s"
        else
            ss_bad "same bytes -@$t --shard-size $s" "output differs from -@1 whole contig"
            ss_show_diff "$W/ref.sam" "$W/got.sam"
        fi
    done
done
# shards far smaller than the halo, where most of a shard's reads are context: the gapped
# fits' decisions must still be the same in every shard that sees a window
for ts in 2:1k 3:3k; do
    run "$W/got.sam" -O sam -@ "${ts%%:*}" --shard-size "${ts#*:}" "$IN"
    if [ "$ss_rc" = 0 ] && cmp -s "$W/ref.sam" "$W/got.sam"; then
        ss_ok "same bytes -@${ts%%:*} --shard-size ${ts#*:}"
    else
        ss_bad "same bytes -@${ts%%:*} --shard-size ${ts#*:}" "exit status $ss_rc or output differs"
        ss_show_diff "$W/ref.sam" "$W/got.sam"
    fi
done
# a read whose own indel nothing supports and whose bases fit the reference for less (a gap
# bwa mem opened near a read's end) goes back to the reference: its OA holds an indel, its
# new CIGAR none (on this data, 143M2D7M -> 150M)
n_ref=$(awk -F '\t' '!/^@/ && $6 !~ /[ID]/ {for (i = 12; i <= NF; i++) if ($i ~ /^OA:Z:/) {
    split(substr($i, 6), oa, ","); if (oa[4] ~ /[ID]/) k++}} END {print k + 0}' "$W/ref.sam")
[ "$n_ref" -gt 0 ] && ss_ok "reads refitted to the reference: $n_ref" ||
    ss_bad "reads refitted to the reference" "none in the output"

# ---- a sound BAM with every record ----
run "$W/stdout" -@ 2 --shard-size 7k --write-index -o "$W/out.bam" "$IN"
if [ "$ss_rc" != 0 ]; then
    ss_bad "BAM output" "exit status $ss_rc" "$(head -2 "$W/stdout.err")"
else
    "$SAMTOOLS" quickcheck "$W/out.bam" && ss_ok "quickcheck" || ss_bad "quickcheck" "failed"
    [ -f "$W/out.bam.csi" ] && ss_ok "--write-index" || ss_bad "--write-index" "no out.bam.csi"
    cp "$W/out.bam" "$W/copy.bam"
    "$SAMTOOLS" index "$W/copy.bam" 2>"$W/idx.err" && ss_ok "samtools index" ||
        ss_bad "samtools index" "failed" "$(head -2 "$W/idx.err")"
    "$SAMTOOLS" flagstat "$IN" >"$W/flag.in"
    "$SAMTOOLS" flagstat "$W/out.bam" >"$W/flag.out" 2>&1
    cmp -s "$W/flag.in" "$W/flag.out" && ss_ok "flagstat equals the input's" ||
        { ss_bad "flagstat equals the input's" "differs"; ss_show_diff "$W/flag.in" "$W/flag.out"; }
    cin=$("$SAMTOOLS" view -c "$IN")
    cout=$("$SAMTOOLS" view -c "$W/out.bam")
    [ "$cin" = "$cout" ] && ss_ok "view -c $cout" || ss_bad "view -c" "input $cin, output $cout"
    # every record once: names and flags, as multisets
    cmp -s <("$SAMTOOLS" view "$IN" | cut -f1,2,10 | sort) \
        <("$SAMTOOLS" view "$W/out.bam" | cut -f1,2,10 | sort) &&
        ss_ok "the same records (name, flag, bases)" ||
        ss_bad "the same records (name, flag, bases)" "some were lost or duplicated"
    "$SAMTOOLS" view -H "$W/out.bam" | grep -q '^@PG.*ID:seqshard.*realign' &&
        ss_ok "@PG line" || ss_bad "@PG line" "missing"
fi

# ---- mates: what fixmate would write, the output already has ----
mate_disagreements() { # BAM OUT
    "$SAMTOOLS" view -h "$1" >"$W/m.a.sam"
    "$SAMTOOLS" collate -O "$1" "$W/collate" | "$SAMTOOLS" fixmate - - |
        "$SAMTOOLS" view -h - >"$W/m.b.sam"
    python3 "$SS_SRC/tests/integration/realign_mates.py" "$W/m.a.sam" "$W/m.b.sam" | cut -f1,2 |
        sort >"$2"
}
if [ -f "$W/out.bam" ]; then
    mate_disagreements "$IN" "$W/mates.in"
    mate_disagreements "$W/out.bam" "$W/mates.out"
    extra=$(comm -13 "$W/mates.in" "$W/mates.out" | wc -l)
    [ "$extra" = 0 ] && ss_ok "fixmate keeps every PNEXT, TLEN and MC" ||
        ss_bad "fixmate keeps every PNEXT, TLEN and MC" "$extra records differ" \
            "$(comm -13 "$W/mates.in" "$W/mates.out" | head -3)"
    # overlapping pairs among the moved: TLEN is fixmate's 5'-to-5' there too
    "$SAMTOOLS" view "$W/out.bam" | grep 'OA:Z:' | cut -f1 | sort -u >"$W/moved.names"
    nm=$(wc -l <"$W/moved.names")
    [ "$nm" -gt 20 ] && ss_ok "reads realigned: $nm" || ss_bad "reads realigned" "only $nm"
    ov=$("$SAMTOOLS" view "$W/out.bam" | awk 'NR==FNR {m[$1]=1; next}
        ($1 in m) && $9 != 0 && ($9 < 0 ? -$9 : $9) < 300' "$W/moved.names" - | wc -l)
    [ "$ov" -gt 0 ] && ss_ok "overlapping moved pairs checked: $ov records" ||
        ss_bad "overlapping moved pairs" "none in the data: the TLEN check proves little"
fi

# ---- the realigned reads' tags ----
if [ -f "$W/out.bam" ]; then
    "$SAMTOOLS" view "$W/out.bam" | grep 'OA:Z:' >"$W/oa.sam"
    grep -q 'BQ:Z:' "$W/oa.sam" && ss_bad "BQ removed" "a realigned read kept BQ" || ss_ok "BQ removed"
    bad=$(awk '{for (i = 12; i <= NF; i++) if ($i ~ /^OA:Z:/) { n = split(substr($i, 6), a, ",");
        if (n < 6 || a[1] != $3) print $1 }}' "$W/oa.sam" | wc -l)
    [ "$bad" = 0 ] && ss_ok "OA:Z RNAME,POS,strand,CIGAR,MAPQ,NM;" || ss_bad "OA:Z" "$bad malformed"
    ( "$SAMTOOLS" view -H "$W/out.bam"; cat "$W/oa.sam" ) | "$SAMTOOLS" calmd - "$REF" 2>/dev/null |
        grep -v '^@' >"$W/calmd.sam"
    nmmd() { awk '{nm = md = ""; for (i = 12; i <= NF; i++) { if ($i ~ /^NM:i:/) nm = $i;
        if ($i ~ /^MD:Z:/) md = $i }; print $1, $2, nm, md}' "$1"; }
    cmp -s <(nmmd "$W/oa.sam") <(nmmd "$W/calmd.sam") && ss_ok "NM and MD as samtools calmd" ||
        { ss_bad "NM and MD as samtools calmd" "differ"; ss_show_diff <(nmmd "$W/oa.sam") <(nmmd "$W/calmd.sam"); }
fi

# ---- truth: reads over true indels ----
if [ -f "$W/out.bam" ]; then
    e_in=$("$SAMTOOLS" view "$IN" | python3 "$EVAL" "$REF" "$TRUTH" bwa)
    e_out=$("$SAMTOOLS" view "$W/out.bam" | python3 "$EVAL" "$REF" "$TRUTH" realigned)
    get() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
    if awk -v a="$(get "$e_in" share)" -v b="$(get "$e_out" share)" 'BEGIN {exit !(b >= a && b >= 0.985)}'; then
        ss_ok "truth: share holding the indel $(get "$e_out" share) (bwa $(get "$e_in" share))"
    else
        ss_bad "truth: share holding the indel" "$e_out" "input: $e_in"
    fi
    if [ "$(get "$e_out" false)" -le "$(get "$e_in" false)" ]; then
        ss_ok "truth: false indels $(get "$e_out" false) (bwa $(get "$e_in" false))"
    else
        ss_bad "truth: false indels" "$e_out" "input: $e_in"
    fi
fi

# ---- known sites ----
grep '^#' "$TRUTH" >"$W/known.vcf"
grep -v '^#' "$TRUTH" | awk 'length($4) != length($5)' >>"$W/known.vcf"
bgzip -c "$W/known.vcf" >"$W/known.vcf.gz" && tabix -p vcf "$W/known.vcf.gz"
run "$W/known.sam" -O sam --known "$W/known.vcf.gz" "$IN"
if [ "$ss_rc" != 0 ]; then
    ss_bad "--known" "exit status $ss_rc" "$(head -2 "$W/known.sam.err")"
else
    cmp -s <(grep -v '^@' "$W/known.sam" | cut -f1,2,10 | sort) <(grep -v '^@' "$W/ref.sam" | cut -f1,2,10 | sort) &&
        ss_ok "--known: every record" || ss_bad "--known: every record" "records differ"
    for t in "1 2k" "2 50k"; do
        set -- $t
        run "$W/known2.sam" -O sam --known "$W/known.vcf.gz" -@ "$1" --shard-size "$2" "$IN"
        cmp -s "$W/known.sam" "$W/known2.sam" && ss_ok "--known same bytes -@$1 $2" ||
            ss_bad "--known same bytes -@$1 $2" "differ"
    done
fi
sed 's/^ctgA\t/chrNope\t/' "$W/known.vcf" | bgzip -c >"$W/badctg.vcf.gz" && tabix -p vcf "$W/badctg.vcf.gz"
run "$W/bad.out" --known "$W/badctg.vcf.gz" -o "$W/never.bam" "$IN"
if [ "$ss_rc" != 0 ] && [ "$(wc -l <"$W/bad.out.err")" = 1 ] && grep -q chrNope "$W/bad.out.err" &&
    [ ! -e "$W/never.bam" ]; then
    ss_ok "--known with a foreign contig: one line, no output"
else
    ss_bad "--known with a foreign contig" "status $ss_rc" "$(head -3 "$W/bad.out.err")"
fi
run "$W/bad2.out" --known "$W/known.vcf" -o "$W/never.bam" "$IN"
[ "$ss_rc" != 0 ] && grep -q 'no index\|tabix' "$W/bad2.out.err" && ss_ok "--known without an index" ||
    ss_bad "--known without an index" "status $ss_rc" "$(head -2 "$W/bad2.out.err")"

# ---- CRAM input: the records realign writes from the same reads in BAM ----
# samtools decodes the CRAM with NM/MD rebuilt; realign must read it the same way
# (they are written, recomputed for moved reads, and NM guides the mismatch scan).
"$SAMTOOLS" view -T "$REF" -b -o "$W/fromcram.bam" "$TD/s1.cram" &&
    "$SAMTOOLS" index "$W/fromcram.bam"
run "$W/bamin.sam" -O sam -@ 2 --shard-size 7k "$W/fromcram.bam"
rb=$ss_rc
run "$W/cramin.sam" -O sam -@ 2 --shard-size 7k "$TD/s1.cram"
if [ "$rb" != 0 ] || [ "$ss_rc" != 0 ]; then
    ss_bad "CRAM input" "exit status BAM $rb, CRAM $ss_rc" "$(head -2 "$W/cramin.sam.err")"
else
    grep -v '^@' "$W/bamin.sam" >"$W/bamin.rec"
    grep -v '^@' "$W/cramin.sam" >"$W/cramin.rec"
    nm=$(grep -c 'NM:i:' "$W/cramin.rec")
    md=$(grep -c 'MD:Z:' "$W/cramin.rec")
    want=$(grep -c 'NM:i:' "$W/bamin.rec")
    if [ "$want" -lt 1000 ]; then
        ss_bad "CRAM input" "only $want records with NM from the BAM: the test is wrong"
    elif [ "$nm" != "$want" ] || [ "$md" != "$want" ]; then
        ss_bad "CRAM input: NM/MD kept" "NM on $nm, MD on $md records; from the BAM $want"
    elif ! cmp -s "$W/bamin.rec" "$W/cramin.rec"; then
        ss_bad "CRAM input" "records differ from realign of the same reads in BAM"
        ss_show_diff "$W/bamin.rec" "$W/cramin.rec"
    else
        ss_ok "CRAM input: the BAM's records, NM/MD on $nm"
    fi
fi

# ---- regions: what a region query of the whole run's output returns ----
run "$W/reg.sam" -O sam "$IN" ctgA:20001-30000
if [ "$ss_rc" != 0 ]; then
    ss_bad "region" "exit status $ss_rc" "$(head -2 "$W/reg.sam.err")"
else
    "$SAMTOOLS" view -b -o "$W/whole.bam" "$W/ref.sam" && "$SAMTOOLS" index "$W/whole.bam"
    "$SAMTOOLS" view "$W/whole.bam" ctgA:20001-30000 >"$W/reg.want"
    if cmp -s <(grep -v '^@' "$W/reg.sam") "$W/reg.want"; then
        ss_ok "region: $(wc -l <"$W/reg.want") records, the whole run's region query"
    else
        ss_bad "region" "records differ from samtools view of the whole run's output, region"
        ss_show_diff "$W/reg.want" <(grep -v '^@' "$W/reg.sam")
    fi
fi

# ---- usage ----
ss_run_seqshard "$W/help" "$W/help.err" realign --help
for opt in --reference --known --output-fmt --level --write-index --max-move --max-isize \
    --max-window --threads --shard-size --report; do
    grep -q -- "$opt" "$W/help" || ss_bad "--help lists $opt" "missing"
done
ss_ok "--help"
ss_run_seqshard "$W/noref" "$W/noref.err" realign "$IN"
[ "$ss_rc" = 2 ] && ss_ok "no -f: usage error" || ss_bad "no -f" "status $ss_rc"

ss_summary
exit $?
