package gitsync

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/internal/atomicfile"
	"github.com/acolyte-dev/acolyte/memory"
)

// This file holds what gitsync keeps in .acolyte/ beside the memories file
// (the lock, .gitattributes, .gitignore) and Update, the locked
// read-change-write of the memories file through package format.

// writeAtomic replaces path with the parts in order (atomicfile.Write),
// synced to disk, as a 0644 file like the rest of the checkout.
func writeAtomic(path string, parts ...[]byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	if err := atomicfile.Write(path, atomicfile.Options{Perm: 0o644, Durable: true}, atomicfile.Bytes(parts...)); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// Update is the one way to change the memories file: it takes the lock,
// reads the file, lets change compute the new set and writes it back. If
// change fails, the file is left alone. A line that is not a valid memory
// is kept as it is, after the memories (format.EncodeKeeping), so that it
// blocks no write and is not lost. A file that a merge without acolyte's
// driver left with an id on two lines is refused with the line and the
// fix: rewriting it here would drop a line without a word, while `acolyte
// sync` resolves duplicates and says which line it drops.
func Update(ctx context.Context, root string, change func([]memory.Memory) ([]memory.Memory, error)) error {
	unlock, err := LockDir(ctx, filepath.Join(root, format.Dir))
	if err != nil {
		return err
	}
	defer unlock()
	l, err := layoutOf(root)
	if err != nil {
		return err
	}
	return l.update(change)
}

// update is Update for the one file; the caller holds the lock. A change
// that takes the project past format.SplitAt splits it.
func (one oneFile) update(change func([]memory.Memory) ([]memory.Memory, error)) error {
	root := one.root
	path := format.MemoriesPath(root)
	data, err := readMemories(root)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("reading project memories: %w", err)
	}
	d, err := format.DecodeAll(format.Dir+"/"+format.MemoriesFile, data)
	if err != nil {
		return err
	}
	if len(d.Duplicates) > 0 {
		le := d.Duplicates[0]
		return &format.LineError{File: le.File, Line: le.Line, Err: fmt.Errorf("%w: %v; run `%s` first", format.ErrInvalidFile, le.Err, FixCommand)}
	}
	ts, err := readTombstones(root)
	if err != nil {
		return err
	}
	if len(ts.warnings) > 0 {
		return fmt.Errorf("%w: %s", format.ErrInvalidFile, ts.warnings[0])
	}
	kept, _ := format.Forget(d.Memories, ts.list)
	next, err := change(kept)
	if err != nil {
		return err
	}
	if len(next) > format.SplitAt {
		_, err := writeSplitFiles(root, splitProject{}, []format.Part{{File: format.MemoriesFile, Decoded: d}}, next)
		return err
	}
	return format.WriteFileKeeping(path, next, d.InvalidLines)
}

// update is Update for a split project; the caller holds the lock.
func (s shards) update(change func([]memory.Memory) ([]memory.Memory, error)) error {
	root := s.root
	p, err := readSplit(root)
	if err != nil {
		return err
	}
	if len(p.tombs.warnings) > 0 {
		return fmt.Errorf("%w: %s", format.ErrInvalidFile, p.tombs.warnings[0])
	}
	d, parts, err := p.decode()
	if err != nil {
		return err
	}
	if len(d.Duplicates) > 0 {
		le := d.Duplicates[0]
		return &format.LineError{File: le.File, Line: le.Line, Err: fmt.Errorf("%w: %v; run `%s` first", format.ErrInvalidFile, le.Err, FixCommand)}
	}
	kept, _ := format.Forget(d.Memories, p.tombs.list)
	next, err := change(kept)
	if err != nil {
		return err
	}
	_, err = writeSplitFiles(root, p, parts, next)
	return err
}

// Names of the helper files inside .acolyte/.
const (
	lockFile       = ".lock"
	attributesFile = ".gitattributes"
	ignoreFile     = ".gitignore"
	// MergeDriverName is the name the merge driver is registered under in
	// git config (merge.<name>.driver) and .gitattributes.
	MergeDriverName = "acolyte"
)

