#!/usr/bin/env bash
# guide_kernels.sh -- the worked examples of docs/kernel-guide.md, built from
# the guide as printed (seqshard-guide), give what samtools gives: starts =
# per-position start counts of `samtools view -F 0xD04`, mapq = `samtools
# view -q N`, at several thread counts and shard sizes, as BAM, SAM and CRAM;
# tally = the same starts as BED in a side stream, with per-contig and MAPQ
# totals reduced over workers (over ranks: mpi_mosdepth.sh); the record step
# unclip: `starts --unclip` and `mapq --unclip` = `unclip` to a file, indexed,
# then starts and mapq on it, and unclip's file holds what an awk unclipping
# of the input holds, sorted as samtools sort sorts it.
set -u
. "$(dirname "$0")/lib.sh"
ss_setup
SEQSHARD_GUIDE=${SEQSHARD_GUIDE:-$SS_SRC/build/tests/seqshard-guide}
[ -x "$SEQSHARD_GUIDE" ] || { echo "FAIL setup: no guide program $SEQSHARD_GUIDE"; exit 1; }
W=$SS_WORK

compare() { # NAME EXPECTED GOT ERR RC
    if [ "$5" != 0 ]; then
        ss_bad "$1" "exit status $5" "$(head -2 "$4")"
    elif cmp -s "$2" "$3"; then
        ss_ok "$1"
    else
        ss_bad "$1" "differs from samtools"
        ss_show_diff "$2" "$3"
    fi
}

for in in s1 edge; do
    "$SAMTOOLS" view -F 0xD04 "$TD/$in.bam" | awk -F'\t' '{ k = $3 "\t" $4
        if (k != p && n) print p "\t" n; if (k != p) n = 0; n++; p = k }
        END { if (n) print p "\t" n }' >"$W/starts.exp"
    "$SAMTOOLS" view -q 30 "$TD/$in.bam" >"$W/mapq.bam.exp"
    cp "$W/mapq.bam.exp" "$W/mapq.sam.exp"
    # a CRAM reads back with MD/NM made again: compare with samtools' own CRAM, read back
    "$SAMTOOLS" view -C -T "$REF" -q 30 "$TD/$in.bam" | "$SAMTOOLS" view -T "$REF" - \
        >"$W/mapq.cram.exp"
    for t in 1 3; do
        for s in 2k 50k 1g; do
            run=(-@ "$t" --shard-size "$s" --quiet)
            "$SEQSHARD_GUIDE" starts "${run[@]}" -o "$W/starts.txt" "$TD/$in.bam" 2>"$W/err"
            compare "starts $in -@$t $s" "$W/starts.exp" "$W/starts.txt" "$W/err" $?
            for fmt in bam sam cram; do
                "$SEQSHARD_GUIDE" mapq -q 30 -O "$fmt" -T "$REF" "${run[@]}" -o "$W/q.$fmt" \
                    "$TD/$in.bam" 2>"$W/err"
                rc=$?
                "$SAMTOOLS" view -T "$REF" "$W/q.$fmt" >"$W/q.txt" 2>/dev/null
                compare "mapq $in $fmt -@$t $s" "$W/mapq.$fmt.exp" "$W/q.txt" "$W/err" $rc
            done
        done
    done
done
# .gz text: BGZF with a tabix index, the same lines
"$SEQSHARD_GUIDE" starts --quiet -o "$W/starts.txt.gz" "$TD/s1.bam" 2>"$W/err"
rc=$?
"$SAMTOOLS" view -F 0xD04 "$TD/s1.bam" | awk -F'\t' '{ k = $3 "\t" $4
    if (k != p && n) print p "\t" n; if (k != p) n = 0; n++; p = k }
    END { if (n) print p "\t" n }' >"$W/starts.exp"
