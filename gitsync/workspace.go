package gitsync

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/acolyte-dev/acolyte/gitsync/derive"
	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/gitsync/internal/acolytedir"
	"github.com/acolyte-dev/acolyte/gitsync/internal/project"
	"github.com/acolyte-dev/acolyte/internal/beneath"
	"github.com/acolyte-dev/acolyte/memory"
)

// projectSecretError refuses a project memory holding a credential:
// project memories are committed, and a committed secret is a leaked
// secret. It names the kind and the field, never the text.
func projectSecretError(sec format.Secret) error {
	return fmt.Errorf("%w in project memory: %s. Project memories are committed to git; keep credentials in the environment or a secret manager, or store a pointer to where the secret lives", memory.ErrSecret, sec)
}

// Checkout is the memory toolkit of one repository checkout. Project
// memories go to .acolyte/memories.jsonl first and to the index second, under
// the same lock that imports take, so the file and the index never disagree
// for longer than one write. Everything else goes straight to the store.
type Checkout struct {
	// Repo is the checkout's repository, as NewCheckout was given it.
	Repo *Repo
	// ws is what the layouts need of the checkout.
	ws *project.Workspace
	// Warn, when set, is told each problem in the memories file that a
	// command worked around (a duplicate id, an unreadable line, an
	// unreadable file), once per command, so that the CLI can print it while
	// user and session memories keep working.
	Warn func(message string)
	// IndexID is the identity of the index the store keeps (IndexIdentity),
	// for the copy of the import state that QuickHook answers from; empty
	// keeps no copy.
	IndexID string
}

// NewCheckout binds a store to a repository checkout. session may be empty.
func NewCheckout(repo *Repo, store Store, session string) *Checkout {
	w := &Checkout{Repo: repo}
	w.ws = &project.Workspace{Repo: &repo.Repo, Store: keepingWrites(repo, store), Vis: memory.Visibility{ProjectKey: repo.Root, SessionKey: session}, Settle: acolytedir.SettleTime, Warn: w.tell}
	return w
}

// Refresh imports .acolyte/memories.jsonl into the index when its content
// changed since the last import. It decides by content hash, so a checkout
// that rewrites a file with the same bytes costs one hash and no import.
// Every command calls it first, which is what makes a fresh clone
// searchable without hooks.
//
// Hashing 10k memories (2 MB) costs a hook about 3 ms, so, like git's
// index, the last import also records the file's stat (size, times, inode;
// see stamp): while that is unchanged the content is too, and nothing is
// read.
//
// A file acolyte cannot fully read never fails Refresh: a line that is not
// a valid memory is left out, a file it cannot read at all (conflict
// markers, a newer format) leaves the last import in place, and either way
// the problem is returned in Warnings and told to Warn. The warnings are
// recorded with the hash, so every command repeats them until the file is
// fixed, without reading it again.
func (w *Checkout) Refresh(ctx context.Context) (Imported, error) {
	return w.ws.Refresh(ctx)
}

// tell passes a message on to Warn, which a caller may set after
// NewCheckout.
func (w *Checkout) tell(message string) {
	if w.Warn != nil {
		w.Warn(message)
	}
}

// Search searches every memory visible from this checkout.
func (w *Checkout) Search(ctx context.Context, q memory.Query) ([]memory.Result, error) {
	if err := w.ws.RefreshToRead(ctx); err != nil {
		return nil, err
	}
	return w.ws.Store.Search(ctx, w.ws.Vis, q)
}

// List lists every memory visible from this checkout.
func (w *Checkout) List(ctx context.Context, f memory.Filter) ([]memory.Memory, error) {
	if err := w.ws.RefreshToRead(ctx); err != nil {
		return nil, err
	}
	return w.ws.Store.List(ctx, w.ws.Vis, f)
}

