#!/usr/bin/env bash
# run_files.sh -- every file a run reads is part of what it is, and every file
# it writes is its own (contract 9):
#   - --resume after a side input changed (the --known VCF or its index, the
#     -G read-group file, the -L BED, the -b/-f input lists, the reference's
#     .fai) is refused with one line "cannot resume: inputs changed (ROLE
#     FILE: ...)" naming the file, and the earlier run's files stay;
#   - --resume -o /abs/path after a run with a relative -o is the same output:
#     it resumes and gives an uninterrupted run's bytes;
#   - an output naming a file the kernel reads (-o or --report over the -L
#     BED, the -G file, a -b/-f list, the --known VCF or its index; a mosdepth
#     file over the --by BED) or one it writes (--report over a mosdepth file
#     or its index) is refused before any work: status 1, one line naming both
#     roles, the file untouched, nothing left.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_output.sh"
ss_setup
W=$SS_WORK
FW=(--quiet -@ 1 --shard-size 5k) # one worker: shards finish in order

cp "$TD/s1.bam" "$TD/s1.bam.bai" "$TD/ref.fa" "$TD/ref.fa.fai" "$TD/exclude-rg.txt" "$W/"
grep '^#' "$TD/s1.bam.mutations.vcf" >"$W/known.vcf"
grep -v '^#' "$TD/s1.bam.mutations.vcf" | awk 'length($4) != length($5)' >>"$W/known.vcf"
bgzip -c "$W/known.vcf" >"$W/k.vcf.gz" && tabix -p vcf "$W/k.vcf.gz" || {
    echo "FAIL setup: bgzip/tabix of the known sites"
    exit 1
}
printf 'ctgA\t0\t30000\nctgB\t0\t2000\n' >"$W/t.bed"
echo "$W/s1.bam" >"$W/list"
BAM=$W/s1.bam

# interrupt DIR ARGS...: run seqshard ARGS -o DIR/out slowly and SIGKILL it at its 4th
# shard, so that the temporary output and its manifest stay for --resume.
interrupt() {
    local d=$1
    shift
    mkdir -p "$d"
    SEQSHARD_KILL_SHARD=4 SEQSHARD_TEST_SHARD_DELAY_MS=50 timeout "$SS_TIMEOUT" "$SEQSHARD" \
        "$@" "${FW[@]}" -o "$d/out" </dev/null >/dev/null 2>&1
}

# changed NAME MENTION CHANGE ARGS...: interrupt a run of ARGS, eval CHANGE (it edits or
# touches a file the run reads), then --resume must fail with status 1, one line matching
# MENTION, and leave the temporary output and the manifest for a corrected rerun.
n_case=0
changed() {
    local name=$1 mention=$2 change=$3 d=$W/resume.$((++n_case))
    shift 3
    interrupt "$d" "$@"
    if [ ! -f "$d/.out.tmp.seqshard" ] || [ ! -f "$d/.out.resume" ]; then
        ss_bad "$name" "the interrupted run left no temporary output and manifest" \
            "$(ss_left "$d")"
        return
    fi
    eval "$change"
    timeout "$SS_TIMEOUT" "$SEQSHARD" "$@" "${FW[@]}" --resume -o "$d/out" \
        </dev/null >/dev/null 2>"$d/err"
    local rc=$? lines
    lines=$(ss_error_lines "$d/err" | grep -c '')
    if [ "$rc" != 1 ]; then
        ss_bad "$name" "status $rc, want 1" "$(head -2 "$d/err")"
    elif [ "$lines" != 1 ]; then
        ss_bad "$name" "$lines lines on stderr, want one" "$(head -3 "$d/err")"
    elif ! grep -qE "cannot resume: inputs changed \\($mention" "$d/err"; then
        ss_bad "$name" "no line matches 'inputs changed ($mention'" "$(head -2 "$d/err")"
    elif [ -e "$d/out" ] || [ ! -f "$d/.out.tmp.seqshard" ] || [ ! -f "$d/.out.resume" ]; then
        ss_bad "$name" "an output appeared or the earlier run's files went: $(ss_left "$d" err)"
    else
        ss_ok "$name"
    fi
}

