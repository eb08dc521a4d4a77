package cmd

import (
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/acolyte-dev/acolyte/gitsync"
	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/gitsync/hooks"
)

// initReport is what init --json prints (cmd/JSON.md, "init").
type initReport struct {
	Sync         gitsync.Synced      `json:"sync"`
	Hooks        []hooks.State       `json:"hooks"`
	MergeDriver  bool                `json:"merge_driver"`
	Manager      string              `json:"manager,omitempty"`
	Integrations []hooks.Integration `json:"integrations,omitempty"`
	Commit       []string            `json:"commit"`
	Changed      bool                `json:"changed"`
}

func initCommand() *cli.Command {
	return &cli.Command{
		Name:  "init",
		Usage: "adopt acolyte in this repository: sync, install the hooks, write .acolyte/, say what to commit",
		Description: "Runs acolyte sync, then acolyte hooks install (with a hook manager, it prints the lines to\n" +
			"add, or adds them with --write), writes .acolyte/.gitattributes and .gitignore, and lists\n" +
			"the files to commit. Running it again changes nothing.",
		Flags: []cli.Flag{jsonFlag, &cli.BoolFlag{Name: "write", Usage: "add acolyte's lines to the hook manager's files instead of printing them"}},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usage(fmt.Errorf("init takes no arguments, got %q; run it inside the repository or pass --repo DIR", c.Args().First()))
			}
			w, err := needRepo(c)
			if err != nil {
				return err
			}
			defer w.Close()
			before, driverBefore, err := hooks.Status(c.Context, w.Repo)
			if err != nil {
				return fail(err)
			}
			var rep initReport
			if rep.Sync, err = w.Workspace.Sync(c.Context); err != nil {
				return fail(err)
			}
			printRefusals(c, rep.Sync.Warnings, rep.Sync.Refused)
			installed, err := hooks.Install(c.Context, w.Repo, hookExecutable(), c.Bool("write"))
			if err != nil {
				return fail(err)
			}
			rep.Manager, rep.Integrations = installed.Manager, installed.Integrations
			if rep.Hooks, rep.MergeDriver, err = hooks.Status(c.Context, w.Repo); err != nil {
				return fail(err)
			}
			if rep.Commit, err = filesToCommit(c, w); err != nil {
				return fail(err)
			}
			rep.Changed = len(rep.Sync.Changes) > 0 || driverBefore != rep.MergeDriver || !slices.Equal(before, rep.Hooks)
			for _, it := range installed.Integrations {
				rep.Changed = rep.Changed || it.Written
			}
			if c.Bool("json") {
				if err := printJSON(c, rep); err != nil {
					return err
				}
			} else {
				printInit(c, rep, installed)
			}
			return refusedError(rep.Sync.Refused)
		},
	}
}

// filesToCommit are the files the team shares that are not committed yet:
// .acolyte/ and the hook manager's files that run acolyte, whichever run of
// init (or hooks install --write) changed them.
func filesToCommit(c *cli.Context, w *workspace) ([]string, error) {
	managed, err := hooks.ManagerFiles(c.Context, w.Repo)
	if err != nil {
		return nil, err
	}
	paths := append([]string{format.Dir}, managed...)
	files, err := w.Repo.Uncommitted(c.Context, paths...)
	if files == nil {
		files = []string{}
	}
	return files, err
}

func printInit(c *cli.Context, rep initReport, installed hooks.Installed) {
	out := c.App.Writer
	im := rep.Sync.Import
	fmt.Fprintf(out, "sync: %d rule/seed changes in %s/%s; index: %d added, %d updated, %d removed, %d unchanged\n",
		len(rep.Sync.Changes), format.Dir, format.MemoriesFile, im.Added, im.Updated, im.Removed, im.Unchanged)
	printInstalled(out, installed)
	if note := installNotes(installed); note != "" {
		fmt.Fprintln(out, note)
	}
	var broken []string
	for _, h := range rep.Hooks {
		if !h.Installed {
			broken = append(broken, h.Name)
		}
	}
	if len(broken) > 0 {
		fmt.Fprintf(out, "not running yet: %s (acolyte hooks status says why)\n", strings.Join(broken, ", "))
	}
	switch {
	case len(rep.Commit) > 0:
		fmt.Fprintf(out, "Commit these so the team shares them:\n  git add %s && git commit -m 'Adopt acolyte'\n", strings.Join(rep.Commit, " "))
	case !rep.Changed:
		fmt.Fprintln(out, "acolyte was already set up here; nothing changed")
	default:
		fmt.Fprintln(out, "nothing to commit")
	}
}