// Add stores a memory, once RefuseSecret let it through (a user memory
// the user allowed excepted). Project memories are stamped with their
// provenance (HEAD and the paths they mention), checked again whole, and
// written to .acolyte/memories.jsonl before they are indexed.
func (w *Checkout) Add(ctx context.Context, d memory.Draft) (memory.Added, error) {
	if d.Scope != memory.ScopeProject {
		return memory.Scoped{Store: w.ws.Store, Visibility: w.ws.Vis, Guard: RefuseSecret}.Add(ctx, d)
	}
	if err := refuseDerivedKind(d.Kind); err != nil {
		return memory.Added{}, err
	}
	// Checked before Prepare, so that an invalid draft holding a secret
	// is refused for the secret, and after the stamps, which are text too.
	if err := RefuseSecret(d.Memory()); err != nil {
		return memory.Added{}, err
	}
	m, err := w.ws.Store.Prepare(w.ws.Vis, d)
	if err != nil {
		return memory.Added{}, err
	}
	m.Commit = w.Repo.Head()
	m.Paths = MentionedPaths(w.Repo.Root, m.Content)
	if err := RefuseSecret(m); err != nil {
		return memory.Added{}, err
	}
	out, err := w.ws.AddInPlace(ctx, m)
	if !errors.Is(err, format.ErrNotPatchable) {
		return out, err
	}
	_, err = w.ws.Change(ctx, func(mems []memory.Memory) ([]memory.Memory, error) {
		norm := memory.Normalize(m.Content)
		for _, have := range mems {
			if memory.Normalize(have.Content) == norm {
				out = memory.Added{Memory: have, Existing: true}
				return mems, nil
			}
		}
		out = memory.Added{Memory: m}
		return append(mems, m), nil
	})
	if err != nil {
		return memory.Added{}, err
	}
	if out.Existing {
		out.Memory.Scope, out.Memory.ScopeKey = memory.ScopeProject, w.Repo.Root
	}
	return out, nil
}

// ErrDerivedKind refuses a project memory of a kind that only Derive
// writes, and an edit or removal of one: its file is edited instead.
var ErrDerivedKind = errors.New("rules and seeds are edited in their files")

// refuseDerivedKind keeps users from storing a project rule or seed by hand:
// sync owns every rule and every seed from seeds.json, so such a memory
// would be deleted by the next sync or pre-commit hook, and forget would
// refuse it in the meantime.
func refuseDerivedKind(k memory.Kind) error {
	switch k {
	case memory.KindRule:
		return fmt.Errorf("%w: a project rule comes from AGENTS.md (or CLAUDE.md, GEMINI.md); add it there as a bullet and run `acolyte sync`, or store it with kind %s", ErrDerivedKind, memory.KindStored)
	case memory.KindSeed:
		return fmt.Errorf("%w: a project seed comes from %s/%s; add it there and run `acolyte sync`, import a file with `acolyte seed FILE`, or store it with kind %s", ErrDerivedKind, format.Dir, derive.SeedsFile, memory.KindStored)
	}
	return nil
}

// Remove deletes memories visible from this checkout. Project memories
// leave .acolyte/memories.jsonl first; a rule or seed would only come back
// on the next sync, so those are refused with a pointer to their source.
func (w *Checkout) Remove(ctx context.Context, ids ...string) ([]memory.Memory, error) {
	if _, err := w.Refresh(ctx); err != nil {
		return nil, err
	}
	var project, other []memory.Memory
	for _, id := range ids {
		m, err := w.ws.Store.Get(ctx, w.ws.Vis, id)
		if err != nil {
			return nil, err
		}
		if m.Scope == memory.ScopeProject && derive.IsDerived(m) {
			return nil, fmt.Errorf("%w: %s is derived from %s; edit that file and run `acolyte sync` to remove it", ErrDerivedKind, id, m.Source)
		}
		if m.Scope == memory.ScopeProject {
			project = append(project, m)
		} else {
			other = append(other, m)
		}
	}
	if len(project) > 0 {
		gone := map[string]bool{}
		var unique []memory.Memory
		for _, m := range project {
			if !gone[m.ID] {
				unique = append(unique, m)
			}
			gone[m.ID] = true
		}
		now := time.Now()
		err := w.ws.RemoveInPlace(ctx, unique, now)
		if errors.Is(err, format.ErrNotPatchable) {
			_, err = w.ws.Change(ctx, func(mems []memory.Memory) ([]memory.Memory, error) {
				// The file's versions are the ones forgotten: it may hold
				// a newer one than the index.
				var forgotten []memory.Memory
				for _, m := range mems {
					if gone[m.ID] {
						forgotten = append(forgotten, m)
					}
				}
				if err := w.ws.AddTombstones(forgotten, now); err != nil {
					return nil, err
				}
				return slices.DeleteFunc(mems, func(m memory.Memory) bool { return gone[m.ID] }), nil
			})
		}
		if err != nil {
			return nil, err
		}
	}
	if len(other) > 0 {
		otherIDs := make([]string, len(other))
		for i, m := range other {
			otherIDs[i] = m.ID
		}
		if _, err := w.ws.Store.Delete(ctx, w.ws.Vis, otherIDs...); err != nil {
			return nil, err
		}
	}
	return append(project, other...), nil
}

