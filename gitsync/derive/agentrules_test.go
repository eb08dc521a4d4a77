package derive

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/internal/gittest"
	"github.com/acolyte-dev/acolyte/memory"
)

func TestParseFrontMatterReadsEachAgentsKeys(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      FrontMatter
		body      string
	}{
		{"claude paths, block list", "---\npaths:\n  - \"src/api/**/*.ts\"\n  - lib/**  # and lib\n---\n- Validate every input.\n",
			FrontMatter{Globs: []string{"src/api/**/*.ts", "lib/**"}}, "\n\n\n\n\n- Validate every input.\n"},
		{"cursor globs, comma string", "---\ndescription: React components\nglobs: *.tsx, src/components/**\nalwaysApply: false\n---\nUse function components.\n",
			FrontMatter{Globs: []string{"*.tsx", "src/components/**"}, Description: "React components"}, "\n\n\n\n\nUse function components.\n"},
		{"cursor alwaysApply", "---\nalwaysApply: true\n---\nAlways write tests.\n", FrontMatter{AlwaysApply: true}, "\n\n\nAlways write tests.\n"},
		{"copilot applyTo, quoted", "---\napplyTo: \"**/*.go,**/*.mod\"\ndescription: 'Go''s rules'\n---\nRun go vet.\n",
			FrontMatter{Globs: []string{"**/*.go", "**/*.mod"}, Description: "Go's rules"}, "\n\n\n\nRun go vet.\n"},
		{"flow list, CRLF", "---\r\nglobs: [\"migrations/**\", 'db/*.sql']\r\n---\r\nNever edit an applied migration.\r\n",
			FrontMatter{Globs: []string{"migrations/**", "db/*.sql"}}, "\n\n\nNever edit an applied migration.\r\n"},
		{"cursor globs with braces", "---\nglobs: src/**/*.{ts,tsx}, \"a,b/**\", [abc],d/*\n---\n",
			FrontMatter{Globs: []string{"src/**/*.{ts,tsx}", "a,b/**", "[abc]", "d/*"}}, "\n\n\n"},
		{"flow list with braces", "---\npaths: [\"**/*.{js,jsx}\", lib/**]\n---\n",
			FrontMatter{Globs: []string{"**/*.{js,jsx}", "lib/**"}}, "\n\n\n"},
		{"other keys ignored", "---\nname: x\nmetadata:\n  - globs-looking: y\n---\nBody.\n", FrontMatter{}, "\n\n\n\n\nBody.\n"},
	} {
		fm, body, found := ParseFrontMatter(tc.src)
		if !found || !reflect.DeepEqual(fm, tc.want) || body != tc.body {
			t.Errorf("%s: %v %+v %q, want %+v %q", tc.name, found, fm, body, tc.want, tc.body)
		}
	}
	for _, src := range []string{"No front matter.\n", "---\nnever closed: x\n", "Text\n---\nkey: v\n---\n"} {
		if _, body, found := ParseFrontMatter(src); found || body != src {
			t.Errorf("%q: found front matter", src)
		}
	}
}

func TestSplitImportsLeavesABlankLineAndSkipsFences(t *testing.T) {
	src := "# Claude\n- Keep diffs small.\n@AGENTS.md\n- @docs/style.md\nSee @README.md for more.\n```\n@not-an-import\n```\n@"
	body, imports := SplitImports(src)
	want := []Import{{"AGENTS.md", 3}, {"docs/style.md", 4}}
	if !reflect.DeepEqual(imports, want) {
		t.Errorf("imports %+v, want %+v", imports, want)
	}
	if body != "# Claude\n- Keep diffs small.\n\n\nSee @README.md for more.\n```\n@not-an-import\n```\n@" {
		t.Errorf("body %q", body)
	}
	for from, cases := range map[string]map[string]string{
		"CLAUDE.md":     {"AGENTS.md": "AGENTS.md", "./docs/a.md": "docs/a.md", "../x.md": "", "~/.claude/x.md": "", "/etc/passwd": ""},
		"sub/CLAUDE.md": {"../AGENTS.md": "AGENTS.md", "../../x": ""},
	} {
		for p, want := range cases {
			if got, ok := resolveImport(from, p); got != want || ok != (want != "") {
				t.Errorf("%s imports %s: %q %v, want %q", from, p, got, ok, want)
			}
		}
	}
}

