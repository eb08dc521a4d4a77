package hooks

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/acolyte-dev/acolyte/gitsync"
	"github.com/acolyte-dev/acolyte/internal/atomicfile"
	"github.com/acolyte-dev/acolyte/internal/subpath"
)

// maxHookFileBytes is the most acolyte reads of a hook script or a hook
// manager's config (package.json included): far above any real one, and
// small enough that a clone cannot make a command read gigabytes.
const maxHookFileBytes = 4 << 20

// hookFiles reads and writes the files of one checkout that init, hooks
// install and hooks status touch: the team's hook scripts (.husky/, a
// shared hooks folder), the hook managers' configs and package.json. Those
// files come with a clone, so each is reached through an os.Root on the
// worktree, as the memories files are (OpenGuarded): a symlink leading out
// of the repository, committed or swapped in while acolyte runs, is never
// followed, and is refused with its name (gitsync.ErrOutside). A link that stays
// inside is followed. Paths in git's own directories (.git/hooks, a linked
// worktree's common directory) are git's, not the clone's, and are used as
// they are.
type hookFiles struct {
	root *os.Root
	top  string   // the worktree root as the Repo names it
	real string   // the same with symlinks resolved
	git  []string // git's directories, as named and resolved
}

// openHookFiles opens r's worktree for the hook files; the caller closes it.
func openHookFiles(r *gitsync.Repo) (*hookFiles, error) {
	real, err := filepath.EvalSymlinks(r.Root)
	if err != nil {
		return nil, fmt.Errorf("resolving the repository root: %w", err)
	}
	root, err := os.OpenRoot(real)
	if err != nil {
		return nil, fmt.Errorf("open the worktree: %w", err)
	}
	h := &hookFiles{root: root, top: filepath.Clean(r.Root), real: real}
	for _, d := range []string{r.GitDir(), r.CommonDir()} {
		h.git = append(h.git, filepath.Clean(d))
		if p, err := filepath.EvalSymlinks(d); err == nil {
			h.git = append(h.git, p)
		}
	}
	return h, nil
}

func (h *hookFiles) Close() error {
	if h == nil || h.root == nil {
		return nil
	}
	return h.root.Close()
}

// inTree says whether path is one of the clone's files, and its path
// relative to the worktree: inside the worktree and not in git's own
// directories.
func (h *hookFiles) inTree(path string) (string, bool) {
	path = filepath.Clean(path)
	for _, g := range h.git {
		if _, ok := subpath.Rel(g, path); ok {
			return "", false
		}
	}
	if rel, ok := subpath.Rel(h.top, path); ok {
		return rel, true
	}
	if rel, ok := subpath.Rel(h.real, path); ok {
		return rel, true
	}
	return "", false
}

// refuse turns an error from the os.Root on rel into gitsync.ErrOutside naming the
// link that leads out, when one does; otherwise it returns err as it is.
func (h *hookFiles) refuse(rel string, err error) error {
	if err == nil {
		return nil
	}
	if link, target, isDir, ok := h.outsideLink(rel); ok {
		kind := "a regular file"
		if isDir {
			kind = "a directory"
		}
		return fmt.Errorf("%s %w (to %s); acolyte neither reads nor writes a hook manager's files outside the checkout. "+
			"Replace the link with %s: `rm %s`, then run the command again", link, gitsync.ErrOutside, target, kind, link)
	}
	return err
}

// outsideLink finds the first component of rel that is a symlink resolving
// outside the worktree (or to nothing through a path that leaves it): its
// path relative to the root, where it leads and whether that is a folder.
// It only explains a refusal the os.Root already made.
func (h *hookFiles) outsideLink(rel string) (link, target string, isDir, ok bool) {
	parts := strings.Split(filepath.ToSlash(filepath.Clean(rel)), "/")
	for i := range parts {
		prefix := filepath.FromSlash(strings.Join(parts[:i+1], "/"))
		full := filepath.Join(h.real, prefix)
		fi, err := os.Lstat(full)
		if err != nil {
			return "", "", false, false
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		resolved, err := filepath.EvalSymlinks(full)
		if err != nil {
			dest, rerr := os.Readlink(full)
			if rerr != nil {
				return "", "", false, false
			}
			if !filepath.IsAbs(dest) {
				dest = filepath.Join(filepath.Dir(full), dest)
			}
			if _, inside := subpath.Rel(h.real, dest); inside {
				return "", "", false, false
			}
			return filepath.ToSlash(prefix), dest + ", which does not exist", i < len(parts)-1, true
		}
		if _, inside := subpath.Rel(h.real, resolved); !inside {
			st, err := os.Stat(resolved)
			return filepath.ToSlash(prefix), resolved, err == nil && st.IsDir(), true
		}
	}
	return "", "", false, false
}

// stat is os.Stat of path, through the root for a clone's file.
func (h *hookFiles) stat(path string) (fs.FileInfo, error) {
	rel, ok := h.inTree(path)
	if !ok {
		return os.Stat(path)
	}
	fi, err := h.root.Stat(rel)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, h.refuse(rel, err)
	}
	if errors.Is(err, fs.ErrNotExist) {
		if r := h.refuse(rel, err); errors.Is(r, gitsync.ErrOutside) {
			return nil, r
		}
	}
	return fi, err
}

