package gitsync

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/acolyte-dev/acolyte/internal/atomicfile"
)

// The shadow (diffimport.go) is the memories file as the index holds it.
// Trusting it used to cost every import a SHA-256 of all of it (22 MB at
// 100k memories). Now whoever writes it also writes a note beside it
// (imported.jsonl.id) naming the content hash it was written with and the
// identity it had then: its stamp (size, modification and change times,
// inode, device, as Refresh trusts the memories file by) and the hash of
// its last 4 KiB. While the shadow still has that identity, it is
// trusted for that hash without being hashed; any other write to it
// changes the identity, and it is then hashed, as before, before it is
// believed. A hard link to the memories file instead of a copy was
// measured too: it saved about 10 ms of a 110 ms hook at 100k, and made
// the shadow an alias of a file people edit, so that a write to either
// name in place changed both.

// shadowPath is where this checkout's shadow lives.
func (w *Workspace) shadowPath() string {
	return filepath.Join(w.Repo.GitDir(), "acolyte", "imported.jsonl")
}

func (w *Workspace) shadowNotePath() string { return w.shadowPath() + ".id" }

// keepShadow replaces the shadow with parts, in order, whose content hash
// is hash. Best effort: a cache, not synced, and checked before use.
func (w *Workspace) keepShadow(hash string, parts ...[]byte) {
	path := w.shadowPath()
	os.Remove(w.shadowNotePath())
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return
	}
	if atomicfile.Write(path, atomicfile.Options{Perm: 0o644}, atomicfile.Bytes(parts...)) != nil {
		os.Remove(path)
		return
	}
	w.noteShadow(hash)
}

// noteShadow records that the shadow, as it is now, holds content of hash.
func (w *Workspace) noteShadow(hash string) {
	id, ok := w.shadowID()
	if !ok {
		return
	}
	_ = atomicfile.Write(w.shadowNotePath(), atomicfile.Options{Perm: 0o644}, atomicfile.Bytes([]byte(id+"\n"+hash+"\n")))
}

// shadowID is the shadow's identity: stat and the hash of its tail.
func (w *Workspace) shadowID() (string, bool) {
	f, err := os.Open(w.shadowPath())
	if err != nil {
		return "", false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || stamp(fi) == "" {
		return "", false // no stamp on this platform: always hashed
	}
	tail := make([]byte, min(fi.Size(), tailBytes))
	if _, err := f.ReadAt(tail, fi.Size()-int64(len(tail))); err != nil && !errors.Is(err, io.EOF) {
		return "", false
	}
	return stamp(fi) + ":" + tailHash(tail), true
}

// shadowNoted reports whether the shadow's note vouches that it holds
// content of hash, as it is now.
func (w *Workspace) shadowNoted(hash string) bool {
	note, err := os.ReadFile(w.shadowNotePath())
	if err != nil {
		return false
	}
	id, noteHash, _ := strings.Cut(strings.TrimSuffix(string(note), "\n"), "\n")
	now, ok := w.shadowID()
	return ok && id == now && noteHash == hash
}

// readShadow returns the shadow when it holds content of hash: by its
// note, checked before and after the read, and otherwise by hashing it.
func (w *Workspace) readShadow(hash string) ([]byte, bool) {
	notedBefore := w.shadowNoted(hash)
	data, err := os.ReadFile(w.shadowPath())
	if err != nil {
		return nil, false
	}
	if notedBefore && w.shadowNoted(hash) {
		return data, true
	}
	sum := sha256.Sum256(data)
	return data, hex.EncodeToString(sum[:]) == hash
}

// appendShadow appends line to the shadow when it holds size bytes, the
// file before the append, and removes it otherwise. The note follows when
// it vouched for the shadow holding content of prev before: hash is the
// content hash after the append.
func (w *Workspace) appendShadow(size int64, line []byte, prev, hash string) {
	path := w.shadowPath()
	noted := w.shadowNoted(prev)
	os.Remove(w.shadowNotePath())
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return
	}
	fi, err := f.Stat()
	if err == nil && fi.Size() == size {
		_, err = f.WriteAt(line, size)
	} else if err == nil {
		err = errors.New("shadow out of step")
	}
	f.Close()
	if err != nil {
		os.Remove(path)
		return
	}
	if noted {
		w.noteShadow(hash)
	}
}
