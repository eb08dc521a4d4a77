package format

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/acolyte-dev/acolyte/internal/atomicfile"
	"github.com/acolyte-dev/acolyte/memory"
)

// MaxFileBytes is the largest memories file acolyte reads: 256 MiB, about
// a million memories. Reading and checking one that size takes seconds
// (BenchmarkCheckLarge); anything larger is refused with a fix, so that a
// clone cannot stall every command of everyone who pulls it.
const MaxFileBytes = 256 << 20

// MaxShardBytes is the largest shard (memories/XX.jsonl) acolyte reads:
// a shard holds a 256th of a project's memories, so at the most a
// checkout indexes (100,000) it holds about 400 lines, 100 KiB of
// ordinary ones and under 16 MiB of the longest valid ones. A shard past
// it is refused before it is read (issue 35: three 250 MB one-line shards,
// 750 KB in git, cost a command 21 s and 1.5 GiB). The shards together are
// held to MaxFileBytes, as the one file is.
const MaxShardBytes = 16 << 20

// MaxFileMemories is the most memories one file of project memory (the
// one file or a shard) may hold, counted in lines past its header; a
// file of more is refused by its line count before a line is decoded.
// It is the number gitsync indexes at most (gitsync.MaxIndexedMemories),
// one limit counted in memories: a one-file project splits at SplitAt and
// a shard holds a 256th of a project, so no file acolyte writes comes near
// it, while the byte limits alone let a 2 MB file of a million one-byte
// lines cost a check 20 s and 900 MB to report line by line.
const MaxFileMemories = 100_000

// MemoriesPath is where a worktree keeps its project memories.
func MemoriesPath(root string) string {
	return filepath.Join(root, Dir, MemoriesFile)
}

// ReadFile reads and decodes a memories file. A missing file holds no
// memories: a repository that never stored one has none.
func ReadFile(path string) ([]memory.Memory, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading project memories: %w", err)
	}
	return Decode(path, data)
}

// WriteFile replaces path with the canonical encoding of mems atomically: a
// reader, a crash or a full disk leaves either the old file or the new one,
// never half of either. Writers of one file must take turns (gitsync.Update
// holds the .acolyte/ lock while reading, changing and writing).
//
// Every memory is checked as Decode will read it back (CheckMemory): one
// that would make the file unreadable is refused, by id, and nothing is
// written, so a bad memory fails alone instead of poisoning the file for
// every later command.
func WriteFile(path string, mems []memory.Memory) error {
	return WriteFileKeeping(path, mems, nil)
}

// WriteFileKeeping is WriteFile that also keeps lines, a file's invalid
// lines (Decoded.InvalidLines), after the memories (EncodeKeeping).
func WriteFileKeeping(path string, mems []memory.Memory, lines []string) error {
	if err := CheckMemories(mems, path); err != nil {
		return err
	}
	return writeAtomic(path, EncodeKeeping(mems, lines))
}

// CheckMemories is CheckMemory of every memory a writer is about to write
// to where: each one Decode would not read back is refused, by id, and
// nothing is written.
func CheckMemories(mems []memory.Memory, where string) error {
	var bad []error
	for _, m := range mems {
		if err := CheckMemory(m); err != nil {
			bad = append(bad, err)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("not writing %s: %w", where, errors.Join(bad...))
	}
	return nil
}

// writeAtomic replaces path with the parts in order, synced to disk, as a
// 0644 file like the rest of the checkout (atomicfile.WriteFile).
func writeAtomic(path string, parts ...[]byte) error {
	return atomicfile.WriteFile(path, 0o644, parts...)
}
