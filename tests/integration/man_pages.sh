#!/usr/bin/env bash
# man_pages.sh -- the parser, --help, the man pages and shell completion agree, because
# all four come from each kernel's one option description: man/ is what
# scripts/make-man.py makes from the program now (regenerate with: python3
# scripts/make-man.py build/seqshard man); every option `seqshard KERNEL --options` lists
# is one the parser takes (never "unknown option") and is in --help and the man page
# (aliases, samtools' other spellings, are parsed but listed in neither); the man pages
# have DESCRIPTION, OPTIONS, EXAMPLES and SEE ALSO; bash completion offers each option's
# values and mosdepth mode's options.
set -u
. "$(dirname "$0")/lib.sh"
ss_setup
W=$SS_WORK

# ---- man/ is what make-man.py makes ----------------------------------------------------------
if python3 "$SS_SRC/scripts/make-man.py" "$SEQSHARD" "$W/man" >/dev/null; then
    for page in "$SS_SRC"/man/*.1; do
        name=${page##*/}
        if cmp -s "$page" "$W/man/$name"; then
            ss_ok "man/$name is up to date"
        else
            ss_bad "man/$name is up to date" "it differs from make-man.py's output:" \
                "$(diff "$page" "$W/man/$name" | head -6)"
        fi
    done
    [ "$(ls "$W/man" | wc -l)" = "$(ls "$SS_SRC"/man/*.1 | wc -l)" ] ||
        ss_bad "man/ has every page" "make-man.py wrote $(ls "$W/man" | tr '\n' ' ')"
else
    ss_bad "make-man.py runs" "it failed"
fi

# A man page as plain words: roff's \- and \e back to - and \.
man_text() { sed -e 's/\\-/-/g' -e 's/\\e/\\/g' "$1"; }

kernels=$("$SEQSHARD" --help | awk '/^Kernels:/ { on = 1; next }
    on && /^  [a-z]/ { print $1; next } on { on = 0 }' | grep -v '^topology$')
[ -n "$kernels" ] || ss_bad "kernels listed" "seqshard --help lists none"

# check_mode NAME PAGE ARGS...: ARGS select the kernel (and mode) whose options are checked.
check_mode() {
    local name=$1 page=$2
    shift 2
    local table help text n=0 unknown=() unlisted=() unmanned=()
    table=$("$SEQSHARD" "$@" --options)
    help=$("$SEQSHARD" "$@" --help)
    text=$(man_text "$page")
    while IFS=$'\t' read -r short long takes alias _; do
        n=$((n + 1))
        local opt=$long
        [ "$opt" = - ] && opt=$short
        local args=("$opt")
        [ "$takes" = 1 ] && args+=(1)
        # the parser takes it: whatever else fails, it is never "unknown option"
        if "$SEQSHARD" "$@" "${args[@]}" </dev/null 2>&1 >/dev/null | grep -q 'unknown option'; then
            unknown+=("$opt")
        fi
        [ "$alias" = 1 ] && continue # samtools' other spelling: parsed, not listed
        # listed in --help and in the man page
        local pat
        pat="(^|[ ,])$(printf '%s' "$opt" | sed 's/[.+?]/\\&/g')([ ,]|$)"
        grep -qE -- "$pat" <<<"$help" || unlisted+=("$opt")
        grep -qF -- "$opt" <<<"$text" || unmanned+=("$opt")
    done <<<"$table"
    if [ "$n" -lt 8 ]; then
        ss_bad "$name: options" "--options lists only $n: the test is wrong"
        return
    fi
    [ ${#unknown[@]} = 0 ] && ss_ok "$name: the parser takes all $n listed options" ||
        ss_bad "$name: the parser takes every listed option" "unknown: ${unknown[*]}"
    [ ${#unmanned[@]} = 0 ] && ss_ok "$name: the man page lists what --help lists" ||
        ss_bad "$name: the man page lists what --help lists" "missing: ${unmanned[*]}"
    [ ${#unlisted[@]} = 0 ] && ss_ok "$name: --help lists every option but aliases" ||
        ss_bad "$name: --help lists every option but aliases" "missing: ${unlisted[*]}"
}

for k in $kernels; do
    page=$SS_SRC/man/seqshard-$k.1
    if [ ! -f "$page" ]; then
        ss_bad "man page of $k" "no $page"
        continue
    fi
    check_mode "$k" "$page" "$k"
    for sec in DESCRIPTION OPTIONS EXAMPLES "SEE ALSO" "EXIT STATUS"; do
        grep -q "^\.SH $sec" "$page" || ss_bad "man page of $k has $sec" "no .SH $sec"
    done
    grep -qF "seqshard-$k" <<<"$(man_text "$SS_SRC/man/seqshard.1")" &&
        ss_ok "seqshard.1 names $k" || ss_bad "seqshard.1 names $k" "not in man/seqshard.1"
done
check_mode "depth --mosdepth" "$SS_SRC/man/seqshard-depth.1" depth --mosdepth x

# ---- bash completion ----------------------------------------------------------------------------
# complete WORDS...: what the completion function offers for the last word.
complete_words() {
    bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _seqshard
        printf "%s\n" "${COMPREPLY[@]}"' _ "$SS_SRC/completion/seqshard.bash" "$@"
}
PATH=$(dirname "$SEQSHARD"):$PATH
expect_completion() { # NAME WANT WORDS...: WANT is among the offers
    local name=$1 want=$2
    shift 2
    if complete_words "$@" | grep -qxF -- "$want"; then
        ss_ok "completion: $name"
    else
        ss_bad "completion: $name" "offered: $(complete_words "$@" | head -8 | tr '\n' ' ')"
    fi
}
expect_completion "view -O offers cram" cram seqshard view -O ""
expect_completion "view --output-fmt offers bam" bam seqshard view --output-fmt b
expect_completion "--bind offers numa" numa seqshard pileup --bind n
expect_completion "pileup's options" --output-BP seqshard pileup --output-B
expect_completion "mosdepth mode's --thresholds" --thresholds seqshard depth --mosdepth x --thr
expect_completion "realign's --write-index" --write-index seqshard realign --write
if complete_words seqshard pileup -O "" | grep -qxE 'sam|bam|cram'; then
    ss_bad "completion: pileup -O (--output-BP) takes no value" "it offered formats"
else
    ss_ok "completion: pileup -O (--output-BP) takes no value"
fi

# `seqshard depth --man` is the whole page, mosdepth mode's section with it
if "$SEQSHARD" depth --man | grep -qx '.SH MOSDEPTH MODE' &&
    "$SEQSHARD" depth --man | grep -q 'thresholds'; then
    ss_ok "depth --man has the MOSDEPTH MODE section"
else
    ss_bad "depth --man has the MOSDEPTH MODE section" "$("$SEQSHARD" depth --man | grep '^.SH' | tr '\n' ' ')"
fi

ss_summary
exit $?
