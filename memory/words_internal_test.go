package memory

import (
	"slices"
	"testing"
)

// Words derived from one another share a base; short words and words
// whose cut would leave too little keep none.
func TestDerivationalBase(t *testing.T) {
	for _, family := range [][]string{
		{"deduplication", "duplicates", "duplicate"},
		{"reformats", "formatter", "formatting"},
		{"configuration", "configured"},
		{"linters", "linter"},
	} {
		want := derivationalBase(family[0])
		if want == "" {
			t.Errorf("%s has no base", family[0])
		}
		for _, w := range family[1:] {
			if got := derivationalBase(w); got != want {
				t.Errorf("base of %s is %q; want %q, the base of %s", w, got, want, family[0])
			}
		}
	}
	for _, w := range []string{"lint", "repo", "design", "über-größe"} {
		if b := derivationalBase(w); b != "" {
			t.Errorf("base of %s is %q; want none", w, b)
		}
	}
}

// A capital run followed by a lowercase word splits before the word's
// capital, but the plural s of an acronym stays with it.
func TestWordsSplitIdentifiers(t *testing.T) {
	for text, want := range map[string][]string{
		"HTTPServer runTool":   {"http", "server", "run", "tool"},
		"log IDs and URLs":     {"log", "ids", "and", "urls"},
		"APIsFor parse_config": {"apis", "for", "parse", "config"},
		"HTTPSession":          {"http", "session"},
	} {
		if got := Words(text); !slices.Equal(got, want) {
			t.Errorf("Words(%q) = %q; want %q", text, got, want)
		}
	}
}
