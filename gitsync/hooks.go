package gitsync

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/gitsync/internal/acolytedir"
	"github.com/acolyte-dev/acolyte/gitsync/internal/precommit"
	"github.com/acolyte-dev/acolyte/gitsync/internal/project"
)

// Hooks are the git hooks acolyte installs, and what each does.
var Hooks = []string{"post-checkout", "post-merge", "post-rewrite", "pre-commit"}

// ExitRefuse is the exit status of `acolyte hook pre-commit` when the commit
// would stage a secret or a memory derived from an invalid rule. It is the
// one status the shims pass on to git, so the hook stays fail-open for
// crashes, I/O errors and a missing binary, and blocks only on purpose.
const ExitRefuse = 3

// RunHook does the work of one git hook. args are the hook's own arguments.
func (w *Checkout) RunHook(ctx context.Context, name string, args []string) (HookResult, error) {
	if name != "post-rewrite" && w.inRebase() {
		return HookResult{Skipped: "rebase in progress; post-rewrite re-indexes when it finishes"}, nil
	}
	switch name {
	case "post-checkout":
		// The third argument is 1 for a branch checkout, 0 for checking out files.
		if len(args) >= 3 && args[2] != "1" {
			return HookResult{Skipped: "file checkout"}, nil
		}
		return w.importHook(ctx, false)
	case "post-merge", "post-rewrite":
		return w.importHook(ctx, true)
	case "pre-commit":
		return precommit.Run(ctx, w.ws)
	}
	return HookResult{}, fmt.Errorf("unknown hook %q: acolyte handles %s", name, strings.Join(Hooks, ", "))
}

// importHook brings the index up to date after git changed the worktree,
// and copies the import state it leaves, so that the next such hook with
// nothing to import is answered without the index (QuickHook). After a
// merge or a rebase (tidy) it also syncs a project the merge left in a
// form only sync tidies (mergeLeftUntidy), so that check passes on what
// git leaves, with no sync by hand.
func (w *Checkout) importHook(ctx context.Context, tidy bool) (HookResult, error) {
	imp, err := w.Refresh(ctx)
	if err == nil && tidy && mergeLeftUntidy(w.Repo.Root) {
		var synced Synced
		synced, err = w.Sync(ctx)
		// A shard the merge left damaged is repaired by that sync:
		// said, as `acolyte sync` says it, where the hook's user sees it.
		for _, r := range synced.Repaired {
			w.ws.Tell([]string{r.String()})
		}
		if err == nil {
			imp = synced.Import
		}
	}
	if err == nil {
		if state, err := w.ws.Store.GetState(ctx, w.ws.StateKey()); err == nil && state != "" {
			w.copyImportState(state)
		}
	}
	return HookResult{Import: imp}, err
}

// mergeLeftUntidy reports whether a merge left the project in a form that
// check fails and sync tidies, read cheaply: a split project whose inbox
// holds memories (the side that had not split added them to the one file,
// which acolyte's driver merges as the inbox), or a forgotten.jsonl out of
// canonical form (tombstones merge by union). Unreadable files are left
// to check and sync to name.
func mergeLeftUntidy(root string) bool {
	if l, err := project.LayoutOf(root); err == nil && l.MergeLeftUntidy() {
		return true
	}
	ts, err := acolytedir.ReadTombstones(root)
	return err == nil && len(ts.Warnings) == 0 && !bytes.Equal(ts.Data, format.EncodeForgotten(ts.List))
}

// HookResult says what a hook run did, for its one line of output
// (precommit.Result, which the pre-commit hook fills).
type HookResult = precommit.Result

// ErrRefused means the pre-commit hook blocks the commit: it would stage a
// secret, or AGENTS.md or seeds.json hold a rule or seed that cannot be
// written, so the commit would fail acolyte check.
var ErrRefused = precommit.ErrRefused
