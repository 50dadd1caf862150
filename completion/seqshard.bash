# bash completion for seqshard; installed as share/bash-completion/completions/seqshard.
# The kernels come from `seqshard --help`, each kernel's options and what their values
# complete to from `seqshard KERNEL --options` (made from the description its parser is
# built from), so they never go stale. With --mosdepth on the line, depth's options are
# mosdepth mode's.
_seqshard_options() { # prog kernel words...: the option list of the kernel (or its mode)
    local prog=$1 kernel=$2 w
    shift 2
    for w in "$@"; do
        if [ "$kernel" = depth ] && [[ $w == --mosdepth* ]]; then
            "$prog" depth --mosdepth x --options 2>/dev/null
            return
        fi
    done
    "$prog" "$kernel" --options 2>/dev/null
}

_seqshard() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    local prog=${COMP_WORDS[0]} kernel=${COMP_WORDS[1]:-}
    if [ "$COMP_CWORD" -eq 1 ]; then
        local kernels
        kernels=$("$prog" --help 2>/dev/null | awk '/^Kernels:/ { on = 1; next }
            on && /^  [a-z]/ { print $1; next } on { on = 0 }')
        mapfile -t COMPREPLY < <(compgen -W "$kernels --help --version" -- "$cur")
        return
    fi
    # lines: SHORT LONG TAKES-VALUE ALIAS VALUES (tab-separated; "-" where there is none)
    local table short long takes alias values
    table=$(_seqshard_options "$prog" "$kernel" "${COMP_WORDS[@]:2}")
    if [[ $prev == -* ]]; then
        while IFS=$'\t' read -r short long takes alias values; do
            [ "$prev" = "$short" ] || [ "$prev" = "$long" ] || continue
            [ "$takes" = 1 ] || break
            case $values in
            @file) mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
            @dir) mapfile -t COMPREPLY < <(compgen -d -- "$cur") ;;
            "") COMPREPLY=() ;;
            *) mapfile -t COMPREPLY < <(compgen -W "$values" -- "$cur") ;;
            esac
            return
        done <<<"$table"
    fi
    if [[ $cur == -* ]]; then
        local opts
        opts=$(awk -F'\t' '{ if ($1 != "-") print $1; if ($2 != "-") print $2 }' <<<"$table")
        mapfile -t COMPREPLY < <(compgen -W "$opts --help" -- "$cur")
        return
    fi
    mapfile -t COMPREPLY < <(compgen -f -- "$cur")
}
complete -o filenames -F _seqshard seqshard
