package precommit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/acolyte-dev/acolyte/gitsync/derive"
	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/gitsync/internal/acolytedir"
	"github.com/acolyte-dev/acolyte/gitsync/internal/git"
	"github.com/acolyte-dev/acolyte/gitsync/internal/project"
	"github.com/acolyte-dev/acolyte/internal/atomicfile"
	"github.com/acolyte-dev/acolyte/memory"
)

// A commit that changes one rule used to cost the pre-commit hook the whole
// memories file, twice: decoded, re-encoded and scanned for secrets, staged
// side and worktree side, 3.6 s of CPU at 100k memories (issue #25). What a
// commit changes is its staged change, so the hook now works from what it
// checked before. Each run records the staged memories blob it left behind,
// by git's object id, as verified: canonical, every line a valid memory that
// the staged tombstones do not cover, no secret in a stored memory, and the
// ids of its derived lines (verifiedBlob). The next commit starts from that
// blob: the staged file is either it, or its line diff against it, and only
// the lines that diff adds are decoded and scanned; the derived lines are
// found by id and spliced (format.Splice), which gives the bytes the full
// path would encode. The worktree follows the same way, by its line diff
// against the staged file. Anything this cannot vouch for (no record, a
// different build of acolyte, a line that is not canonical, a secret, a
// file changed behind the index's back) takes the full path, which is
// always correct and records the blob it leaves for the next commit.

// maxVerifiedChanges is the most changed lines the hook checks one by one
// against a verified blob; more are cheaper decoded whole.
const maxVerifiedChanges = 1024

// verifiedBlob is what the last pre-commit hook knew of the memories blob
// it staged or found staged. It is a fact about the blobs' content, so it
// stays true whatever happens to the commit; Build ties it to the secret
// detector that checked it.
type verifiedBlob struct {
	// Memories and Forgotten are git object ids of memories.jsonl and
	// forgotten.jsonl as staged; Forgotten is empty when none was.
	Memories  string `json:"memories"`
	Forgotten string `json:"forgotten,omitempty"`
	// SHA256 is Memories' content hash, as an import state records a
	// file's: while the worktree file the import state vouches for has it,
	// that file is the staged one, and git need not inflate the blob.
	SHA256 string `json:"sha256"`
	// Derived are the ids of the rule and seed lines Memories holds.
	Derived []string `json:"derived"`
	Build   string   `json:"build"`
}

func VerifiedPath(w *project.Workspace) string {
	return filepath.Join(project.CacheDir(w.Repo), "verified.json")
}

// BuildKey names the running acolyte binary by path, size and time: a
// blob another build verified may hold what this build's detector refuses.
func BuildKey() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%s|%d|%d", exe, fi.Size(), fi.ModTime().UnixNano())
}

func LoadVerified(w *project.Workspace) (verifiedBlob, bool) {
	var v verifiedBlob
	ok := readRecord(VerifiedPath(w), &v) && v.Memories != ""
	return v, ok && thisBuild(v.Build)
}

// saveVerified records v, best effort: without it the next commit takes
// the full path.
func saveVerified(w *project.Workspace, v verifiedBlob) {
	if v.Build = BuildKey(); v.Build != "" {
		writeRecord(VerifiedPath(w), v)
	}
}

// thisBuild reports whether a record names the running build (BuildKey).
func thisBuild(build string) bool {
	key := BuildKey()
	return key != "" && build == key
}

// readRecord decodes the JSON record at path into v; false when there is
// none that decodes.
func readRecord(path string, v any) bool {
	data, err := os.ReadFile(path)
	return err == nil && json.Unmarshal(data, v) == nil
}

// writeRecord writes v as JSON at path, best effort: a record the hooks
// keep in $GIT_DIR/acolyte only spares the next run work, so a failure
// removes it rather than leave an old one.
func writeRecord(path string, v any) {
	data, err := json.Marshal(v)
	if err != nil || os.MkdirAll(filepath.Dir(path), 0o755) != nil {
		return
	}
	if atomicfile.Write(path, atomicfile.Options{Perm: 0o644}, atomicfile.Bytes(data)) != nil {
		os.Remove(path)
	}
}

// derivedIDs are the ids of the derived memories among mems.
func derivedIDs(mems []memory.Memory) []string {
	var out []string
	for _, m := range mems {
		if derive.IsDerived(m) {
			out = append(out, m.ID)
		}
	}
	return out
}

