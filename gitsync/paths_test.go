package gitsync

import (
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/internal/gittest"
)

func TestMentionedPaths(t *testing.T) {
	root := t.TempDir()
	gittest.WriteFiles(t, root, map[string]string{
		"cmd/app.go":       "package cmd",
		"memory/memory.go": "package memory",
		"go.mod":           "module x",
		".gitignore":       "build/\n",
		"build/out.go":     "ignored",
		"a/README.md":      "", "b/README.md": "", "c/README.md": "", "d/README.md": "",
		"docs/guide.md": "",
	})
	tests := []struct{ content, want string }{
		{"The app starts in `cmd/app.go:42`, see ./go.mod.", "cmd/app.go go.mod"},
		{"Types live in memory.go (the domain).", "memory/memory.go"},
		{"Everything under docs/ is published.", "docs"},
		{"README.md is everywhere, so it says nothing.", ""},
		{"Generated code in out.go is ignored.", ""},
		{"Never read ../../etc/passwd or /etc/passwd.", ""},
		{"See https://example.com/cmd/app.go and e.g. v1.2 or node.js.", ""},
		{"Mentions missing/file.go and cmd/app.go twice: cmd/app.go", "cmd/app.go"},
	}
	for _, tt := range tests {
		got := strings.Join(MentionedPaths(root, tt.content), " ")
		if got != tt.want {
			t.Errorf("MentionedPaths(%q) = %q, want %q", tt.content, got, tt.want)
		}
	}
}
