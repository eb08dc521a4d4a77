package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/acolyte-dev/acolyte/memory"
)

// The completion scripts ask acolyte itself for the words that may come
// next (urfave/cli's --generate-bash-completion, which runs no command),
// so they never fall behind the commands and flags.
const (
	bashCompletion = `# acolyte completion for bash: source <(acolyte completion bash)
_acolyte() {
	local cur="${COMP_WORDS[COMP_CWORD]}"
	local -a before=("${COMP_WORDS[@]:1:COMP_CWORD-1}")
	if [[ "$cur" == -* ]]; then
		before+=("$cur")
	fi
	local words
	words=$("${COMP_WORDS[0]}" "${before[@]}" --generate-bash-completion 2>/dev/null)
	COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o bashdefault -o default -F _acolyte acolyte
`
	zshCompletion = `#compdef acolyte
# acolyte completion for zsh: source <(acolyte completion zsh), after compinit
_acolyte() {
	local cur=${words[CURRENT]}
	local -a before=(${words[2,CURRENT-1]})
	if [[ $cur == -* ]]; then
		before+=($cur)
	fi
	local -a next=(${(f)"$(${words[1]} ${before[@]} --generate-bash-completion 2>/dev/null)"})
	compadd -- $next
}
compdef _acolyte acolyte
`
)

func completionCommand() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print the shell completion script for bash, zsh or fish",
		ArgsUsage: "bash|zsh|fish",
		Description: "bash:  source <(acolyte completion bash)    (or save it in /etc/bash_completion.d/acolyte)\n" +
			"zsh:   source <(acolyte completion zsh)     (after compinit)\n" +
			"fish:  acolyte completion fish > ~/.config/fish/completions/acolyte.fish",
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usage(fmt.Errorf("completion needs one shell: bash, zsh or fish, e.g. source <(acolyte completion bash)"))
			}
			switch shell := c.Args().First(); shell {
			case "bash":
				_, err := fmt.Fprint(c.App.Writer, bashCompletion)
				return err
			case "zsh":
				_, err := fmt.Fprint(c.App.Writer, zshCompletion)
				return err
			case "fish":
				script, err := c.App.ToFishCompletion()
				if err != nil {
					return err
				}
				_, err = fmt.Fprint(c.App.Writer, script)
				return err
			default:
				if unshowable(shell) {
					return usage(fmt.Errorf("completion: an argument of %d bytes is not a shell (not shown, it may be a secret); use bash, zsh or fish", len(shell)))
				}
				return usage(fmt.Errorf("completion: unknown shell %q; use bash, zsh or fish", shell))
			}
		},
	}
}

// completeValues answers the completion scripts for what urfave/cli does
// not know: the values of --scope and --kind, and the ids forget and edit
// take (those of the project and user memories visible here, from list;
// no team database is asked). args is the whole line, ending in
// completionFlag; handled is false for everything else, which urfave/cli
// completes (commands and flags).
func completeValues(ctx context.Context, args []string, stdout io.Writer) bool {
	words := args[1 : len(args)-1]
	if len(words) == 0 {
		return false
	}
	var values []string
	switch last := words[len(words)-1]; last {
	case "--scope":
		for _, s := range memory.Scopes {
			values = append(values, string(s))
		}
	case "--kind":
		for _, k := range memory.Kinds {
			values = append(values, string(k))
		}
	default:
		command := ""
		for _, w := range words {
			if !isFlagArg(w) {
				command = w
				break
			}
		}
		if command != "forget" && command != "edit" || isFlagArg(last) {
			return false
		}
		if command == "edit" && last != "edit" {
			return false // edit takes one id, then the text
		}
		// The global flags typed (--home, --repo) choose the store.
		var globals []string
		for i := 0; i < len(words); i++ {
			if w := words[i]; w == "--home" || w == "--repo" || w == "--session" {
				if i+1 < len(words) {
					globals = append(globals, w, words[i+1])
					i++
				}
			} else if strings.HasPrefix(w, "--home=") || strings.HasPrefix(w, "--repo=") {
				globals = append(globals, w)
			}
		}
		for _, scope := range []string{"project", "user"} {
			var out bytes.Buffer
			line := slices.Concat([]string{args[0], "list", "--json", "--scope", scope}, globals)
			if run(ctx, line, strings.NewReader(""), &out, io.Discard, false) != ExitOK {
				continue
			}
			var mems []struct {
				ID   string `json:"id"`
				Kind string `json:"kind"`
			}
			if json.Unmarshal(out.Bytes(), &mems) != nil {
				continue
			}
			for _, m := range mems {
				// Rules and seeds are edited in their files, not by id.
				if m.Kind != string(memory.KindRule) && m.Kind != string(memory.KindSeed) {
					values = append(values, m.ID)
				}
			}
		}
	}
	for _, v := range values {
		fmt.Fprintln(stdout, v)
	}
	return true
}
