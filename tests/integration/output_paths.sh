#!/usr/bin/env bash
# output_paths.sh -- where -o and --report may point. An output that is not a
# regular file (our own stdout through /dev/stdout or /proc/self/fd/1, a FIFO)
# is written in place and gets the same bytes as standard output; a name near
# NAME_MAX works, with its index; an output that is an input, its index, the
# reference or its .fai (by name, hard link or symlink), or the other output,
# and a path that cannot be created, fail before any work: exit 1, one line,
# the input untouched, nothing left.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_output.sh"
ss_setup
S1=$TD/s1.bam
ARGS=(--quiet -B -r ctgB "$S1")
"$SEQSHARD" pileup "${ARGS[@]}" >"$SS_WORK/expected" 2>/dev/null

# ---- outputs that are not regular files: written in place ----------------------------
same_as_stdout() { # NAME GOT
    if cmp -s "$SS_WORK/expected" "$2"; then ss_ok "$1"; else
        ss_bad "$1" "differs from the output without -o"
        ss_show_diff "$SS_WORK/expected" "$2"
    fi
}
d=$SS_WORK/direct
mkdir -p "$d"
# A build that renames over the link would replace the system's /dev/stdout: try a
# private link to our stdout first, and /dev/stdout itself only when that worked.
ln -s /proc/self/fd/1 "$d/stdout-link"
"$SEQSHARD" pileup -o "$d/stdout-link" "${ARGS[@]}" >"$d/a.txt"
same_as_stdout "-o LINK-TO-/proc/self/fd/1 > file" "$d/a.txt"
"$SEQSHARD" pileup -o /proc/self/fd/1 "${ARGS[@]}" >"$d/b.txt" 2>"$d.err"
same_as_stdout "-o /proc/self/fd/1 > file" "$d/b.txt"
if [ -L "$d/stdout-link" ] && cmp -s "$SS_WORK/expected" "$d/a.txt"; then
    "$SEQSHARD" pileup -o /dev/stdout "${ARGS[@]}" >"$d/a.txt"
    same_as_stdout "-o /dev/stdout > file" "$d/a.txt"
    printf 'first line\n' >"$d/c.txt"
    "$SEQSHARD" pileup -o /dev/stdout "${ARGS[@]}" >>"$d/c.txt"
    { printf 'first line\n'; cat "$SS_WORK/expected"; } >"$d/c.expected"
    cmp -s "$d/c.expected" "$d/c.txt" && ss_ok "-o /dev/stdout >> file appends" ||
        ss_bad "-o /dev/stdout >> file appends" "the file is not its old line plus the output"
    "$SEQSHARD" pileup -o /dev/stdout "${ARGS[@]}" | cat >"$d/d.txt"
    same_as_stdout "-o /dev/stdout into a pipe" "$d/d.txt"
else
    ss_bad "-o /dev/stdout" "not tried: the private link case failed"
fi
mkfifo "$d/fifo"
cat "$d/fifo" >"$d/e.txt" &
"$SEQSHARD" pileup -o "$d/fifo" "${ARGS[@]}"
wait
same_as_stdout "-o FIFO" "$d/e.txt"
left=$(ss_left "$d" a.txt b.txt c.txt c.expected d.txt e.txt fifo stdout-link)
[ -z "$left" ] && ss_ok "direct outputs: nothing else left" ||
    ss_bad "direct outputs: nothing else left" "left: $left"
if [ -L /dev/stdout ]; then
    ss_ok "/dev/stdout is still a symlink"
else
    ss_bad "/dev/stdout is still a symlink" "seqshard replaced it; restoring the link"
    rm -f /dev/stdout && ln -s /proc/self/fd/1 /dev/stdout
fi
# A symlink to a regular file: the target gets the output, the link stays.
ln -s e.txt "$d/link.txt"
"$SEQSHARD" pileup -o "$d/link.txt" -r ctgTiny --quiet -B "$S1"
if [ -L "$d/link.txt" ] && "$SEQSHARD" pileup -r ctgTiny --quiet -B "$S1" | cmp -s - "$d/e.txt"; then
    ss_ok "-o symlink: writes its target, keeps the link"
else
    ss_bad "-o symlink: writes its target, keeps the link" "$(ls -l "$d/link.txt")"
fi

# ---- names close to NAME_MAX ------------------------------------------------------------
d=$SS_WORK/long
mkdir -p "$d"
long=$(printf 'n%.0s' $(seq 250))
"$SEQSHARD" pileup -o "$d/$long" "${ARGS[@]}" 2>"$d.err"
rc=$?
if [ $rc = 0 ] && cmp -s "$SS_WORK/expected" "$d/$long" && [ "$(ss_left "$d" "$long")" = "" ]; then
    ss_ok "250-character -o name"
else
    ss_bad "250-character -o name" "status $rc, stderr: $(head -1 "$d.err" | cut -c1-200)"
