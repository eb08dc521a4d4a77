// Package cmd wires acolyte's command line to the domain packages. It parses
// flags, opens what a command needs, calls one domain function and prints.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"

	"github.com/urfave/cli/v2"
)

// Exit codes shared by every command.
const (
	ExitOK    = 0
	ExitFail  = 1 // the command ran and the answer is "no": not found, stale, invalid input
	ExitUsage = 2 // the command could not run: bad flags, unreadable files, I/O errors
)

// exitError carries an exit code through urfave/cli back to Run.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func fail(err error) error  { return &exitError{ExitFail, err} }
func usage(err error) error { return &exitError{ExitUsage, err} }

// Run runs the acolyte command line and returns the process exit code.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	app := newApp(stdin, stdout, stderr)
	err := app.RunContext(ctx, args)
	if err == nil {
		return ExitOK
	}
	fmt.Fprintf(stderr, "acolyte: %v\n", err)
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return ExitUsage
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
		// Errors are printed once, by Run, with the exit code they carry.
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return usage(fmt.Errorf("%w (see --help)", err))
		},
	}
}

// version is the module version go install recorded, or "dev" for a build
// from a checkout.
func version() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "dev"
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
		// The repository.
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
		// Measurement.
		benchCommand(),
	}
	var withGlobals func(cs []*cli.Command)
	withGlobals = func(cs []*cli.Command) {
		for _, c := range cs {
			c.Flags = append(c.Flags, globalFlags()...)
			withGlobals(c.Subcommands)
		}
	}
	withGlobals(cmds)
	return cmds
}
