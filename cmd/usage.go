package cmd

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/acolyte-dev/acolyte/internal/secrets"
)

// mergeDriverName is the command git runs as the merge driver; it reads no
// settings, so a broken config.json must not turn every merge into a conflict.
const mergeDriverName = "merge-driver"

// maxEcho is the longest flag-like argument an error message repeats. A
// real flag name is short; a longer "flag" is text that began with "-",
// such as a pasted private key ("-----BEGIN ...").
const maxEcho = 40

// looksSecret says whether an argument must never be repeated back: it
// looks like a credential, or spans lines (a key, a pasted file).
func looksSecret(arg string) bool {
	if strings.ContainsAny(arg, "\n\r") || strings.Contains(arg, "-----BEGIN") {
		return true
	}
	_, found := secrets.Detect(arg)
	return found
}

// unshowable says whether an argument that reached a flag parser may not be
// echoed: secret-looking, or too long to be a flag name.
func unshowable(arg string) bool {
	return looksSecret(arg) || len(arg) > maxEcho
}

// redact removes from msg every argument that looks like a secret, and the
// forms a flag parser makes of it (without its leading dashes, the part
// before "="), so no error message repeats a credential that was pasted
// on the command line.
func redact(msg string, args []string) string {
	for _, arg := range args {
		forms := []string{arg}
		trimmed := strings.TrimLeft(arg, "-")
		forms = append(forms, trimmed, strings.TrimPrefix(arg, "-"))
		if name, value, ok := strings.Cut(trimmed, "="); ok {
			forms = append(forms, name, value)
		}
		for _, f := range forms {
			if f == "" || !strings.Contains(msg, f) {
				continue
			}
			if looksSecret(f) || (strings.HasPrefix(arg, "-") && len(f) > maxEcho) {
				msg = strings.ReplaceAll(msg, f, fmt.Sprintf("(%d bytes not shown)", len(f)))
			}
		}
	}
	return msg
}

// quoted finds the Go-quoted strings (%q) in a message; compiled on first
// use, as only a failing command's message needs it.
var quoted = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`"(?:[^"\\]|\\.)*"`) })

// withholdSecrets is the last guard before an error is printed: a quoted
// value in it that looks like a credential (a seed's content, a setting
// read from a file) is replaced by its size, and if a credential is still
// there the message itself is withheld. The arguments are redacted first,
// by redact; this catches what came from files and stdin.
func withholdSecrets(msg string) string {
	if _, found := secrets.Detect(msg); !found {
		return msg
	}
	msg = quoted().ReplaceAllStringFunc(msg, func(q string) string {
		s, err := strconv.Unquote(q)
		if err != nil {
			s = q
		}
		if what, found := secrets.Detect(s); found {
			return fmt.Sprintf("(%d bytes not shown: %s)", len(s), what)
		}
		return q
	})
	if what, found := secrets.Detect(msg); found {
		return fmt.Sprintf("the command failed, and its error message is not shown because it contains %s", what)
	}
	return msg
}

// onUsageError explains a flag the parser refused without repeating it when
// it may be a secret, and says how to pass text that starts with "-".
func onUsageError(c *cli.Context, err error, _ bool) error {
	// name is how the command is typed; who starts the message, after Run's "acolyte: ".
	name, who := "acolyte", ""
	if !isRoot(c) {
		name, who = c.Command.HelpName, strings.TrimPrefix(c.Command.HelpName, "acolyte ")+": "
	}
	msg := err.Error()
	for _, prefix := range []string{"flag provided but not defined: ", "bad flag syntax: "} {
		arg, ok := strings.CutPrefix(msg, prefix)
		if !ok {
			continue
		}
		how := fmt.Sprintf("to pass an argument that starts with \"-\", put it after --: %s -- ARG", name)
		if isRoot(c) {
			how = "commands take their own flags after their name"
		} else if c.Command.Name == "remember" {
			how = `to remember text that starts with "-", put it after --: acolyte remember -- "TEXT", or pipe it: acolyte remember < FILE`
		}
		if name, ok := strings.CutPrefix(arg, "-"); ok && len(name) > 1 && !strings.HasPrefix(name, "-") {
			arg = "--" + name // the flag package names every flag with one dash; people type two
		}
		if unshowable(arg) {
			return usage(fmt.Errorf("%san argument of %d bytes starts with \"-\" but is not a flag (not shown, it may be a secret); %s", who, len(arg), how))
		}
		return usage(fmt.Errorf("%sunknown flag %s; see %s --help (%s)", who, arg, name, how))
	}
	return usage(fmt.Errorf("%s%w; see %s --help", who, err, name))
}

