package derive

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/acolyte-dev/acolyte/internal/gittest"
	"github.com/acolyte-dev/acolyte/memory"
)

const agentsMD = "# Project guidelines\n" +
	"\n" +
	"This repository is a Go CLI.\n" +
	"<!-- maintainers: keep this short -->\n" +
	"\n" +
	"## Testing\n" +
	"\n" +
	"- Run `go test ./...` before every commit.\n" +
	"- Use real SQLite files\n" +
	"  in t.TempDir(), never mocks.\n" +
	"  - nested detail folds into its parent\n" +
	"  - and so does this one\n" +
	"* Notes:\n" +
	"\n" +
	"Run the benchmarks with:\n" +
	"\n" +
	"```sh\n" +
	"go test -bench . ./memory\n" +
	"\n" +
	"# not a heading inside a fence\n" +
	"```\n" +
	"\n" +
	"### Flaky tests\n" +
	"\n" +
	"1. Quarantine the test.\n" +
	"2) File an issue\n" +
	"   with the failing seed.\n" +
	"\n" +
	"   ```\n" +
	"   go test -run X -count 100\n" +
	"   ```\n" +
	"\n" +
	"---\n" +
	"\n" +
	"Style\n" +
	"-----\n" +
	"\n" +
	"Comments say why,\n" +
	"never what.\n" +
	"\n" +
	"```go\n" +
	"// standalone example block\n" +
	"```\n" +
	"TBD\n"

func contents(mems []memory.Memory) map[string]memory.Memory {
	out := make(map[string]memory.Memory)
	for _, m := range mems {
		out[m.Content] = m
	}
	return out
}

func TestRulesFromFileSplitsItemsAndParagraphs(t *testing.T) {
	rules, err := RulesFromFile("AGENTS.md", []byte(agentsMD))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{ // content -> source
		"This repository is a Go CLI.":             "AGENTS.md",
		"Run `go test ./...` before every commit.": "AGENTS.md#Testing",
		"Use real SQLite files\nin t.TempDir(), never mocks.\n- nested detail folds into its parent\n- and so does this one": "AGENTS.md#Testing",
		"Run the benchmarks with:\n\n```sh\ngo test -bench . ./memory\n\n# not a heading inside a fence\n```":                "AGENTS.md#Testing",
		"Quarantine the test.": "AGENTS.md#Testing/Flaky tests",
		"File an issue\nwith the failing seed.\n\n```\ngo test -run X -count 100\n```": "AGENTS.md#Testing/Flaky tests",
		"Comments say why,\nnever what.":                                               "AGENTS.md#Style",
		"```go\n// standalone example block\n```":                                      "AGENTS.md#Style",
	}
	got := contents(rules)
	for content, source := range want {
		m, ok := got[content]
		if !ok {
			t.Errorf("missing rule %q", content)
			continue
		}
		if m.Source != source || m.Kind != memory.KindRule || m.Scope != memory.ScopeProject || !strings.HasPrefix(m.ID, "r-") {
			t.Errorf("rule %q: source %q kind %s id %s, want source %q", content, m.Source, m.Kind, m.ID, source)
		}
	}
	if len(rules) != len(want) {
		for _, r := range rules {
			if _, ok := want[r.Content]; !ok {
				t.Errorf("unexpected rule %q (%s)", r.Content, r.Source)
			}
		}
	}
	if topic := got["Quarantine the test."].Topic; topic != "testing / flaky tests" {
		t.Errorf("topic = %q, want the section headings, outermost first", topic)
	}
	if topic := got["Run `go test ./...` before every commit."].Topic; topic != "testing" {
		t.Errorf("topic = %q, want the section heading", topic)
	}
}

// A topic is a path of headings that keeps to memory.MaxTopicBytes by
// dropping its deepest headings, so the outer ones a filter names stay.
func TestTopicPathsFitTheTopicLimit(t *testing.T) {
	long := strings.Repeat("word ", 12) // 59 bytes once trimmed
	tests := []struct {
		name     string
		headings []string
		want     string
	}{
		{"one", []string{"Testing"}, "testing"},
		{"nested", []string{"CI/CD Infrastructure", "Release  Process"}, "ci/cd infrastructure / release process"},
		{"separator inside a heading", []string{"Build / Release", "Tags"}, "build/release / tags"},
		{"deepest dropped", []string{long, "Unit tests", "x"}, strings.TrimSpace(long)},
		{"empty heading skipped", []string{"", "Testing"}, "testing"},
		{"one heading cut", []string{strings.Repeat("é", 40)}, strings.Repeat("é", 32)},
	}
	for _, tt := range tests {
		got := TopicFromHeadings(tt.headings)
		if got != tt.want {
			t.Errorf("%s: topic = %q, want %q", tt.name, got, tt.want)
		}
		if len(got) > memory.MaxTopicBytes || !utf8.ValidString(got) {
			t.Errorf("%s: topic %q breaks the topic limit", tt.name, got)
		}
	}
}

