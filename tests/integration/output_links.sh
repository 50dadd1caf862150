#!/usr/bin/env bash
# output_links.sh -- a shared directory is hostile (contract 9). In a sticky
# world-writable directory (mode 1777, as /tmp), another user (nobody) puts a
# symbolic link to a file of root's elsewhere at every name seqshard creates
# beside -o: the resumable temporary .OUT.tmp.seqshard, the index names beside
# it (.tbi, .csi, .crai), the manifest .OUT.resume and .OUT.resume.new, and OUT
# itself; a watcher links every mkstemp temporary's index names (side streams,
# the report, mosdepth's files) as they appear. Every kernel runs with and
# without --resume. The linked file must stay as it was, and each run either
# succeeds with the bytes of a run in a private directory (a regular file under
# OUT, its index too) or is refused in one line, leaving nothing of its own.
#
# And -o names of 248 to 255 bytes with an index (--write-index for BAM/CRAM,
# tabix for .gz text): a name whose index name fits works, index included; one
# whose index name would pass NAME_MAX is refused before any work, in one line,
# with nothing left under either name.
#
# Needs root (to act as another user); skips (77) otherwise.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_output.sh"
if [ "$(id -u)" != 0 ]; then
    echo "SKIP: needs root, to plant links as another user"
    exit 77
fi
command -v setpriv >/dev/null || { echo "SKIP: setpriv not found"; exit 77; }
ss_setup
S1=$TD/s1.bam
ATT_UID=$(id -u nobody) || { echo "SKIP: no user nobody"; exit 77; }
ATT_GID=$(id -g nobody)
as_att() { setpriv --reuid="$ATT_UID" --regid="$ATT_GID" --clear-groups -- "$@"; }

chmod 711 "$SS_WORK" # the other user reaches the shared directory, nothing else here
VICTIM=$SS_WORK/private/victim.txt
mkdir -p "$SS_WORK/private" "$SS_WORK/ref"
chmod 755 "$SS_WORK/private" # readable, so a link to it could be followed by anyone
printf 'a file of root'\''s that no run may write\n' >"$VICTIM"
victim_sum=$(md5sum <"$VICTIM")
victim_ino=$(stat -c %i "$VICTIM")
SH=$SS_WORK/shared
mkdir "$SH"
chmod 1777 "$SH"

# The victim as it was: same inode, same bytes, still a regular file.
victim_ok() {
    [ -f "$VICTIM" ] && [ ! -L "$VICTIM" ] && [ "$(stat -c %i "$VICTIM")" = "$victim_ino" ] &&
        [ "$(md5sum <"$VICTIM")" = "$victim_sum" ]
}
restore_victim() {
    rm -f "$VICTIM"
    printf 'a file of root'\''s that no run may write\n' >"$VICTIM"
    victim_ino=$(stat -c %i "$VICTIM")
}

# Files in the shared directory that are not the other user's: what the run left.
ours_left() {
    find "$SH" -mindepth 1 ! -user nobody -printf '%f ' | sed 's/ $//'
}

# ---- kernels: name, -o, index suffixes, arguments ----------------------------------------
CONFIGS=(
    "pileup text|out.txt||pileup -B -r ctgB $S1"
    "pileup .gz|out.txt.gz|.tbi|pileup -B -r ctgB $S1"
    "view BAM --write-index|out.bam|.csi|view -b --write-index $S1 ctgB"
    "view CRAM --write-index|out.cram|.crai|view -C -T $REF --write-index $S1 ctgB"
    "depth .gz|depth.txt.gz|.tbi|depth -a -r ctgB $S1"
    "realign --write-index|re.bam|.csi|realign -f $REF --write-index $S1 ctgB"
    "mpileup -Oz --write-index|calls.vcf.gz|.csi|mpileup -f $REF -r ctgB -Oz --write-index $S1"
)
COMMON=(--quiet -@ 2 --shard-size 5k)

