#!/usr/bin/env bash
# man_pages.sh -- man/seqshard-KERNEL.1 lists every option that `seqshard KERNEL --help`
# lists, and man/seqshard.1 every kernel: a page that fell behind the program fails
# here (regenerate with: python3 scripts/make-man.py build/seqshard man).
set -u
. "$(dirname "$0")/lib.sh"
ss_setup

# The option names of a --help text: every -x / --long word in the first column of an
# option item (an indented line starting with '-').
help_options() {
    grep -E '^ {2,8}-' | sed -E 's/^ +//; s/ {2,}.*//' |
        grep -oE '(^|[ ,])--?[A-Za-z0-9@?][-A-Za-z0-9.+]*' | sed -E 's/^[ ,]//' | sort -u
}
# A man page as plain words: roff's \- and \e back to - and \.
man_text() { sed -e 's/\\-/-/g' -e 's/\\e/\\/g' "$1"; }

kernels=$("$SEQSHARD" --help | awk '/^Kernels:/ { on = 1; next }
    on && /^  [a-z]/ { print $1; next } on { on = 0 }' | grep -v '^topology$')
for k in $kernels; do
    page=$SS_SRC/man/seqshard-$k.1
    if [ ! -f "$page" ]; then
        ss_bad "man page of $k" "no $page"
        continue
    fi
    text=$(man_text "$page")
    lacking=()
    while read -r opt; do
        grep -qF -- "$opt" <<<"$text" || lacking+=("$opt")
    done < <("$SEQSHARD" "$k" --help | help_options)
    n=$("$SEQSHARD" "$k" --help | help_options | wc -l)
    if [ "$n" -lt 5 ]; then
        ss_bad "man page of $k" "found only $n options in '$k --help': the test is wrong"
    elif [ ${#lacking[@]} -eq 0 ]; then
        ss_ok "man page of $k lists its $n options"
    else
        ss_bad "man page of $k lists its options" "missing: ${lacking[*]}"
    fi
    grep -qF "seqshard-$k" <<<"$(man_text "$SS_SRC/man/seqshard.1")" &&
        ss_ok "seqshard.1 names $k" || ss_bad "seqshard.1 names $k" "not in man/seqshard.1"
done

ss_summary
exit $?
