package cmd

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/acolyte-dev/acolyte/gitsync"
)

func seedCommand() *cli.Command {
	return &cli.Command{
		Name:      "seed",
		Usage:     "import curated facts from a JSON seeds file into the project memories",
		ArgsUsage: "FILE",
		Description: "FILE is a JSON array of strings or {\"content\": …, \"topic\": …} objects. The seeds are\n" +
			"added to .acolyte/memories.jsonl once; facts already there are skipped, and `acolyte sync`\n" +
			"keeps them. A seed that holds a secret or is invalid is refused alone, named by its index\n" +
			"and line. Seeds that should follow a file's edits belong in .acolyte/seeds.json, which\n" +
			"`acolyte sync` re-reads.",
		Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usage(fmt.Errorf("seed needs one FILE, got %d arguments", c.NArg()))
			}
			repo, err := gitsync.Discover(global(c, flagRepo))
			if err != nil {
				return usage(err)
			}
			res, err := gitsync.ImportSeeds(c.Context, repo.Root, c.Args().First())
			if err != nil {
				return usage(err)
			}
			printRefusals(c, nil, res.Refused)
			if c.Bool("json") {
				if err := printJSON(c, res); err != nil {
					return err
				}
			} else {
				fmt.Fprintf(c.App.Writer, "added %d of %d seeds to %s\n", res.Added, res.Total, gitsync.MemoriesLocation(repo.Root))
			}
			if len(res.Refused) > 0 {
				return fail(fmt.Errorf("%s not imported (see above); fix them in the file and run acolyte seed again", plural(len(res.Refused), "seed was", "seeds were")))
			}
			return nil
		},
	}
}
