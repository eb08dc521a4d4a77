// Package precommit is the pre-commit hook's work: it derives the rules
// and seeds from what the commit stages, checks the staged memories (a
// secret or an invalid rule refuses the commit, ErrRefused), stages the
// project the commit's own content derives, and syncs the worktree to it.
// Each staged layout has its way (StagedOneFile, StagedShards), which
// starts from the blobs the last hook verified, so that a commit costs its
// change, not the project. It works through a project.Workspace and knows
// nothing of gitsync's Checkout.
package precommit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/acolyte-dev/acolyte/gitsync/derive"
	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/gitsync/internal/acolytedir"
	"github.com/acolyte-dev/acolyte/gitsync/internal/git"
	"github.com/acolyte-dev/acolyte/gitsync/internal/project"
	"github.com/acolyte-dev/acolyte/memory"
)

// Result says what a hook run did, for its one line of output.
type Result struct {
	Skipped string           `json:"skipped,omitempty"`
	Import  project.Imported `json:"import"`
	Changes []project.Change `json:"changes,omitempty"`
	Staged  bool             `json:"staged,omitempty"`
	// Warnings are files that were not read (symlinks out of the repository).
	Warnings []derive.Refusal `json:"warnings,omitempty"`
	// Refused is why the pre-commit hook blocks the commit (ErrRefused).
	Refused []derive.Refusal `json:"refused,omitempty"`
}

// stageHelpers stages .acolyte/.gitattributes and .gitignore beside the
// memories file when the index has not got them: without the first, a
// clone without acolyte's driver conflicts on every concurrent add, and the
// first commit is the one that forgets them (issue 21).
func stageHelpers(ctx context.Context, w *project.Workspace, ix *git.Index) error {
	if err := project.EnsureAttributes(w.Repo.Root); err != nil {
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

// Run makes the commit carry the memories that its own content
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
func Run(ctx context.Context, w *project.Workspace) (Result, error) {
	ix, err := git.ReadIndex(ctx, w.Repo)
	if err != nil {
		return Result{}, err
	}
	defer ix.Close()
	d, err := derive.From(ix)
	if err != nil {
		return Result{}, err
	}
	res := Result{Warnings: d.Skipped, Refused: d.Refused}
	if len(d.Refused) > 0 {
		return res, ErrRefused
	}
	return stagedLayoutOf(ix).preCommit(ctx, w, ix, d, res)
}

// preCommit commits the one staged file: through the fast path that
// splices the derived memories into a verified blob, else whole.
func (one StagedOneFile) preCommit(ctx context.Context, w *project.Workspace, ix *git.Index, d derive.Derivation, res Result) (Result, error) {
	if fast, ok, err := one.PreCommitFast(ctx, w, ix, d, res); ok || err != nil {
		return fast, err
	}
	return one.PreCommitFull(ctx, w, ix, d, res)
}

// PreCommitFull is preCommit over the whole staged file: decoded, refreshed,
// encoded and scanned for secrets. The blob it leaves staged is recorded as
// verified, for the next commit to start from (precommit.go).
func (one StagedOneFile) PreCommitFull(ctx context.Context, w *project.Workspace, ix *git.Index, d derive.Derivation, res Result) (Result, error) {
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
	edits, err := w.HandEditsToStamp(ctx, current, acolytedir.WithForgotten(acolytedir.Sha256Hex(staged), stagedForgotten))
	if err != nil {
		return res, err
	}
	now := w.Clock()
	current = project.StampHandEdits(current, edits, now)
	next := derive.Refresh(current, d.Memories)
	if splitsOnCommit(next) {
		return (StagedShards{project.Shards{Root: w.Repo.Root}}).preCommit(ctx, w, ix, d, res)
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
		if blob, err = (StagedOneFile{project.OneFile{Root: w.Repo.Root}}).stage(ctx, w, encoded); err != nil {
			return res, err
		}
		res.Changes, res.Staged = project.Diff(current, next), true
		if err := stageHelpers(ctx, w, ix); err != nil {
			return res, err
		}
	}
	if blob != "" && len(decoded.InvalidLines) == 0 && !slices.ContainsFunc(next, func(m memory.Memory) bool { return covered(ts.List, m) }) {
		saveVerified(w, verifiedBlob{Memories: blob, Forgotten: ix.Entries[acolytedir.ForgottenRel].Blob, SHA256: acolytedir.Sha256Hex(encoded), Derived: derivedIDs(next)})
	}
	// The worktree may hold more (unstaged edits); it follows its own files.
	synced, err := w.Sync(ctx, edits, now)
	res.Import = synced.Import
	res.Warnings = append(res.Warnings, synced.Refused...)
	return res, err
}

// stagedLayout is the layout of the project staged in ix, which a
// pre-commit hook commits.
type stagedLayout interface {
	preCommit(ctx context.Context, w *project.Workspace, ix *git.Index, d derive.Derivation, res Result) (Result, error)
}

// stagedLayoutOf returns the layout of the project staged in ix.
func stagedLayoutOf(ix *git.Index) stagedLayout {
	if stagedSplit(ix) {
		return StagedShards{project.Shards{Root: ix.Repo.Root}}
	}
	return StagedOneFile{project.OneFile{Root: ix.Repo.Root}}
}

// StagedOneFile and StagedShards are the layouts of a project as staged:
// the pre-commit hook's work on each.
type StagedOneFile struct{ project.OneFile }

type StagedShards struct{ project.Shards }

// stageFile writes parts, in order, as the staged file rel (relative to
// the worktree root) and returns its blob id.
func stageFile(ctx context.Context, w *project.Workspace, rel string, parts ...[]byte) (string, error) {
	readers := make([]io.Reader, len(parts))
	for i, p := range parts {
		readers[i] = bytes.NewReader(p)
	}
	out, err := w.Repo.GitOutputFrom(ctx, io.MultiReader(readers...), "hash-object", "-w", "--stdin")
	if err != nil {
		return "", err
	}
	blob := strings.TrimSpace(string(out))
	info := "100644," + blob + "," + rel
	if _, err := w.Repo.GitOutput(ctx, nil, "update-index", "--add", "--cacheinfo", info); err != nil {
		return "", err
	}
	return blob, nil
}
