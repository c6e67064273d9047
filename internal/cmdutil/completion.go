package cmdutil

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// GenBashCompletion writes cobra's bash script, whose word splitting
// works without the bash-completion package too: cobra's calls
// _get_comp_words_by_ref, which only that package defines.
func GenBashCompletion(root *cobra.Command, w io.Writer) error {
	var b bytes.Buffer
	if err := root.GenBashCompletionV2(&b, true); err != nil {
		return err
	}
	old := "    _get_comp_words_by_ref \"$@\" cur prev words cword\n}"
	script := b.String()
	if !strings.Contains(script, old) {
		return fmt.Errorf("the bash completion script of this cobra has no %q to replace", old)
	}
	script = strings.Replace(script, old, bashWordSplitter, 1)
	_, err := io.WriteString(w, script)
	return err
}

// bashWordSplitter ends the script's __mcpi_init_completion: with the
// bash-completion package, its _get_comp_words_by_ref; without, the words
// of the line up to the cursor as bash split them, joined again where bash
// broke them at '=' or ':' (--era=modern, demo://counter), as
// _get_comp_words_by_ref -n =: does.
const bashWordSplitter = `    if declare -F _get_comp_words_by_ref >/dev/null 2>&1; then
        _get_comp_words_by_ref "$@" cur prev words cword
        return
    fi
    local i w blank line=${COMP_LINE:0:COMP_POINT}
    words=()
    for ((i = 0; i <= COMP_CWORD && i < ${#COMP_WORDS[@]}; i++)); do
        w=${COMP_WORDS[i]}
        blank=
        [[ $line == [[:space:]]* ]] && blank=1
        line=${line#"${line%%[![:space:]]*}"}
        w=${line:0:${#w}}
        line=${line:${#w}}
        if [[ -z $blank && ${#words[@]} -gt 1 ]] && [[ $w =~ ^[=:]+$ || ${words[${#words[@]}-1]} =~ [=:]$ ]]; then
            words[${#words[@]}-1]+=$w
        else
            words+=("$w")
        fi
    done
    cword=$((${#words[@]} - 1))
    cur=${words[cword]}
    prev=
    ((cword > 0)) && prev=${words[cword-1]}
    return 0
}`
