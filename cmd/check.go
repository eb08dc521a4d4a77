package cmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/acolyte-dev/acolyte/gitsync"
	"github.com/acolyte-dev/acolyte/internal/termtext"
)

func checkCommand() *cli.Command {
	return &cli.Command{
		Name:  "check",
		Usage: "verify .acolyte/memories.jsonl against AGENTS.md and seeds.json (no database needed)",
		Description: "Exits 0 when the committed memories file is valid, canonical, free of secrets and its\n" +
			"rules and seeds match the instruction files; 1 when it is not, showing what `acolyte sync`\n" +
			"would change; 2 when it cannot check. Made for hooks and CI.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print the report as JSON"},
			&cli.BoolFlag{Name: "stale", Usage: "also warn about memories whose cited files changed since they were written (see acolyte stale)"},
			&cli.BoolFlag{Name: "quiet", Usage: "print nothing when the file is fresh, for hooks"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usage(fmt.Errorf("check takes no arguments, got %q", c.Args().First()))
			}
			repo, err := gitsync.Discover(global(c, flagRepo))
			if err != nil {
				return usage(err)
			}
			root := repo.Root
			warnBrokenHooks(c, repo)
			report, err := gitsync.Check(root)
			if err != nil {
				return usage(err)
			}
			out := c.App.Writer
			if !c.Bool("json") {
				printRefusals(c, report.Warnings, nil)
			}
			switch {
			case c.Bool("json"):
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(report); err != nil {
					return usage(err)
				}
			case report.OK && c.Bool("quiet"):
			case report.OK:
				fmt.Fprintf(out, "%s is up to date\n", report.File)
			default:
				for _, p := range report.Problems {
					file := report.File
					if p.File != "" {
						file = p.File
					}
					if p.Line > 0 {
						fmt.Fprintf(out, "%s:%d: %s\n", file, p.Line, termtext.EscapeText(p.Message))
					} else {
						fmt.Fprintf(out, "%s: %s\n", file, termtext.EscapeText(p.Message))
					}
				}
				for _, f := range report.Refused {
					fmt.Fprintln(out, termtext.EscapeText(fmt.Sprint(f)))
				}
				fmt.Fprint(out, termtext.EscapeText(gitsync.FormatDiff(report.File, report.Changes)))
			}
			if c.Bool("stale") {
				stale, err := repo.Stale(c.Context)
				if err != nil {
					return usage(err)
				}
				// A warning, not a failure: the code moved on, the memory may still be right.
				for _, s := range stale {
					fmt.Fprintf(c.App.ErrWriter, "warning: %s cites %s, changed since it was written: %s\n",
						s.Memory.ID, termtext.Escape(strings.Join(append(s.Changed, s.Deleted...), ", ")), termtext.OneLine(s.Memory.Content, 60))
				}
			}
			if !report.OK {
				return fail(errors.New(report.Fix))
			}
			return nil
		},
	}
}
