package acolytedir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/internal/atomicfile"
)

// This file holds what gitsync keeps in .acolyte/ beside the memories file
// (the lock, .gitattributes, .gitignore) and Update, the locked
// read-change-write of the memories file through package format.

// WriteAtomic replaces path with the parts in order, synced to disk, as a
// 0644 file like the rest of the checkout (atomicfile.WriteFile).
func WriteAtomic(path string, parts ...[]byte) error {
	return atomicfile.WriteFile(path, 0o644, parts...)
}

// Names of the helper files inside .acolyte/.
const (
	LockFile       = ".lock"
	AttributesFile = ".gitattributes"
	IgnoreFile     = ".gitignore"
	// MergeDriverName is the name the merge driver is registered under in
	// git config (merge.<name>.driver) and .gitattributes.
	MergeDriverName = "acolyte"
)

// MergeAttribute routes the memories file to the acolyte merge driver; it
// lives in $GIT_DIR/info/attributes, which outranks every .gitattributes.
const MergeAttribute = "/" + format.Dir + "/" + format.MemoriesFile + " merge=" + MergeDriverName

func EnsureLines(path string, want ...string) error {
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
	return WriteAtomic(path, []byte(out))
}

// ForgottenRel names the tombstone file in messages and in the git index.
const ForgottenRel = format.Dir + "/" + format.ForgottenFile

// Tombstones is what a reader got from forgotten.jsonl: its bytes (nil when
// it is missing), the tombstones it could read and a warning per line it
// could not.
type Tombstones struct {
	Data     []byte
	List     []format.Tombstone
	Warnings []string
}

// ReadTombstones reads forgotten.jsonl, through ReadForgotten (an os.Root,
// refusing a link out of the repository, at most format.MaxFileBytes). A
// file with conflict markers is an error: hiding no memory would bring
// back every one it forgot.
func ReadTombstones(root string) (Tombstones, error) {
	data, err := ReadForgotten(root)
	if errors.Is(err, fs.ErrNotExist) {
		return Tombstones{}, nil
	}
	if err != nil {
		return Tombstones{}, fmt.Errorf("reading forgotten memories: %w", err)
	}
	return DecodeTombstones(data)
}

func DecodeTombstones(data []byte) (Tombstones, error) {
	list, invalid, err := format.DecodeForgotten(ForgottenRel, data)
	if err != nil {
		return Tombstones{}, err
	}
	t := Tombstones{Data: data, List: list}
	for _, le := range invalid {
		t.Warnings = append(t.Warnings, le.Error()+"; the line is left out until it is fixed")
	}
	return t, nil
}

// WithForgotten extends the memories file's content hash an import records
// with forgotten.jsonl's, so that a merge that changed only the tombstones
// still re-imports. Without tombstones it is the memories file's hash
// alone, as it was before tombstones existed.
func WithForgotten(hash string, forgotten []byte) string {
	if len(forgotten) == 0 {
		return hash
	}
	return hash + "+" + Sha256Hex(forgotten)
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
