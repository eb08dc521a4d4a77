package project

import (
	"context"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/gitsync/internal/acolytedir"
	"github.com/acolyte-dev/acolyte/memory"
)

// A project write used to decode the whole memories file, re-encode it and
// re-import the whole scope into the index: 0.4 s at 10k memories and 2.3 s
// at 50k. Most writes add or remove a line or two, so when the index is
// known to hold exactly what the file holds, a write patches the file's
// bytes and the index's rows instead. "Known" means the file's content hash
// is the one recorded by the last import or write, and that import warned
// of nothing: then every line was accepted by Decode when it was imported,
// and the index can answer the duplicate check. Anything else (the file changed behind acolyte's back, a
// line this code cannot place) falls back to the full rewrite, which is
// always correct.

// patch runs one fast-path write under the .acolyte/ lock. edit gets the
// file's bytes and returns the new content as parts to write in order, nil
// for no change, or format.ErrNotPatchable; index then
// brings the index to the new file. The file is written first: if index
// fails, the recorded hash no longer matches and the next command
// re-imports. lines are the lines the edit changes, by id: the new line,
// or nil for a line it removes (see FollowShadow).
func (one OneFile) patch(ctx context.Context, w *Workspace, lines map[string][]byte, edit func(data []byte) ([][]byte, error), index func() error) error {
	unlock, last, err := one.LockForPatch(ctx, w)
	if err != nil {
		return err
	}
	defer unlock()
	path := format.MemoriesPath(w.Repo.Root)
	data, err := acolytedir.ReadMemories(w.Repo.Root)
	if errors.Is(err, fs.ErrNotExist) {
		return format.ErrNotPatchable
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	// The file must be what the index holds: the fingerprint says so
	// without hashing it, and otherwise its hash must be the recorded one.
	lastHash, _, _ := acolytedir.ParseImportState(last)
	if !one.Fingerprinted(w, last) {
		forgotten, err := acolytedir.ReadForgotten(w.Repo.Root)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("read %s: %w", acolytedir.ForgottenRel, err)
		}
		if lastHash != acolytedir.WithForgotten(acolytedir.Sha256Hex(data), forgotten) {
			return format.ErrNotPatchable
		}
	}
	next, err := edit(data)
	if err != nil || next == nil {
		return err
	}
	if acolytedir.WouldSplit(next...) {
		return format.ErrNotPatchable // change splits the project
	}
	return one.WritePatched(ctx, w, last, lines, next, index)
}

// WritePatched writes next over the memories file, which the caller holds
// the lock for and knows the index holds as the import state last says,
// then has index bring the index to it and records the new file's hash,
// fingerprint and shadow. lines are the lines that differ, by id, as patch
// takes them; nil when the caller does not know them.
func (one OneFile) WritePatched(ctx context.Context, w *Workspace, last string, lines map[string][]byte, next [][]byte, index func() error) error {
	// The new file's hash, which the import state records, needs only
	// next: it is worked out while the file is written and indexed (at
	// 100k memories a sixth of a forget's time, on the other core). It is
	// waited for on every road out, so that nothing reads next after
	// WritePatched returns.
	hashed := make(chan hash.Hash, 1)
	go func() { hashed <- acolytedir.HashParts(next...) }()
	h := sync.OnceValue(func() hash.Hash { return <-hashed })
	defer h()

	path := format.MemoriesPath(w.Repo.Root)
	if err := acolytedir.WriteAtomic(path, next...); err != nil {
		return err
	}
	stampNow := acolytedir.CurrentStamp(w.Repo.Root)
	if indexed, err := w.indexWritten(ctx, path, index); !indexed {
		return err
	}
	// edit may have added tombstones (a forget).
	ts, err := acolytedir.ReadTombstones(w.Repo.Root)
	if err != nil {
		return err
	}
	fp := acolytedir.NewFingerprint(stampNow, acolytedir.TailOf(next...), h())
	if err := w.Store.SetState(ctx, w.StateKey(), acolytedir.WithFingerprint(acolytedir.WithForgotten(acolytedir.HexSum(h()), ts.Data), fp)); err != nil {
		return err
	}
	w.Shadows().FollowShadow(acolytedir.ImportedFileHash(last), lines, acolytedir.HexSum(h()), next)
	return nil
}

