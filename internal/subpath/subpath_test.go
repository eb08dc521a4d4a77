package subpath

import (
	"path/filepath"
	"testing"
)

func TestRel(t *testing.T) {
	root := filepath.FromSlash("/repo")
	for _, c := range []struct {
		p    string
		rel  string
		isIn bool
	}{
		{"/repo", ".", true},
		{"/repo/a/b", filepath.FromSlash("a/b"), true},
		{"/repo/../etc", "", false},
		{"/repository", "", false},
		{"/", "", false},
		{"/repo/..x", "..x", true},
	} {
		rel, in := Rel(root, filepath.FromSlash(c.p))
		if rel != c.rel || in != c.isIn {
			t.Errorf("Rel(%q, %q) = %q, %v; want %q, %v", root, c.p, rel, in, c.rel, c.isIn)
		}
	}
}
