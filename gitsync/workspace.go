package gitsync

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"time"

	"github.com/acolyte-dev/acolyte/gitsync/derive"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/gitsync/internal/acolytedir"
	"github.com/acolyte-dev/acolyte/gitsync/internal/git"
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
	Repo  *Repo
	store Store
	vis   memory.Visibility
	// settle is how long after its last change the memories file's stamp
	// is trusted (settleTime; tests shorten it).
	settle time.Duration
	// now is the clock the pre-commit hook stamps hand edits with; nil is
	// time.Now (tests fix it, to compare two runs byte for byte).
	now func() time.Time
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

func (w *Checkout) clock() time.Time {
	if w.now != nil {
		return w.now()
	}
	return time.Now()
}

func (w *Checkout) warn(messages []string) {
	if w.Warn == nil {
		return
	}
	for _, m := range messages {
		w.Warn(m)
	}
}

// Store is the local index a Checkout keeps in step with the checkout's
// .acolyte/ files (memory/sqlite's Store): an engine that can also replace
// a scope's memories wholesale, as an import does, and keep bookkeeping
// values such as the hash of the file last imported.
type Store interface {
	memory.LocalEngine
	// FindContent returns the memory of one scope and key whose
	// normalised content equals content.
	FindContent(ctx context.Context, scope memory.Scope, key, content string) (memory.Memory, bool, error)
	// Prepare turns a draft into a complete, validated memory with a new
	// id, without storing it.
	Prepare(vis memory.Visibility, d memory.Draft) (memory.Memory, error)
	// ReplaceScope makes the memories of one scope and key exactly ms.
	ReplaceScope(ctx context.Context, scope memory.Scope, key string, ms []memory.Memory) (memory.ReplaceStats, error)
	// GetState reads a bookkeeping value; a missing key reads as "".
	GetState(ctx context.Context, key string) (string, error)
	// SetState writes a bookkeeping value.
	SetState(ctx context.Context, key, value string) error
}

// NewCheckout binds a store to a repository checkout. session may be empty.
func NewCheckout(repo *Repo, store Store, session string) *Checkout {
	return &Checkout{Repo: repo, store: store, vis: memory.Visibility{ProjectKey: repo.Root, SessionKey: session}, settle: acolytedir.SettleTime}
}

// stateKey names the hash of the memories file last imported for this checkout.
func (w *Checkout) stateKey() string { return "import:" + w.Repo.Root }

// Imported reports what an import changed.
type Imported struct {
	memory.ReplaceStats
	// Skipped is true when the file was unchanged since the last import.
	Skipped bool `json:"skipped"`
	// Warnings are the problems in the file the import worked around:
	// project memories it could not read are missing from the index until
	// the file is fixed, and nothing else is held up.
	Warnings []string `json:"warnings,omitempty"`
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
	// Every command passes here, so it is where temporary files of killed
	// writers go, even when nothing takes the lock.
	RemoveStaleTemps(w.Repo.Root)
	imp, err := w.refresh(ctx)
	w.warn(imp.Warnings)
	if msg := w.Repo.unmergedWarning(ctx); msg != "" {
		w.warn([]string{msg})
	}
	return imp, err
}

func (w *Checkout) refresh(ctx context.Context) (Imported, error) {
	last, err := w.store.GetState(ctx, w.stateKey())
	if err != nil {
		return Imported{}, err
	}
	if err := GuardDir(w.Repo.Root); err != nil {
		return Imported{Skipped: true, Warnings: []string{fmt.Sprintf("project memories not imported: %v", err)}}, nil
	}
	l, err := layoutOf(w.Repo.Root)
	if err != nil {
		return Imported{Skipped: true, Warnings: []string{fmt.Sprintf("project memories not imported: %v", err)}}, nil
	}
	return l.refresh(ctx, w, last)
}

// refresh imports the memories file unless the import state last still
// describes it; with no file, it derives the rules and seeds.
func (one oneFile) refresh(ctx context.Context, w *Checkout, last string) (Imported, error) {
	lastHash, _, lastWarnings := acolytedir.ParseImportState(last)
	before, statErr := os.Stat(format.MemoriesPath(w.Repo.Root))
	if errors.Is(statErr, fs.ErrNotExist) {
		return one.deriveUnsynced(ctx, w, lastHash)
	}
	if statErr == nil && (oneFile{}).holds(w, last, before) {
		return Imported{Skipped: true, Warnings: lastWarnings}, nil
	}
	// importFile reads and hashes the file once, and leaves the index
	// alone when the content is what was last imported.
	return one.importFile(ctx, w)
}

