// Package atomicfile replaces a file by writing a temporary file beside it
// and renaming it over the old one, so that a reader, a crash or a full disk
// sees either the old file or the new one, never part of either.
//
// Every writer of a file acolyte owns uses it: the project memories file and
// its git helper files, the search catalog, and the agent's file tools.
package atomicfile

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// TempPrefix starts the name of every temporary file Write makes: beside the
// file NAME it replaces, it is TempPrefix+NAME+"-"+random. A fixed prefix
// lets a directory's .gitignore ignore them and RemoveStale find the ones a
// killed process left.
const TempPrefix = ".tmp-"

// Options say how the new file is made.
type Options struct {
	// Perm is the new file's permission bits, set exactly (the umask does
	// not apply): temporary files are created 0600, and a file that others
	// read, such as one in a git checkout, should not end up that way.
	Perm fs.FileMode
	// Durable syncs the new file before the rename and the directory after
	// it, so that the replacement survives a power loss, not only a
	// crash of the process. A cache that can be rebuilt does without.
	Durable bool
}

// Bytes is a fill function writing parts in order, so that a caller that
// patches a large file need not first copy it into one buffer.
func Bytes(parts ...[]byte) func(io.Writer) error {
	return func(w io.Writer) error {
		for _, p := range parts {
			if _, err := w.Write(p); err != nil {
				return err
			}
		}
		return nil
	}
}

// Write replaces the file at path with what fill writes. If fill or any
// step fails, the file at path is left as it was and the temporary file is
// removed. The directory must exist.
func Write(path string, opt Options, fill func(io.Writer) error) error {
	return write(osDir{}, path, opt, fill)
}

// WriteIn is Write for the file name inside root: every step, including the
// rename, stays inside root, whatever symlinks a concurrent process makes.
func WriteIn(root *os.Root, name string, opt Options, fill func(io.Writer) error) error {
	return write(root, name, opt, fill)
}

// dirFS is what Write needs of a file system: *os.Root has it, and osDir is
// the same for plain paths.
type dirFS interface {
	OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error)
	Open(name string) (*os.File, error)
	Rename(oldname, newname string) error
	Remove(name string) error
}

type osDir struct{}

func (osDir) OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(name, flag, perm)
}
func (osDir) Open(name string) (*os.File, error)   { return os.Open(name) }
func (osDir) Rename(oldname, newname string) error { return os.Rename(oldname, newname) }
func (osDir) Remove(name string) error             { return os.Remove(name) }

func write(fsys dirFS, name string, opt Options, fill func(io.Writer) error) error {
	dir := filepath.Dir(name)
	tmp, tmpName, err := create(fsys, dir, filepath.Base(name))
	if err != nil {
		return err
	}
	committed := false
	defer func() {
		if !committed {
			tmp.Close()
			fsys.Remove(tmpName)
		}
	}()
	if err := fill(tmp); err != nil {
		return err
	}
	if err := tmp.Chmod(opt.Perm); err != nil {
		return err
	}
	if opt.Durable {
		if err := tmp.Sync(); err != nil {
			return err
		}
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := fsys.Rename(tmpName, name); err != nil {
		return err
	}
	committed = true
	if opt.Durable {
		return syncDir(fsys, dir)
	}
	return nil
}

// create makes a new temporary file beside base in dir, as os.CreateTemp
// does, which has no *os.Root form.
func create(fsys dirFS, dir, base string) (*os.File, string, error) {
	for try := 0; ; try++ {
		name := filepath.Join(dir, TempPrefix+base+"-"+rand.Text()[:10])
		f, err := fsys.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) && try < 10 {
			continue
		}
		return f, name, err
	}
}

func syncDir(fsys dirFS, dir string) error {
	d, err := fsys.Open(dir)
	if err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	defer d.Close()
	// Some file systems cannot sync directories; the rename has still happened.
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) && !errors.Is(err, errUnsupportedSync) {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	return nil
}

// RemoveStale deletes the temporary files in dir that Write made for the
// named files, or for any file when no name is given, and that are older
// than age: a write takes far less, so such a file was left by a process
// killed mid-write. It is best effort: a file it cannot remove is left for
// the next call.
func RemoveStale(dir string, age time.Duration, names ...string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !ours(e.Name(), names) || !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil || time.Since(info.ModTime()) < age {
			continue
		}
		_ = os.Remove(filepath.Join(dir, e.Name()))
	}
}

func ours(entry string, names []string) bool {
	if len(names) == 0 {
		return strings.HasPrefix(entry, TempPrefix)
	}
	for _, n := range names {
		if strings.HasPrefix(entry, TempPrefix+n+"-") {
			return true
		}
	}
	return false
}