# later FILE: move FILE's modification time 5 s on (its bytes stay)
later() { touch -d "@$(($(stat -c %Y "$1") + 5))" "$1"; }

# ---- --resume refuses when a file the run reads changed ----------------------------------
# known sites: drop the last indel, so realign sees other candidates
keep_one_less='grep -v "^#" "$W/known.vcf" | tail -1 >"$W/last" &&
    grep -vxF -f "$W/last" "$W/known.vcf" | bgzip -c >"$W/k.vcf.gz" && tabix -f -p vcf "$W/k.vcf.gz"'
changed "realign: --known VCF changed" 'the --known VCF .*k\.vcf\.gz:' "$keep_one_less" \
    realign -f "$W/ref.fa" --known "$W/k.vcf.gz" -O sam "$BAM"
changed "realign: the --known VCF's index changed" "the --known VCF's index .*k\\.vcf\\.gz\\.tbi:" \
    'later "$W/k.vcf.gz.tbi"' realign -f "$W/ref.fa" --known "$W/k.vcf.gz" -O sam "$BAM"
changed "pileup --realign: --known VCF changed" 'the --known VCF .*k\.vcf\.gz:' \
    'later "$W/k.vcf.gz"' pileup -B -f "$W/ref.fa" --realign --known "$W/k.vcf.gz" "$BAM"
changed "pileup: -G read-group file changed" 'the -G read-group file .*exclude-rg\.txt:' \
    'echo nothing >"$W/exclude-rg.txt"' pileup -B -G "$W/exclude-rg.txt" "$BAM"
changed "view: -L BED changed" 'the -L BED .*t\.bed:' \
    'printf "ctgA\t0\t100\n" >>"$W/t.bed"' view -L "$W/t.bed" "$BAM"
changed "pileup: -b list changed" 'the list of inputs .*list:' 'later "$W/list"' \
    pileup -B -b "$W/list"
changed "depth: -f list changed" 'the list of inputs .*list:' 'later "$W/list"' \
    depth -f "$W/list"
changed "pileup: the reference's .fai changed" 'reference .*ref\.fa\.fai:' \
    'later "$W/ref.fa.fai"' pileup -f "$W/ref.fa" "$BAM"

# ---- the same output named two ways is one output ----------------------------------------
d=$W/abs
mkdir -p "$d"
"$SEQSHARD" pileup -B "${FW[@]}" -o "$d/full.txt" "$BAM"
# records MANIFEST: how many shard records it holds (past the "end CRC" line)
records() {
    local at
    at=$(grep -abo -m1 $'^end [0-9a-f]\\{8\\}$' "$1" 2>/dev/null | cut -d: -f1)
    [ -n "$at" ] && echo $((($(stat -c %s "$1") - at - 13) / SS_RESUME_REC)) || echo 0
}
(cd "$d" && exec env SEQSHARD_TEST_SHARD_DELAY_MS=100 "$SEQSHARD" pileup -B "${FW[@]}" \
    -o out.txt "$BAM" </dev/null >/dev/null 2>&1) &
pid=$!
for i in $(seq 600); do
    [ "$(records "$d/.out.txt.resume")" -ge 3 ] && break
    sleep 0.05
done
kill -KILL "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
"$SEQSHARD" pileup -B "${FW[@]}" --resume --report "$d/r.json" -o "$d/out.txt" "$BAM" \
    2>"$d/err"
rc=$?
reused=$(grep -o '"reused_shards": [0-9]*' "$d/r.json" 2>/dev/null | grep -o '[0-9]*$')
if [ "$rc" = 0 ] && cmp -s "$d/full.txt" "$d/out.txt" && [ "${reused:-0}" -gt 0 ]; then
    ss_ok "--resume -o /abs/path after -o relative: resumed ($reused shards reused), same bytes"
else
    ss_bad "--resume -o /abs/path after -o relative" "status $rc, reused ${reused:-?}" \
        "$(head -2 "$d/err")"
fi

