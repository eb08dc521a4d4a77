// Package cmd wires acolyte's command line to the domain packages. It parses
// flags, opens what a command needs, calls one domain function and prints.
package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/acolyte-dev/acolyte/internal/termtext"
)

// Run runs the acolyte command line and returns the process exit code.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return run(ctx, args, stdin, stdout, stderr, false)
}

// Main is Run for the acolyte process itself: it also sets the garbage
// collector for the command it runs (see collectorFor), which a test that
// runs commands in its own process must not have set for it.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return run(ctx, args, stdin, stdout, stderr, true)
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, setCollector bool) int {
	if len(args) > 1 && args[len(args)-1] == completionFlag && completeValues(ctx, args, stdout) {
		return ExitOK
	}
	app := newApp(stdin, stdout, stderr)
	args = interspersed(app, args)
	if setCollector {
		// interspersed has moved any global flag after the command name.
		command := ""
		if len(args) > 1 {
			command = args[1]
		}
		collectorFor(command)
	}
	err := app.RunContext(ctx, args)
	if err == nil {
		return ExitOK
	}
	msg := termtext.EscapeText(withholdSecrets(redact(err.Error(), args)))
	if wantsJSON(args) {
		printJSONError(stderr, err, msg)
	} else {
		fmt.Fprintf(stderr, "acolyte: %s\n", msg)
	}
	return exitCode(err)
}

// wantsJSON says whether the line asks for --json: then an error is
// printed as JSON too (cmd/JSON.md, "Errors"). interspersed has put every
// flag before the first --.
func wantsJSON(args []string) bool {
	for _, a := range args[1:] {
		switch a {
		case "--":
			return false
		case "--json", "-json", "--json=true", "-json=true":
			return true
		}
	}
	return false
}

// jsonError is what a command run with --json prints on stderr when it
// fails (cmd/JSON.md, "Errors").
type jsonError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Exit    int    `json:"exit"`
	} `json:"error"`
}

func printJSONError(w io.Writer, err error, msg string) {
	var out jsonError
	out.Error.Code, out.Error.Message, out.Error.Exit = errorCode(err), msg, exitCode(err)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(out) // nothing left to report a failed write of the report to
}

func newApp(stdin io.Reader, stdout, stderr io.Writer) *cli.App {
	return &cli.App{
		Name:  "acolyte",
		Usage: "long-term memory that coding agents search instead of having it injected",
		Description: "Every memory is one small fact, embedded when it is written and found by meaning.\n" +
			"Project memories live in .acolyte/ and travel with the repository.",
		Version:              version(),
		Reader:               stdin,
		Writer:               stdout,
		ErrWriter:            stderr,
		HideHelpCommand:      true,
		EnableBashCompletion: true,
		Flags:                globalFlags(),
		Commands:             commands(),
		// Errors are printed once, by Run, with the exit code exitCode gives them.
		ExitErrHandler: func(*cli.Context, error) {},
		After:          startFill,
		OnUsageError:   onUsageError,
		// With no command, or one that does not exist.
		Action: notACommand,
	}
}

// commands is the whole CLI surface, in the order help shows it. The global
// flags are accepted after the command name too (acolyte search --session
// S), because that is where people type them.
func commands() []*cli.Command {
	cmds := []*cli.Command{
		// Memory.
		rememberCommand(),
		searchCommand(),
		forgetCommand(),
		editCommand(),
		listCommand(),
		statusCommand(),
		reindexCommand(),
		teamCommand(),
		// The repository.
		initCommand(),
		syncCommand(),
		checkCommand(),
		staleCommand(),
		seedCommand(),
		hooksCommand(),
		hookCommand(),
		mergeDriverCommand(),
		// The agent.
		runCommand(),
		chatCommand(),
		promptCommand(),
		// Other agents.
		mcpCommand(),
		uiCommand(),
		// Measurement.
		benchCommand(),
		// The shell.
		completionCommand(),
	}
	globalLine := globalHelpLine()
	var wire func(cs []*cli.Command)
	wire = func(cs []*cli.Command) {
		for _, c := range cs {
			hideDoubleDefaults(c.Flags)
			// Accepted after the command name, but listed once, in
			// acolyte --help, and named at the end of the command's help.
			c.Flags = append(c.Flags, hiddenFlags(globalFlags())...)
			c.CustomHelpTemplate = commandHelp(c, globalLine)
			// urfave/cli would print its own usage text, echoing the bad
			// argument, which may be a secret pasted in the wrong place.
			c.OnUsageError = onUsageError
			if len(c.Subcommands) > 0 {
				if c.Action == nil {
					c.Action = notACommand
				}
				wire(c.Subcommands)
				continue
			}
			if c.Name != mergeDriverName {
				c.Before = chain(checkSettings, c.Before)
			}
		}
	}
	wire(cmds)
	return cmds
}

// chain runs first, then next (when there is one).
func chain(first, next cli.BeforeFunc) cli.BeforeFunc {
	return func(c *cli.Context) error {
		if err := first(c); err != nil {
			return err
		}
		if next != nil {
			return next(c)
		}
		return nil
	}
}
