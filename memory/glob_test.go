package memory_test

import (
	"errors"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/memory"
)

// The globs of real rule files (.cursor/rules, .claude/rules,
// .github/instructions) against the files an agent has open.
func TestMatchGlob(t *testing.T) {
	for _, c := range []struct {
		glob string
		yes  []string
		no   []string
	}{
		{"*.tsx", []string{"page.tsx", "web/app/page.tsx"}, []string{"page.ts", "page.tsx.bak", "web/page.jsx"}},
		{"**/*.tsx", []string{"page.tsx", "a/b/c/page.tsx"}, []string{"page.ts"}},
		{"migrations/**", []string{"migrations/001_init.sql", "migrations/2024/x.sql"}, []string{"migrations", "db/migrations/1.sql", "migrations.go"}},
		{"migrations/", []string{"migrations/001_init.sql", "db/migrations/1.sql"}, []string{"migrations", "migrations.go"}},
		{"migrations", []string{"migrations", "migrations/1.sql", "db/migrations/1.sql"}, []string{"migrationsx/1.sql"}},
		{"cmd/**/*.go", []string{"cmd/app.go", "cmd/x/y/app.go"}, []string{"x/cmd/app.go", "cmd/app_test.ts"}},
		{"cmd/*.go", []string{"cmd/app.go"}, []string{"cmd/x/app.go", "x/cmd/app.go"}},
		{"/cmd/*.go", []string{"cmd/app.go"}, []string{"x/cmd/app.go"}},
		{"./Makefile", []string{"Makefile"}, []string{"x/Makefile"}},
		{"/Makefile", []string{"Makefile"}, []string{"x/Makefile"}},
		{"{./Makefile,go.mod}", []string{"Makefile", "go.mod"}, []string{"x/Makefile"}},
		{"./src/**/*.{ts,tsx}", []string{"src/a.ts", "src/b/c.tsx"}, []string{"src/a.js", "lib/a.ts"}},
		{"**/*.{test,spec}.{ts,js}", []string{"a.test.ts", "x/a.spec.js"}, []string{"a.ts", "a.test.go"}},
		{"src/{api,web}/**", []string{"src/api/a.go", "src/web/b/c.ts"}, []string{"src/lib/a.go", "src/api"}},
		{"**", []string{"a", "a/b/c.go", ".github/workflows/ci.yml"}, nil},
		{"**/test_*.py", []string{"tests/test_api.py", "test_x.py"}, []string{"tests/api_test.py"}},
		{"docs/**/*.md", []string{"docs/a.md", "docs/x/y.md"}, []string{"README.md"}},
		{"[!_]*.go", []string{"a.go", "pkg/b.go"}, []string{"_a.go"}},
		{"[^_]*.go", []string{"a.go"}, []string{"_a.go"}},
		{"file?.txt", []string{"file1.txt"}, []string{"file10.txt", "file/.txt"}},
		{`\*.md`, []string{"*.md"}, []string{"a.md"}},
		{"a/**/b/**/c", []string{"a/b/c", "a/x/b/y/z/c", "a/b/c/d.txt"}, []string{"a/c", "b/c"}},
		{"**.ts", []string{"a.ts", "x/a.ts"}, []string{"x/a.go"}},
		{"*.TSX", []string{"A.TSX"}, []string{"a.tsx"}},
		// Each alternative in braces is read as a glob of its own: one
		// may be anchored, or name a folder, and its neighbours not.
		{"{migrations/,*.sql}", []string{"db/migrations/1.go", "x/a.sql"}, []string{"migrations", "a.go"}},
		{"{0/,zz}", []string{"1/0/0", "0/x"}, []string{"0", "1/0"}},
		{"{cmd/*.go,Makefile}", []string{"cmd/a.go", "x/Makefile"}, []string{"x/cmd/a.go"}},
	} {
		for _, p := range c.yes {
			if !memory.MatchGlob(c.glob, p) {
				t.Errorf("glob %q must match %q", c.glob, p)
			}
		}
		for _, p := range c.no {
			if memory.MatchGlob(c.glob, p) {
				t.Errorf("glob %q must not match %q", c.glob, p)
			}
		}
	}
	// A path is a file inside the repository, as search checks it.
	for _, p := range []string{"", "/etc/passwd", "../x.go", "a/../../x.go", "."} {
		if memory.MatchGlob("**", p) {
			t.Errorf("** must not match %q, which names no file inside the repository", p)
		}
	}
	if !memory.MatchGlob("cmd/*.go", "./cmd/x/../app.go") {
		t.Error("a path is cleaned before it is matched")
	}
}

