package cmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/acolyte-dev/acolyte/gitsync"
	"github.com/acolyte-dev/acolyte/gitsync/derive"
	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/gitsync/hooks"
	"github.com/acolyte-dev/acolyte/internal/termtext"
)

func syncCommand() *cli.Command {
	return &cli.Command{
		Name:  "sync",
		Usage: "re-derive rules and seeds into .acolyte/ and bring the index up to date",
		Description: "Splits AGENTS.md (and CLAUDE.md with its @imports, GEMINI.md, nested AGENTS.md, .claude/rules,\n" +
			".cursor/rules, .github/copilot-instructions.md, .github/instructions) into rules and reads\n" +
			".acolyte/seeds.json, writes them to .acolyte/memories.jsonl (or, past 4,096 memories, to\n" +
			"the shards in .acolyte/memories/), then indexes the files.\n" +
			"Running it twice changes nothing the second time.",
		Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			w, err := needRepo(c)
			if err != nil {
				return err
			}
			defer w.Close()
			res, err := w.Workspace.Sync(c.Context)
			if errors.Is(err, gitsync.ErrShardUnrecoverable) {
				// What was repaired, and what could not be, before the
				// error that names the fix.
				if c.Bool("json") {
					if res.Changes == nil {
						res.Changes = []gitsync.Change{} // an array, as JSON.md says
					}
					if err := printJSON(c, res); err != nil {
						return err
					}
				} else {
					printRepairs(c.App.Writer, res.Repaired)
				}
				return fail(err)
			}
			if err != nil {
				return fail(err)
			}
			printRefusals(c, res.Warnings, res.Refused)
			if c.Bool("json") {
				if err := printJSON(c, res); err != nil {
					return err
				}
			} else {
				if res.Resolved != "" {
					fmt.Fprintln(c.App.Writer, res.Resolved)
				}
				printRepairs(c.App.Writer, res.Repaired)
				if len(res.Changes) > 0 {
					fmt.Fprint(c.App.Writer, termtext.EscapeText(gitsync.FormatDiff(gitsync.MemoriesLocation(w.Repo.Root), res.Changes)))
				}
				im := res.Import
				fmt.Fprintf(c.App.Writer, "%d rule/seed changes; index: %d added, %d updated, %d removed, %d unchanged\n",
					len(res.Changes), im.Added, im.Updated, im.Removed, im.Unchanged)
			}
			return refusedError(res.Refused)
		},
	}
}

// printRepairs says, shard by shard, what sync recovered of a damaged
// shard and what it could not. The lines it names as lost are the file's
// own text, escaped.
func printRepairs(out io.Writer, repaired []gitsync.ShardRepair) {
	for _, r := range repaired {
		fmt.Fprintln(out, termtext.EscapeText(r.String()))
	}
}

// printRefusals tells the user, on stderr, which files were skipped and
// which rules or seeds were refused. They name places, never text.
func printRefusals(c *cli.Context, warnings, refused []derive.Refusal) {
	for _, f := range warnings {
		warn(c, warnOther, fmt.Sprint(f))
	}
	for _, f := range refused {
		fmt.Fprintf(c.App.ErrWriter, "refused: %s\n", termtext.EscapeText(fmt.Sprint(f)))
	}
}

// refusedError makes refusals the command's failure, after the rest was
// written.
func refusedError(refused []derive.Refusal) error {
	if len(refused) == 0 {
		return nil
	}
	return fail(fmt.Errorf("%s not written (see above); fix them where they are, then run acolyte sync again", plural(len(refused), "rule or seed was", "rules or seeds were")))
}

