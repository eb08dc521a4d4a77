package git

import (
	"path/filepath"
	"strings"
	"testing"
)

// FuzzIndexLinkTarget: whatever a staged link says, resolving it never
// yields a path that leaves the repository.
func FuzzIndexLinkTarget(f *testing.F) {
	for _, s := range [][2]string{
		{"CLAUDE.md", "AGENTS.md"}, {"sub/AGENTS.md", "../../x"}, {"a/b/c", "../../../etc/passwd"},
		{"CLAUDE.md", "/repo/AGENTS.md"}, {"CLAUDE.md", "/etc/passwd"}, {"a/CLAUDE.md", "./../AGENTS.md"},
		{"CLAUDE.md", "."}, {"CLAUDE.md", "/repo"}, {"x", "a/../../b"},
	} {
		f.Add(s[0], s[1])
	}
	ix := &Index{Repo: &Repo{Root: "/repo"}}
	f.Fuzz(func(t *testing.T, link, target string) {
		p, ok := ix.linkTarget(link, target)
		if !ok {
			return
		}
		if filepath.IsAbs(p) || p == ".." || strings.HasPrefix(p, "../") || strings.HasPrefix(p, "/") {
			t.Fatalf("linkTarget(%q, %q) = %q, outside the repository", link, target, p)
		}
	})
}
