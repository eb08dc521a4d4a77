package cmd

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/acolyte-dev/acolyte/gitsync"
	"github.com/acolyte-dev/acolyte/memory"
)

func seedCommand() *cli.Command {
	return &cli.Command{
		Name:      "seed",
		Usage:     "import curated facts from a JSON seeds file into the project memories",
		ArgsUsage: "FILE",
		Description: "FILE is a JSON array of strings or {\"content\": …, \"topic\": …} objects. The seeds are\n" +
			"added to .acolyte/memories.jsonl once; facts already there are skipped. Seeds that should\n" +
			"follow a file's edits belong in .acolyte/seeds.json, which `acolyte sync` re-reads.",
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usage(fmt.Errorf("seed needs one FILE, got %d arguments", c.NArg()))
			}
			file := c.Args().First()
			data, err := os.ReadFile(file)
			if err != nil {
				return usage(err)
			}
			seeds, err := gitsync.ParseSeeds(filepath.Base(file), data)
			if err != nil {
				return fail(err)
			}
			for _, s := range seeds {
				if what, found := gitsync.DetectSecret(s.Content); found {
					return fail(fmt.Errorf("%s: seed %q contains %s; project memories are committed, so remove it and rotate the credential", file, s.Content, what))
				}
			}
			repo, err := gitsync.Discover(global(c, flagRepo))
			if err != nil {
				return usage(err)
			}
			root := repo.Root
			added := 0
			err = gitsync.Update(c.Context, root, func(mems []memory.Memory) ([]memory.Memory, error) {
				have := make(map[string]bool, len(mems))
				for _, m := range mems {
					have[m.ID] = true
				}
				for _, s := range seeds {
					if !have[s.ID] {
						mems = append(mems, s)
						have[s.ID] = true
						added++
					}
				}
				return mems, nil
			})
			if err != nil {
				return usage(err)
			}
			fmt.Fprintf(c.App.Writer, "added %d of %d seeds to %s\n", added, len(seeds), gitsync.Dir+"/"+gitsync.MemoriesFile)
			return nil
		},
	}
}