// LockForPatch takes the .acolyte/ lock for a fast-path write and returns
// the import state, or format.ErrNotPatchable when the fast path may not
// run: no .acolyte/ yet (the first write also creates .gitattributes), or
// an import that worked around a problem (a line it could not read, an id
// on two lines) and left the index short of the file, which only the full
// rewrite, keeping such lines, may touch.
func (one OneFile) LockForPatch(ctx context.Context, w *Workspace) (unlock func(), state string, err error) {
	dir := filepath.Join(w.Repo.Root, format.Dir)
	if _, err := os.Stat(dir); err != nil {
		return nil, "", format.ErrNotPatchable
	}
	if split, err := acolytedir.IsSplit(w.Repo.Root); split || err != nil {
		return nil, "", format.ErrNotPatchable
	}
	unlock, err = acolytedir.LockDir(ctx, dir)
	if err != nil {
		return nil, "", err
	}
	state, err = w.Store.GetState(ctx, w.StateKey())
	if err == nil {
		if _, _, warnings := acolytedir.ParseImportState(state); len(warnings) > 0 {
			err = format.ErrNotPatchable
		}
	}
	if err != nil {
		unlock()
		return nil, "", err
	}
	return unlock, state, nil
}

// Fingerprinted reports whether the memories file is the one the import
// state's fingerprint was taken of, checked by stat and tail alone.
func (one OneFile) Fingerprinted(w *Workspace, state string) bool {
	fp, ok := acolytedir.StateFingerprint(state)
	if !ok {
		return false
	}
	mf, err := acolytedir.OpenMemories(w.Repo.Root, os.O_RDONLY)
	if err != nil {
		return false
	}
	defer mf.Close()
	return mf.Matches(fp)
}

// errNotAppendable sends an add from the append path to the splice.
var errNotAppendable = errors.New("memory does not go at the end of the file")

// Add stores a prepared project memory through the fast path,
// deduplicating against the index, which patch guarantees holds the file.
// A new memory's id is time-ordered, so it almost always belongs at the
// end: then it is appended in place (appendPatched), costing its own line
// whatever the size of the file, and otherwise spliced in.
func (one OneFile) Add(ctx context.Context, w *Workspace, m memory.Memory) (memory.Added, error) {
	var out memory.Added
	dedupe := func() (bool, error) {
		have, found, err := w.Store.FindContent(ctx, memory.ScopeProject, w.Repo.Root, m.Content)
		if err != nil || found {
			out = memory.Added{Memory: have, Existing: true}
			return true, err
		}
		out = memory.Added{Memory: m}
		return false, nil
	}
	put := func() error {
		put, err := w.Store.Put(ctx, m)
		out.Warning = put.Warning
		return err
	}
	err := one.appendPatched(ctx, w, m, dedupe, put)
	if !errors.Is(err, errNotAppendable) {
		return out, err
	}
	err = one.patch(ctx, w, map[string][]byte{m.ID: format.Line(m)}, func(data []byte) ([][]byte, error) {
		if dup, err := dedupe(); dup || err != nil {
			return nil, err
		}
		return format.InsertLine(data, m)
	}, put)
	return out, err
}

