package cmd

import (
	"fmt"

	"github.com/urfave/cli/v2"
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
