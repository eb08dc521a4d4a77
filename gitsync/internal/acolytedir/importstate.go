package acolytedir

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/gitsync/internal/git"
)

// FileHash is the content hash of the memories file; a missing file hashes
// as "absent" so that deleting it (checking out a branch without it) also
// counts as a change.
func FileHash(data []byte, err error) (string, error) {
	if errors.Is(err, fs.ErrNotExist) {
		return "absent", nil
	}
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// HashFile is fileHash of a file read in small pieces: the check that runs
// in every hook must not allocate (and fault in) a buffer the size of the
// file only to find that nothing changed.
func HashFile(path string) (string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return FileHash(nil, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return "", err
	} else if !fi.Mode().IsRegular() {
		return "", notRegular(filepath.Base(path), fi.Mode())
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ImportState is what the last import records: the file's content hash,
// its stamp when settled, and the warnings the import gave, one per line.
func ImportState(hash, stamp string, warnings []string) string {
	s := hash
	if stamp != "" {
		s += StampSep + stamp
	}
	for _, w := range warnings {
		s += "\n" + strings.ReplaceAll(w, "\n", " ")
	}
	return s
}

// ImportedFileHash is the content hash of the memories file alone that the
// import state s records, without forgotten.jsonl's part.
func ImportedFileHash(s string) string {
	hash, _, _ := ParseImportState(s)
	file, _, _ := strings.Cut(hash, "+")
	return file
}

func ParseImportState(s string) (hash, stamp string, warnings []string) {
	head, rest, hasWarnings := strings.Cut(s, "\n")
	fields := strings.Split(head, StampSep)
	hash = fields[0]
	for _, f := range fields[1:] {
		if !strings.HasPrefix(f, fingerprintPrefix) && !strings.HasPrefix(f, filesPrefix) {
			stamp = f
		}
	}
	if hasWarnings {
		warnings = strings.Split(rest, "\n")
	}
	return hash, stamp, warnings
}

// WithFingerprint adds fp to an import state, on its first line.
func WithFingerprint(state string, fp Fingerprint) string {
	if fp.Stamp == "" {
		return state
	}
	head, rest, hasWarnings := strings.Cut(state, "\n")
	head += StampSep + fp.String()
	if hasWarnings {
		return head + "\n" + rest
	}
	return head
}

// StateFingerprint is the fingerprint an import state holds, if any.
func StateFingerprint(state string) (Fingerprint, bool) {
	head, _, _ := strings.Cut(state, "\n")
	for _, f := range strings.Split(head, StampSep)[1:] {
		if fp, ok := parseFingerprint(f); ok {
			return fp, true
		}
	}
	return Fingerprint{}, false
}

// StampSep separates the content hash from the stat stamp in the state.
const StampSep = " "

// SettleTime is how long after its last change a file's stamp can be
// trusted: a change made in the same tick of the filesystem's clock as the
// stamp was taken could otherwise leave the stamp equal (git's "racily
// clean" case).
const SettleTime = 2 * time.Second

// ForgottenStamp is what forgotten.jsonl adds to the memories file's stamp:
// nothing while it does not exist, so that a checkout without tombstones
// keeps the stamp it had before they existed.
func ForgottenStamp(fi os.FileInfo, statErr error) string {
	if statErr != nil {
		return ""
	}
	return "|" + git.Stamp(fi)
}

// SettledStamp returns the stamp of the file at path when it is safe to
// trust later: before (taken ahead of reading the file) still matches, so
// the file did not change while it was read, and it last changed at least
// settle ago.
func SettledStamp(path string, before os.FileInfo, statErr error, settle time.Duration) string {
	if statErr != nil {
		return ""
	}
	after, err := os.Stat(path)
	if err != nil {
		return ""
	}
	s := git.Stamp(before)
	if s == "" || s != git.Stamp(after) || time.Since(git.LastChange(after)) < settle {
		return ""
	}
	return s
}

// LineLocator says which file holds a memory's line, relative to the
// worktree root, and at which line; it is built only when a message needs
// it.
type LineLocator func(id string) (rel string, line int)

// OneFileLocator locates lines in the one memories file, whose bytes are raw.
func OneFileLocator(raw []byte) LineLocator {
	var lines map[string]int
	return func(id string) (string, int) {
		if lines == nil {
			lines = LineNumbers(raw)
		}
		return MemoriesRel, lines[id]
	}
}

// Locator locates lines in a split project's files.
func (p SplitProject) Locator() LineLocator {
	type place struct {
		Rel  string
		line int
	}
	var where map[string]place
	return func(id string) (string, int) {
		if where == nil {
			where = make(map[string]place)
			for _, f := range p.Files {
				for id, line := range LineNumbers(f.Data) {
					where[id] = place{format.Dir + "/" + f.Rel, line}
				}
			}
		}
		w := where[id]
		return w.Rel, w.line
	}
}

// LineNumbers maps each id to its line in a memories file, for messages.
func LineNumbers(data []byte) map[string]int {
	lines := make(map[string]int)
	for i, line := range strings.Split(string(data), "\n") {
		if id, ok := strings.CutPrefix(line, `{"id":"`); ok {
			if end := strings.IndexByte(id, '"'); end >= 0 {
				lines[id[:end]] = i + 1
			}
		}
	}
	return lines
}