// isFile says whether path is a regular file; a link leading out of the
// worktree is an error.
func (h *hookFiles) isFile(path string) (bool, error) {
	fi, err := h.stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return fi.Mode().IsRegular(), nil
}

// isDir is isFile for a folder.
func (h *hookFiles) isDir(path string) (bool, error) {
	fi, err := h.stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return fi.IsDir(), nil
}

// executable says whether path is a file git would run.
func (h *hookFiles) executable(path string) bool {
	fi, err := h.stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// readOptional reads the regular file at path, at most maxHookFileBytes; a
// missing file is nil. Anything else there (a FIFO, a device, a folder) is
// refused without waiting on it.
func (h *hookFiles) readOptional(path string) ([]byte, error) {
	rel, inTree := h.inTree(path)
	var f *os.File
	var err error
	if inTree {
		f, err = h.root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	} else {
		f, err = os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	}
	if inTree && err != nil {
		if r := h.refuse(rel, err); errors.Is(r, gitsync.ErrOutside) {
			return nil, r
		}
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("read %s: it is not a regular file (%s); replace it with one", path, fi.Mode().Type())
	}
	b, err := io.ReadAll(io.LimitReader(f, maxHookFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) > maxHookFileBytes {
		return nil, fmt.Errorf("read %s: it is over %d MiB, more than any hook file or config; acolyte leaves it alone", path, maxHookFileBytes>>20)
	}
	return b, nil
}

// isShim says whether path holds acolyte's hook shim.
func (h *hookFiles) isShim(path string) bool {
	b, err := h.readOptional(path)
	return err == nil && strings.Contains(string(b), shimMarker)
}

// write replaces path with data, mode perm, creating its folder.
func (h *hookFiles) write(path string, data []byte, perm fs.FileMode) error {
	rel, inTree := h.inTree(path)
	if !inTree {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("creating %s: %w", filepath.Dir(path), err)
		}
		if err := atomicfile.Write(path, atomicfile.Options{Perm: perm, Durable: true}, atomicfile.Bytes(data)); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
		return os.Chmod(path, perm)
	}
	if dir := filepath.Dir(rel); dir != "." {
		if err := h.root.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("creating %s: %w", filepath.Dir(path), h.refuse(dir, err))
		}
	}
	if err := atomicfile.WriteIn(h.root, rel, atomicfile.Options{Perm: perm, Durable: true}, atomicfile.Bytes(data)); err != nil {
		return fmt.Errorf("writing %s: %w", path, h.refuse(rel, err))
	}
	return nil
}

// remove deletes path.
func (h *hookFiles) remove(path string) error {
	rel, inTree := h.inTree(path)
	if !inTree {
		return os.Remove(path)
	}
	return h.refuse(rel, h.root.Remove(rel))
}

// rename moves oldpath to newpath, both in the same place.
func (h *hookFiles) rename(oldpath, newpath string) error {
	oldRel, oldIn := h.inTree(oldpath)
	newRel, newIn := h.inTree(newpath)
	switch {
	case !oldIn && !newIn:
		return os.Rename(oldpath, newpath)
	case oldIn && newIn:
		err := h.root.Rename(oldRel, newRel)
		if r := h.refuse(oldRel, err); errors.Is(r, gitsync.ErrOutside) {
			return r
		}
		return h.refuse(newRel, err)
	}
	return fmt.Errorf("rename %s to %s: one is in the worktree and the other is not", oldpath, newpath)
}