gzip -dc "$W/starts.txt.gz" >"$W/starts.txt" 2>/dev/null
compare "starts .gz" "$W/starts.exp" "$W/starts.txt" "$W/err" $rc
[ -s "$W/starts.txt.gz.tbi" ] && ss_ok "starts .gz index" || ss_bad "starts .gz index" "no .tbi"
# tally: side stream + values + histogram + finish, against samtools
for in in s1 edge; do
    "$SAMTOOLS" view -F 0xD04 "$TD/$in.bam" | awk -F'\t' '{ k = $3 "\t" $4 - 1 "\t" $4
        if (k != p && n) print p "\t" n; if (k != p) n = 0; n++; p = k }
        END { if (n) print p "\t" n }' >"$W/tally.bed.exp"
    # per contig: reads and the last start (sorted input: the last one seen)
    "$SAMTOOLS" view -F 0xD04 "$TD/$in.bam" | awk -F'\t' -v out="$W/tally" '
        { n[$3]++; l[$3] = $4; t++ }
        END { for (c in n) print c "\t" n[c] "\t" l[c] > (out ".counts"); print t > (out ".total") }'
    "$SAMTOOLS" view -H "$TD/$in.bam" | awk -F'\t' '$1 == "@SQ" { sub("SN:", "", $2); print $2 }' |
        while read -r c; do
            awk -F'\t' -v c="$c" 'BEGIN { r = c "\t0\t0" } $1 == c { r = $0 } END { print r }' \
                "$W/tally.counts"
        done >"$W/tally.txt.exp"
    echo "total	$(cat "$W/tally.total")" >>"$W/tally.txt.exp"
    "$SAMTOOLS" view -F 0xD04 "$TD/$in.bam" | cut -f5 | sort -n | uniq -c |
        awk '{ print $2 "\t" $1 }' >"$W/mapq.txt.exp"
    for t in 1 3; do
        for s in 2k 1g; do
            rm -f "$W"/ta.*
            "$SEQSHARD_GUIDE" tally -@ "$t" --shard-size "$s" --quiet "$W/ta" "$TD/$in.bam" \
                2>"$W/err"
            rc=$?
            gzip -dc "$W/ta.starts.bed.gz" >"$W/ta.bed" 2>/dev/null
            compare "tally starts $in -@$t $s" "$W/tally.bed.exp" "$W/ta.bed" "$W/err" $rc
            compare "tally totals $in -@$t $s" "$W/tally.txt.exp" "$W/ta.tally.txt" "$W/err" $rc
            compare "tally mapq $in -@$t $s" "$W/mapq.txt.exp" "$W/ta.mapq.txt" "$W/err" $rc
            [ -s "$W/ta.starts.bed.gz.csi" ] && ss_ok "tally .csi" || ss_bad "tally .csi" "none"
        done
    done
