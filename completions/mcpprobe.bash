# Generated from mcpprobe's CLI by completions/generate.py; do not edit. Install: README.md.
_mcpprobe_completion() {
    local IFS=$'\n'
    local response

    response=$(env COMP_WORDS="${COMP_WORDS[*]}" COMP_CWORD=$COMP_CWORD _MCPPROBE_COMPLETE=bash_complete $1)

    for completion in $response; do
        IFS=',' read type value <<< "$completion"

        if [[ $type == 'dir' ]]; then
            COMPREPLY=()
            compopt -o dirnames
        elif [[ $type == 'file' ]]; then
            COMPREPLY=()
            compopt -o default
        elif [[ $type == 'plain' ]]; then
            COMPREPLY+=($value)
        fi
    done

    return 0
}

_mcpprobe_completion_setup() {
    complete -o nosort -F _mcpprobe_completion mcpprobe
}

_mcpprobe_completion_setup;
