package gitsync

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/acolyte-dev/acolyte/gitsync/derive"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/gitsync/internal/acolytedir"
	"github.com/acolyte-dev/acolyte/gitsync/internal/git"
	"github.com/acolyte-dev/acolyte/gitsync/internal/project"
	"github.com/acolyte-dev/acolyte/memory"
)

// Hooks are the git hooks acolyte installs, and what each does.
var Hooks = []string{"post-checkout", "post-merge", "post-rewrite", "pre-commit"}

// ExitRefuse is the exit status of `acolyte hook pre-commit` when the commit
// would stage a secret or a memory derived from an invalid rule. It is the
// one status the shims pass on to git, so the hook stays fail-open for
// crashes, I/O errors and a missing binary, and blocks only on purpose.
const ExitRefuse = 3

// HookResult says what a hook run did, for its one line of output.
type HookResult struct {
	Skipped string   `json:"skipped,omitempty"`
	Import  Imported `json:"import"`
	Changes []Change `json:"changes,omitempty"`
	Staged  bool     `json:"staged,omitempty"`
	// Warnings are files that were not read (symlinks out of the repository).
	Warnings []derive.Refusal `json:"warnings,omitempty"`
	// Refused is why the pre-commit hook blocks the commit (ErrRefused).
	Refused []derive.Refusal `json:"refused,omitempty"`
}

// stageHelpers stages .acolyte/.gitattributes and .gitignore beside the
// memories file when the index has not got them: without the first, a
// clone without acolyte's driver conflicts on every concurrent add, and the
// first commit is the one that forgets them (issue 21).
func (w *Checkout) stageHelpers(ctx context.Context, ix *git.Index) error {
	if err := EnsureAttributes(w.Repo.Root); err != nil {
		return err
	}
	for _, name := range []string{acolytedir.AttributesFile, acolytedir.IgnoreFile} {
		rel := format.Dir + "/" + name
		if _, ok := ix.Entries[rel]; ok {
			continue
		}
		if _, err := w.Repo.GitOutput(ctx, nil, "add", "--", rel); err != nil {
			return err
		}
	}
	return nil
}

// ErrRefused means the pre-commit hook blocks the commit: it would stage a
// secret, or AGENTS.md or seeds.json hold a rule or seed that cannot be
// written, so the commit would fail acolyte check.
var ErrRefused = errors.New("the commit would stage a secret or an invalid rule")

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
		return w.preCommit(ctx)
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

// preCommit makes the commit carry the memories that its own content
// derives, and nothing else. It derives from the index, not the worktree:
// with AGENTS.md edited but not staged, `git add -p`, `git commit <path>` or
// `git commit -a` (git points GIT_INDEX_FILE at the index being committed
// and re-reads it after the hook), the worktree holds rules the commit does
// not, and a commit carrying them would fail acolyte check on a clean
// checkout. Deriving from the index was chosen over blocking such commits
// because partial staging is ordinary work and needs no fix from the user.
// The staged memories file is the base, so memories remembered but not
// staged stay out of the commit too; the worktree file is then synced as
// `acolyte sync` would, ready for the next commit.
func (w *Checkout) preCommit(ctx context.Context) (HookResult, error) {
	ix, err := git.ReadIndex(ctx, &w.Repo.Repo)
	if err != nil {
		return HookResult{}, err
	}
	defer ix.Close()
	d, err := derive.From(ix)
	if err != nil {
		return HookResult{}, err
	}
	res := HookResult{Warnings: d.Skipped, Refused: d.Refused}
	if len(d.Refused) > 0 {
		return res, ErrRefused
	}
	return stagedLayoutOf(ix).preCommit(ctx, w, ix, d, res)
}

// preCommit commits the one staged file: through the fast path that
// splices the derived memories into a verified blob, else whole.
func (one stagedOneFile) preCommit(ctx context.Context, w *Checkout, ix *git.Index, d derive.Derivation, res HookResult) (HookResult, error) {
	if fast, ok, err := one.preCommitFast(ctx, w, ix, d, res); ok || err != nil {
		return fast, err
	}
	return one.preCommitFull(ctx, w, ix, d, res)
}