done
# unclip, as the guide says: leading nS mM, n <= 50, aligned; before position 1 stays clipped
# IN.bam MOVED: IN's records unclipped, in its order; MOVED gets how many moved, then the
# new position of each (CONTIG:POS-POS, a region that only reads past its end can find)
unclip_awk() {
    "$SAMTOOLS" view "$1" | awk -F'\t' -v OFS='\t' -v moved="$2" '
        int($2 / 4) % 2 == 0 && match($6, /^[0-9]+S[0-9]+M/) {
            l = $6 + 0; m = substr($6, index($6, "S") + 1) + 0; rest = substr($6, RLENGTH + 1)
            k = l < $4 - 1 ? l : $4 - 1
            if (l <= 50 && k > 0) {
                $4 -= k; $6 = (l > k ? l - k "S" : "") m + k "M" rest
                at[++n] = $3 ":" $4 "-" $4
            }
        }
        { print }
        END { print n + 0 > moved; for (i = 1; i <= n; i++) print at[i] > moved }'
}
for in in s1 edge; do
    x=$W/unclip.$in.bam
    rm -f "$x" "$x.bai"
    "$SEQSHARD_GUIDE" unclip --quiet -o "$x" "$TD/$in.bam" 2>"$W/err"
    rc=$?
    if [ $rc != 0 ]; then
        ss_bad "unclip $in" "exit status $rc" "$(head -2 "$W/err")"
        continue
    fi
    "$SAMTOOLS" index "$x" 2>"$W/err" && ss_ok "unclip $in: samtools index takes it (sorted)" ||
        ss_bad "unclip $in: samtools index takes it (sorted)" "$(head -2 "$W/err")"
    [ "$("$SAMTOOLS" view -c "$x")" = "$("$SAMTOOLS" view -c "$TD/$in.bam")" ] &&
        ss_ok "unclip $in: as many records as the input" ||
        ss_bad "unclip $in: as many records as the input" "samtools view -c differs"
    unclip_awk "$TD/$in.bam" "$W/moved" | sort >"$W/unclip.exp"
    "$SAMTOOLS" view "$x" | sort >"$W/unclip.got"
    compare "unclip $in: the records awk unclips" "$W/unclip.exp" "$W/unclip.got" "$W/err" 0
    n_moved=$(head -1 "$W/moved")
    [ "$n_moved" -gt 0 ] || ss_bad "unclip $in: moves reads" "awk moved none"
    "$SAMTOOLS" view "$x" >"$W/unclip.got"
    "$SAMTOOLS" sort -O sam "$x" | "$SAMTOOLS" view >"$W/unclip.exp"
    compare "unclip $in: in samtools sort's order" "$W/unclip.exp" "$W/unclip.got" "$W/err" 0
    "$SEQSHARD_GUIDE" unclip --quiet -@ 2 --shard-size 2k -o "$W/u2.bam" "$TD/$in.bam" 2>"$W/err"
    rc=$?
    "$SAMTOOLS" view "$W/u2.bam" >"$W/unclip.exp" 2>/dev/null
    compare "unclip $in -@2 2k: the same records" "$W/unclip.got" "$W/unclip.exp" "$W/err" $rc
    for reg in ctgA:2990-3100 "ctgA:1-100 ctgB:39950-40000" "$(sed -n 2p "$W/moved")"; do
        # shellcheck disable=SC2086 # two regions in one word
        "$SEQSHARD_GUIDE" unclip --quiet --shard-size 2k -o "$W/ur.bam" "$TD/$in.bam" $reg \
            2>"$W/err"
        rc=$?
        # shellcheck disable=SC2086
        "$SAMTOOLS" view "$x" $reg >"$W/unclip.exp"
        "$SAMTOOLS" view "$W/ur.bam" >"$W/unclip.got" 2>/dev/null
        compare "unclip $in $reg: a region query of the file" "$W/unclip.exp" "$W/unclip.got" \
            "$W/err" $rc
    done
    # the step in front of a kernel: the kernel on the step's file, without the file
    "$SEQSHARD_GUIDE" starts --quiet -o "$W/starts.exp" "$x" 2>"$W/err"
    "$SEQSHARD_GUIDE" mapq -q 30 --quiet -o "$W/mq.bam" "$x" 2>>"$W/err"
    "$SAMTOOLS" view "$W/mq.bam" >"$W/mapq.exp"
    for t in 1 2; do
        for s in 2k default; do
            run=(-@ "$t" --quiet --report "$W/r.json")
            [ "$s" = default ] || run+=(--shard-size "$s")
            "$SEQSHARD_GUIDE" starts --unclip "${run[@]}" -o "$W/starts.txt" "$TD/$in.bam" \
                2>"$W/err"
            compare "starts --unclip $in -@$t $s" "$W/starts.exp" "$W/starts.txt" "$W/err" $?
            counted=$(grep -o '"reads_unclipped": [0-9]*' "$W/r.json" | grep -o '[0-9]*$')
            [ "$counted" = "$n_moved" ] && ss_ok "starts --unclip $in -@$t $s: count" ||
                ss_bad "starts --unclip $in -@$t $s: count" \
                    "reads_unclipped ${counted:-none}, awk moved $n_moved"
            "$SEQSHARD_GUIDE" mapq -q 30 --unclip "${run[@]}" -o "$W/q.bam" "$TD/$in.bam" 2>"$W/err"
            rc=$?
            "$SAMTOOLS" view "$W/q.bam" >"$W/q.txt" 2>/dev/null
            compare "mapq --unclip $in -@$t $s" "$W/mapq.exp" "$W/q.txt" "$W/err" $rc
        done
    done
done
ss_summary
exit $?