func hooksCommand() *cli.Command {
	repoAction := func(fn func(c *cli.Context, w *workspace) error) cli.ActionFunc {
		return func(c *cli.Context) error {
			w, err := needRepo(c)
			if err != nil {
				return err
			}
			defer w.Close()
			return fn(c, w)
		}
	}
	return &cli.Command{
		Name:  "hooks",
		Usage: "install, remove or inspect the git hooks that keep memory in step with checkouts",
		Subcommands: []*cli.Command{
			{
				Name: "install",
				Usage: "install the hooks (existing hooks are kept and run first) and the merge driver; " +
					"with a hook manager (husky, lefthook, pre-commit, simple-git-hooks, a shared hooks folder), " +
					"print the lines to add to its files",
				Flags: []cli.Flag{jsonFlag, &cli.BoolFlag{Name: "write", Usage: "add the lines to the hook manager's files instead of printing them"}},
				Action: repoAction(func(c *cli.Context, w *workspace) error {
					res, err := hooks.Install(c.Context, w.Repo, hookExecutable(), c.Bool("write"))
					if err != nil {
						return fail(err)
					}
					if !c.Bool("json") {
						printInstalled(c.App.Writer, res)
						if note := installNotes(res); note != "" {
							fmt.Fprintln(c.App.Writer, note)
						}
					} else if err := printHooks(c, w); err != nil {
						return err
					}
					for _, it := range res.Integrations {
						if c.Bool("write") && !it.Written {
							return fail(fmt.Errorf("%s: %s; make that edit by hand, then run acolyte hooks status", it.File, it.Manual))
						}
					}
					return nil
				}),
			},
			{
				Name:   "uninstall",
				Usage:  "remove the hooks and restore the ones they chained",
				Flags:  []cli.Flag{jsonFlag},
				Action: repoAction(uninstallHooks),
			},
			{
				Name:  "status",
				Usage: "show which hooks are installed",
				Flags: []cli.Flag{jsonFlag},
				Action: repoAction(func(c *cli.Context, w *workspace) error {
					states, driver, err := hooks.Status(c.Context, w.Repo)
					if err != nil {
						return fail(err)
					}
					if c.Bool("json") {
						if err := printJSON(c, map[string]any{"hooks": states, "merge_driver": driver}); err != nil {
							return err
						}
						if !allInstalled(states, driver) {
							return fail(notInstalled(states, driver))
						}
						return nil
					}
					for _, h := range states {
						fmt.Fprintf(c.App.Writer, "%-14s %s\n", h.Name, hookLine(h))
					}
					fmt.Fprintf(c.App.Writer, "%-14s %v\n", "merge driver", driver)
					if !allInstalled(states, driver) {
						return fail(notInstalled(states, driver))
					}
					return nil
				}),
			},
		},
	}
}

func hookCommand() *cli.Command {
	return &cli.Command{
		Name:      "hook",
		Usage:     "run one git hook's work (called by the installed hook shims)",
		ArgsUsage: "NAME [ARGS...]",
		Hidden:    true,
		Flags: []cli.Flag{&cli.BoolFlag{Name: strings.TrimPrefix(hooks.OnlyCommitStage, "--"),
			Usage: "for the pre-commit framework's entry that names no stage: do nothing in another hook type; ARGS are the files pre-commit passes"}},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return usage(fmt.Errorf("hook needs a name: %s", strings.Join(gitsync.Hooks, ", ")))
			}
			if otherPreCommitStage(c) {
				return nil
			}
			if imp, ok := quickHook(c); ok {
				for _, msg := range imp.Warnings {
					warn(c, warnOther, msg)
				}
				return nil
			}
			w, err := needRepo(c)
			if err != nil {
				return err
			}
			defer w.Close()
			// The hook leaves a copy of the import state for the next one.
			w.Workspace.IndexID = gitsync.IndexIdentity(w.Store.Path())
			res, err := w.Workspace.RunHook(c.Context, c.Args().First(), c.Args().Tail())
			printRefusals(c, res.Warnings, res.Refused)
			if errors.Is(err, gitsync.ErrRefused) {
				// The one failure the shims pass on to git: it blocks the commit.
				return refuseCommit(fmt.Errorf("%w; fix the places named above, git add them, and commit again", err))
			}
			if err != nil {
				return fail(err)
			}
			if res.Staged {
				fmt.Fprintf(c.App.ErrWriter, "acolyte: %d rule/seed changes staged in %s\n", len(res.Changes), gitsync.MemoriesLocation(w.Repo.Root))
			}
			return nil
		},
	}
}

// otherPreCommitStage says whether the pre-commit framework ran acolyte's
// entry that names no stage (hooks.OnlyCommitStage) for a hook type other
// than the commit stage, where the hook does nothing and says nothing.
func otherPreCommitStage(c *cli.Context) bool {
	if !c.Bool(strings.TrimPrefix(hooks.OnlyCommitStage, "--")) || c.Args().First() != "pre-commit" {
		return false
	}
	return hooks.OtherPreCommitStage(os.Getenv, c.Args().Tail()) != ""
}

