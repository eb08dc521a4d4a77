// Package subpath says whether a path lies inside a directory, lexically,
// the one test every guard against a path that leads out of a repository
// builds on.
package subpath

import (
	"path/filepath"
	"strings"
)

// Rel returns p relative to root, and whether p is root or lies under it.
// Both are compared as written: resolve symlinks first where they matter.
func Rel(root, p string) (string, bool) {
	rel, err := filepath.Rel(root, p)
	if err != nil || filepath.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return rel, true
}
