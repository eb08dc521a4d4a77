package gitsync

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/gitsync/internal/acolytedir"
	"github.com/acolyte-dev/acolyte/gitsync/internal/git"
	"github.com/acolyte-dev/acolyte/memory"
)

// inode is the file's inode number: an append in place keeps it, a
// rewrite by rename does not.
func inode(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	s := git.Stamp(fi)
	if s == "" {
		t.Skip("no stat stamp on this platform")
	}
	parts := strings.Split(s, ":")
	var ino uint64
	for _, c := range parts[3] {
		ino = ino*10 + uint64(c-'0')
	}
	return ino
}

// recordedHash is the memories file's hash in the import state.
func recordedHash(t *testing.T, w *Checkout) string {
	t.Helper()
	state, err := w.ws.Store.GetState(t.Context(), w.ws.StateKey())
	if err != nil {
		t.Fatal(err)
	}
	hash, _, _ := acolytedir.ParseImportState(state)
	hash, _, _ = strings.Cut(hash, "+")
	return hash
}

func sha256File(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// A remember appends its line in place, and the content hash it records,
// resumed from the fingerprint's saved state, is exactly the file's
// SHA-256, which every other reader compares.
func TestRememberAppendsInPlace(t *testing.T) {
	w := workspaceIn(t)
	ctx := t.Context()
	path := format.MemoriesPath(w.Repo.Root)
	if _, err := w.Add(ctx, memory.Draft{Scope: memory.ScopeProject, Content: "the parser is hand written"}); err != nil {
		t.Fatal(err)
	}
	ino := inode(t, path)
	for _, c := range []string{"the cache is per request", "logs go to stderr", "billing retries three times"} {
		if _, err := w.Add(ctx, memory.Draft{Scope: memory.ScopeProject, Content: c}); err != nil {
			t.Fatal(err)
		}
		if got := inode(t, path); got != ino {
			t.Fatalf("adding %q rewrote the file (inode %d, was %d); a new memory goes at the end in place", c, got, ino)
		}
		if got, want := recordedHash(t, w), sha256File(t, path); got != want {
			t.Fatalf("recorded hash %s, file hashes to %s", got, want)
		}
	}
	assertFileMatchesIndex(t, w, "the parser is hand written", "the cache is per request", "logs go to stderr", "billing retries three times")
	if imp, err := w.Refresh(ctx); err != nil || !imp.Skipped {
		t.Fatalf("refresh right after acolyte's own write: %+v, %v; the fingerprint vouches for the file", imp, err)
	}
}

// What changes the file behind acolyte's back is never taken for acolyte's
// own write: an append in place (same inode, new size), a rewrite of the
// same size in place within the tail, and one that also restores the
// modification time each lead to an import of what they wrote.
func TestFingerprintSeesOutsideChanges(t *testing.T) {
	for name, change := range map[string]func(t *testing.T, path string, line []byte){
		"append in place": func(t *testing.T, path string, line []byte) {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.Write(line); err != nil {
				t.Fatal(err)
			}
		},
		"same size in place, old mtime": func(t *testing.T, path string, _ []byte) {
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			edited := strings.Replace(string(data), "stderr", "stdout", 1)
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteAt([]byte(edited), 0); err != nil {
				t.Fatal(err)
			}
			f.Close()
			if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			w := workspaceIn(t)
			ctx := t.Context()
			path := format.MemoriesPath(w.Repo.Root)
			for _, c := range []string{"the parser is hand written", "logs go to stderr"} {
				if _, err := w.Add(ctx, memory.Draft{Scope: memory.ScopeProject, Content: c}); err != nil {
					t.Fatal(err)
				}
			}
			teammate := stored(memory.NewID(time.Now().Add(time.Hour)), "the scheduler runs at midnight UTC", t0)
			line := format.Encode([]memory.Memory{teammate})
			line = line[strings.IndexByte(string(line), '\n')+1:]
			change(t, path, line)
			want := []string{"the parser is hand written", "logs go to stderr", "a new fact"}
			if name == "append in place" {
				want = append(want, "the scheduler runs at midnight UTC")
			} else {
				want[1] = "logs go to stdout"
			}
			if _, err := w.Add(ctx, memory.Draft{Scope: memory.ScopeProject, Content: "a new fact"}); err != nil {
				t.Fatal(err)
			}
			assertFileMatchesIndex(t, w, want...)
		})
	}
}

// A memory whose id sorts before the last line's (a clock set back, an id
// made elsewhere) is spliced into its place, not appended.
func TestAddOutOfOrderIsSpliced(t *testing.T) {
	w := workspaceIn(t)
	ctx := t.Context()
	if _, err := w.Add(ctx, memory.Draft{Scope: memory.ScopeProject, Content: "the parser is hand written"}); err != nil {
		t.Fatal(err)
	}
	early := stored(memory.NewID(time.Now().Add(-time.Hour)), "the cache is per request", t0)
	early.ScopeKey = w.Repo.Root
	if _, err := w.ws.AddInPlace(ctx, early); err != nil {
		t.Fatal(err)
	}
	assertFileMatchesIndex(t, w, "the parser is hand written", "the cache is per request")
	if got, want := recordedHash(t, w), sha256File(t, format.MemoriesPath(w.Repo.Root)); got != want {
		t.Fatalf("recorded hash %s, file hashes to %s", got, want)
	}
}