# reference NAME OUT EXTS ARGS: the bytes under the same -o name (BAM's @PG CL holds it),
# made in the shared directory with nothing planted, kept in ref/NAME.
reference() {
    local key=$1 out=$2 exts=$3 ext
    shift 3
    mkdir -p "$SS_WORK/ref/$key"
    # shellcheck disable=SC2086  # ARGS split on purpose
    "$SEQSHARD" $* "${COMMON[@]}" -o "$SH/$out" 2>"$SS_WORK/ref/$key.err" ||
        { ss_bad "reference $key" "failed" "$(head -2 "$SS_WORK/ref/$key.err")"; return 1; }
    mv "$SH/$out" "$SS_WORK/ref/$key/"
    for ext in ${exts//,/ }; do mv "$SH/$out$ext" "$SS_WORK/ref/$key/"; done
    [ -z "$(ours_left)" ] || { ss_bad "reference $key" "left: $(ours_left)"; return 1; }
}

# plant_case NAME KEY OUT EXTS PLANT RESUME ARGS: a link to the victim at PLANT, by nobody,
# then the run; check the victim, and success with the reference's bytes or one line.
plant_case() {
    local name=$1 key=$2 out=$3 exts=$4 plant=$5 resume=$6 ext err rc lines good=1 why=""
    shift 6
    as_att ln -s "$VICTIM" "$SH/$plant" || { ss_bad "$name" "cannot plant $plant"; return; }
    err=$SS_WORK/err.txt
    # shellcheck disable=SC2086
    timeout "$SS_TIMEOUT" "$SEQSHARD" $* "${COMMON[@]}" $resume -o "$SH/$out" </dev/null \
        >/dev/null 2>"$err"
    rc=$?
    lines=$(ss_error_lines "$err" | grep -vc 'starting from scratch\|interrupted run')
    if ! victim_ok; then
        good=0 why="the linked file was written (status $rc)"
        restore_victim
    elif [ $rc = 0 ]; then
        if [ -L "$SH/$out" ] || ! cmp -s "$SS_WORK/ref/$key/$out" "$SH/$out"; then
            good=0 why="status 0 but $out is not the reference's bytes (or is a link)"
        fi
        for ext in ${exts//,/ }; do
            cmp -s "$SS_WORK/ref/$key/$out$ext" "$SH/$out$ext" ||
                { good=0 why="status 0 but $out$ext is not the reference's"; }
        done
    elif [ $rc != 1 ] || [ "$lines" != 1 ]; then
        good=0 why="status $rc with $lines error lines, want 0, or 1 with one line"
    elif [ -e "$SH/$out" ] && [ ! -L "$SH/$out" ]; then
        good=0 why="refused, but $out was left"
    fi
    rm -f "$SH/$out" "$SH/$out".* "$SH/$plant" 2>/dev/null
    local left
    left=$(ours_left)
    if [ $good = 1 ] && [ -n "$left" ]; then
        good=0 why="left: $left"
    fi
    find "$SH" -mindepth 1 -delete
    if [ $good = 1 ]; then ss_ok "$name"; else
        ss_bad "$name" "$why" "stderr: $(head -2 "$err" | cut -c1-240)"
    fi
}

for c in "${CONFIGS[@]}"; do
    IFS='|' read -r cname out exts args <<<"$c"
    key=${cname// /_}
    reference "$key" "$out" "$exts" "$args" || continue
    plants=(".$out.tmp.seqshard" ".$out.resume" ".$out.resume.new" "$out")
    [ -n "$exts" ] && plants+=(".$out.tmp.seqshard.tbi" ".$out.tmp.seqshard.csi"
        ".$out.tmp.seqshard.crai")
    for p in "${plants[@]}"; do
        for resume in "" --resume; do
            plant_case "$cname: link at $p${resume:+, --resume}" "$key" "$out" "$exts" "$p" \
                "$resume" "$args"
        done
    done
done

# ---- mkstemp temporaries: a watcher links their index names as they appear ----------------
# (side streams and mosdepth's files, the report, the main output's index)
watch_and_plant() {
    local f ext
    while [ ! -e "$SS_WORK/stop" ]; do
        for f in "$SH"/.*.tmp.??????; do
            [ -f "$f" ] || continue
            for ext in .tbi .csi .crai; do
                [ -e "$f$ext" ] || [ -L "$f$ext" ] || ln -s "$VICTIM" "$f$ext" 2>/dev/null
            done
        done
        sleep 0.01
    done
}
export -f watch_and_plant
export SH VICTIM SS_WORK
as_att bash -c watch_and_plant &
watcher=$!
mkdir -p "$SS_WORK/ref/mos"
"$SEQSHARD" depth --mosdepth "$SS_WORK/ref/mos/m" --by 500 -T 1,5 "${COMMON[@]}" "$S1"
mv "$SS_WORK/ref/pileup_.gz/out.txt.gz" "$SS_WORK/ref/pileup_.gz/out.txt.gz.tbi" \
    "$SS_WORK/ref/mos/" 2>/dev/null
# watched NAME ARGS...: the run while the watcher plants; its files must be the reference's
watched() {
    local name=$1 rc bad="" f
    shift
    SEQSHARD_TEST_SHARD_DELAY_MS=40 timeout "$SS_TIMEOUT" "$SEQSHARD" "$@" \
        --report "$SH/r.json" </dev/null >/dev/null 2>"$SS_WORK/err.txt"
    rc=$?
    victim_ok || { bad="the linked file was written (status $rc)"; restore_victim; }
    if [ -z "$bad" ] && [ $rc = 0 ]; then
        for f in "$SH"/*; do # the final names: regular files, the reference's bytes
            if [ -L "$f" ]; then
                bad="${bad:-${f##*/} is a symbolic link}"
            elif [ "${f##*/}" != r.json ] && ! cmp -s "$f" "$SS_WORK/ref/mos/${f##*/}"; then
                bad="${bad:-status 0 but ${f##*/} differs}"
            fi
        done
        [ -s "$SH/r.json" ] || bad="${bad:-no report}"
    elif [ -z "$bad" ]; then
        bad="status $rc"
    fi
    find "$SH" -mindepth 1 -maxdepth 1 \( -name 'm.*' -o -name 'out.txt.gz*' -o -name r.json \) \
        -delete
    [ -z "$bad" ] && [ -n "$(ours_left)" ] && bad="left: $(ours_left)"
    if [ -z "$bad" ]; then ss_ok "$name"; else
        ss_bad "$name" "$bad" "stderr: $(head -2 "$SS_WORK/err.txt" | cut -c1-240)"
    fi
    find "$SH" -mindepth 1 ! -user nobody -delete
}
watched "mosdepth and report, temporaries' index names linked as they appear" \
    depth --mosdepth "$SH/m" --by 500 -T 1,5 "${COMMON[@]}" "$S1"
for resume in "" --resume; do
    # shellcheck disable=SC2086
    watched "pileup .gz and report, temporaries' index names linked${resume:+, --resume}" \
        pileup -B -r ctgB "${COMMON[@]}" $resume -o "$SH/out.txt.gz" "$S1"
done
touch "$SS_WORK/stop"
wait "$watcher"
n_planted=$(find "$SH" -mindepth 1 -user nobody -type l -name '.*.tmp.??????.*' | wc -l)
[ "$n_planted" -gt 0 ] && ss_ok "the watcher planted $n_planted links" ||
    ss_bad "the watcher planted links" "none: the watched cases tested nothing"
find "$SH" -mindepth 1 -delete

# ---- -o names of 248-255 bytes with an index ---------------------------------------------
d=$SS_WORK/long
mkdir -p "$d"
name_of() { # LENGTH SUFFIX: a name of LENGTH bytes ending in SUFFIX
    printf "%0$(($1 - ${#2}))d%s" 0 "$2" | tr 0 n
}
count_ctgb=$("$SAMTOOLS" view -c "$S1" ctgB)
long_case() { # KIND SUFFIX EXT LENGTH ARGS...
    local kind=$1 suf=$2 ext=$3 len=$4 out rc t0 t1 got
    shift 4
    out=$(name_of "$len" "$suf")
    if [ $((len + ${#ext})) -le 255 ]; then
        "$SEQSHARD" "$@" --quiet -o "$d/$out" "$S1" 2>"$d.err"
        rc=$?
        if [ "$kind" = gz ]; then
            got=$(tabix "$d/$out" ctgB:1-40000 2>/dev/null | wc -l)
            want=$("$SEQSHARD" pileup -B -r ctgB --quiet "$S1" | wc -l)
        else
            got=$("$SAMTOOLS" view -c "$d/$out" ctgB 2>/dev/null)
            want=$count_ctgb
        fi
        if [ $rc = 0 ] && [ -s "$d/$out$ext" ] && [ "$got" = "$want" ] &&
            [ -z "$(ss_left "$d" "$out" "$out$ext")" ]; then
            ss_ok "$kind: $len-byte -o name works, with its $ext"
        else
            ss_bad "$kind: $len-byte -o name works, with its $ext" \
                "status $rc, $got of $want by the index, left: $(ss_left "$d")" \
                "stderr: $(head -1 "$d.err" | cut -c1-200)"
        fi
        rm -f "$d/$out" "$d/$out$ext"
        return
    fi
    t0=$(date +%s.%N)
    # slow shards: a refusal after the work would take seconds
    SEQSHARD_TEST_SHARD_DELAY_MS=300 ss_cmd_fails "$kind: $len-byte -o name refused (its $ext would not fit)" \
        1 'too long' "$d" "$SEQSHARD" "$@" --quiet -@ 1 --shard-size 5k -o "$d/$out" "$S1"
    t1=$(date +%s.%N)
    if awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(b - a < 3) }'; then
        ss_ok "$kind: $len-byte name refused before any work"
    else
        ss_bad "$kind: $len-byte name refused before any work" "took $(echo "$t1 - $t0" | bc)s"
    fi
    rm -f "$d/$out"
}
ss_keep=()
for len in 248 249 250 251 252 253 254 255; do
    long_case BAM .bam .csi "$len" view -b --write-index
    long_case CRAM .cram .crai "$len" view -C -T "$REF" --write-index
    long_case gz .txt.gz .tbi "$len" pileup -B
done

ss_summary
exit $?