fi
rm -f "$d/$long"
gz=$(printf 'g%.0s' $(seq 248)).gz
"$SEQSHARD" pileup -o "$d/$gz" "${ARGS[@]}" 2>"$d.err"
rc=$?
if [ $rc = 0 ] && [ -s "$d/$gz.tbi" ] && [ "$(ss_left "$d" "$gz" "$gz.tbi")" = "" ]; then
    ss_ok "251-character .gz -o name, with its .tbi"
else
    ss_bad "251-character .gz -o name, with its .tbi" "status $rc, stderr: $(head -1 "$d.err" | cut -c1-200)"
fi
rm -f "$d/$gz" "$d/$gz.tbi"
ss_cmd_fails "253-character .gz: its .tbi cannot exist" 1 'too long' "$d" \
    "$SEQSHARD" pileup -o "$d/$(printf 'h%.0s' $(seq 250)).gz" "${ARGS[@]}"

# ---- outputs that would replace what the run reads ---------------------------------------
d=$SS_WORK/in
mkdir -p "$d/out"
cp "$S1" "$S1.bai" "$TD/ref.fa" "$TD/ref.fa.fai" "$d/"
ln "$d/s1.bam" "$d/hard.bam"
ln -s s1.bam "$d/sym.bam"
md5_before=$(cat "$d"/s1.bam "$d"/s1.bam.bai "$d"/ref.fa "$d"/ref.fa.fai | md5sum)
IN=(--quiet -f "$d/ref.fa" "$d/s1.bam")
ss_keep=(s1.bam s1.bam.bai ref.fa ref.fa.fai hard.bam sym.bam out)
ss_cmd_fails "-o the input"            1 's1\.bam.*input'     "$d" "$SEQSHARD" pileup -o "$d/s1.bam" "${IN[@]}"
ss_cmd_fails "-o the input's index"    1 'index'              "$d" "$SEQSHARD" pileup -o "$d/s1.bam.bai" "${IN[@]}"
ss_cmd_fails "-o a hard link to the input" 1 'hard\.bam.*s1\.bam' "$d" "$SEQSHARD" pileup -o "$d/hard.bam" "${IN[@]}"
ss_cmd_fails "-o a symlink to the input" 1 'sym\.bam.*s1\.bam' "$d" "$SEQSHARD" pileup -o "$d/sym.bam" "${IN[@]}"
ss_cmd_fails "-o the reference"        1 'ref\.fa.*reference' "$d" "$SEQSHARD" pileup -o "$d/ref.fa" "${IN[@]}"
ss_cmd_fails "-o the reference's .fai" 1 'ref\.fa\.fai'       "$d" "$SEQSHARD" pileup -o "$d/ref.fa.fai" "${IN[@]}"
ss_cmd_fails "view -o the input"       1 's1\.bam.*input'     "$d" "$SEQSHARD" view -o "$d/s1.bam" "$d/s1.bam"
ss_cmd_fails "--report the input"      1 's1\.bam.*input'     "$d" \
    "$SEQSHARD" pileup -o "$d/out/out.txt" --report "$d/sym.bam" "${IN[@]}"
ss_cmd_fails "--report the same file as -o" 1 'same file as -o' "$d" \
    "$SEQSHARD" pileup -o "$d/out/out.txt" --report "$d/out/../out/out.txt" "${IN[@]}"
md5_after=$(cat "$d"/s1.bam "$d"/s1.bam.bai "$d"/ref.fa "$d"/ref.fa.fai | md5sum)
[ "$md5_before" = "$md5_after" ] && [ -L "$d/sym.bam" ] && ss_ok "inputs untouched" ||
    ss_bad "inputs untouched" "an input, index or the reference changed"
left=$(ss_left "$d/out")
[ -z "$left" ] && ss_ok "refused outputs: nothing left" || ss_bad "refused outputs: nothing left" "left: $left"

# ---- paths that cannot be created: found before any work ----------------------------------
d=$SS_WORK/bad
mkdir -p "$d/out" "$d/out/dir.json" "$d/out/o.txt.gz.tbi"
ss_keep=(dir.json o.txt.gz.tbi)
ss_cmd_fails "--report into a missing directory" 1 'nodir' "$d/out" \
    "$SEQSHARD" pileup --quiet -o "$d/out/out.txt" --report "$d/nodir/r.json" "$S1"
ss_cmd_fails "--report is a directory" 1 'dir\.json.*directory' "$d/out" \
    "$SEQSHARD" pileup --quiet -o "$d/out/out.txt" --report "$d/out/dir.json" "$S1"
ss_cmd_fails "--tmp-dir missing" 1 'tmp-dir' "$d/out" \
    "$SEQSHARD" pileup --quiet -o "$d/out/out.txt" --tmp-dir "$d/nodir" "$S1"
ss_cmd_fails "the .tbi beside -o is a directory" 1 'o\.txt\.gz\.tbi' "$d/out" \
    "$SEQSHARD" pileup --quiet -o "$d/out/o.txt.gz" "$S1"

ss_summary
exit $?
