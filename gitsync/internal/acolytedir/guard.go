// Package acolytedir reads and writes the files in a project's .acolyte/
// directory: guarded against links out of the repository and bounded in
// size, written atomically under the directory's lock, with the
// tombstones, a split project's shards and the import state's stamps,
// fingerprints and shadows that let a reader trust them unread. It knows
// nothing of the index or of which layout a project has.
package acolytedir

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/acolyte-dev/acolyte/gitsync/derive"
	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/internal/subpath"
	"github.com/acolyte-dev/acolyte/memory"
)

// ErrOutside refuses a .acolyte/ directory, or a file acolyte keeps in it,
// that a symlink leads out of the repository. A clone decides what its
// .acolyte/ holds: followed, such a link would import another checkout's
// memories here, and the next write would copy them into this repository
// (or write acolyte's files into a directory elsewhere).
var ErrOutside = errors.New("is a symlink that resolves outside the repository")

// ErrNotRegular refuses a named pipe, a socket or a device where acolyte
// keeps a file of project memory: opened for reading, a FIFO would hang
// every command until something wrote to it.
var ErrNotRegular = errors.New("is not a regular file")

// notRegular is ErrNotRegular for rel, saying what it is and the fix.
func notRegular(rel string, mode fs.FileMode) error {
	what := "a special file"
	switch t := mode.Type(); {
	case t&fs.ModeNamedPipe != 0:
		what = "a named pipe (FIFO)"
	case t&fs.ModeSocket != 0:
		what = "a socket"
	case t&fs.ModeDevice != 0:
		what = "a device"
	case t&fs.ModeDir != 0:
		what = "a directory"
	}
	return fmt.Errorf("%s %w but %s; acolyte reads project memory only from regular files. "+
		"Remove it (`rm %s`), then `git checkout -- %s` or `acolyte sync`", rel, ErrNotRegular, what, rel, rel)
}

// openRegular opens rel through r without waiting on it (O_NONBLOCK, so a
// FIFO does not block the open) and refuses anything but a regular file.
func openRegular(r *os.Root, rel string, flag int) (*os.File, fs.FileInfo, error) {
	f, err := r.OpenFile(filepath.FromSlash(rel), flag|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, notRegular(rel, fi.Mode())
	}
	return f, fi, nil
}

// ErrTooLarge refuses a memories file over format.MaxFileBytes, or of more
// lines than format.MaxFileMemories and its header.
var ErrTooLarge = errors.New("memories file is too large")

// MaxIndexedMemories is the most project memories a checkout indexes: the
// local store takes about 0.1 ms of CPU per memory to import (FTS5 and the
// rows, BenchmarkImportChanged), so 100k is seconds once, while the 256 MiB
// the files may hold (about a million) would stall every command for
// minutes. It is one limit, counted in memories, applied the same way on
// every road: no write, sync, hook, merge or check refuses a project for
// holding more, and a whole import leaves the oldest stored memories past
// it out of search, with a warning (CapIndexed). What it bounds is what
// one import costs, so writes and incremental imports, which cost the
// change they bring, add it even past the limit, until the next whole
// import caps the index again. One file (the one file, or a shard) of more
// lines than that is refused by every reader as it is read
// (format.MaxFileMemories, the same number): no file acolyte writes comes
// near it.
const MaxIndexedMemories = format.MaxFileMemories

// MaxFileLines is the most lines a file of project memory may have: its
// header and format.MaxFileMemories memories.
const MaxFileLines = format.MaxFileMemories + 1

// TooManyLines is ErrTooLarge for rel, a file of size bytes and more than
// MaxFileLines lines.
func TooManyLines(rel string, size int64) error {
	return fmt.Errorf("%s: %w: it is %d bytes of over %d lines, and a file of project memory holds at most %d memories, as many as acolyte indexes. "+
		"Find what filled it (`git log --stat -- %s`), remove those lines by hand, then run `acolyte sync`", rel, ErrTooLarge, size, MaxFileLines, format.MaxFileMemories, rel)
}

// acolyteFiles are the files acolyte writes in .acolyte/ (seeds.json is
// only read, through an os.Root, and a link out of it is skipped with a
// warning like an instruction file's).
var acolyteFiles = []string{format.MemoriesFile, format.ShardsDir, format.ForgottenFile, LockFile, AttributesFile, IgnoreFile}

