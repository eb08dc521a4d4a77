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
	"strconv"
	"strings"
	"time"
)

// TempPrefix starts the name of every temporary file Write makes: beside the
// file NAME it replaces, it is TempPrefix+NAME+"-p"+PID+"-"+random. A fixed
// prefix lets a directory's .gitignore ignore them and RemoveStale find the
// ones a killed process left; the writer's process id lets it tell them from
// a write in progress without waiting for them to age.
const TempPrefix = ".tmp-"

// randomLen is the length of the random end of a temporary file's name.
const randomLen = 10

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
	// TempDir, when set, is where the temporary file is made instead of
	// beside the file: for a file in a directory that must not collect
	// temporary files (git's merge driver output in the worktree root).
	// It must be on the same file system; Write only, not WriteIn.
	TempDir string
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

// WriteFile replaces the file at path with parts, durably, as a file of
// perm, first making its folder if it is missing: what a file of a git
// checkout needs, whose folder a clone may not have yet.
func WriteFile(path string, perm fs.FileMode, parts ...[]byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	if err := Write(path, Options{Perm: perm, Durable: true}, Bytes(parts...)); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
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
	tmpDir := dir
	if opt.TempDir != "" {
		tmpDir = opt.TempDir
	}
	tmp, tmpName, err := create(fsys, tmpDir, filepath.Base(name))
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
		name := filepath.Join(dir, TempPrefix+base+"-p"+strconv.Itoa(os.Getpid())+"-"+rand.Text()[:randomLen])
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
// named files, or for any file when no name is given, and that no write is
// still making: those whose writer's process has exited (a process killed
// mid-write), and any older than age, which a write takes far less than
// (a name without a process id, from an older acolyte, or a writer on
// another machine sharing the directory). A caller holding the lock every
// writer of the named files takes passes age 0. It is best effort: a file
// it cannot remove is left for the next call.
func RemoveStale(dir string, age time.Duration, names ...string) {
	RemoveStaleMatching(dir, age, func(name string) bool { return ours(name, names) })
}

// RemoveStaleMatching is RemoveStale for the temporary files whose names
// match says are ours.
func RemoveStaleMatching(dir string, age time.Duration, match func(name string) bool) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), TempPrefix) || !match(e.Name()) || !e.Type().IsRegular() {
			continue
		}
		if pid, ok := writerPID(e.Name()); !ok || processAlive(pid) {
			info, err := e.Info()
			if err != nil || time.Since(info.ModTime()) < age {
				continue
			}
		}
		_ = os.Remove(filepath.Join(dir, e.Name()))
	}
}

// writerPID reads the process id from a temporary file's name.
func writerPID(name string) (int, bool) {
	if len(name) < randomLen+1 || name[len(name)-randomLen-1] != '-' {
		return 0, false
	}
	rest := name[:len(name)-randomLen-1]
	i := strings.LastIndex(rest, "-p")
	if i < 0 {
		return 0, false
	}
	pid, err := strconv.Atoi(rest[i+2:])
	return pid, err == nil && pid > 0
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