// appendPatched appends m's line to the memories file in place, when the
// fingerprint vouches for the file and m sorts after its last line, and
// returns errNotAppendable otherwise. It reads the file's tail, writes and
// syncs one line, and resumes the whole-file hash from the fingerprint's
// saved state. A failed write is truncated away, leaving the old file; a
// crash of the machine before the sync can leave a torn last line, which
// the next command reads as an invalid line and reports with its fix, and
// which is only ever the write that had not returned.
func (one OneFile) appendPatched(ctx context.Context, w *Workspace, m memory.Memory, dedupe func() (bool, error), index func() error) error {
	unlock, last, err := one.LockForPatch(ctx, w)
	if errors.Is(err, format.ErrNotPatchable) {
		return errNotAppendable
	}
	if err != nil {
		return err
	}
	defer unlock()
	fp, ok := acolytedir.StateFingerprint(last)
	if !ok {
		return errNotAppendable
	}
	mf, err := acolytedir.OpenMemories(w.Repo.Root, os.O_RDWR)
	if err != nil {
		return errNotAppendable
	}
	defer mf.Close()
	h, ok := acolytedir.ResumeHasher(fp.Digest)
	if !ok || !mf.Matches(fp) {
		return errNotAppendable
	}
	lastLine, _, ok := mf.LastLine()
	if !ok || mf.MayHoldSplitAt() {
		return errNotAppendable
	}
	line, err := format.AppendLine(lastLine, m)
	if errors.Is(err, format.ErrNotPatchable) {
		return errNotAppendable
	}
	if err != nil {
		return err
	}
	if dup, err := dedupe(); dup || err != nil {
		return err
	}
	path := format.MemoriesPath(w.Repo.Root)
	size := mf.Info.Size()
	if err := acolytedir.AppendSynced(mf.F, size, line); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	fi, err := mf.F.Stat()
	if err != nil {
		return err
	}
	if indexed, err := w.indexWritten(ctx, path, index); !indexed {
		return err
	}
	h.Write(line)
	lastHash, _, _ := acolytedir.ParseImportState(last)
	fileSum := acolytedir.HexSum(h)
	hash := fileSum
	if _, tombs, ok := strings.Cut(lastHash, "+"); ok {
		hash += "+" + tombs // forgotten.jsonl is as the fingerprint found it
	}
	tail, err := mf.ReadTail(acolytedir.TailBytes)
	if err != nil {
		return err
	}
	next := acolytedir.NewFingerprint(acolytedir.JoinStamps(w.Repo.Root, fi), acolytedir.TailOf(tail, line), h)
	if err := w.Store.SetState(ctx, w.StateKey(), acolytedir.WithFingerprint(hash, next)); err != nil {
		return err
	}
	w.Shadows().AppendShadow(size, line, acolytedir.ImportedFileHash(last), fileSum)
	return nil
}

// Remove forgets project memories through the fast path: their
// tombstones first, then their lines.
func (one OneFile) Remove(ctx context.Context, w *Workspace, mems []memory.Memory, now time.Time) error {
	gone := make(map[string]bool, len(mems))
	lines := make(map[string][]byte, len(mems))
	ids := make([]string, 0, len(mems))
	for _, m := range mems {
		gone[m.ID] = true
		lines[m.ID] = nil
		ids = append(ids, m.ID)
	}
	return one.patch(ctx, w, lines, func(data []byte) ([][]byte, error) {
		next, err := format.RemoveLines(data, gone)
		if err != nil {
			return nil, err
		}
		return next, w.AddTombstones(mems, now)
	}, func() error {
		_, err := w.Store.Delete(ctx, w.Vis, ids...)
		return err
	})
}

// AddTombstones records in forgotten.jsonl that mems were forgotten at now.
// The caller holds the .acolyte/ lock and writes the memories file after:
// a crash between the two leaves the memories hidden, as the user asked.
func (w *Workspace) AddTombstones(mems []memory.Memory, now time.Time) error {
	if err := EnsureAttributes(w.Repo.Root); err != nil {
		return err
	}
	ts, err := acolytedir.ReadTombstones(w.Repo.Root)
	if err != nil {
		return err
	}
	if len(ts.Warnings) > 0 {
		return fmt.Errorf("%w: %s", format.ErrInvalidFile, ts.Warnings[0])
	}
	list := ts.List
	for _, m := range mems {
		list = append(list, format.TombstoneFor(m, now))
	}
	return format.WriteForgotten(w.Repo.Root, list)
}
