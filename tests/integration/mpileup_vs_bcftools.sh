#!/usr/bin/env bash
# mpileup_vs_bcftools.sh -- seqshard mpileup gives the bytes of bcftools
# mpileup 1.16 (contract 2), at one shard (-@1 --shard-size 1g) and with shard
# edges everywhere (-@2 at 2k, -@3 at 7k): every case is `bcftools mpileup
# --no-version ARGS` against `seqshard mpileup --no-version ARGS`, cmp.
#   - inputs: s1.bam, s1+s2 (two samples), s1.cram, edge.bam (clips, overlapping
#     mates, indels across shard edges); the deep amplicons (amp.bam, ~1650x)
#     with -d 10000, where bcftools subsamples with its random stream, and
#     with --seed 7, at -@3 --shard-size 1k instead of 7k (its 3 kb contig
#     makes one shard at 7k, three at 1k), checking that the seed matters and
#     that the plan does cut the contig; read groups: two samples in one BAM,
#     two read groups of one sample, one sample in two files, each with and
#     without --ignore-RG (with -a AD,DP, which show the reads' samples);
#   - options, on edge.bam unless said: -a (every tag, three samples), -U, -B,
#     -D, -E (BQ tags), -I, -C, -q/-Q, -A, -x, -m/-F, --indel-size (rg2.bam:
#     edge.bam has no indel it changes), -X 1.12/pacbio-ccs/ont, --ar incAD,
#     -r with one and two regions;
#   - output: -Ou byte for byte; -Oz and -Ob decompressed, read by bcftools
#     view, with --write-index the .csi bcftools index makes of the same file;
#     without --no-version the header's ##seqshardVersion/##seqshardCommand
#     stand where bcftools has its two, and do not change with -@ or
#     --shard-size; bcftools call -mv on seqshard's BCF gives the calls it
#     gives on bcftools'.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_mpileup.sh"
ss_setup
mp_setup
W=$SS_WORK
L=$MP_LAYOUTS
R=(-f "$REF")

# ---- inputs ------------------------------------------------------------------------------
mp_vs "s1.bam"                     "$L" "${R[@]}" "$TD/s1.bam"
mp_vs "s1+s2: two samples"         "$L" "${R[@]}" "$TD/s1.bam" "$TD/s2.bam"
mp_vs "s1.cram"                    "$L" "${R[@]}" "$TD/s1.cram"
mp_vs "edge.bam"                   "$L" "${R[@]}" "$TD/edge.bam"

# The deep contig: 3 kb, so 1g and 7k make one shard, 2k two, 1k three (edges at 1000,
# 1500, 2000, where amp.bam has indels). Past 255 bases per sample bcftools draws from
# its random stream: each shard must continue it where the shards before it left it.
DEEP="every 1:1g 2:2k 3:1k"
mp_vs "deep -d 10000"              "$DEEP" -f "$AMP" -d 10000 "$TD/amp.bam"
seed0=$MP_EXP.seed0
cp "$MP_EXP" "$seed0"
mp_vs "deep -d 10000 --seed 7"     "$DEEP" -f "$AMP" -d 10000 --seed 7 "$TD/amp.bam"
# Above -L's depth no indel record is made, so the census counts the SNP records' bases
# alone; with -L 10000 it computes the indel records too, whose likelihoods draw as well.
mp_vs "deep -d 10000 -L 10000"     "$DEEP" -f "$AMP" -d 10000 -L 10000 "$TD/amp.bam"
# Without subsampling the seed changes nothing and the cases above test no random stream.
if cmp -s "$seed0" "$MP_EXP"; then
    ss_bad "deep: --seed matters" "bcftools gives the same bytes with --seed 7:" \
        "amp.bam no longer reaches 255 bases per sample; see scripts/make-testdata.sh"
else
    ss_ok "deep: --seed matters"