# ---- outputs over the files a kernel reads, or over each other -----------------------------
d=$W/clash
mkdir -p "$d"
cp "$W/t.bed" "$W/exclude-rg.txt" "$W/list" "$W/k.vcf.gz" "$W/k.vcf.gz.tbi" "$d/"
printf 'ctgA\t0\t1000\tr1\n' | bgzip -c >"$d/c.regions.bed.gz"
ln -s t.bed "$d/t-link.bed"
ss_keep=(t.bed exclude-rg.txt list k.vcf.gz k.vcf.gz.tbi c.regions.bed.gz t-link.bed)
sums() { (cd "$d" && md5sum t.bed exclude-rg.txt list k.vcf.gz k.vcf.gz.tbi c.regions.bed.gz); }
before=$(sums)
R=(-f "$W/ref.fa")
ss_cmd_fails "view -L t.bed -o t.bed" 1 't\.bed: -o names the -L BED, which the run reads' "$d" \
    "$SEQSHARD" view --quiet -L "$d/t.bed" -o "$d/t.bed" "$BAM"
ss_cmd_fails "view -L t.bed -o a symlink to it" 1 't-link\.bed: -o is the same file as .*t\.bed \(the -L BED\)' \
    "$d" "$SEQSHARD" view --quiet -L "$d/t.bed" -o "$d/t-link.bed" "$BAM"
ss_cmd_fails "pileup -G f -o f" 1 '-o names the -G read-group file' "$d" \
    "$SEQSHARD" pileup --quiet -G "$d/exclude-rg.txt" -o "$d/exclude-rg.txt" "$BAM"
ss_cmd_fails "pileup -b list -o list" 1 'list: -o names the list of inputs' "$d" \
    "$SEQSHARD" pileup --quiet -b "$d/list" -o "$d/list"
ss_cmd_fails "depth -f list -o list" 1 'list: -o names the list of inputs' "$d" \
    "$SEQSHARD" depth --quiet -f "$d/list" -o "$d/list"
ss_cmd_fails "realign --known k.vcf.gz -o k.vcf.gz" 1 'k\.vcf\.gz: -o names the --known VCF,' "$d" \
    "$SEQSHARD" realign --quiet "${R[@]}" --known "$d/k.vcf.gz" -o "$d/k.vcf.gz" "$BAM"
ss_cmd_fails "realign --report the --known VCF" 1 '--report names the --known VCF,' "$d" \
    "$SEQSHARD" realign --quiet "${R[@]}" --known "$d/k.vcf.gz" --report "$d/k.vcf.gz" "$BAM"
ss_cmd_fails "realign --report the --known VCF's index" 1 "--report names the --known VCF's index" \
    "$d" "$SEQSHARD" realign --quiet "${R[@]}" --known "$d/k.vcf.gz" --report "$d/k.vcf.gz.tbi" "$BAM"
ss_cmd_fails "pileup --realign -o the --known VCF's index" 1 "-o names the --known VCF's index" \
    "$d" "$SEQSHARD" pileup --quiet "${R[@]}" --realign --known "$d/k.vcf.gz" \
    -o "$d/k.vcf.gz.tbi" "$BAM"
ss_cmd_fails "depth --mosdepth c --by c.regions.bed.gz" 1 \
    'c\.regions\.bed\.gz: the --mosdepth regions file names the --by BED' "$d" \
    "$SEQSHARD" depth --quiet --mosdepth "$d/c" --by "$d/c.regions.bed.gz" "$BAM"
ss_cmd_fails "depth --mosdepth q --report q.mosdepth.summary.txt" 1 \
    'q\.mosdepth\.summary\.txt: --report names the same file as the --mosdepth summary' "$d" \
    "$SEQSHARD" depth --quiet --mosdepth "$d/q" --report "$d/q.mosdepth.summary.txt" "$BAM"
ss_cmd_fails "depth --mosdepth q --by 500 --report q.regions.bed.gz.csi" 1 \
    "--report names the same file as the --mosdepth regions file's index" "$d" \
    "$SEQSHARD" depth --quiet --mosdepth "$d/q" --by 500 --report "$d/q.regions.bed.gz.csi" "$BAM"
[ "$before" = "$(sums)" ] && [ -L "$d/t-link.bed" ] && ss_ok "the files read stay untouched" ||
    ss_bad "the files read stay untouched" "a -L, -G, list, VCF or BED file changed"

ss_summary
exit $?