// quickHook answers a hook that has nothing to import without opening the
// database (gitsync.QuickHook); ok is false when the hook must run.
func quickHook(c *cli.Context) (gitsync.Imported, bool) {
	db, err := databasePath(c)
	if err != nil {
		return gitsync.Imported{}, false
	}
	dir, err := filepath.Abs(global(c, flagRepo))
	if err != nil {
		return gitsync.Imported{}, false
	}
	repo, err := gitsync.Discover(dir)
	if err != nil {
		return gitsync.Imported{}, false
	}
	return gitsync.QuickHook(repo, gitsync.IndexIdentity(db), c.Args().First(), c.Args().Tail())
}

func staleCommand() *cli.Command {
	return &cli.Command{
		Name:  "stale",
		Usage: "list project memories whose cited files changed or were deleted since they were written",
		Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			repo, err := gitsync.Discover(global(c, flagRepo))
			if err != nil {
				return usage(err)
			}
			stale, err := repo.Stale(c.Context)
			if err != nil {
				return fail(err)
			}
			if c.Bool("json") {
				if stale == nil {
					stale = []gitsync.StaleMemory{}
				}
				if err := printJSON(c, stale); err != nil {
					return err
				}
			} else {
				for _, s := range stale {
					fmt.Fprintf(c.App.Writer, "%s\t%s\n", s.Memory.ID, termtext.OneLine(s.Memory.Content, 80))
					for _, p := range s.Changed {
						fmt.Fprintf(c.App.Writer, "\tchanged: %s\n", termtext.Escape(p))
					}
					for _, p := range s.Deleted {
						fmt.Fprintf(c.App.Writer, "\tdeleted: %s\n", termtext.Escape(p))
					}
				}
			}
			if len(stale) > 0 {
				return fail(fmt.Errorf("%s changed files; verify them, then acolyte forget the wrong ones", plural(len(stale), "memory cites", "memories cite")))
			}
			return nil
		},
	}
}

// hookExecutable is the acolyte binary the shims and the merge driver run.
func hookExecutable() string {
	if exe := gitsync.InstalledExecutable(); exe != "" {
		return exe
	}
	return "acolyte" // the shims and the merge driver fall back to PATH
}

// printInstalled says what hooks install did and, with a hook manager,
// what is left for the user to add or run.
func printInstalled(out io.Writer, res hooks.Installed) {
	if !res.Managed {
		fmt.Fprintf(out, "installed %s in %s, and the merge driver for %s/%s\n",
			strings.Join(gitsync.Hooks, ", "), res.Dir, format.Dir, format.MemoriesFile)
		return
	}
	fmt.Fprintf(out, "registered the merge driver for %s/%s\n", format.Dir, format.MemoriesFile)
	if res.Manager == hooks.ManagerHooksFolder {
		fmt.Fprintf(out, "core.hooksPath is %s, a folder this repository shares, so acolyte changed nothing in it but what it lists below.\n", res.Dir)
	} else if len(res.Shims) == 0 {
		fmt.Fprintf(out, "%s runs this repository's hooks, so acolyte wrote no shim; it runs from %s's files.\n", res.Manager, res.Manager)
	} else {
		fmt.Fprintf(out, "%s runs this repository's hooks but does not install %s here, so acolyte installed its own in %s; the rest run from %s's files.\n",
			res.Manager, strings.Join(res.Shims, ", "), res.Dir, res.Manager)
	}
	var todo, then []string
	byHand := false
	for _, it := range res.Integrations {
		switch {
		case it.Written && it.Upgrade:
			fmt.Fprintf(out, "updated acolyte's %s in %s: they now do nothing where acolyte is not installed\n", strings.Join(it.Hooks, ", "), it.File)
		case it.Written:
			fmt.Fprintf(out, "added acolyte's %s to %s\n", strings.Join(it.Hooks, ", "), it.File)
		case it.Upgrade:
			todo = append(todo, fmt.Sprintf("%s (%s; replaces the lines that run acolyte, so that a teammate without it sees nothing):\n%s", it.File, strings.Join(it.Hooks, ", "), indentBlock(it.Add)))
		default:
			todo = append(todo, fmt.Sprintf("%s (%s):\n%s", it.File, strings.Join(it.Hooks, ", "), indentBlock(it.Add)))
			byHand = byHand || it.Manual != ""
		}
		if it.Then != "" && !slices.Contains(then, it.Then) {
			then = append(then, it.Then)
		}
	}
	switch {
	case len(todo) > 0 && byHand:
		fmt.Fprintf(out, "Add these to the team's files by hand (see the README):\n%s", strings.Join(todo, ""))
	case len(todo) > 0:
		fmt.Fprintf(out, "Add these to the team's files, or rerun with --write to add them (see the README):\n%s", strings.Join(todo, ""))
	}
	if len(then) > 0 {
		fmt.Fprintf(out, "Then run: %s\n", strings.Join(then, "; "))
	}
	if len(res.Integrations) == 0 {
		fmt.Fprintf(out, "%s already runs acolyte's %s\n", res.Manager, strings.Join(gitsync.Hooks, ", "))
	}
}

