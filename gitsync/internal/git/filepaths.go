package git

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/acolyte-dev/acolyte/internal/subpath"
)

// RelPath is the file p as a path-scoped search names it: slash-separated
// and relative to the working tree's root, which is how memory globs are
// written. A relative p is taken from the current directory when that
// lies inside the working tree, as a shell user means it, and from the
// root otherwise (`acolyte --repo DIR` run from elsewhere). The file need
// not exist (a file about to be created has rules too), but it must lie
// inside the working tree, symlinks resolved as far as they exist.
func (r *Repo) RelPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(p) {
		if cwd, err := os.Getwd(); err == nil && !inside(r.Root, resolveExisting(cwd)) {
			abs = filepath.Join(r.Root, p)
		}
	}
	resolved := resolveExisting(abs)
	if !inside(r.Root, resolved) {
		return "", fmt.Errorf("%s is outside the repository at %s; name a file inside it", p, r.Root)
	}
	rel, err := filepath.Rel(r.Root, resolved)
	if err != nil {
		return "", err
	}
	if rel == "." {
		return "", fmt.Errorf("%s is the repository's root; name a file or a folder inside it", p)
	}
	return filepath.ToSlash(rel), nil
}

// resolveExisting resolves the symlinks of the longest part of abs that
// exists, and keeps the rest as written.
func resolveExisting(abs string) string {
	rest := ""
	for dir := abs; ; dir = filepath.Dir(dir) {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest)
		}
		if _, err := os.Lstat(dir); err == nil || filepath.Dir(dir) == dir {
			return abs
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}

// inside says whether path lies in root or is root.
func inside(root, path string) bool {
	_, ok := subpath.Rel(root, path)
	return ok
}
