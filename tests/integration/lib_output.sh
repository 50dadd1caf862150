# shellcheck shell=bash
# lib_output.sh -- helpers for the output-side tests (full disks, paths,
# signals); source it after lib.sh and ss_setup.

# ss_left DIR [KEEP...]: the names in DIR (hidden ones too) other than KEEP, space separated.
ss_left() {
    local dir=$1 f keep out=""
    shift
    for f in "$dir"/* "$dir"/.[!.]*; do
        [ -e "$f" ] || [ -L "$f" ] || continue
        f=${f##*/}
        for keep in "$@"; do [ "$f" = "$keep" ] && continue 2; done
        out+="$f "
    done
    printf '%s' "${out% }"
}

# Set by ss_cmd_fails for the caller: what stayed in the directory it was given.
ss_keep=()

# ss_cmd_fails NAME STATUS MENTION DIR CMD...
#   CMD (a whole command line, run with a timeout, stdin from /dev/null) must
#   exit with STATUS, print exactly one line on stderr, matching MENTION (an
#   extended regular expression), and leave nothing in DIR but the names in
#   ss_keep. With SS_ANY_LINES=1 stderr may hold other lines (Open MPI's own),
#   as long as one "seqshard:" line matches.
ss_cmd_fails() {
    local name=$1 want=$2 mention=$3 dir=$4
    shift 4
    ss_case_no=$((ss_case_no + 1))
    local err=$SS_WORK/cmd.$ss_case_no.err
    timeout "$SS_TIMEOUT" "$@" </dev/null >"$SS_WORK/cmd.$ss_case_no.out" 2>"$err"
    local rc=$? nlines left shown
    nlines=$(grep -c '' "$err")
    left=$(ss_left "$dir" "${ss_keep[@]}")
    shown=$(ss_quote "$@")
    if [ $rc = 124 ]; then
        ss_bad "$name" "timed out after ${SS_TIMEOUT}s (hang?)" "$shown"
    elif [ $rc != "$want" ]; then
        ss_bad "$name" "exit status $rc, want $want" "$shown" "stderr: $(head -3 "$err" | cut -c1-240)"
    elif [ "${SS_ANY_LINES:-0}" != 1 ] && [ "$nlines" != 1 ]; then
        ss_bad "$name" "$nlines lines on stderr, want exactly one" "$shown" \
            "stderr: $(head -5 "$err" | cut -c1-240)"
    elif ! grep '^seqshard: ' "$err" | grep -qE -- "$mention"; then
        ss_bad "$name" "no 'seqshard:' line mentions '$mention'" "$shown" \
            "stderr: $(head -3 "$err" | cut -c1-240)"
    elif [ -n "$left" ]; then
        ss_bad "$name" "left files in $dir: $left" "$shown" "stderr: $(head -1 "$err" | cut -c1-240)"
    else
        ss_ok "$name"
        [ "$SS_VERBOSE" = 1 ] && echo "     $(grep '^seqshard: ' "$err" | head -1 | cut -c1-240)"
        rm -f "$err" "$SS_WORK/cmd.$ss_case_no.out"
    fi
}

# ss_full_fs DIR SIZE: mount a tmpfs of SIZE (e.g. 1m) on DIR, unmounted when the test
# exits. Returns 1 (after a note) when that cannot be done: not root, or no mount.
ss_full_fs() {
    local dir=$1 size=$2
    if [ "$(id -u)" != 0 ]; then
        echo "note: not root: skipping the full-disk cases (they mount a ${size} tmpfs)"
        return 1
    fi
    mkdir -p "$dir"
    if ! mount -t tmpfs -o "size=$size" tmpfs "$dir" 2>/dev/null; then
        echo "note: cannot mount a tmpfs on $dir: skipping the full-disk cases"
        return 1
    fi
    ss_mounts+=("$dir")
    # lib.sh's EXIT trap, with the unmount first (rm -rf must not meet a mount point)
    trap 'ss_unmount_all; if [ "$ss_failed" = 0 ]; then rm -rf "$SS_WORK"; else echo "(kept $SS_WORK)"; fi' EXIT
    return 0
}
ss_mounts=()
# Unmount before lib.sh's trap removes the work directory.
ss_unmount_all() {
    local m
    for m in "${ss_mounts[@]}"; do umount "$m" 2>/dev/null || umount -l "$m"; done
}

# ss_fill DIR PAGES_FREE: fill the tmpfs at DIR with a file until PAGES_FREE 4 KiB pages are
# left (tmpfs counts whole pages).
ss_fill() {
    local dir=$1 free=$2 total
    total=$(df -B4096 --output=avail "$dir" | tail -1 | tr -d ' ')
    dd if=/dev/zero of="$dir/filler" bs=4096 count=$((total - free)) status=none 2>/dev/null
}
