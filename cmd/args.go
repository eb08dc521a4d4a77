package cmd

import (
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// urfave/cli, like Go's flag package, stops reading flags at the first
// argument that is not one, so `remember "private note" --scope user`
// would store the text "private note --scope user" in project scope.
// interspersed rewrites the line before it is parsed, so that:
//
//   - a command's flags are read wherever they stand after its name, and
//     an unknown flag anywhere is refused by name (text that starts with
//     "-" goes after --, as in cmd/go);
//   - -- still ends the flags: everything after it is an argument;
//   - global flags given before the command name move after it, so each
//     is read from one context and means the same wherever it was typed
//     (acolyte --home Y status and acolyte status --home Y alike).
//
// A line it cannot place (an unknown command, a flag unknown before the
// command name) is left as it is, for the parser to explain.
func interspersed(app *cli.App, args []string) []string {
	if len(args) < 2 || slices.Contains(args, completionFlag) {
		return args
	}
	rest := args[1:]
	// Before the command name: global flags only.
	var globals []string
	i := 0
	for i < len(rest) && isFlagArg(rest[i]) {
		n := flagWidth(app.Flags, rest[i], rest[i+1:])
		if n == 0 {
			return args // --help, --version or a mistake: the parser answers
		}
		globals = append(globals, rest[i:i+n]...)
		i += n
	}
	if i == len(rest) || rest[i] == "--" {
		return args
	}
	// The command, and its subcommands, by name.
	path := []string{}
	cmds := app.Commands
	var leaf *cli.Command
	var parentFlags []string
	for i < len(rest) {
		c := findCommand(cmds, rest[i])
		if c == nil {
			break
		}
		path = append(path, rest[i])
		i++
		leaf = c
		if len(c.Subcommands) == 0 {
			break
		}
		// A parent's flags before the subcommand's name.
		for i < len(rest) && isFlagArg(rest[i]) {
			n := flagWidth(c.Flags, rest[i], rest[i+1:])
			if n == 0 {
				return args
			}
			parentFlags = append(parentFlags, rest[i:i+n]...)
			i += n
		}
		cmds = c.Subcommands
		leaf = nil
	}
	if leaf == nil || leaf.SkipFlagParsing || leaf.Name == mergeDriverName {
		return args
	}
	var flags, positional []string
	for j := i; j < len(rest); j++ {
		a := rest[j]
		if a == "--" {
			positional = append(positional, rest[j+1:]...)
			break
		}
		if !isFlagArg(a) {
			positional = append(positional, a)
			continue
		}
		// An unknown flag moves too, so that the parser refuses it by
		// name rather than storing it as text.
		n := max(1, flagWidth(leaf.Flags, a, rest[j+1:]))
		flags = append(flags, rest[j:min(j+n, len(rest))]...)
		j += n - 1
	}
	out := append([]string{args[0]}, path...)
	out = append(out, globals...)
	out = append(out, parentFlags...)
	out = append(out, flags...)
	if len(positional) > 0 {
		out = append(out, "--")
		out = append(out, positional...)
	}
	return out
}

// completionFlag is the flag urfave/cli's shell completion appends last.
const completionFlag = "--generate-bash-completion"

// isFlagArg says whether arg is read as a flag: it starts with "-", is not
// "-" alone (stdin), and is not a negative number, which is text.
func isFlagArg(arg string) bool {
	if len(arg) < 2 || arg[0] != '-' || arg == "--" {
		return false
	}
	if c := arg[1]; c >= '0' && c <= '9' || c == '.' {
		return false
	}
	return true
}

// flagWidth is how many arguments the flag arg takes up among flags: 1, 2
// when its value is the next argument, 0 when flags has no such flag.
func flagWidth(flags []cli.Flag, arg string, next []string) int {
	name, _, hasValue := strings.Cut(strings.TrimLeft(arg, "-"), "=")
	for _, f := range flags {
		if !slices.Contains(f.Names(), name) {
			continue
		}
		if hasValue || len(next) == 0 {
			return 1
		}
		if v, ok := f.(cli.DocGenerationFlag); ok && v.TakesValue() {
			return 2
		}
		return 1
	}
	return 0
}

// findCommand is the command of cmds named (or aliased) name.
func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if slices.Contains(c.Names(), name) {
			return c
		}
	}
	return nil
}
