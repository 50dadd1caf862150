# bash completion for seqshard; installed as share/bash-completion/completions/seqshard.
# The kernels and each kernel's options come from the program's own --help, so they
# never go stale; options that take a file complete file names.
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
    case $prev in
    -o | --output | -f | --fasta-ref | --reference | -T | -b | --bam-list | -l | -L | \
        --positions | --target-file | --report | -G | --exclude-RG | -U)
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        return
        ;;
    --tmp-dir)
        mapfile -t COMPREPLY < <(compgen -d -- "$cur")
        return
        ;;
    --bind)
        mapfile -t COMPREPLY < <(compgen -W "auto core numa none" -- "$cur")
        return
        ;;
    -O | --output-fmt)
        mapfile -t COMPREPLY < <(compgen -W "sam bam cram" -- "$cur")
        return
        ;;
    esac
    if [[ $cur == -* ]]; then
        local opts
        opts=$("$prog" "$kernel" --help 2>/dev/null |
            grep -oE '(^|[ ,])--?[A-Za-z0-9@?][-A-Za-z0-9.+]*' | sed 's/^[ ,]//' | sort -u)
        mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")
        return
    fi
    mapfile -t COMPREPLY < <(compgen -f -- "$cur")
}
complete -o filenames -F _seqshard seqshard
