#!/usr/bin/env bash
# markdup_files.sh -- the files markdup reads and writes besides a BAM in and
# out: a CRAM input gives samtools markdup's records, MD and NM rebuilt as
# htslib decodes them (kernel and --markdup step); -f naming an input, its
# index, the reference or -o is refused with one line, exit 1 and nothing
# written; two runs sharing one -f file both succeed and the file is one run's
# statistics whole (the last writer's), never one run's figures under the
# other's command line.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_markdup.sh"
ss_setup
W=$SS_WORK
md_input "$W" || { ss_bad input "cannot make the input"; ss_summary; exit 1; }
IN=$W/in.bam
REF=$TD/ref.fa

# ---- a CRAM input: samtools markdup's records, MD and NM included ----
"$SAMTOOLS" view -C -T "$REF" -o "$W/in.cram" "$IN" && "$SAMTOOLS" index "$W/in.cram"
"$SAMTOOLS" markdup --reference "$REF" -f "$W/ref.stats" "$W/in.cram" "$W/ref.bam" 2>/dev/null
n_md=$("$SAMTOOLS" view "$W/ref.bam" | grep -c 'MD:Z:')
[ "$n_md" -gt 1000 ] || ss_bad "CRAM input" "samtools' records have no MD ($n_md): check the test"
for ss in 5k 1g; do
    if md_run "$W/err" markdup -@ 2 --shard-size $ss --quiet --reference "$REF" \
        -f "$W/out.stats" "$W/in.cram" "$W/out.bam"; then
        md_same "CRAM input, --shard-size $ss" "$W/ref.bam" "$W/ref.stats" "$W/out.bam" \
            "$W/out.stats"
    else
        ss_bad "CRAM input, --shard-size $ss" "exit status $?" "$(head -2 "$W/err")"
    fi
done
# The step reads the CRAM through the same readers.
if md_run "$W/err" view --quiet --reference "$REF" --markdup -o "$W/v.sam" "$W/in.cram" &&
    cmp -s <(grep -v '^@' "$W/v.sam") <("$SAMTOOLS" view "$W/ref.bam"); then
    ss_ok "view --markdup of a CRAM: samtools markdup's records"
else
    ss_bad "view --markdup of a CRAM" "failed or records differ" "$(head -2 "$W/err")"
fi

# ---- -f naming a file the run reads or -o: refused before any work ----
# f_clash NAME MENTION ARGS...: markdup ARGS (writing $W/c/out.bam) exits 1 with one line
# matching MENTION, and $W/c holds what it held before.
f_clash() {
    local name=$1 mention=$2
    shift 2
    local before after
    before=$(cd "$W/c" && ls -la --time-style=+%s.%N | md5sum)
    md_run "$W/err" markdup --quiet "$@"
    local rc=$?
    after=$(cd "$W/c" && ls -la --time-style=+%s.%N | md5sum)
    if [ $rc != 1 ]; then
        ss_bad "$name" "exit status $rc, want 1" "$(head -2 "$W/err")"
    elif [ "$(wc -l <"$W/err")" != 1 ] || ! grep -qE -- "$mention" "$W/err"; then
        ss_bad "$name" "want one line mentioning '$mention'" "$(head -3 "$W/err")"
    elif [ "$before" != "$after" ]; then
        ss_bad "$name" "files changed in the directory" "$(ls "$W/c")"
    else
        ss_ok "$name"
    fi
}
mkdir -p "$W/c"
cp "$IN" "$IN.bai" "$REF" "$REF.fai" "$W/in.cram" "$W/in.cram.crai" "$W/c/"
ln -s in.bam "$W/c/link.bam"
C=$W/c
f_clash "-f names the input" "in.bam" -f "$C/in.bam" "$C/in.bam" "$C/out.bam"
f_clash "-f names the input by a symlink" "link.bam" -f "$C/link.bam" "$C/in.bam" "$C/out.bam"
f_clash "-f names the input's index" "in.bam.bai" -f "$C/in.bam.bai" "$C/in.bam" "$C/out.bam"
f_clash "-f names the reference" "ref.fa" --reference "$C/ref.fa" -f "$C/ref.fa" "$C/in.cram" \
    "$C/out.bam"
f_clash "-f names the output" "out.bam" -f "$C/out.bam" "$C/in.bam" "$C/out.bam"
f_clash "-f names the output (-o)" "out.bam" -f "$C/./out.bam" -o "$C/out.bam" "$C/in.bam"

# ---- two runs, one -f file: both succeed, the file is one run's whole ----
mkdir -p "$W/s"
S=$W/s
md_run "$W/err" markdup --quiet -f "$S/a.txt" "$IN" "$S/a.bam"
md_run "$W/err" markdup --quiet -r -S -f "$S/b.txt" "$IN" "$S/b.bam"
if cmp -s <(tail -n +2 "$S/a.txt") <(tail -n +2 "$S/b.txt"); then
    ss_bad "shared -f" "the two option sets give the same figures: check the test"
fi
for round in 1 2 3; do
    rm -f "$S/st.txt"
    SEQSHARD_TEST_SHARD_DELAY_MS=20 md_run "$S/ea" markdup --quiet -@ 1 --shard-size 5k \
        -f "$S/st.txt" "$IN" "$S/a.bam" &
    pa=$!
    SEQSHARD_TEST_SHARD_DELAY_MS=20 md_run "$S/eb" markdup --quiet -@ 1 --shard-size 5k -r -S \
        -f "$S/st.txt" "$IN" "$S/b.bam" &
    pb=$!
    wait $pa
    ra=$?
    wait $pb
    rb=$?
    # the run the file's COMMAND line names: its output, a.bam or b.bam, is the last word
    who=$(sed -n '1s|.*/\([ab]\)\.bam$|\1|p' "$S/st.txt" 2>/dev/null)
    left=$(find "$S" -mindepth 1 -maxdepth 1 ! -name '?.txt' ! -name 'st.txt' ! -name '?.bam' \
        ! -name 'e?' -printf '%f ')
    if [ $ra != 0 ] || [ $rb != 0 ]; then
        ss_bad "shared -f, round $round" "exit status $ra and $rb, want 0 and 0" \
            "$(head -1 "$S/ea") $(head -1 "$S/eb")"
    elif [ "$who" != a ] && [ "$who" != b ]; then
        ss_bad "shared -f, round $round" "the file names neither run" "$(head -1 "$S/st.txt")"
    elif ! cmp -s <(tail -n +2 "$S/st.txt") <(tail -n +2 "$S/$who.txt"); then
        ss_bad "shared -f, round $round" "run $who's command line over other figures" \
            "$(diff <(tail -n +2 "$S/st.txt") <(tail -n +2 "$S/$who.txt") | head -4)"
    elif [ -n "$left" ]; then
        ss_bad "shared -f, round $round" "temporary files left: $left"
    else
        ss_ok "shared -f, round $round: both exit 0, the file is run $who's whole"
    fi
done
ss_summary
exit $?