// notACommand is the action of acolyte, and of a command with subcommands,
// when no subcommand was named: help, or an error naming the nearest real
// command.
func notACommand(c *cli.Context) error {
	if !c.Args().Present() {
		if !isRoot(c) {
			return cli.ShowSubcommandHelp(c)
		}
		return cli.ShowAppHelp(c)
	}
	arg := c.Args().First()
	// who starts the message after Run's "acolyte: "; where is how to get help.
	who, where, cmds := "", "acolyte", c.App.Commands
	if !isRoot(c) {
		who, where, cmds = c.Command.Name+": ", c.Command.HelpName, c.Command.Subcommands
	}
	if arg == "help" && isRoot(c) {
		topic := c.Args().Get(1)
		if topic == "" {
			return cli.ShowAppHelp(c)
		}
		if c.App.Command(topic) != nil {
			return cli.ShowCommandHelp(c, topic)
		}
		arg = topic // acolyte help serch: the same answer as acolyte serch
	}
	if unshowable(arg) {
		return usage(fmt.Errorf("%san argument of %d bytes is not a command (not shown, it may be a secret); see %s --help", who, len(arg), where))
	}
	if near := nearest(arg, cmds); near != "" {
		return usage(fmt.Errorf("%sunknown command %q; did you mean %q? See %s --help", who, arg, near, where))
	}
	return usage(fmt.Errorf("%sunknown command %q; see %s --help", who, arg, where))
}

// isRoot says whether c is acolyte itself rather than one of its commands.
func isRoot(c *cli.Context) bool {
	return c.Command == nil || c.Command.Name == "" || c.Command.Name == c.App.Name
}

// nearest is the visible command whose name is closest to typed, if any is
// close enough to be what was meant.
func nearest(typed string, cmds []*cli.Command) string {
	best, bestDist := "", 0
	for _, c := range cmds {
		if c.Hidden {
			continue
		}
		for _, name := range c.Names() {
			d := editDistance(typed, name)
			if len(typed) >= 3 && strings.HasPrefix(name, typed) {
				d = 1
			}
			if best == "" || d < bestDist {
				best, bestDist = name, d
			}
		}
	}
	if best == "" || bestDist > max(1, len(typed)/3) {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, by bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// hiddenFlags hides flags from a command's help: the global flags are
// listed once, by acolyte --help, and named by commandHelp.
func hiddenFlags(flags []cli.Flag) []cli.Flag {
	for _, f := range flags {
		switch f := f.(type) {
		case *cli.StringFlag:
			f.Hidden = true
		case *cli.BoolFlag:
			f.Hidden = true
		}
	}
	return flags
}

// commandHelp is a command's help: urfave/cli's, and the line naming the
// global flags it also takes (globalHelpLine).
func commandHelp(c *cli.Command, globalLine string) string {
	tmpl := cli.CommandHelpTemplate
	if len(c.Subcommands) > 0 {
		tmpl = cli.SubcommandHelpTemplate
	}
	return tmpl + globalLine
}

// globalHelpLine names the global flags for the end of each command's help.
// It is built once per app, not once per command: every process builds
// every command's help template, and asking each flag its names cost
// start-up about a third of a millisecond when repeated for each command.
func globalHelpLine() string {
	var names []string
	for _, f := range globalFlags() {
		names = append(names, "--"+f.Names()[0])
	}
	return "\nGLOBAL OPTIONS:\n   " + strings.Join(names, ", ") + " (see acolyte --help)\n"
}

// ownDefault splits a usage text that ends by stating its own default,
// "... (default: all)" or "... (default all)", into the text before it and
// the default. It is plain string work, not a regular expression, because
// every process runs it over every flag of every command at start-up.
func ownDefault(usage string) (rest, def string, ok bool) {
	body, found := strings.CutSuffix(usage, ")")
	if !found {
		return "", "", false
	}
	open := strings.LastIndexAny(body, "()")
	if open < 0 || body[open] != '(' {
		return "", "", false
	}
	def, found = strings.CutPrefix(body[open+1:], "default: ")
	if !found {
		if def, found = strings.CutPrefix(body[open+1:], "default "); !found {
			return "", "", false
		}
	}
	return strings.TrimRight(body[:open], " \t\n\f\r"), def, true
}

// hideDoubleDefaults keeps a number or duration flag whose usage states
// its default from printing a second one: urfave/cli adds "(default: 0)"
// for a zero value, after the usage's own "(default: all)". The usage's
// default becomes the flag's default text.
func hideDoubleDefaults(flags []cli.Flag) {
	move := func(usage, defaultText *string) {
		if rest, def, ok := ownDefault(*usage); ok && *defaultText == "" {
			*defaultText = def
			*usage = rest
		}
	}
	for _, f := range flags {
		switch f := f.(type) {
		case *cli.IntFlag:
			move(&f.Usage, &f.DefaultText)
		case *cli.DurationFlag:
			move(&f.Usage, &f.DefaultText)
		case *cli.Float64Flag:
			move(&f.Usage, &f.DefaultText)
		case *cli.BoolFlag:
			// A switch is off unless given; "(default: false)" says nothing.
			if !f.DisableDefaultText {
				f.DisableDefaultText = true
			}
		}
	}
}

// plural is n and the words that go with it: "1 memory cites", "2
// memories cite".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