// Sync reconciles both directions: rules and seeds are re-derived from
// AGENTS.md (and friends) and seeds.json into the memories file, then the
// index is brought to the file. Running it twice changes nothing the second
// time. A refused rule or seed is left out and reported in Refused; it is
// not an error, so the others are still written.
func (w *Checkout) Sync(ctx context.Context) (Synced, error) {
	var resolved string
	err := w.ws.Locked(ctx, func() (err error) {
		resolved, err = w.ws.ResolveConflicts(ctx)
		return err
	})
	if err != nil {
		return Synced{}, err
	}
	pending, err := w.ws.PendingHandEdits(ctx)
	if err != nil {
		return Synced{}, err
	}
	out, err := w.ws.Sync(ctx, pending, time.Now())
	out.Resolved = resolved
	if err == nil {
		return out, nil
	}
	// sync reads the whole project before it writes anything, so a shard
	// that cannot be decoded stops it there. Only then is the project
	// looked at for one to repair: a sync of a sound project reads it
	// once, as before.
	var repaired []ShardRepair
	repairErr := w.ws.Locked(ctx, func() (err error) {
		repaired, err = project.Shards{Root: w.Repo.Root}.RepairShards(ctx, w.ws)
		return err
	})
	if repairErr != nil {
		return Synced{Resolved: resolved, Repaired: repaired}, fmt.Errorf("repairing a damaged shard: %w (sync stopped at: %v)", repairErr, err)
	}
	if len(repaired) == 0 {
		return out, err
	}
	for _, r := range repaired {
		if !r.Repaired {
			// The other shards were repaired; sync itself cannot go on
			// while one cannot be read.
			return Synced{Resolved: resolved, Repaired: repaired}, fmt.Errorf("%w: %s; restore it (`%s`, or from a backup), then run `%s`", ErrShardUnrecoverable, r.File, r.Fix, FixCommand)
		}
	}
	out, err = w.ws.Sync(ctx, pending, time.Now())
	out.Resolved, out.Repaired = resolved, repaired
	return out, err
}

// StaleMemory is a project memory whose cited paths changed since the
// commit it was written at.
type StaleMemory struct {
	Memory  memory.Memory `json:"memory"`
	Changed []string      `json:"changed,omitempty"`
	Deleted []string      `json:"deleted,omitempty"`
}

// Stale lists project memories that mention paths which were deleted or
// changed since the commit recorded when the memory was written. Such a
// memory may describe code that no longer exists; an agent should verify
// or forget it.
// It reads only the file and git, so CI can run it without a database.
func (r *Repo) Stale(ctx context.Context) ([]StaleMemory, error) {
	read, err := project.ReadProject(r.Root)
	if err != nil {
		return nil, err
	}
	if len(read.Decoded.Invalid) > 0 {
		return nil, read.Decoded.Invalid[0]
	}
	mems := read.Decoded.Memories
	// Every reader sees the memories without those forgotten.jsonl covers.
	ts, err := acolytedir.ReadTombstones(r.Root)
	if err == nil && len(ts.Warnings) > 0 {
		err = fmt.Errorf("%w: %s", format.ErrInvalidFile, ts.Warnings[0])
	}
	if err != nil {
		return nil, err
	}
	mems, _ = format.Forget(mems, ts.List)
	return r.StaleAmong(ctx, mems)
}