// holds reports whether the import state still describes the memories
// file, whose stat is memories, without reading it: the settled stamp the
// state records is the file's (with forgotten.jsonl's), or, right after
// acolyte's own write, before the stamp has settled, the writer's
// fingerprint vouches for it (fingerprint.go).
func (one oneFile) holds(w *Checkout, state string, memories os.FileInfo) bool {
	if _, ok := acolytedir.StateFiles(state); ok {
		return false // the state describes shards, since joined
	}
	_, lastStamp, _ := acolytedir.ParseImportState(state)
	fbefore, fstatErr := os.Stat(format.ForgottenPath(w.Repo.Root))
	if lastStamp != "" && lastStamp == git.Stamp(memories)+acolytedir.ForgottenStamp(fbefore, fstatErr) {
		return true
	}
	return one.fingerprinted(w, state)
}

// unsyncedPrefix marks an import state that holds rules derived on read,
// for a repository that has no memories file yet.
const unsyncedPrefix = "unsynced:"

// deriveUnsynced makes AGENTS.md and friends searchable before the first
// sync: with no memories file there is nothing to import, so the index gets
// the rules and seeds the worktree derives, as sync would write them. It
// derives again only when the root's instruction files or seeds.json
// changed (their content hashes, three or four small reads), so the no-op
// path walks no tree; a nested AGENTS.md added later waits for sync.
// Nothing is written to the worktree: that is sync's and init's to do.
func (one oneFile) deriveUnsynced(ctx context.Context, w *Checkout, lastHash string) (Imported, error) {
	key, err := unsyncedKey(w.Repo.Root)
	if err != nil {
		return Imported{}, err
	}
	if key == lastHash || (key == unsyncedPrefix && lastHash == "") {
		return Imported{Skipped: true}, nil
	}
	var mems []memory.Memory
	var warnings []string
	if key != unsyncedPrefix {
		d, err := derive.Worktree(w.Repo.Root)
		if err != nil {
			return Imported{}, err
		}
		mems = d.Memories
		for _, f := range append(d.Skipped, d.Refused...) {
			warnings = append(warnings, f.Error())
		}
	}
	var out Imported
	err = w.locked(ctx, func() error {
		if out.ReplaceStats, err = w.store.ReplaceScope(ctx, memory.ScopeProject, w.Repo.Root, mems); err != nil {
			return err
		}
		return w.store.SetState(ctx, w.stateKey(), acolytedir.ImportState(key, "", warnings))
	})
	out.Warnings = warnings
	return out, err
}