fi
rm -f "$seed0"
# ... and they cross shard edges only while the plan cuts ctgAmp so (a fast run, -B -I:
# the plan depends on the inputs and --shard-size alone).
for want in 2k:2 1k:3; do
    timeout "$SS_TIMEOUT" "$SEQSHARD" mpileup --quiet -B -I -@ 3 --shard-size "${want%:*}" \
        -f "$AMP" --report "$W/plan.json" -o /dev/null "$TD/amp.bam" </dev/null 2>"$W/plan.err"
    n=$(grep -c '"region": *"ctgAmp:' "$W/plan.json" 2>/dev/null)
    if [ "${n:-0}" -ge "${want#*:}" ]; then
        ss_ok "deep: --shard-size ${want%:*} makes $n shards"
    else
        ss_bad "deep: --shard-size ${want%:*} makes ${want#*:} shards or more" \
            "${n:-no} shards in --report: the deep cases no longer cross shard edges" \
            "$(head -2 "$W/plan.err")"
    fi
done

# Samples from read groups and files; -a AD,DP shows which sample each read went to.
# shellcheck disable=SC2054 # -a takes a comma-separated list
S=(-a AD,DP "${R[@]}")
mp_vs "rg2.bam: two samples in one BAM"       "$L" "${S[@]}" "$TD/rg2.bam"
mp_vs "rg2.bam --ignore-RG"                   "$L" "${S[@]}" --ignore-RG "$TD/rg2.bam"
mp_vs "rgsame.bam: two read groups, one sample" "$L" "${S[@]}" "$TD/rgsame.bam"
mp_vs "rgsame.bam --ignore-RG"                "$L" "${S[@]}" --ignore-RG "$TD/rgsame.bam"
mp_vs "split1+split2: one sample, two files"  "$L" "${S[@]}" "$TD/split1.bam" "$TD/split2.bam"
mp_vs "split1+split2 --ignore-RG"             "$L" "${S[@]}" --ignore-RG "$TD/split1.bam" \
    "$TD/split2.bam"

# ---- options -----------------------------------------------------------------------------
E=("${R[@]}" "$TD/edge.bam")
mp_vs "-a every tag, three samples" "$L" \
    -a AD,ADF,ADR,DP,SP,DP4,DV,DPR,INFO/AD,INFO/ADF,INFO/ADR,SCR,INFO/SCR,QS,NMBZ \
    "${R[@]}" "$TD/rg2.bam" "$TD/edge.bam"
mp_vs "-U"                  "$L" -U "${E[@]}"
mp_vs "-B"                  "$L" -B "${E[@]}"
mp_vs "-D"                  "$L" -D "${E[@]}"
mp_vs "edge.bq.bam (BQ tags)" "$L" "${R[@]}" "$TD/edge.bq.bam"
mp_vs "-E on edge.bq.bam"   "$L" -E "${R[@]}" "$TD/edge.bq.bam"
mp_vs "-I"                  "$L" -I "${E[@]}"
mp_vs "-C 50"               "$L" -C 50 "${E[@]}"
mp_vs "-q 20 -Q 20"         "$L" -q 20 -Q 20 "${E[@]}"
mp_vs "-A"                  "$L" -A "${E[@]}"
mp_vs "-x"                  "$L" -x "${E[@]}"
mp_vs "-m 1 -F 0.002"       "$L" -m 1 -F 0.002 "${E[@]}"
mp_vs "--indel-size 200 on rg2.bam" "$L" --indel-size 200 "${R[@]}" "$TD/rg2.bam"
mp_vs "-X 1.12"             "$L" -X 1.12 "${E[@]}"
mp_vs "-X pacbio-ccs"       "$L" -X pacbio-ccs "${E[@]}"
mp_vs "-X ont"              "$L" -X ont "${E[@]}"
# --ar changes only what AD counts
mp_vs "--ar incAD -a AD,ADF,ADR,INFO/AD" "$L" --ar incAD -a AD,ADF,ADR,INFO/AD "${E[@]}"
mp_vs "-r one region"       "$L" -r ctgA:1990-16200 "${R[@]}" "$TD/s1.bam" "$TD/edge.bam"
mp_vs "-r two regions"      "$L" -r ctgA:13900-14100,ctgB "${R[@]}" "$TD/s1.bam" "$TD/edge.bam"