// GuardDir refuses, with the path and the fix, a .acolyte/ under root that
// is, or holds as one of acolyte's files, a symlink resolving outside root
// (or one whose target does not exist, which a write would create
// wherever it points). A link that stays inside the repository is fine.
func GuardDir(root string) error {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return fmt.Errorf("resolving the repository root: %w", err)
	}
	rels := []string{format.Dir}
	for _, f := range acolyteFiles {
		rels = append(rels, format.Dir+"/"+f)
	}
	for _, rel := range rels {
		p := filepath.Join(root, filepath.FromSlash(rel))
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("checking %s: %w", rel, err)
		}
		wantDir := rel == format.Dir || rel == ShardsRel
		if fi.Mode()&fs.ModeSymlink == 0 {
			if !wantDir && !fi.Mode().IsRegular() && !fi.IsDir() {
				return notRegular(rel, fi.Mode())
			}
			continue
		}
		resolved, err := filepath.EvalSymlinks(p)
		if err == nil {
			if _, ok := subpath.Rel(realRoot, resolved); ok {
				if st, err := os.Stat(resolved); err == nil && !wantDir && !st.Mode().IsRegular() && !st.IsDir() {
					return notRegular(rel, st.Mode())
				}
				continue
			}
		} else {
			resolved = "a path that does not exist"
		}
		kind := "a regular file"
		if rel == format.Dir || rel == ShardsRel {
			kind = "a directory"
		}
		return fmt.Errorf("%s %w (to %s); acolyte neither reads nor writes project memory outside the checkout. "+
			"Replace the link with %s: `rm %s`, then `acolyte sync`", rel, ErrOutside, resolved, kind, rel)
	}
	return nil
}

// ReadMemories reads the memories file under root for a reader or a
// writer: through GuardDir and an os.Root (so neither a link out nor one
// swapped in while acolyte runs is followed), and at most
// format.MaxFileBytes.
func ReadMemories(root string) ([]byte, error) {
	return ReadAcolyteFile(root, format.MemoriesFile)
}

// ReadForgotten reads forgotten.jsonl under root the way ReadMemories reads
// the memories file; a missing file is fs.ErrNotExist.
func ReadForgotten(root string) ([]byte, error) {
	return ReadAcolyteFile(root, format.ForgottenFile)
}

// ReadAcolyteFile reads .acolyte/name under root through GuardDir and an
// os.Root, at most format.MaxFileBytes.
func ReadAcolyteFile(root, name string) ([]byte, error) {
	r, err := OpenGuarded(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return ReadAcolyteFileIn(r, name)
}

// OpenGuarded opens the worktree at root as an os.Root for reading
// acolyte's files, once GuardDir lets it: a reader of many files (a split
// project's shards) checks the directory once and opens each through it.
func OpenGuarded(root string) (*os.Root, error) {
	if err := GuardDir(root); err != nil {
		return nil, err
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, fmt.Errorf("resolving the repository root: %w", err)
	}
	r, err := os.OpenRoot(realRoot)
	if err != nil {
		return nil, fmt.Errorf("open the worktree: %w", err)
	}
	return r, nil
}

// ReadAcolyteFileIn is ReadAcolyteFile through r, a worktree OpenGuarded
// opened. The memories file, a shard and forgotten.jsonl (a line per
// forgotten memory) are also refused past MaxFileLines, counted as they
// are read, so that a refused file costs the
// lines up to the limit, not the whole file.
func ReadAcolyteFileIn(r *os.Root, name string) ([]byte, error) {
	rel := format.Dir + "/" + name
	f, fi, err := openRegular(r, rel, os.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, ErrNotRegular) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", rel, err)
	}
	defer f.Close()
	limit, maxLines := int64(format.MaxFileBytes), 0
	if strings.HasPrefix(name, format.ShardsDir+"/") {
		limit = format.MaxShardBytes
	}
	if name == format.MemoriesFile || name == format.ForgottenFile || strings.HasPrefix(name, format.ShardsDir+"/") {
		maxLines = MaxFileLines
	}
	var data []byte
	if fi.Size() <= limit {
		data, err = ReadSized(f, fi.Size(), limit, maxLines)
	}
	if errors.Is(err, ErrTooManyLines) {
		return nil, TooManyLines(rel, fi.Size())
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", rel, err)
	}
	if fi.Size() > limit || int64(len(data)) > limit {
		return nil, TooLarge(rel, limit)
	}
	return data, nil
}