// installNotes are the notes on the manager's edits (how acolyte spelled
// pre-commit's stages, when some pre-commit would object), one a line.
func installNotes(res hooks.Installed) string {
	var notes []string
	for _, it := range res.Integrations {
		if it.Note != "" {
			notes = append(notes, "Note: "+it.Note)
		}
	}
	return strings.Join(notes, "\n")
}

func indentBlock(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return "  " + strings.Join(lines, "\n  ") + "\n"
}

// hookLine is one hook's state for hooks status.
func hookLine(h hooks.State) string {
	via := ""
	if h.Manager != "" {
		via = " through " + h.Manager
	}
	switch {
	case h.Installed && h.Problem != "":
		return fmt.Sprintf("installed%s, but it %s; fix: %s", via, h.Problem, h.Fix)
	case h.Installed && h.Chained:
		return "installed (runs the earlier hook first)"
	case h.Installed:
		return "installed" + via
	case h.Problem == "not installed":
		return "not installed"
	}
	return fmt.Sprintf("not running: %s; fix: %s", h.Problem, h.Fix)
}

// uninstallHooks removes acolyte's shims and merge driver; lines it added
// to a hook manager's files stay, since those files are the team's.
func uninstallHooks(c *cli.Context, w *workspace) error {
	if err := hooks.Uninstall(c.Context, w.Repo); err != nil {
		return fail(err)
	}
	// The lines install --write added to the manager's files go too, so
	// the team's hooks are left as they were (issue 36).
	removed, err := hooks.RemoveManagerLines(c.Context, w.Repo)
	if err != nil {
		return fail(fmt.Errorf("remove acolyte's lines from the hook manager's files: %w", err))
	}
	if c.Bool("json") {
		states, driver, err := hooks.Status(c.Context, w.Repo)
		if err != nil {
			return fail(err)
		}
		out := map[string]any{"hooks": states, "merge_driver": driver}
		if len(removed) > 0 {
			out["removed"] = removed
		}
		return printJSON(c, out)
	}
	fmt.Fprintln(c.App.Writer, "removed acolyte's hooks and merge driver")
	var files []string
	for _, rm := range removed {
		switch {
		case rm.Deleted:
			fmt.Fprintf(c.App.Writer, "removed %s, which ran only acolyte's %s\n", rm.File, strings.Join(rm.Hooks, ", "))
		case rm.Removed:
			fmt.Fprintf(c.App.Writer, "removed acolyte's lines from %s\n", rm.File)
		}
		if rm.Manual != "" {
			fmt.Fprintf(c.App.Writer, "%s: %s\n", rm.File, rm.Manual)
		}
		files = append(files, rm.File)
	}
	if len(files) > 0 {
		fmt.Fprintf(c.App.Writer, "Then commit: git add -A %s && git commit\n", strings.Join(files, " "))
	}
	states, _, err := hooks.Status(c.Context, w.Repo)
	if err != nil {
		return fail(err)
	}
	var still []string
	for _, h := range states {
		if h.Installed && h.Manager != "" {
			still = append(still, h.Name)
		}
	}
	if len(still) > 0 {
		fmt.Fprintf(c.App.Writer, "%s still runs acolyte for %s: remove acolyte's lines from its files by hand\n", states[0].Manager, strings.Join(still, ", "))
	}
	return nil
}