// unsyncedKey names the content of the files deriveUnsynced reads, or is
// the bare prefix when there are none.
func unsyncedKey(root string) (string, error) {
	key := unsyncedPrefix
	for _, name := range append(slices.Clone(derive.InstructionNames), format.Dir+"/"+derive.SeedsFile) {
		h, err := acolytedir.HashFile(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil {
			return "", err
		}
		if h != "absent" {
			key += name + "=" + h[:16] + ","
		}
	}
	return key, nil
}

// settledStamps is settledStamp of the memories file joined with that of
// forgotten.jsonl when it exists; empty unless both are settled.
func (one oneFile) settledStamps(w *Checkout, before os.FileInfo, statErr error, fbefore os.FileInfo, fstatErr error) string {
	s := acolytedir.SettledStamp(format.MemoriesPath(w.Repo.Root), before, statErr, w.settle)
	if s == "" || fstatErr != nil {
		return s
	}
	f := acolytedir.SettledStamp(format.ForgottenPath(w.Repo.Root), fbefore, fstatErr, w.settle)
	if f == "" {
		return ""
	}
	return s + "|" + f
}

// importFile makes the index equal to the file, under the file lock so a
// concurrent write cannot slip between the read and the index update.
func (one oneFile) importFile(ctx context.Context, w *Checkout) (Imported, error) {
	var out Imported
	err := w.locked(ctx, func() error {
		path := format.MemoriesPath(w.Repo.Root)
		before, statErr := os.Stat(path)
		fbefore, fstatErr := os.Stat(format.ForgottenPath(w.Repo.Root))
		data, err := acolytedir.ReadMemories(w.Repo.Root)
		present := err == nil
		hash := ""
		if !present {
			if hash, err = acolytedir.FileHash(nil, err); err != nil {
				out.Warnings = []string{fmt.Sprintf("project memories not imported: %v", err)}
				return nil
			}
		}
		// The file is hashed on one core while the other works out its
		// line diff from the shadow (planDiff), which needs no hash.
		var hashed sync.WaitGroup
		var h acolytedir.Hasher
		if present {
			hashed.Go(func() {
				h = acolytedir.HashParts(data) // once: the fingerprint keeps its state
				hash = acolytedir.HexSum(h)
			})
		}
		defer hashed.Wait()
		ts, terr := acolytedir.ReadTombstones(w.Repo.Root)
		last, err := w.store.GetState(ctx, w.stateKey())
		if err != nil {
			return err
		}
		var plan *diffPlan
		if present && terr == nil {
			if plan, err = one.planDiff(ctx, w, data, last, ts); err != nil {
				return err
			}
		}
		hashed.Wait()
		if lastHash, _, lastWarnings := acolytedir.ParseImportState(last); terr == nil && (acolytedir.WithForgotten(hash, ts.Data) == lastHash || hash == "absent" && lastHash == "") {
			// Touched, not changed (or changed back): only the stamps are new.
			plan.close()
			out = Imported{Skipped: true, Warnings: lastWarnings}
			stamps := one.settledStamps(w, before, statErr, fbefore, fstatErr)
			if stamps == "" || h == nil {
				return nil
			}
			fp := acolytedir.NewFingerprint(acolytedir.JoinStamps(w.Repo.Root, before), acolytedir.TailOf(data), h)
			// Best effort: without the stamp the next run reads the file again.
			_ = w.store.SetState(ctx, w.stateKey(), acolytedir.WithFingerprint(acolytedir.ImportState(lastHash, stamps, lastWarnings), fp))
			return nil
		}
		var d format.Decoded
		diffed := false
		if plan != nil {
			if out, diffed, err = one.applyDiff(ctx, w, plan, hash, data); err != nil {
				return err
			}
		}
		if err == nil && !diffed {
			d, err = format.DecodeAll(format.Dir+"/"+format.MemoriesFile, data)
		}
		if err == nil {
			err = terr
		}
		if diffed {
			// Only the lines that changed were read and indexed.
		} else if err != nil {
			// The last import stays searchable until the file is fixed.
			out.Warnings = []string{fmt.Sprintf("project memories not re-imported, searching the last import: %v", err)}
			out.Skipped = true
		} else if out, err = w.importDecoded(ctx, d, ts, hash, data); err != nil {
			return err
		}
		stamps := one.settledStamps(w, before, statErr, fbefore, fstatErr)
		// A file someone else wrote is fingerprinted, like stamped, only
		// once settled: it may change again within its clock tick.
		var fp acolytedir.Fingerprint
		if stamps != "" && h != nil {
			fp = acolytedir.NewFingerprint(acolytedir.JoinStamps(w.Repo.Root, before), acolytedir.TailOf(data), h)
		}
		return w.store.SetState(ctx, w.stateKey(), acolytedir.WithFingerprint(acolytedir.ImportState(acolytedir.WithForgotten(hash, ts.Data), stamps, out.Warnings), fp))
	})
	return out, err
}

// importDecoded replaces the project's rows with d, the whole memories
// file decoded, less what the tombstones cover, and keeps data, whose
// content hash is hash (nil when there is no file), as the shadow.
func (w *Checkout) importDecoded(ctx context.Context, d format.Decoded, ts acolytedir.Tombstones, hash string, data []byte) (out Imported, err error) {
	out.Warnings = append(d.Warnings(), ts.Warnings...)
	kept, hidden := format.Forget(d.Memories, ts.List)
	if len(hidden) > 0 {
		// A forget killed between its tombstone and its line, or a merge
		// without the driver, left lines the tombstones hide. Recorded as
		// a warning, it sends the next write to the whole rewrite, which
		// drops them, instead of the in-place paths, which would not.
		out.Warnings = append(out.Warnings, fmt.Sprintf("%d forgotten memories still have their lines in %s (a forget that was interrupted, or a merge without acolyte's driver); they are hidden, and the next write or `%s` removes them", len(hidden), MemoriesLocation(w.Repo.Root), FixCommand))
	}
	kept, capped := acolytedir.CapIndexed(kept)
	if capped != "" {
		out.Warnings = append(out.Warnings, capped)
	}
	// The shadow is written while the index takes the rows: at a fresh
	// clone of 100k memories its 22 MB went to the disk on the critical
	// path after a bulk import that keeps one core busy. Written early, it
	// is still trusted only for the hash the import state records, so a
	// failed import leaves it unused.
	var shadowed sync.WaitGroup
	if data != nil {
		shadowed.Go(func() { w.shadows().KeepShadow(hash, data) })
	}
	defer shadowed.Wait()
	if out.ReplaceStats, err = w.store.ReplaceScope(ctx, memory.ScopeProject, w.Repo.Root, kept); err != nil {
		return out, err
	}
	return out, w.recordHandEdits(ctx, kept, out.Revised)
}

// readForWrite reads the memories file for a writer: an id on two lines is
// resolved (and told to Warn, since the write drops the other line), and
// each line that is not a valid memory is told to Warn and returned as it
// is, for the write to keep (format.EncodeKeeping): one bad line blocks no
// write and is never lost. It also returns the file's content hash.
//
// Memories forgotten.jsonl covers are left out of d.Memories, so the write
// drops their lines, which a merge without acolyte's driver may have
// brought back; an invalid tombstone refuses the write (a memory it meant
// to hide cannot be told apart).
func (one oneFile) readForWrite(w *Checkout) (d format.Decoded, hash string, err error) {
	ts, err := acolytedir.ReadTombstones(w.Repo.Root)
	if err != nil {
		return d, "", err
	}
	if len(ts.Warnings) > 0 {
		return d, "", fmt.Errorf("%w: %s", format.ErrInvalidFile, ts.Warnings[0])
	}
	data, err := acolytedir.ReadMemories(w.Repo.Root)
	hash, herr := acolytedir.FileHash(data, err)
	hash = acolytedir.WithForgotten(hash, ts.Data)
	if errors.Is(err, fs.ErrNotExist) {
		return d, hash, nil
	}
	if herr != nil {
		return d, "", fmt.Errorf("reading project memories: %w", herr)
	}
	if d, err = format.DecodeAll(format.Dir+"/"+format.MemoriesFile, data); err != nil {
		return d, "", err
	}
	w.warn(d.Warnings())
	d.Memories, _ = format.Forget(d.Memories, ts.List)
	return d, hash, nil
}

// handEditsToStamp is what a write of mems, read from a file with content
// hash hash, stamps: the hand edits imports recorded and, when the file is
// not what was last imported, those it holds against the index, which the
// write is about to overwrite. The index's rows are read only then, so
// after an import this costs two state reads.
func (w *Checkout) handEditsToStamp(ctx context.Context, mems []memory.Memory, hash string) (map[string]time.Time, error) {
	pending, err := w.pendingHandEdits(ctx)
	if err != nil {
		return nil, err
	}
	last, err := w.store.GetState(ctx, w.stateKey())
	if err != nil {
		return nil, err
	}
	if lastHash, _, _ := acolytedir.ParseImportState(last); lastHash == hash || len(mems) == 0 {
		return pending, nil
	}
	indexed, err := w.store.List(ctx, w.vis, memory.Filter{Scope: memory.ScopeProject})
	if err != nil {
		return nil, err
	}
	found := handEdits(mems, indexed)
	if pending == nil {
		return found, nil
	}
	maps.Copy(pending, found)
	return pending, nil
}

// locked runs fn holding the .acolyte/ lock. Without a .acolyte/ directory
// there is nothing to guard and no directory is created.
func (w *Checkout) locked(ctx context.Context, fn func() error) error {
	dir := filepath.Join(w.Repo.Root, format.Dir)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return fn()
	}
	lockCtx := ctx
	wait, bounded := lockWait(ctx)
	if bounded {
		var cancel context.CancelFunc
		lockCtx, cancel = context.WithTimeout(ctx, wait)
		defer cancel()
	}
	unlock, err := LockDir(lockCtx, dir)
	if err != nil {
		return err
	}
	defer unlock()
	if ww, ok := w.store.(writableWaiter); ok && bounded {
		if err := ww.WaitWritable(ctx, wait); err != nil {
			return err
		}
	}
	return fn()
}

