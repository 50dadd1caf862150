#!/usr/bin/env bash
# view_output_kinds.sh -- what the output is, for each -O and -o name, is what
# samtools view 1.16 writes: the same kind of file (plain SAM, BGZF SAM, BAM,
# CRAM) with the same records; combinations that cannot be written are
# refused before any work, with one line and nothing left.
set -u
. "$(dirname "$0")/lib.sh"
ss_setup
W=$SS_WORK
IN=$TD/s1.bam

kind() { # FILE -> sam | bgzf | cram
    case $(head -c 4 "$1" | od -An -tx1 | tr -d ' \n') in
    1f8b*) echo bgzf ;;
    4352414d) echo cram ;;
    *) echo sam ;;
    esac
}

for fmt in none sam bam cram; do
    for name in out.sam out.bam out.cram out.gz out.sam.gz out.bgz out.txt; do
        opt=()
        [ "$fmt" != none ] && opt=(-O "$fmt")
        case_name="-O $fmt -o $name"
        d=$W/$fmt.$name.d
        mkdir -p "$d/ss" "$d/st"
        "$SAMTOOLS" view "${opt[@]}" -T "$REF" -o "$d/st/$name" "$IN" 2>/dev/null
        rst=$?
        timeout "$SS_TIMEOUT" "$SEQSHARD" view --quiet -@ 2 --shard-size 7k "${opt[@]}" \
            -T "$REF" -o "$d/ss/$name" "$IN" 2>"$d/err"
        rss=$?
        if [ $rst != 0 ]; then
            [ $rss != 0 ] && ss_ok "$case_name (refused by both)" ||
                ss_bad "$case_name" "samtools refuses it, seqshard wrote it"
            continue
        fi
        if [ $rss != 0 ]; then
            ss_bad "$case_name" "exit $rss" "$(head -1 "$d/err")"
        elif [ "$(kind "$d/ss/$name")" != "$(kind "$d/st/$name")" ]; then
            ss_bad "$case_name" "wrote $(kind "$d/ss/$name"), samtools $(kind "$d/st/$name")"
        elif ! cmp -s <("$SAMTOOLS" view -T "$REF" "$d/ss/$name") \
            <("$SAMTOOLS" view -T "$REF" "$d/st/$name"); then
            ss_bad "$case_name" "records differ from samtools'"
        elif [ "$(ls "$d/ss")" != "$name" ]; then
            ss_bad "$case_name" "left other files: $(ls "$d/ss" | tr '\n' ' ')"
        else
            ss_ok "$case_name"
        fi
    done
done
# --write-index on SAM: refused up front, nothing written
mkdir -p "$W/wi"
"$SEQSHARD" view --write-index -o "$W/wi/x.sam" "$IN" 2>"$W/wi.err"
rc=$?
if [ $rc = 2 ] && [ "$(wc -l <"$W/wi.err")" = 1 ] && [ -z "$(ls "$W/wi")" ]; then
    ss_ok "--write-index on SAM refused"
else
    ss_bad "--write-index on SAM refused" "exit $rc, $(ls "$W/wi" | wc -l) files" "$(cat "$W/wi.err")"
fi
ss_summary
exit $?