func TestRuleIDsAreStableAndFollowEdits(t *testing.T) {
	a, _ := RulesFromFile("AGENTS.md", []byte("## Build\n\n- Run make before pushing.\n"))
	b, _ := RulesFromFile("AGENTS.md", []byte("## Build\n\n- run   MAKE before pushing.\n"))
	c, _ := RulesFromFile("AGENTS.md", []byte("## Build\n\n- Run make before merging.\n"))
	d, _ := RulesFromFile("AGENTS.md", []byte("## Release\n\n- Run make before pushing.\n"))
	if a[0].ID != b[0].ID {
		t.Error("case and spacing changed the id")
	}
	if a[0].ID == c[0].ID || a[0].ID == d[0].ID {
		t.Error("an edited or moved rule kept its id")
	}
}

func TestRulesWithoutTitleKeepLevelOneHeadings(t *testing.T) {
	rules, _ := RulesFromFile("AGENTS.md", []byte("# Build\n\n- Use make all.\n\n# Test\n\n- Use make test.\n"))
	got := contents(rules)
	if got["Use make all."].Source != "AGENTS.md#Build" || got["Use make test."].Source != "AGENTS.md#Test" {
		t.Errorf("sources: %+v", rules)
	}
}

func TestRulesRejectOversizedAndInvalidText(t *testing.T) {
	if _, err := RulesFromFile("AGENTS.md", []byte("- ok rule\n- \xff\xfe bad bytes\n")); err == nil || !strings.Contains(err.Error(), "UTF-8") {
		t.Errorf("invalid UTF-8: %v", err)
	}
	big := "## A\n\n" + strings.Repeat("word ", memory.MaxContentBytes/4) + "\n"
	_, err := RulesFromFile("AGENTS.md", []byte(big))
	if err == nil || !strings.Contains(err.Error(), "AGENTS.md:3:") {
		t.Errorf("oversized rule: %v", err)
	}
}

func TestRulesFindsNestedFilesAndSkipsIgnoredOnes(t *testing.T) {
	root := t.TempDir()
	gittest.WriteFiles(t, root, map[string]string{
		"AGENTS.md":                "## Build\n\n- Run make in the root.\n",
		"CLAUDE.md":                "## Build\n\n- Run make in the root.\n", // a copy adds nothing
		"GEMINI.md":                "- Prefer small functions always.\n",
		"web/AGENTS.md":            "# Web app\n\n## Build\n### Frontend\n\n- Run pnpm build first.\n",
		"node_modules/x/AGENTS.md": "- Vendored rules are not ours.\n",
		"vendor/y/AGENTS.md":       "- Vendored rules are not ours.\n",
		"generated/AGENTS.md":      "- Ignored rules are not ours.\n",
		".gitignore":               "generated/\n",
		"sub/.gitignore":           "deep/\n",
		"sub/deep/AGENTS.md":       "- Ignored by a nested gitignore.\n",
		"sub/AGENTS.md":            "- Sub rules apply here.\n",
		"other-repo/.git/HEAD":     "ref: refs/heads/main\n",
		"other-repo/AGENTS.md":     "- Another repository's rules.\n",
	})
	files, err := InstructionFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(files, " ") != "AGENTS.md CLAUDE.md GEMINI.md sub/AGENTS.md web/AGENTS.md" {
		t.Fatalf("InstructionFiles = %v", files)
	}
	rules, err := Rules(root)
	if err != nil {
		t.Fatal(err)
	}
	got := contents(rules)
	if len(rules) != 4 {
		t.Errorf("got %d rules: %+v", len(rules), rules)
	}
	if m := got["In web/: Run pnpm build first."]; m.Source != "web/AGENTS.md#Build/Frontend" {
		t.Errorf("nested rule: %+v", m)
	}
	if m := got["In sub/: Sub rules apply here."]; m.Source != "sub/AGENTS.md" {
		t.Errorf("nested rule without heading: %+v", m)
	}
	if m := got["Prefer small functions always."]; m.Source != "GEMINI.md" {
		t.Errorf("GEMINI.md rule: %+v", m)
	}
}