// change edits the memories file under the lock and re-imports it in the
// same critical section, so the index follows the file at once.
func (w *Checkout) change(ctx context.Context, edit func([]memory.Memory) ([]memory.Memory, error)) (memory.ReplaceStats, error) {
	var stats memory.ReplaceStats
	if err := GuardDir(w.Repo.Root); err != nil {
		return stats, err
	}
	dir := filepath.Join(w.Repo.Root, format.Dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return stats, fmt.Errorf("create %s: %w", dir, err)
	}
	if err := EnsureAttributes(w.Repo.Root); err != nil {
		return stats, err
	}
	err := w.locked(ctx, func() error {
		l, err := layoutOf(w.Repo.Root)
		if err != nil {
			return err
		}
		stats, err = l.rewrite(ctx, w, edit)
		return err
	})
	return stats, err
}

// rewrite is change for the one file: it reads the file, applies edit, and
// writes every line (or the shards, when edit takes the project past
// format.SplitAt).
func (one oneFile) rewrite(ctx context.Context, w *Checkout, edit func([]memory.Memory) ([]memory.Memory, error)) (memory.ReplaceStats, error) {
	var stats memory.ReplaceStats
	path := format.MemoriesPath(w.Repo.Root)
	d, hash, err := one.readForWrite(w)
	if err != nil {
		return stats, err
	}
	mems := d.Memories
	// A write rewrites every line and puts them in the index, so it is
	// where hand edits get their stamp, or they would be lost.
	pending, err := w.handEditsToStamp(ctx, mems, hash)
	if err != nil {
		return stats, err
	}
	indexed := slices.Clone(mems) // what the index holds, whatever edit does to mems
	next, err := edit(mems)
	if err != nil {
		return stats, err
	}
	next = stampHandEdits(next, pending, time.Now())
	// The index is brought to the file by the memories that changed
	// when it held exactly mems (the file was what was last imported
	// or written, and nothing was worked around), else by replacing
	// the scope.
	last, err := w.store.GetState(ctx, w.stateKey())
	if err != nil {
		return stats, err
	}
	lastHash, _, warnings := acolytedir.ParseImportState(last)
	exact := lastHash == hash && len(warnings) == 0 && len(d.InvalidLines) == 0 && len(d.Duplicates) == 0
	if len(next) > format.SplitAt {
		// The write that takes the project past one file splits it.
		parts := []format.Part{{File: format.MemoriesFile, Decoded: d}}
		if err := (shards{root: w.Repo.Root}).writeSplitIndexed(ctx, w, acolytedir.SplitProject{}, parts, indexed, next, exact, &stats); err != nil {
			return stats, err
		}
		if len(pending) > 0 {
			return stats, w.setPendingHandEdits(ctx, nil)
		}
		return stats, nil
	}
	if err := format.WriteFileKeeping(path, next, d.InvalidLines); err != nil {
		return stats, err
	}
	done, err := w.indexWritten(ctx, path, func() (err error) {
		stats, err = w.indexChanges(ctx, exact, indexed, next)
		return err
	})
	if !done {
		return stats, err
	}
	written, fp, err := acolytedir.HashFingerprinted(w.Repo.Root)
	if err != nil {
		return stats, err
	}
	// edit may have added tombstones (a forget).
	ts, err := acolytedir.ReadTombstones(w.Repo.Root)
	if err != nil {
		return stats, err
	}
	state := acolytedir.WithForgotten(written, ts.Data)
	if len(d.InvalidLines) > 0 {
		// Recorded like an import's warnings: every command goes on
		// naming the kept lines (at their new place), and the patch
		// fast path leaves a file it cannot read whole alone.
		kept, _ := format.DecodeAll(format.Dir+"/"+format.MemoriesFile, format.EncodeKeeping(next, d.InvalidLines))
		state = acolytedir.ImportState(state, "", kept.Warnings())
	}
	if err := w.store.SetState(ctx, w.stateKey(), acolytedir.WithFingerprint(state, fp)); err != nil {
		return stats, err
	}
	if data, err := os.ReadFile(path); err == nil {
		w.shadows().KeepShadow(acolytedir.Sha256Hex(data), data)
	}
	if len(pending) > 0 {
		return stats, w.setPendingHandEdits(ctx, nil)
	}
	return stats, nil
}