func setOf(ids []string) map[string]bool {
	out := make(map[string]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out
}

func covered(ts []format.Tombstone, m memory.Memory) bool {
	for _, t := range ts {
		if t.Covers(m) {
			return true
		}
	}
	return false
}

// verifyChanges checks the lines a file adds to a verified one (the new
// side of changes, from format.DiffLines): each canonical, not covered by
// ts, and, when stored, free of secrets; derived is updated to the new
// file's derived ids. ok is false when any line fails, and the caller
// takes the full path, which refuses or reports it as it always has.
func verifyChanges(changes []format.LineChange, removed []string, derived map[string]bool, ts []format.Tombstone) (map[string]bool, bool) {
	out := maps.Clone(derived)
	for _, id := range removed {
		delete(out, id)
	}
	for _, c := range changes {
		m, ok := format.CanonicalLine(c.New)
		if !ok || covered(ts, m) {
			return nil, false
		}
		delete(out, m.ID)
		if derive.IsDerived(m) {
			// Every derived line is replaced by what its file derives
			// now, so a secret in one never reaches the commit.
			out[m.ID] = true
		} else if _, found := format.FindSecret(m); found {
			return nil, false
		}
	}
	return out, true
}

// stagedFile is the staged memories file, verified.
type stagedFile struct {
	blob, forgottenBlob string
	data                []byte
	ts                  acolytedir.Tombstones
	derived             map[string]bool
}

// verifiedStaged reads the staged memories file and vouches for it from
// the record v: it is the verified blob, or differs from it only by lines
// that pass verifyChanges. When the worktree file wt is the verified blob,
// by content hash, its bytes are used instead of asking git for them. ok is
// false when it cannot vouch.
func (one StagedOneFile) verifiedStaged(w *project.Workspace, ix *git.Index, v verifiedBlob, wt worktreeFile) (stagedFile, bool, error) {
	var s stagedFile
	e, staged := ix.Entries[acolytedir.MemoriesRel]
	if !staged || e.Mode != "100644" {
		return s, false, nil
	}
	s.blob = e.Blob
	if fe, ok := ix.Entries[acolytedir.ForgottenRel]; ok {
		s.forgottenBlob = fe.Blob
	}
	if s.forgottenBlob != v.Forgotten {
		return s, false, nil
	}
	var err error
	var forgotten []byte
	if s.forgottenBlob != "" {
		if forgotten, err = ix.Cat(s.forgottenBlob); err != nil {
			return s, false, err
		}
	}
	if s.ts, err = acolytedir.DecodeTombstones(forgotten); err != nil || len(s.ts.Warnings) > 0 {
		return s, false, nil
	}
	s.derived = setOf(v.Derived)
	if s.blob == v.Memories && v.SHA256 != "" && wt.fileHash == v.SHA256 {
		s.data = wt.data
		return s, true, nil
	}
	if s.data, err = ix.Cat(s.blob); err != nil {
		return s, false, err
	}
	if s.blob == v.Memories {
		return s, true, nil
	}
	// A pruned blob (a commit abandoned long ago) is no base.
	base, err := ix.Cat(v.Memories)
	if err != nil {
		return s, false, nil
	}
	changes, removed, _, err := format.DiffLines(base, s.data, maxVerifiedChanges)
	if err != nil {
		return s, false, nil
	}
	var ok bool
	s.derived, ok = verifyChanges(changes, removed, s.derived, s.ts.List)
	return s, ok, nil
}

// worktreeFile is the worktree's memories file, when the index holds
// exactly it: the import state's stamp or fingerprint vouches for it.
type worktreeFile struct {
	data []byte
	ts   acolytedir.Tombstones
	// last is the import state that vouched for it, fileHash the content
	// hash it records.
	last, fileHash string
	// changes and removed are its line diff from the staged file: Old is
	// the staged line, New the worktree's.
	changes []format.LineChange
	removed []string
}

// vouchedWorktree reads the worktree's memories file and tombstones. ok is
// false when the import state does not vouch for them.
func (one StagedOneFile) vouchedWorktree(ctx context.Context, w *project.Workspace) (worktreeFile, bool, error) {
	var wt worktreeFile
	last, err := w.Store.GetState(ctx, w.StateKey())
	if err != nil {
		return wt, false, err
	}
	_, _, warnings := acolytedir.ParseImportState(last)
	if len(warnings) > 0 || !one.vouched(w, last) {
		return wt, false, nil
	}
	if wt.data, err = acolytedir.ReadMemories(w.Repo.Root); err != nil {
		return wt, false, nil
	}
	if wt.ts, err = acolytedir.ReadTombstones(w.Repo.Root); err != nil || len(wt.ts.Warnings) > 0 {
		return wt, false, nil
	}
	// Read between two checks, so it is the file they vouch for.
	if !one.vouched(w, last) {
		return wt, false, nil
	}
	wt.last = last
	wt.fileHash = acolytedir.ImportedFileHash(last)
	return wt, true, nil
}

// diffFrom takes the worktree file's line diff from the staged one; false
// when either is out of canonical order or they differ too much.
func (wt *worktreeFile) diffFrom(staged []byte) bool {
	if bytes.Equal(staged, wt.data) {
		return true // the usual case after a commit: no diff to walk
	}
	var err error
	wt.changes, wt.removed, _, err = format.DiffLines(staged, wt.data, maxVerifiedChanges)
	return err == nil
}

// vouched reports whether the memories file is the one the import state
// was recorded for, by its settled stamp or the writer's fingerprint.
func (one StagedOneFile) vouched(w *project.Workspace, state string) bool {
	_, lastStamp, _ := acolytedir.ParseImportState(state)
	fi, err := os.Stat(format.MemoriesPath(w.Repo.Root))
	if err != nil {
		return false
	}
	ffi, ferr := os.Stat(format.ForgottenPath(w.Repo.Root))
	if ferr != nil && !errors.Is(ferr, fs.ErrNotExist) {
		return false
	}
	if lastStamp != "" && lastStamp == git.Stamp(fi)+acolytedir.ForgottenStamp(ffi, ferr) {
		return true
	}
	return one.Fingerprinted(w, state)
}

// stagedHandEdits is HandEditsToStamp for the staged file, from the
// worktree's diff: the index holds the worktree file, so a memory is told
// apart from its indexed version only on a line where the two files differ.
func (one StagedOneFile) stagedHandEdits(ctx context.Context, w *project.Workspace, s stagedFile, wt worktreeFile) (map[string]time.Time, bool, error) {
	pending, err := w.PendingHandEdits(ctx)
	if err != nil {
		return nil, false, err
	}
	var file, indexed []memory.Memory
	for _, c := range wt.changes {
		if c.Old == nil {
			continue
		}
		sm, serr := format.DecodeLine(c.Old)
		wm, werr := format.DecodeLine(c.New)
		if serr != nil || werr != nil {
			return nil, false, nil
		}
		if !covered(s.ts.List, sm) {
			file = append(file, sm)
		}
		if !covered(wt.ts.List, wm) {
			indexed = append(indexed, wm)
		}
	}
	found := project.HandEdits(file, indexed)
	if pending == nil {
		return found, true, nil
	}
	maps.Copy(pending, found)
	return pending, true, nil
}

// spliced is a memories file with its derived lines (and the lines hand
// edits restamp) replaced: held are those lines as the file holds them,
// current the same with hand edits stamped, next what replaces them, parts
// the new file.
type spliced struct {
	held, current, next []memory.Memory
	parts               [][]byte
}

// spliceDerived does to data what Refresh does to the whole file: its lines
// with ids in derivedInFile, in derived or in edits are decoded, stamped and
// refreshed, and spliced back. data must be vouched for: canonical, and no
// line of it covered by ts.
func spliceDerived(data []byte, derivedInFile map[string]bool, derived []memory.Memory, edits map[string]time.Time, ts []format.Tombstone, now time.Time) (spliced, bool) {
	wanted := maps.Clone(derivedInFile)
	for _, m := range derived {
		wanted[m.ID] = true
	}
	for id := range edits {
		wanted[id] = true
	}
	lines, err := format.LinesByID(data, wanted)
	if err != nil {
		return spliced{}, false
	}
	var out spliced
	for _, id := range slices.Sorted(maps.Keys(lines)) {
		m, err := format.DecodeLine(lines[id])
		if err != nil || covered(ts, m) {
			return spliced{}, false
		}
		out.held = append(out.held, m)
	}
	out.current = project.StampHandEdits(slices.Clone(out.held), edits, now)
	out.next = derive.Refresh(slices.Clone(out.current), derived)
	remove := make(map[string]bool, len(out.held))
	for _, m := range out.held {
		remove[m.ID] = true
	}
	if out.parts, err = format.Splice(data, remove, out.next); err != nil {
		return spliced{}, false
	}
	return out, true
}

// changedLines are the lines the splice changes, by id, as
// Checkout.patch takes them: the new line, or nil for one it removes.
// Derived lines it re-encodes as they were are left out.
func (sp spliced) changedLines() map[string][]byte {
	lines := make(map[string][]byte, len(sp.held))
	was := make(map[string][]byte, len(sp.held))
	for _, m := range sp.held {
		lines[m.ID] = nil
		was[m.ID] = format.Line(m)
	}
	for _, m := range sp.next {
		line := format.Line(m)
		if bytes.Equal(line, was[m.ID]) {
			delete(lines, m.ID)
		} else {
			lines[m.ID] = line
		}
	}
	return lines
}

// PreCommitFast is preCommit from the verified blob: it costs the staged
// change, not the file. ok is false when it did nothing and the caller
// takes the full path.
func (one StagedOneFile) PreCommitFast(ctx context.Context, w *project.Workspace, ix *git.Index, d derive.Derivation, res Result) (Result, bool, error) {
	v, ok := LoadVerified(w)
	if !ok {
		return res, false, nil
	}
	wt, ok, err := one.vouchedWorktree(ctx, w)
	if err != nil || !ok {
		return res, false, err
	}
	s, ok, err := one.verifiedStaged(w, ix, v, wt)
	if err != nil || !ok || !wt.diffFrom(s.data) {
		return res, false, err
	}
	edits, ok, err := one.stagedHandEdits(ctx, w, s, wt)
	if err != nil || !ok {
		return res, false, err
	}
	now := w.Clock()
	sp, ok := spliceDerived(s.data, s.derived, d.Memories, edits, s.ts.List, now)
	if !ok || acolytedir.WouldSplit(sp.parts...) {
		return res, false, nil
	}
	// Staging the new blob is git compressing the whole file, about half
	// of a commit at 100k memories, and the worktree sync writes the same
	// change to the worktree file and the search index: they touch
	// different files, so they run side by side.
	var staging <-chan stageResult
	if !partsEqual(sp.parts, s.data) {
		if err := project.EnsureAttributes(w.Repo.Root); err != nil {
			return res, true, err
		}
		staging = one.stageAsync(ctx, w, ix, sp.parts)
	}
	synced, ok, err := one.syncFromStaged(ctx, w, s, wt, edits, now)
	if err == nil && !ok {
		synced, err = w.Sync(ctx, edits, now)
	}
	res.Import = synced.Import
	res.Warnings = append(res.Warnings, synced.Refused...)
	blob, sum := s.blob, ""
	if staging != nil {
		// Waited for even after a failed sync: the hook must not end
		// while git is still writing the index.
		st := <-staging
		if st.err != nil {
			return res, true, errors.Join(st.err, err)
		}
		blob, sum = st.blob, st.sha256
		res.Changes, res.Staged = project.Diff(sp.current, sp.next), true
	} else {
		sum = acolytedir.HexSum(acolytedir.HashParts(sp.parts...))
	}
	saveVerified(w, verifiedBlob{Memories: blob, Forgotten: s.forgottenBlob, SHA256: sum, Derived: derivedIDs(sp.next)})
	return res, true, err
}

// stageResult is what stageAsync did: the blob it staged and its SHA-256.
type stageResult struct {
	blob, sha256 string
	err          error
}

// stageAsync stages parts as the memories file, and the helper files
// beside it that the index lacks, in a goroutine, and sends what it did.
// The caller has written the helper files (project.EnsureAttributes).
func (one StagedOneFile) stageAsync(ctx context.Context, w *project.Workspace, ix *git.Index, parts [][]byte) <-chan stageResult {
	done := make(chan stageResult, 1)
	go func() {
		var st stageResult
		st.blob, st.err = one.stage(ctx, w, parts...)
		if st.err == nil {
			st.err = stageHelpers(ctx, w, ix)
		}
		if st.err == nil {
			st.sha256 = acolytedir.HexSum(acolytedir.HashParts(parts...))
		}
		done <- st
	}()
	return done
}

// stage writes parts, in order, as the staged memories file and returns
// its blob id.
func (one StagedOneFile) stage(ctx context.Context, w *project.Workspace, parts ...[]byte) (string, error) {
	return stageFile(ctx, w, acolytedir.MemoriesRel, parts...)
}

// syncFromStaged is sync for a worktree file vouched for by its diff from
// the staged file: the lines it adds are checked as the staged ones were,
// its derived lines are spliced, and the file is patched in place with the
// rows that changed. ok is false when it did nothing and the caller syncs
// in full.
func (one StagedOneFile) syncFromStaged(ctx context.Context, w *project.Workspace, s stagedFile, wt worktreeFile, edits map[string]time.Time, now time.Time) (project.Synced, bool, error) {
	// The lines both files share were checked against the staged
	// tombstones only.
	if !bytes.Equal(wt.ts.Data, s.ts.Data) {
		return project.Synced{}, false, nil
	}
	derived, ok := verifyChanges(wt.changes, wt.removed, s.derived, wt.ts.List)
	if !ok || !one.compactsToItself(w, wt, now) {
		return project.Synced{}, false, nil
	}
	dw, err := derive.Worktree(w.Repo.Root)
	if err != nil {
		return project.Synced{}, true, err
	}
	out := project.Synced{Warnings: dw.Skipped, Refused: dw.Refused}
	sp, ok := spliceDerived(wt.data, derived, dw.Memories, edits, wt.ts.List, now)
	if !ok || len(project.Diff(sp.held, sp.next)) > project.MaxDiffChanges {
		return project.Synced{}, false, nil
	}
	if partsEqual(sp.parts, wt.data) {
		out.Import, err = w.Refresh(ctx)
		return out, true, err
	}
	// What change checks before it writes.
	if err := project.EnsureAttributes(w.Repo.Root); err != nil {
		return out, true, err
	}
	err = one.patchVouched(ctx, w, wt.last, sp.changedLines(), sp.parts, func() (err error) {
		out.Import.ReplaceStats, err = one.indexSpliced(ctx, w, sp, bytes.Count(wt.data, []byte("\n"))-1, wt.ts.List)
		return err
	})
	if errors.Is(err, format.ErrNotPatchable) {
		return project.Synced{}, false, nil
	}
	if err == nil && len(edits) > 0 {
		err = w.SetPendingHandEdits(ctx, nil)
	}
	return out, true, err
}

// patchVouched writes parts over the memories file, under the lock, when
// the import state is still last and still vouches for the file: the one
// read with it, whose index the caller's index func updates. Otherwise it
// is format.ErrNotPatchable. lines are the lines that change, as patch
// takes them.
func (one StagedOneFile) patchVouched(ctx context.Context, w *project.Workspace, last string, lines map[string][]byte, parts [][]byte, index func() error) error {
	unlock, state, err := one.LockForPatch(ctx, w)
	if err != nil {
		return err
	}
	defer unlock()
	if state != last || !one.vouched(w, state) {
		return format.ErrNotPatchable
	}
	return one.WritePatched(ctx, w, state, lines, parts, index)
}

// compactsToItself reports whether tidyTombstones would leave the
// worktree's tombstones as they are; it asks the file only about their ids.
func (one StagedOneFile) compactsToItself(w *project.Workspace, wt worktreeFile, now time.Time) bool {
	if len(wt.ts.List) == 0 {
		return true
	}
	ids := make(map[string]bool, len(wt.ts.List))
	for _, t := range wt.ts.List {
		ids[t.ID] = true
	}
	lines, err := format.LinesByID(wt.data, ids)
	if err != nil {
		return false
	}
	inFile := make(map[string]bool, len(lines))
	for id := range lines {
		inFile[id] = true
	}
	return bytes.Equal(format.EncodeForgotten(format.Compact(wt.ts.List, inFile, now)), wt.ts.Data)
}

// indexSpliced brings the index, which holds the file before the splice,
// of lines memory lines, to the file after it, by the rows the splice
// changed; the stats count every other memory of the file as unchanged, as
// a whole comparison would. When the index turns out not to hold those
// rows, it takes the whole file.
func (one StagedOneFile) indexSpliced(ctx context.Context, w *project.Workspace, sp spliced, lines int, ts []format.Tombstone) (memory.ReplaceStats, error) {
	whole := false
	st, err := w.IndexDiff(ctx, sp.held, sp.next, func() (memory.ReplaceStats, error) {
		whole = true
		d, err := format.DecodeAll(acolytedir.MemoriesRel, bytes.Join(sp.parts, nil))
		if err != nil {
			return memory.ReplaceStats{}, err
		}
		kept, _ := format.Forget(d.Memories, ts)
		return w.Store.ReplaceScope(ctx, memory.ScopeProject, w.Repo.Root, kept)
	})
	if err == nil && !whole {
		st.Unchanged += lines - len(sp.held)
	}
	return st, err
}

// partsEqual reports whether parts, in order, are data.
func partsEqual(parts [][]byte, data []byte) bool {
	for _, p := range parts {
		if len(p) > len(data) || !bytes.Equal(p, data[:len(p)]) {
			return false
		}
		data = data[len(p):]
	}
	return len(data) == 0
}