// TooLarge is ErrTooLarge for rel, over limit bytes.
func TooLarge(rel string, limit int64) error {
	return fmt.Errorf("%s: %w: it is over %d MiB, the most acolyte reads of it; a file that size is not memories anyone reviews. "+
		"Find what filled it (`git log --stat -- %s`), remove those lines by hand, then run `acolyte sync`", rel, ErrTooLarge, limit>>20, rel)
}

// checkSplitSize refuses a split project whose files together pass
// format.MaxFileBytes, or one of whose shards passes format.MaxShardBytes,
// by their sizes, before any is read.
func checkSplitSize(r *os.Root, rels []string) error {
	var total int64
	for _, rel := range rels {
		fi, err := r.Stat(filepath.FromSlash(format.Dir + "/" + rel))
		if err != nil {
			continue // the reader says why
		}
		if strings.HasPrefix(rel, format.ShardsDir+"/") && fi.Size() > format.MaxShardBytes {
			return TooLarge(format.Dir+"/"+rel, format.MaxShardBytes)
		}
		if total += fi.Size(); total > format.MaxFileBytes {
			return TooLarge(ShardsRel, format.MaxFileBytes)
		}
	}
	return nil
}

// ErrTooManyLines is ReadSized's refusal of a file past its line limit.
var ErrTooManyLines = errors.New("too many lines")

// ReadChunk is how much ReadSized reads at a time: its lines are counted
// while the next are still on the disk, and a file past its line limit is
// given up within this of the line that passed it.
const ReadChunk = 4 << 20

// ReadSized reads f to its end, size bytes when it was stat'ed, and at
// most limit+1 bytes if it grew since. With maxLines above 0, it gives up
// with ErrTooManyLines as soon as it has read more lines than that.
//
// The buffer is made at the file's size and filled by read(2):
// io.ReadAll grows its own by doubling (six copies of a 22 MB file), and
// a bytes.Buffer grown to size clears it first, which was a fifth of a
// checkout's hook at 100k memories, most of it in faulting the pages in
// for the clearing. make clears only memory the heap used before; in a
// command that reads the file once, memory that large is new from the
// kernel, already zero, so read(2) is the first to touch it, and a file
// given up early never faults in the rest.
func ReadSized(f *os.File, size, limit int64, maxLines int) ([]byte, error) {
	buf := make([]byte, size+1) // the byte over tells a file that grew
	n, lines := 0, 0
	counted := func(b []byte) bool {
		lines += bytes.Count(b, []byte("\n"))
		return maxLines <= 0 || lines <= maxLines
	}
	for n < len(buf) {
		m, err := io.ReadFull(f, buf[n:min(n+ReadChunk, len(buf))])
		if !counted(buf[n : n+m]) {
			return nil, ErrTooManyLines
		}
		n += m
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return buf[:n], nil // the whole file, which may have shrunk
		}
		if err != nil {
			return nil, err
		}
	}
	rest, err := io.ReadAll(io.LimitReader(f, limit+1-int64(n)))
	if !counted(rest) {
		return nil, ErrTooManyLines
	}
	return append(buf[:n], rest...), err
}

// CapIndexed is the memories of a project an import indexes: all of them
// while they are at most MaxIndexedMemories; past that every rule and seed
// (the project's own instructions) and the newest stored memories by id,
// which is time-ordered, so that what was remembered last is found. The
// warning says how many are left out and what brings them back.
func CapIndexed(mems []memory.Memory) ([]memory.Memory, string) {
	if len(mems) <= MaxIndexedMemories {
		return mems, ""
	}
	kept := make([]memory.Memory, 0, MaxIndexedMemories)
	var stored []memory.Memory
	for _, m := range mems {
		if derive.IsDerived(m) {
			kept = append(kept, m)
		} else {
			stored = append(stored, m)
		}
	}
	slices.SortFunc(stored, func(a, b memory.Memory) int { return strings.Compare(a.ID, b.ID) })
	if room := MaxIndexedMemories - len(kept); room < len(stored) {
		stored = stored[len(stored)-max(room, 0):]
	}
	kept = append(kept, stored...)
	left := len(mems) - len(kept)
	return kept, fmt.Sprintf("%d of the project's %d memories are left out of search: acolyte indexes at most %d, and leaves out the oldest. "+
		"Forget what no longer holds (`acolyte forget ID`) to bring them back", left, len(mems), MaxIndexedMemories)
}

// FixCommand is what a user runs to bring the memories file up to date.
const FixCommand = "acolyte sync"

const MemoriesRel = format.Dir + "/" + format.MemoriesFile
