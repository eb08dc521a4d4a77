// Package beneath reads files beneath a directory and never outside it:
// no "..", absolute path or symlink on the way leads out. It is
// os.Root's guarantee, kept by os.Root everywhere; on Linux each file
// costs one openat2 call where os.Root opens every folder on the way,
// which was a third of a search's staleness check of its hits
// (gitsync's BenchmarkFirstLook).
package beneath

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"sync"
)

// Dir is an open directory whose files are read beneath it. Its methods
// may be called concurrently.
type Dir struct {
	path string
	fast fastDir // the platform's one-call way, when it has one

	rootOnce sync.Once
	root     *os.Root
	rootErr  error
}

// Open opens dir for reading files beneath it.
func Open(dir string) (*Dir, error) {
	d := &Dir{path: dir}
	fast, err := openFast(dir)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	d.fast = fast
	return d, nil
}

// Close closes the directory.
func (d *Dir) Close() error {
	err := d.fast.close()
	if d.root != nil {
		err = errors.Join(err, d.root.Close())
	}
	return err
}

// Stat is os.Root's Stat: the file name names, symlinks followed
// beneath the directory.
func (d *Dir) Stat(name string) (fs.FileInfo, error) {
	f, err := d.open(name, true)
	if errors.Is(err, errFallBack) {
		root, err := d.osRoot()
		if err != nil {
			return nil, err
		}
		return root.Stat(name)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Stat()
}

// ReadFile is os.Root's ReadFile: the content of the file name names.
func (d *Dir) ReadFile(name string) ([]byte, error) {
	f, err := d.open(name, false)
	if errors.Is(err, errFallBack) {
		root, err := d.osRoot()
		if err != nil {
			return nil, err
		}
		return root.ReadFile(name)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(f)
}

// errFallBack is the fast way declining a name: os.Root answers it.
var errFallBack = errors.New("beneath: ask os.Root")

// open opens name beneath the directory the fast way: for its status
// alone when statOnly. A name the fast way cannot be sure to answer as
// os.Root would, or any failure but a missing file, is errFallBack.
func (d *Dir) open(name string, statOnly bool) (*os.File, error) {
	if !fs.ValidPath(name) || name == "." {
		return nil, errFallBack
	}
	return d.fast.open(name, statOnly)
}

func (d *Dir) osRoot() (*os.Root, error) {
	d.rootOnce.Do(func() { d.root, d.rootErr = os.OpenRoot(d.path) })
	return d.root, d.rootErr
}

// readAll reads f whole, sized by its status as os.ReadFile is.
func readAll(f *os.File) ([]byte, error) {
	size := 512
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 && fi.Size() < 1<<30 {
		size = int(fi.Size()) + 1 // one more, to see the end in one read
	}
	data := make([]byte, 0, size)
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return nil, err
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
	}
}