// StaleAmong is Stale over the given memories, in their order: a caller
// holding some memories already (acolyte ui's page of them, a search's
// results) asks about those alone. Every cited path of every memory is
// looked up at its commit (committedBlobs), and a file is changed when the
// blob id of its worktree content differs from the committed one's.
func (r *Repo) StaleAmong(ctx context.Context, mems []memory.Memory) ([]StaleMemory, error) {
	return r.staleAmong(ctx, mems, r.committedBlobs)
}

// staleAmong is StaleAmong finding the committed blobs through committed.
func (r *Repo) staleAmong(ctx context.Context, mems []memory.Memory, committed func(context.Context, []string) ([]string, error)) ([]StaleMemory, error) {
	// A clone's file names the paths: they are read beneath the
	// repository, so "../x" or a link out is never read.
	root, err := beneath.Open(r.Root)
	if err != nil {
		return nil, fmt.Errorf("open the worktree: %w", err)
	}
	defer root.Close()
	type cited struct {
		mem  int
		path string
		data []byte
	}
	var asks []cited
	out := make([]StaleMemory, len(mems))
	for i, m := range mems {
		if !citesAtCommit(m) {
			continue
		}
		for _, p := range m.Paths {
			now, err := root.ReadFile(filepath.FromSlash(p))
			if errors.Is(err, fs.ErrNotExist) {
				out[i].Deleted = append(out[i].Deleted, p)
				continue
			}
			if err != nil || !citable(p) {
				continue // outside the repository, or unreadable: nothing to compare
			}
			asks = append(asks, cited{mem: i, path: p, data: now})
		}
	}
	if len(asks) > 0 {
		specs := make([]string, len(asks))
		for k, a := range asks {
			specs[k] = mems[a.mem].Commit + ":" + a.path
		}
		blobs, err := committed(ctx, specs)
		if err != nil {
			return nil, err
		}
		for k, a := range asks {
			// No blob: not committed when the memory was written (or not
			// a file then): nothing to compare.
			if blobs[k] != "" && blobID(a.data, len(blobs[k])) != blobs[k] {
				out[a.mem].Changed = append(out[a.mem].Changed, a.path)
			}
		}
	}
	var stale []StaleMemory
	for i, s := range out {
		if len(s.Changed)+len(s.Deleted) > 0 {
			s.Memory = mems[i]
			stale = append(stale, s)
		}
	}
	return stale, ctx.Err()
}

// StaleByID is StaleAmong in the shape a search marks its results with
// (memory.StaleFunc): what changed of each stale memory, by id.
func (r *Repo) StaleByID(ctx context.Context, mems []memory.Memory) (map[string]memory.Staleness, error) {
	return byID(r.StaleAmong(ctx, mems))
}

// byID is stale in the shape of a memory.StaleFunc's answer.
func byID(stale []StaleMemory, err error) (map[string]memory.Staleness, error) {
	if err != nil {
		return nil, err
	}
	out := make(map[string]memory.Staleness, len(stale))
	for _, s := range stale {
		out[s.Memory.ID] = memory.Staleness{Changed: s.Changed, Deleted: s.Deleted}
	}
	return out, nil
}

// blobID is the id git gives a blob of data: SHA-1 over its header and
// bytes, or SHA-256 in a repository of that object format, told by the
// length of the ids git answers with (hexLen).
func blobID(data []byte, hexLen int) string {
	header := fmt.Sprintf("blob %d\x00", len(data))
	if hexLen == 2*sha256.Size {
		h := sha256.New()
		h.Write([]byte(header))
		h.Write(data)
		return hex.EncodeToString(h.Sum(nil))
	}
	h := sha1.New()
	h.Write([]byte(header))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// inRebase reports whether git is in the middle of a rebase; hooks fire for
// every replayed commit then, and post-rewrite re-imports once at the end.
func (w *Checkout) inRebase() bool {
	for _, d := range []string{"rebase-merge", "rebase-apply"} {
		if _, err := os.Stat(filepath.Join(w.Repo.GitDir(), d)); err == nil {
			return true
		}
	}
	return false
}