func TestValidateGlobs(t *testing.T) {
	for _, g := range []string{"*.tsx", "migrations/**", "src/**/*.{ts,tsx}", "**", "docs/"} {
		if err := memory.ValidateGlob(g); err != nil {
			t.Errorf("ValidateGlob(%q): %v", g, err)
		}
	}
	for g, want := range map[string]string{
		"":                                 "empty glob",
		"  ":                               "empty glob",
		"/":                                "empty glob",
		"src/[a-":                          "not a valid pattern",
		"src/{a,b":                         "without its }",
		"src/a}":                           "without its {",
		"{,a}":                             "names no file",
		"a\nb":                             "one line",
		"a\x1b[2Jb":                        "control characters",
		"\xff.go":                          "UTF-8",
		strings.Repeat("a", 257):           "257 bytes, the limit is 256",
		strings.Repeat("{a,b}", 7) + ".go": "more than 64 alternatives",
	} {
		err := memory.ValidateGlob(g)
		if !errors.Is(err, memory.ErrInvalidGlob) || !strings.Contains(err.Error(), want) {
			t.Errorf("ValidateGlob(%q) = %v, want ErrInvalidGlob saying %q", g, err, want)
		}
	}
	// A refused glob is never repeated: it may be anything a hand-edited
	// file or a model put there.
	token := "ghp_" + strings.Repeat("x7Q", 12)
	for _, g := range []string{token + "/[a-", "{" + token, token + "\n", strings.Repeat(token, 8)} {
		err := memory.ValidateGlobs([]string{"docs/**", g})
		if err == nil || strings.Contains(err.Error(), token) || !strings.Contains(err.Error(), "glob 2 of 2") {
			t.Errorf("ValidateGlobs of a bad glob: %v; want it refused, placed, and not repeated", err)
		}
	}
	many := make([]string, memory.MaxGlobs+1)
	for i := range many {
		many[i] = "*.go"
	}
	if err := memory.ValidateGlobs(many); !errors.Is(err, memory.ErrInvalidGlob) || !strings.Contains(err.Error(), "33 globs") {
		t.Errorf("ValidateGlobs of 33: %v", err)
	}
	m := memory.Memory{Scope: memory.ScopeUser, Kind: memory.KindRule, Content: "use tabs", Globs: []string{"src/[a-"}}
	if err := m.Validate(); !errors.Is(err, memory.ErrInvalidGlob) {
		t.Errorf("Memory.Validate must check globs: %v", err)
	}
}

// FuzzMatchGlob holds the matcher to path.Match, the standard library's
// matcher of one path, where their rules agree (an anchored glob without
// ** or braces), and to its own rules elsewhere; and no glob a memory may
// carry makes a match slow.
func FuzzMatchGlob(f *testing.F) {
	for _, s := range [][2]string{
		{"cmd/*.go", "cmd/app.go"}, {"*.tsx", "web/a.tsx"}, {"migrations/**", "migrations/1.sql"},
		{"src/**/*.{ts,tsx}", "src/a/b.tsx"}, {"[!a]?", "bc"}, {`a\*b/c`, "a*b/c"}, {"a/**/b/**/c/**/d", "a/b/c/d/e"},
		{"{a,{b,c}}/x", "c/x"}, {"**/**/**/x", strings.Repeat("a/", 100) + "x"}, {"0/", "1/0/0"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, glob, file string) {
		start := time.Now()
		got := memory.MatchGlob(glob, file)
		if memory.ValidateGlob(glob) != nil {
			if got {
				t.Fatalf("invalid glob %q matched %q", glob, file)
			}
			return
		}
		if d := time.Since(start); d > 50*time.Millisecond && len(file) < 4096 {
			// One slow run on a busy machine (a GC pause, a descheduled
			// fuzz worker) is noise; a glob that makes matching slow is
			// slow every time, so the best of several runs decides.
			if best := bestOf(5, func() { memory.MatchGlob(glob, file) }); best > 50*time.Millisecond {
				t.Fatalf("matching %q against %q took %v at best of 5", glob, file, best)
			}
		}
		g := strings.TrimSpace(glob)
		clean := path.Clean(file)
		plain := strings.Contains(g, "/") && !strings.ContainsAny(g, "{}!^") && !strings.Contains(g, "**") &&
			!strings.HasPrefix(g, "/") && !strings.HasPrefix(g, ".") && !strings.HasSuffix(g, "/") && !strings.Contains(g, "//") && !strings.Contains("/"+g+"/", "/./") &&
			file == clean && file != "" && !strings.HasPrefix(file, "/") && !strings.HasPrefix(file, ".")
		if plain {
			// The glob matches the file or a folder it lies in.
			want := false
			for p := file; p != "." && p != "/"; p = path.Dir(p) {
				if ok, _ := path.Match(g, p); ok {
					want = true
				}
			}
			if got != want {
				t.Fatalf("MatchGlob(%q, %q) = %v, path.Match says %v", glob, file, got, want)
			}
		}
		if got && !memory.MatchGlob("{"+strings.ReplaceAll(g, ",", `\,`)+",zz}", file) && !strings.ContainsAny(g, `{}\`) {
			t.Fatalf("%q matched %q, but not as an alternative in braces", glob, file)
		}
		if !strings.ContainsAny(file, `*?[]{}\`) && memory.ValidateGlob(file) == nil && file == clean && file == strings.TrimSpace(file) && !strings.HasPrefix(file, ".") && file != "" && !strings.HasPrefix(file, "/") && !memory.MatchGlob(file, file) {
			t.Fatalf("the literal glob %q must match itself", file)
		}
	})
}

// bestOf runs f n times and returns its fastest run.
func bestOf(n int, f func()) time.Duration {
	var best time.Duration
	for i := range n {
		start := time.Now()
		f()
		if d := time.Since(start); i == 0 || d < best {
			best = d
		}
	}
	return best
}