# ---- output types ------------------------------------------------------------------------
O=("${R[@]}" "$TD/rg2.bam" "$TD/edge.bam")
mp_vs "-Ou (uncompressed BCF)" "$L" -Ou "${O[@]}"

# compressed TYPE: -OTYPE --write-index to a file at each layout: bcftools' content
# (decompressed), read by bcftools view as bcftools' file is, and the .csi bcftools index
# makes of a copy of the same file.
compressed() {
    local type=$1 ext=vcf.gz exp=$W/exp.O$1 layout got what
    [ "$type" = b ] && ext=bcf
    shift
    mp_bcftools "$exp.stdout" -O"$type" -o "$exp.$ext" "${O[@]}" || return
    bgzip -dc "$exp.$ext" >"$exp.plain"
    "$BCFTOOLS" view --no-version "$exp.$ext" >"$exp.view"
    mp_to_file=1
    for layout in $L; do
        got=$W/got.${layout//:/.}.$ext
        what="-O$type --write-index [$(mp_layout_name "$layout")]"
        if ! mp_seqshard "$got" "$layout" -O"$type" --write-index "${O[@]}"; then
            ss_bad "$what" "$mp_why" "$(ss_quote "${mp_cmd[@]}")" "$(head -3 "$got.err")"
            continue
        fi
        cp "$got" "$W/copy.$ext"
        "$BCFTOOLS" index -f "$W/copy.$ext" 2>"$W/index.err"
        if ! bgzip -dc "$got" 2>"$W/dc.err" | cmp -s "$exp.plain" -; then
            ss_bad "$what" "decompressed, it differs from bcftools -O$type's" \
                "$(ss_quote "${mp_cmd[@]}")" "$(head -2 "$W/dc.err")"
            bgzip -dc "$got" >"$W/got.plain" 2>/dev/null
            ss_show_diff "$exp.plain" "$W/got.plain"
        elif ! "$BCFTOOLS" view --no-version "$got" 2>"$W/view.err" | cmp -s "$exp.view" - ||
            [ -s "$W/view.err" ]; then
            ss_bad "$what" "bcftools view does not read it as it reads bcftools' file" \
                "$(ss_quote "${mp_cmd[@]}")" "$(head -2 "$W/view.err")"
        elif [ ! -f "$got.csi" ]; then
            ss_bad "$what" "no index $got.csi written" "$(ss_quote "${mp_cmd[@]}")"
        elif ! cmp -s "$W/copy.$ext.csi" "$got.csi"; then
            ss_bad "$what" "the .csi differs from bcftools index's of the same file" \
                "$(ss_quote "${mp_cmd[@]}")" "$(head -2 "$W/index.err")"
        else
            ss_ok "$what"
        fi
        rm -f "$got" "$got.csi" "$got.err" "$got.stdout" "$W/copy.$ext" "$W/copy.$ext.csi"
    done
    mp_to_file=0
    rm -f "$exp".*
}
compressed z
compressed b

# Without --no-version: seqshard's two lines where bcftools has its two, the command as
# bcftools prints it (the run options -@, --shard-size, --quiet left out), and the same
# file at -@1 and at -@3 with small shards.
V=("${R[@]}" "$TD/edge.bam")
if ! timeout "$SS_TIMEOUT" "$BCFTOOLS" mpileup "${V[@]}" >"$W/v.exp" 2>"$W/v.err"; then
    ss_bad "header: bcftools" "bcftools failed: the test is wrong" "$(head -2 "$W/v.err")"
else
    v1=("$SEQSHARD" mpileup -@ 1 --shard-size 1g --quiet "${V[@]}")
    v3=("$SEQSHARD" mpileup -@ 3 --shard-size 2k --quiet "${V[@]}")
    timeout "$SS_TIMEOUT" "${v1[@]}" >"$W/v.1" 2>"$W/v.1.err" </dev/null
    rc1=$?
    timeout "$SS_TIMEOUT" "${v3[@]}" >"$W/v.3" 2>"$W/v.3.err" </dev/null
    rc3=$?
    # both files with the version lines' values made neutral
    neutral() {
        sed -e 's/^##bcftoolsVersion=.*/##VERSION/' -e 's/^##bcftoolsCommand=.*/##COMMAND/' \
            -e 's/^##seqshardVersion=.*/##VERSION/' -e 's/^##seqshardCommand=.*/##COMMAND/' "$1"
    }
    neutral "$W/v.exp" >"$W/v.exp.n"
    neutral "$W/v.1" >"$W/v.1.n"
    want_cmd=$(sed -n 's/^##bcftoolsCommand=//p' "$W/v.exp")
    got_cmd=$(sed -n 's/^##seqshardCommand=//p' "$W/v.1")
    got_ver=$(sed -n 's/^##seqshardVersion=//p' "$W/v.1")
    if [ $rc1 != 0 ] || [ $rc3 != 0 ]; then
        ss_bad "header with version lines" "exit status $rc1 / $rc3" "$(ss_quote "${v1[@]}")" \
            "$(head -2 "$W/v.1.err" "$W/v.3.err")"
    elif ! cmp -s "$W/v.1" "$W/v.3"; then
        ss_bad "header with version lines: -@1 == -@3 --shard-size 2k" "the files differ" \
            "$(ss_quote "${v1[@]}")" "$(ss_quote "${v3[@]}")"
        ss_show_diff "$W/v.1" "$W/v.3"
    elif [ "$(grep -c '^##bcftools' "$W/v.1")" != 0 ]; then
        ss_bad "header with version lines" "seqshard writes ##bcftools lines" \
            "$(grep '^##bcftools' "$W/v.1" | head -2)"
    elif ! cmp -s "$W/v.exp.n" "$W/v.1.n"; then
        ss_bad "header with version lines" \
            "not bcftools' file with ##seqshardVersion/Command in place of ##bcftoolsVersion/Command"
        ss_show_diff "$W/v.exp.n" "$W/v.1.n"
    elif ! [[ $got_ver =~ ^[0-9]+\.[0-9]+[^[:space:]]*\+htslib-[0-9] ]]; then
        ss_bad "header with version lines" "##seqshardVersion=$got_ver, want VERSION+htslib-VERSION"
    elif [ "$got_cmd" != "$want_cmd" ]; then
        ss_bad "header with version lines" "##seqshardCommand is not bcftools' command" \
            "seqshard: $got_cmd" "bcftools: $want_cmd"
    else
        ss_ok "header with version lines"
    fi
fi

# bcftools call -mv on seqshard's -Ou output: the calls it makes from bcftools' own.
C=("${R[@]}" "$TD/rg2.bam" "$TD/edge.bam")
timeout "$SS_TIMEOUT" "$BCFTOOLS" mpileup --no-version -Ou "${C[@]}" 2>/dev/null </dev/null |
    "$BCFTOOLS" call --no-version -mv >"$W/calls.exp" 2>"$W/calls.exp.err"
timeout "$SS_TIMEOUT" "$SEQSHARD" mpileup --no-version -Ou -@ 3 --shard-size 2k --quiet "${C[@]}" \
    2>"$W/calls.ss.err" </dev/null | "$BCFTOOLS" call --no-version -mv >"$W/calls.got" 2>"$W/calls.err"
calls_rc="${PIPESTATUS[*]}"
ncalls=$(grep -vc '^#' "$W/calls.exp")
if [ "$calls_rc" != "0 0" ]; then
    ss_bad "bcftools call -mv" "exit status $calls_rc (seqshard, bcftools call)" \
        "$(head -2 "$W/calls.ss.err" "$W/calls.err")"
elif [ "$ncalls" -lt 10 ]; then
    ss_bad "bcftools call -mv" "bcftools calls only $ncalls variants here: the test checks little"
elif ! cmp -s "$W/calls.exp" "$W/calls.got"; then
    ss_bad "bcftools call -mv" "the calls from seqshard's BCF differ from those from bcftools'" \
        "$(ss_quote "$SEQSHARD" mpileup --no-version -Ou -@ 3 --shard-size 2k "${C[@]}")"
    ss_show_diff "$W/calls.exp" "$W/calls.got"
else
    ss_ok "bcftools call -mv ($ncalls calls)"
fi

ss_summary
exit $?