// EnsureAttributes makes .acolyte/.gitattributes merge memories.jsonl and
// forgotten.jsonl with git's union driver and .acolyte/.gitignore ignore the lock and temporary
// files. Lines already present are kept; missing ones are added.
//
// Union is the tracked fallback because it needs nothing installed: two
// branches that both add memories (which, with time-ordered ids, both
// append at the end of the file) merge cleanly on any clone. Where acolyte
// is installed, the merge driver set in $GIT_DIR/info/attributes takes
// precedence and also resolves edits (see InstallMergeDriver).
func EnsureAttributes(root string) error {
	if err := GuardDir(root); err != nil {
		return err
	}
	dir := filepath.Join(root, format.Dir)
	// Tombstones are a set that only grows but for compaction and reverts,
	// which union merges exactly; no driver is needed for them.
	attrs := []string{format.MemoriesFile + " merge=union", format.ForgottenFile + " merge=union"}
	ignores := []string{"/" + lockFile, "/" + atomicfile.TempPrefix + "*"}
	l, err := layoutOf(root)
	if err != nil {
		return err
	}
	moreAttrs, moreIgnores := l.attributes()
	attrs, ignores = append(attrs, moreAttrs...), append(ignores, moreIgnores...)
	if err := ensureLines(filepath.Join(dir, attributesFile), attrs...); err != nil {
		return err
	}
	return ensureLines(filepath.Join(dir, ignoreFile), ignores...)
}

// mergeAttribute routes the memories file to the acolyte merge driver; it
// lives in $GIT_DIR/info/attributes, which outranks every .gitattributes.
const mergeAttribute = "/" + format.Dir + "/" + format.MemoriesFile + " merge=" + MergeDriverName

func ensureLines(path string, want ...string) error {
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	have := make(map[string]bool)
	for _, line := range strings.Split(string(data), "\n") {
		have[strings.TrimSpace(line)] = true
	}
	out := string(data)
	added := false
	for _, line := range want {
		if have[line] {
			continue
		}
		if out != "" && !strings.HasSuffix(out, "\n") {
			out += "\n"
		}
		out += line + "\n"
		added = true
	}
	if !added {
		return nil
	}
	return writeAtomic(path, []byte(out))
}

// forgottenRel names the tombstone file in messages and in the git index.
const forgottenRel = format.Dir + "/" + format.ForgottenFile

// tombstones is what a reader got from forgotten.jsonl: its bytes (nil when
// it is missing), the tombstones it could read and a warning per line it
// could not.
type tombstones struct {
	data     []byte
	list     []format.Tombstone
	warnings []string
}

// readTombstones reads forgotten.jsonl, through readForgotten (an os.Root,
// refusing a link out of the repository, at most format.MaxFileBytes). A
// file with conflict markers is an error: hiding no memory would bring
// back every one it forgot.
func readTombstones(root string) (tombstones, error) {
	data, err := readForgotten(root)
	if errors.Is(err, fs.ErrNotExist) {
		return tombstones{}, nil
	}
	if err != nil {
		return tombstones{}, fmt.Errorf("reading forgotten memories: %w", err)
	}
	return decodeTombstones(data)
}

func decodeTombstones(data []byte) (tombstones, error) {
	list, invalid, err := format.DecodeForgotten(forgottenRel, data)
	if err != nil {
		return tombstones{}, err
	}
	t := tombstones{data: data, list: list}
	for _, le := range invalid {
		t.warnings = append(t.warnings, le.Error()+"; the line is left out until it is fixed")
	}
	return t, nil
}

// withForgotten extends the memories file's content hash an import records
// with forgotten.jsonl's, so that a merge that changed only the tombstones
// still re-imports. Without tombstones it is the memories file's hash
// alone, as it was before tombstones existed.
func withForgotten(hash string, forgotten []byte) string {
	if len(forgotten) == 0 {
		return hash
	}
	return hash + "+" + sha256Hex(forgotten)
}

// RemoveStaleTemps removes the temporary files killed writers left in
// .acolyte/ (atomicfile.RemoveStale), and in the worktree root those an
// older merge driver made beside git's .merge_file_XXXXXX; a file whose
// writer is still running is left alone.
func RemoveStaleTemps(root string) {
	atomicfile.RemoveStale(filepath.Join(root, format.Dir), staleTempAge)
	atomicfile.RemoveStaleMatching(root, staleTempAge, func(name string) bool {
		return strings.HasPrefix(name, atomicfile.TempPrefix+mergeTempPrefix)
	})
}

// mergeTempPrefix starts the name of the file git hands the merge driver
// as OURS.
const mergeTempPrefix = ".merge_file_"
