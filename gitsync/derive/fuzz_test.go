package derive

import (
	"bytes"
	"testing"

	"github.com/acolyte-dev/acolyte/gitsync/format"
)

// FuzzRulesFromFile: every rule split from any instruction file can be
// written to and read back from the memories file unchanged.
func FuzzRulesFromFile(f *testing.F) {
	for _, s := range []string{
		agentsMD,
		"## Build\x00ing\n\n- Run make before pushing.\n",
		"# T\n\n## A\x1b[1m\n\n- one rule here\n  - nested item\n\n```sh\nmake\n```\n",
		"Setext\n======\n\npara one two\n\n---\n\n1. first item\n2) second item\n",
		"<!-- comment\n-->\n~~~\nfence alone\n~~~\n",
	} {
		f.Add("AGENTS.md", []byte(s))
	}
	f.Add("sub/dir/CLAUDE.md", []byte("## Topic\n\n- a nested rule\n"))
	// Other agents' rule files go through the front matter first.
	f.Add(".cursor/rules/react.mdc", []byte("---\ndescription: React\nglobs: *.tsx, src/**\n---\n- Use function components.\n"))
	f.Add(".claude/rules/a.md", []byte("---\npaths:\n  - \"src/**\"\n---\n## T\n- A rule here.\n"))
	f.Fuzz(func(t *testing.T, rel string, src []byte) {
		rules, err := RulesFromFile(rel, src)
		if err != nil {
			return
		}
		for _, m := range rules {
			if err := format.CheckMemory(m); err != nil {
				t.Fatalf("rule the file cannot hold: %v", err)
			}
		}
		enc := format.Encode(rules)
		back, err := format.Decode("f", enc)
		if err != nil {
			t.Fatalf("rules poison the file: %v", err)
		}
		if len(back) != len(rules) || !bytes.Equal(format.Encode(back), enc) {
			t.Fatalf("rules changed through the file: %d -> %d", len(rules), len(back))
		}
	})
}
