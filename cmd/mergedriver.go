package cmd

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/acolyte-dev/acolyte/gitsync"
	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/internal/termtext"
)

func mergeDriverCommand() *cli.Command {
	return &cli.Command{
		Name:      "merge-driver",
		Usage:     "merge three versions of .acolyte/memories.jsonl (git runs this)",
		ArgsUsage: "BASE OURS THEIRS",
		Description: "Git runs it as merge." + gitsync.MergeDriverName + ".driver with %O %A %B. It merges by memory id,\n" +
			"writes the result to OURS and reports every decision on stderr; on error it exits 1\n" +
			"and leaves OURS alone. `acolyte hooks install` configures git to run it by the absolute\n" +
			"path of the installing acolyte, then from PATH, and otherwise (or when it fails) to\n" +
			"merge the file with `git merge-file --union`, so a merge never conflicts.",
		Hidden: true,
		Action: func(c *cli.Context) error {
			if c.NArg() != 3 {
				return usage(fmt.Errorf("merge-driver needs BASE OURS THEIRS, got %d arguments", c.NArg()))
			}
			args := c.Args()
			report, err := format.MergeFiles(args.Get(0), args.Get(1), args.Get(2))
			for _, line := range report {
				fmt.Fprintf(c.App.ErrWriter, "acolyte merge: %s\n", termtext.EscapeText(line))
			}
			if err != nil {
				return fail(err)
			}
			return nil
		},
	}
}