// Search searches every memory visible from this checkout.
func (w *Checkout) Search(ctx context.Context, q memory.Query) ([]memory.Result, error) {
	if err := w.refreshToRead(ctx); err != nil {
		return nil, err
	}
	return w.store.Search(ctx, w.vis, q)
}

// List lists every memory visible from this checkout.
func (w *Checkout) List(ctx context.Context, f memory.Filter) ([]memory.Memory, error) {
	if err := w.refreshToRead(ctx); err != nil {
		return nil, err
	}
	return w.store.List(ctx, w.vis, f)
}

// Add stores a memory, once RefuseSecret let it through (a user memory
// the user allowed excepted). Project memories are stamped with their
// provenance (HEAD and the paths they mention), checked again whole, and
// written to .acolyte/memories.jsonl before they are indexed.
func (w *Checkout) Add(ctx context.Context, d memory.Draft) (memory.Added, error) {
	if d.Scope != memory.ScopeProject {
		return memory.Scoped{Store: w.store, Visibility: w.vis, Guard: RefuseSecret}.Add(ctx, d)
	}
	if err := refuseDerivedKind(d.Kind); err != nil {
		return memory.Added{}, err
	}
	// Checked before Prepare, so that an invalid draft holding a secret
	// is refused for the secret, and after the stamps, which are text too.
	if err := RefuseSecret(d.Memory()); err != nil {
		return memory.Added{}, err
	}
	m, err := w.store.Prepare(w.vis, d)
	if err != nil {
		return memory.Added{}, err
	}
	m.Commit = w.Repo.Head()
	m.Paths = MentionedPaths(w.Repo.Root, m.Content)
	if err := RefuseSecret(m); err != nil {
		return memory.Added{}, err
	}
	out, err := w.addInPlace(ctx, m)
	if !errors.Is(err, format.ErrNotPatchable) {
		return out, err
	}
	_, err = w.change(ctx, func(mems []memory.Memory) ([]memory.Memory, error) {
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
		m, err := w.store.Get(ctx, w.vis, id)
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
		err := w.removeInPlace(ctx, unique, now)
		if errors.Is(err, format.ErrNotPatchable) {
			_, err = w.change(ctx, func(mems []memory.Memory) ([]memory.Memory, error) {
				// The file's versions are the ones forgotten: it may hold
				// a newer one than the index.
				var forgotten []memory.Memory
				for _, m := range mems {
					if gone[m.ID] {
						forgotten = append(forgotten, m)
					}
				}
				if err := w.addTombstones(forgotten, now); err != nil {
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
		if _, err := w.store.Delete(ctx, w.vis, otherIDs...); err != nil {
			return nil, err
		}
	}
	return append(project, other...), nil
}

// Synced reports what Sync changed.
type Synced struct {
	// Changes lists how the derived rules and seeds changed in the file.
	Changes []Change `json:"changes"`
	Import  Imported `json:"import"`
	// Warnings are files that were not read (symlinks leading out of the
	// repository); nothing of them was written.
	Warnings []derive.Refusal `json:"warnings,omitempty"`
	// Refused are rules and seeds that were not written because they hold
	// a secret or are not valid memories; every other one was.
	Refused []derive.Refusal `json:"refused,omitempty"`
	// Resolved says how the project's memories were merged by id, when a
	// merge, revert, cherry-pick or rebase had left a file of them
	// unmerged (resolveConflicts).
	Resolved string `json:"resolved,omitempty"`
	// Repaired says, per shard that could not be decoded, what sync
	// recovered of it and from where, and what it could not
	// (repairShards).
	Repaired []ShardRepair `json:"repaired,omitempty"`
}

// storedSecrets reports the stored memories of the file that hold a
// secret in any field, as a hand edit or a merge without the driver can
// leave them: sync keeps them, since the file is the truth and dropping a
// line unasked loses it, but says so, with the fix, as check does. locate
// says which file, and which line of it, holds an id.
func storedSecrets(locate acolytedir.LineLocator, mems []memory.Memory) []derive.Refusal {
	var out []derive.Refusal
	for _, m := range mems {
		sec, found := format.FindSecret(m)
		if !found || derive.IsDerived(m) {
			continue
		}
		rel, line := locate(m.ID)
		fix := "run `acolyte forget " + m.ID + "`"
		if sec.Field == "id" {
			fix = "delete that line"
		}
		out = append(out, derive.Refusal{File: rel, Line: line, Problem: derive.ProblemSecret, Secret: sec.Kind,
			Message: fmt.Sprintf("%s %s; %s, rotate the credential and commit %s", sec.Name(m, fmt.Sprintf("on line %d", line)), sec.Phrase(), fix, rel)})
	}
	return out
}

// Sync reconciles both directions: rules and seeds are re-derived from
// AGENTS.md (and friends) and seeds.json into the memories file, then the
// index is brought to the file. Running it twice changes nothing the second
// time. A refused rule or seed is left out and reported in Refused; it is
// not an error, so the others are still written.
func (w *Checkout) Sync(ctx context.Context) (Synced, error) {
	var resolved string
	err := w.locked(ctx, func() (err error) {
		resolved, err = w.resolveConflicts(ctx)
		return err
	})
	if err != nil {
		return Synced{}, err
	}
	pending, err := w.pendingHandEdits(ctx)
	if err != nil {
		return Synced{}, err
	}
	out, err := w.sync(ctx, pending, time.Now())
	out.Resolved = resolved
	if err == nil {
		return out, nil
	}
	// sync reads the whole project before it writes anything, so a shard
	// that cannot be decoded stops it there. Only then is the project
	// looked at for one to repair: a sync of a sound project reads it
	// once, as before.
	var repaired []ShardRepair
	repairErr := w.locked(ctx, func() (err error) {
		repaired, err = shards{root: w.Repo.Root}.repairShards(ctx, w)
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
	out, err = w.sync(ctx, pending, time.Now())
	out.Resolved, out.Repaired = resolved, repaired
	return out, err
}

// sync is Sync given the pending hand edits and the time they are stamped
// with, which the pre-commit hook shares so that the commit it stamps and
// the worktree agree.
func (w *Checkout) sync(ctx context.Context, pending map[string]time.Time, now time.Time) (Synced, error) {
	d, err := derive.Worktree(w.Repo.Root)
	if err != nil {
		return Synced{}, err
	}
	out := Synced{Warnings: d.Skipped, Refused: d.Refused}
	derived := d.Memories
	read, err := readProject(w.Repo.Root)
	if err != nil {
		return out, err
	}
	decoded := read.decoded
	ts, err := w.tidyTombstones(ctx, decoded.Memories, now)
	if err != nil {
		return out, err
	}
	current, _ := format.Forget(decoded.Memories, ts.List)
	out.Refused = append(out.Refused, storedSecrets(read.locate, current)...)
	// The index still holds what the file said at the last import, which
	// is how a hand edit that kept its updated time is told apart. While
	// the file is what was last imported there is nothing to tell apart,
	// and the pre-commit hook, which syncs on every commit, reads no rows.
	// A command that ran since the edit imported it already, and left it
	// in the pending hand edits instead, which change stamps.
	last, err := w.store.GetState(ctx, w.stateKey())
	if err != nil {
		return out, err
	}
	var indexed []memory.Memory
	if lastHash, _, _ := acolytedir.ParseImportState(last); lastHash != read.hash(ts) {
		if indexed, err = w.store.List(ctx, w.vis, memory.Filter{Scope: memory.ScopeProject}); err != nil {
			return out, err
		}
	}
	current = stampHandEdits(MarkHandEdits(current, indexed, now), pending, now)
	// Comparing bytes, not memories, also rewrites a file that a union
	// merge left out of order.
	if next := derive.Refresh(current, derived); read.differs(next) {
		out.Import.ReplaceStats, err = w.change(ctx, func(mems []memory.Memory) ([]memory.Memory, error) {
			mems = stampHandEdits(MarkHandEdits(mems, indexed, now), pending, now)
			next := derive.Refresh(mems, derived)
			out.Changes = Diff(mems, next)
			return next, nil
		})
		return out, err
	}
	out.Import, err = w.Refresh(ctx)
	return out, err
}

// tidyTombstones makes forgotten.jsonl canonical (a union merge leaves it
// out of order) and compacts it, under the lock, and returns what it holds
// then. inFile is what memories.jsonl holds, whose tombstones stay however
// old they are, or the memories would come back. An invalid line refuses
// the sync, as one in the memories file does.
func (w *Checkout) tidyTombstones(ctx context.Context, inFile []memory.Memory, now time.Time) (acolytedir.Tombstones, error) {
	var out acolytedir.Tombstones
	err := w.locked(ctx, func() error {
		ts, err := acolytedir.ReadTombstones(w.Repo.Root)
		if err != nil {
			return err
		}
		if len(ts.Warnings) > 0 {
			return fmt.Errorf("%w: %s", format.ErrInvalidFile, ts.Warnings[0])
		}
		ids := make(map[string]bool, len(inFile))
		for _, m := range inFile {
			ids[m.ID] = true
		}
		compacted := format.Compact(ts.List, ids, now)
		out = acolytedir.Tombstones{Data: format.EncodeForgotten(compacted), List: compacted}
		if bytes.Equal(ts.Data, out.Data) {
			return nil
		}
		return format.WriteForgotten(w.Repo.Root, compacted)
	})
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
	read, err := readProject(r.Root)
	if err != nil {
		return nil, err
	}
	if len(read.decoded.Invalid) > 0 {
		return nil, read.decoded.Invalid[0]
	}
	mems := read.decoded.Memories
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
// looked up in one `git cat-file --batch-check`, and a file is changed
// when the blob id of its worktree content differs from the committed
// one's: one git process for a whole page, where reading each blob took
// two a path.
func (r *Repo) StaleAmong(ctx context.Context, mems []memory.Memory) ([]StaleMemory, error) {
	// A clone's file names the paths: they are read through the
	// repository's os.Root, so "../x" or a link out is never read.
	root, err := os.OpenRoot(r.Root)
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
		if m.Commit == "" || len(m.Paths) == 0 || strings.ContainsAny(m.Commit, " \n:") {
			continue
		}
		for _, p := range m.Paths {
			now, err := root.ReadFile(filepath.FromSlash(p))
			if errors.Is(err, fs.ErrNotExist) {
				out[i].Deleted = append(out[i].Deleted, p)
				continue
			}
			if err != nil || strings.ContainsAny(p, "\n") {
				continue // outside the repository, or unreadable: nothing to compare
			}
			asks = append(asks, cited{mem: i, path: p, data: now})
		}
	}
	if len(asks) > 0 {
		var in strings.Builder
		for _, a := range asks {
			in.WriteString(mems[a.mem].Commit + ":" + a.path + "\n")
		}
		answer, err := r.GitOutput(ctx, []byte(in.String()), "cat-file", "--batch-check")
		if err != nil {
			return nil, err
		}
		lines := strings.Split(strings.TrimSuffix(string(answer), "\n"), "\n")
		if len(lines) != len(asks) {
			return nil, fmt.Errorf("git cat-file --batch-check answered %d lines for %d paths", len(lines), len(asks))
		}
		for k, a := range asks {
			oid, kind, _ := strings.Cut(lines[k], " ")
			if !strings.HasPrefix(kind, "blob ") {
				// Not committed when the memory was written (or not a
				// file then): nothing to compare.
				continue
			}
			if blobID(a.data, len(oid)) != oid {
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
	stale, err := r.StaleAmong(ctx, mems)
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

// shadows returns the checkout's shadow files.
func (w *Checkout) shadows() acolytedir.ShadowFiles {
	return acolytedir.ShadowFiles{Dir: cacheDir(w.Repo)}
}