// preCommitFull is preCommit over the whole staged file: decoded, refreshed,
// encoded and scanned for secrets. The blob it leaves staged is recorded as
// verified, for the next commit to start from (precommit.go).
func (one stagedOneFile) preCommitFull(ctx context.Context, w *Checkout, ix *git.Index, d derive.Derivation, res HookResult) (HookResult, error) {
	rel := acolytedir.MemoriesRel
	var err error
	var staged []byte
	if e, ok := ix.Entries[rel]; ok {
		if staged, err = ix.Cat(e.Blob); err != nil {
			return res, err
		}
	}
	decoded, err := format.DecodeAll(rel, staged)
	if err != nil {
		return res, fmt.Errorf("the staged %w; fix it, git add it, and commit again", err)
	}
	// The commit's own tombstones say what it forgot; a memory line they
	// cover (brought back by a merge without the driver) leaves the commit.
	ts, err := stagedTombstones(ix)
	if err != nil {
		return res, err
	}
	stagedForgotten := ts.Data
	// A line that is not a valid memory blocks no commit: it is kept as it
	// is, after the memories, as every write keeps it (check still fails
	// on it, and the sync below warns about it).
	current, _ := format.Forget(decoded.Memories, ts.List)
	// A hand edit is stamped in the commit as in the worktree, at the same
	// time, so the two agree: one a command imported before this commit,
	// and, while the staged file is not what was last imported, one the
	// index still tells apart.
	edits, err := w.ws.HandEditsToStamp(ctx, current, acolytedir.WithForgotten(acolytedir.Sha256Hex(staged), stagedForgotten))
	if err != nil {
		return res, err
	}
	now := w.ws.Clock()
	current = project.StampHandEdits(current, edits, now)
	next := derive.Refresh(current, d.Memories)
	if splitsOnCommit(next) {
		return (stagedShards{project.Shards{Root: w.Repo.Root}}).preCommit(ctx, w, ix, d, res)
	}
	encoded := format.EncodeKeeping(next, decoded.InvalidLines)
	lines := acolytedir.LineNumbers(encoded)
	for _, m := range next {
		if f, found := derive.SecretRefusal(rel, lines[m.ID], m); found {
			sec, _ := format.FindSecret(m)
			f.Line = lines[m.ID]
			f.Message = fmt.Sprintf("%s %s; delete that line, rotate the credential and git add %s", sec.Name(m, fmt.Sprintf("on line %d", f.Line)), sec.Phrase(), rel)
			res.Refused = append(res.Refused, f)
		}
	}
	if len(res.Refused) > 0 {
		return res, ErrRefused
	}
	blob := ix.Entries[rel].Blob
	if (len(staged) > 0 || len(next) > 0) && !bytes.Equal(staged, encoded) {
		if blob, err = (stagedOneFile{project.OneFile{Root: w.Repo.Root}}).stage(ctx, w, encoded); err != nil {
			return res, err
		}
		res.Changes, res.Staged = Diff(current, next), true
		if err := w.stageHelpers(ctx, ix); err != nil {
			return res, err
		}
	}
	if blob != "" && len(decoded.InvalidLines) == 0 && !slices.ContainsFunc(next, func(m memory.Memory) bool { return covered(ts.List, m) }) {
		saveVerified(w, verifiedBlob{Memories: blob, Forgotten: ix.Entries[acolytedir.ForgottenRel].Blob, SHA256: acolytedir.Sha256Hex(encoded), Derived: derivedIDs(next)})
	}
	// The worktree may hold more (unstaged edits); it follows its own files.
	synced, err := w.ws.Sync(ctx, edits, now)
	res.Import = synced.Import
	res.Warnings = append(res.Warnings, synced.Refused...)
	return res, err
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

// stagedLayout is the layout of the project staged in ix, which a
// pre-commit hook commits.
type stagedLayout interface {
	preCommit(ctx context.Context, w *Checkout, ix *git.Index, d derive.Derivation, res HookResult) (HookResult, error)
}

// stagedLayoutOf returns the layout of the project staged in ix.
func stagedLayoutOf(ix *git.Index) stagedLayout {
	if stagedSplit(ix) {
		return stagedShards{project.Shards{Root: ix.Repo.Root}}
	}
	return stagedOneFile{project.OneFile{Root: ix.Repo.Root}}
}

// stagedOneFile and stagedShards are the layouts of a project as staged:
// the pre-commit hook's work on each.
type stagedOneFile struct{ project.OneFile }

type stagedShards struct{ project.Shards }
