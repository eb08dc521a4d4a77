package cmd_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/memory"
)

// hostileGlobs are 32 valid globs of 256 bytes with 64 alternatives each,
// made to cost a matcher the most (memory's worstGlobs, issue 35).
func hostileGlobs(seed int) []string {
	var out []string
	for i := range memory.MaxGlobs {
		head := "**/{*a,a*}{*,?*}{a*,*a}{*a*,a**}{?*,*?}{*a/,a*/}"
		body := ""
		for n := 0; len(head)+len(body) < memory.MaxGlobBytes-24; n++ {
			c := 'a'
			if (seed+i+n)%3 == 0 {
				c = '?'
			}
			body += fmt.Sprintf("**/*%c*/", c)
		}
		g := head + body + "*a*a*a*a*a*a*a*a*b"
		out = append(out, g[:min(len(g), memory.MaxGlobBytes)])
	}
	return out
}

// A clone whose memories file holds a thousand memories carrying the
// costliest valid globs (issue 35: one search --path took 77 s) keeps
// search --path fast, and the memory that does apply to the file still
// comes first.
func TestSearchPathOverAThousandHostileMemoriesStaysFast(t *testing.T) {
	w := newGitWorld(t, gitSetup{onPath: true})
	root := filepath.Join(t.TempDir(), "repo")
	w.git(filepath.Dir(root), "init", "-q", "-b", "main", root)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var mems []memory.Memory
	for i := range 1000 {
		at := t0.Add(time.Duration(i) * time.Second)
		mems = append(mems, memory.Memory{ID: memory.NewID(at), Kind: memory.KindStored, Scope: memory.ScopeProject,
			Content: fmt.Sprintf("note %d about the deploy pipeline", i), Globs: hostileGlobs(i), CreatedAt: at, UpdatedAt: at})
	}
	at := t0.Add(time.Hour)
	mems = append(mems, memory.Memory{ID: memory.NewID(at), Kind: memory.KindStored, Scope: memory.ScopeProject,
		Content: "Migrations are append-only; never edit an applied one", Globs: []string{"migrations/**"}, CreatedAt: at, UpdatedAt: at})
	if err := format.WriteFile(format.MemoriesPath(root), mems); err != nil {
		t.Fatal(err)
	}
	w.git(root, "add", "-A")
	w.git(root, "commit", "-qm", "hostile globs")
	w.acolyte(root, "sync")
	for _, paths := range [][]string{
		{"migrations/001_init.sql"},
		{"migrations/001_init.sql", strings.Repeat("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/", 30) + "x.go", "src/internal/app/handlers/user.go", "web/app/page.tsx"},
	} {
		args := []string{"search", "--limit", "3"}
		for _, p := range paths {
			args = append(args, "--path", p)
		}
		args = append(args, "how", "do", "migrations", "work")
		start := time.Now()
		out := w.acolyte(root, args...)
		d := time.Since(start)
		t.Logf("search --path over 1,000 memories of 32 hostile globs, %d paths: %v", len(paths), d)
		if lines := strings.Split(out, "\n"); len(lines) < 2 || !strings.Contains(lines[1], "append-only") {
			t.Errorf("the memory for migrations/** is not first:\n%s", out)
		}
		if d > time.Second { // main: 1.8 s with one path, 7.6 s with four
			t.Errorf("search --path took %v", d)
		}
	}
}