// Every agent's rule files are read beside AGENTS.md; front matter scopes
// their rules and is not indexed; CLAUDE.md's imports are followed inside
// the repository, never glued onto a rule, and every guard applies.
func TestDeriveReadsEveryAgentsRuleFiles(t *testing.T) {
	root := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret.md")
	gittest.WriteFiles(t, root, map[string]string{
		"AGENTS.md":                                "- Run make test before pushing.\n",
		"CLAUDE.md":                                "- Keep diffs small.\n@AGENTS.md\n@docs/style.md\n@../elsewhere.md\n@outside.md\n",
		"docs/style.md":                            "- Wrap prose at 100 columns.\n@more.md\n",
		"docs/more.md":                             "- Name files in kebab-case.\n",
		".claude/rules/api/validation.md":          "---\npaths:\n  - \"src/api/**\"\n---\n- Validate every request body.\n",
		".cursor/rules/react.mdc":                  "---\ndescription: React components\nglobs: *.tsx\nalwaysApply: false\n---\n- Use function components.\n",
		".cursor/rules/always.mdc":                 "---\nalwaysApply: true\n---\n- Write a test for every bug fix.\n",
		".github/copilot-instructions.md":          "- Prefer the standard library.\n",
		".github/instructions/go.instructions.md":  "---\napplyTo: \"**/*.go\"\n---\n- Wrap errors with %w.\n",
		".github/instructions/key.instructions.md": "---\ndescription: uses AKIAQX7NR3JTMB2W5KPL\n---\n- Deploy with the CI role.\n",
		".cursor/rules/notes.md":                   "- Not a Cursor rule file: wrong extension.\n",
	})
	gittest.WriteFiles(t, filepath.Dir(outside), map[string]string{"secret.md": "- The root password is hunter2.\n"})
	if err := os.Symlink(outside, filepath.Join(root, "outside.md")); err != nil {
		t.Fatal(err)
	}
	d, err := Worktree(root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range d.Memories {
		got = append(got, m.Source+" | "+m.Topic+" | "+m.Content+" | "+strings.Join(m.Globs, " "))
	}
	slices.Sort(got)
	want := []string{
		".claude/rules/api/validation.md |  | For src/api/**: Validate every request body. | src/api/**",
		".cursor/rules/always.mdc |  | Write a test for every bug fix. | **",
		".cursor/rules/react.mdc | react components | For *.tsx: Use function components. | *.tsx",
		".github/copilot-instructions.md |  | Prefer the standard library. | ",
		".github/instructions/go.instructions.md |  | For **/*.go: Wrap errors with %w. | **/*.go",
		"AGENTS.md |  | Run make test before pushing. | ",
		"CLAUDE.md |  | Keep diffs small. | ",
		"docs/more.md |  | Name files in kebab-case. | ",
		"docs/style.md |  | Wrap prose at 100 columns. | ",
	}
	if !slices.Equal(got, want) {
		t.Errorf("rules:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if files := refusalFiles(d.Skipped); !slices.Equal(files, []string{"CLAUDE.md", "outside.md"}) {
		t.Errorf("skipped %v (%+v)", files, d.Skipped)
	}
	if len(d.Refused) != 1 || d.Refused[0].File != ".github/instructions/key.instructions.md" || d.Refused[0].Problem != ProblemSecret {
		t.Errorf("refused %+v", d.Refused)
	}
	for _, f := range append(d.Skipped, d.Refused...) {
		if strings.Contains(f.Message, "AKIA") || strings.Contains(f.Message, "hunter2") {
			t.Errorf("a refusal repeats the secret: %v", f)
		}
	}
}

// A rule file whose front matter names a glob that cannot match is
// refused whole, by file, and the other files' rules are kept.
func TestDeriveRefusesBadGlobsInFrontMatter(t *testing.T) {
	root := t.TempDir()
	gittest.WriteFiles(t, root, map[string]string{
		"AGENTS.md":               "- Run make test before pushing.\n",
		".cursor/rules/bad.mdc":   "---\nglobs: src/[a-\n---\n- Use function components.\n",
		".claude/rules/long.md":   "---\npaths:\n  - " + strings.Repeat("a", 300) + "\n---\n- Keep it short.\n",
		".cursor/rules/fine.mdc":  "---\nglobs: **/*.{ts,tsx}\n---\n- Type every export.\n",
		".claude/rules/braces.md": "---\npaths: \"src/{a,b\"\n---\n- Unbalanced.\n",
	})
	d, err := Worktree(root)
	if err != nil {
		t.Fatal(err)
	}
	if files := refusalFiles(d.Refused); !slices.Equal(files, []string{".claude/rules/braces.md", ".claude/rules/long.md", ".cursor/rules/bad.mdc"}) {
		t.Errorf("refused %v (%+v)", files, d.Refused)
	}
	for _, f := range d.Refused {
		if !strings.Contains(f.Message, "front matter") || f.Problem != ProblemInvalid {
			t.Errorf("refusal %+v must say the front matter's glob is wrong", f)
		}
	}
	var kept []string
	for _, m := range d.Memories {
		kept = append(kept, m.Source+" "+strings.Join(m.Globs, " "))
	}
	slices.Sort(kept)
	if !slices.Equal(kept, []string{".cursor/rules/fine.mdc **/*.{ts,tsx}", "AGENTS.md "}) {
		t.Errorf("kept %v", kept)
	}
}

func TestImportsStopAtTheDepthClaudeCodeFollows(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{"CLAUDE.md": "@d1.md\n"}
	for i := 1; i <= maxImportDepth+1; i++ {
		files["d"+string(rune('0'+i))+".md"] = "- Rule number " + string(rune('0'+i)) + " here.\n@d" + string(rune('0'+i+1)) + ".md\n"
	}
	files["d1.md"] += "@CLAUDE.md\n" // a loop is read once
	gittest.WriteFiles(t, root, files)
	d, err := Worktree(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Memories) != maxImportDepth {
		t.Errorf("%d rules, want %d: %+v", len(d.Memories), maxImportDepth, d.Memories)
	}
	if len(d.Skipped) != 1 || !strings.Contains(d.Skipped[0].Message, "imports deep") {
		t.Errorf("skipped %+v", d.Skipped)
	}
}

func FuzzParseFrontMatter(f *testing.F) {
	f.Add("---\npaths:\n  - \"src/**\"\n---\n- A rule.\n")
	f.Add("---\nglobs: *.tsx, 'a,b'\nalwaysApply: true\ndescription: \"x # y\" # z\n---\n")
	f.Add("---\r\napplyTo: [\"**/*.go\"]\r\n---\r\n")
	f.Fuzz(func(t *testing.T, src string) {
		fm, body, found := ParseFrontMatter(src)
		if !found {
			if body != src {
				t.Fatalf("no front matter, but the body changed")
			}
			return
		}
		if strings.Count(body, "\n") > strings.Count(src, "\n") || !strings.HasSuffix(src, strings.TrimLeft(body, "\n")) {
			t.Fatalf("body %q is not the end of %q", body, src)
		}
		for _, g := range fm.Globs {
			if g == "" || strings.Contains(g, "\n") {
				t.Fatalf("glob %q", g)
			}
		}
		// Where the rules apply is a valid set of globs or refused whole;
		// matching it never fails.
		applies := fm.AppliesTo()
		if fm.AlwaysApply && !slices.Equal(applies, []string{memory.AlwaysGlob}) {
			t.Fatalf("alwaysApply gave %q", applies)
		}
		if memory.ValidateGlobs(applies) == nil {
			memory.MatchesAny(applies, []string{"src/a.go", "migrations/1.sql"})
		}
	})
}

// FuzzSplitGlobList: the list splits only at commas, so its parts joined
// by commas are the list again.
func FuzzSplitGlobList(f *testing.F) {
	f.Add("*.ts, src/**/*.{ts,tsx}, \"a,b\", [,]")
	f.Add("{a,{b,c}},d")
	f.Fuzz(func(t *testing.T, s string) {
		parts := splitGlobList(s)
		if strings.Join(parts, ",") != s {
			t.Fatalf("%q split into %q", s, parts)
		}
	})
}

func FuzzSplitImports(f *testing.F) {
	f.Add("- Keep diffs small.\n@AGENTS.md\n- @docs/x.md\n```\n@y\n```\n")
	f.Add("@a\n@b")
	f.Fuzz(func(t *testing.T, src string) {
		body, imports := SplitImports(src)
		if strings.Count(body, "\n") != strings.Count(src, "\n") {
			t.Fatalf("line count changed: %q became %q", src, body)
		}
		lines := strings.Split(src, "\n")
		for _, imp := range imports {
			if imp.Line < 1 || imp.Line > len(lines) || !strings.Contains(lines[imp.Line-1], "@"+imp.Path) {
				t.Fatalf("import %+v is not on its line of %q", imp, src)
			}
			if _, ok := resolveImport("CLAUDE.md", imp.Path); ok && strings.HasPrefix(imp.Path, "/") {
				t.Fatalf("absolute import %q resolved", imp.Path)
			}
		}
	})
}

// refusalFiles is the sorted files of fs, for comparing refusals by where.
func refusalFiles(fs []Refusal) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.File)
	}
	slices.Sort(out)
	return out
}
