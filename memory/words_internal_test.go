package memory

import (
	"slices"
	"strings"
	"testing"
	"unicode"
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
		want := DerivationalBase(family[0])
		if want == "" {
			t.Errorf("%s has no base", family[0])
		}
		for _, w := range family[1:] {
			if got := DerivationalBase(w); got != want {
				t.Errorf("base of %s is %q; want %q, the base of %s", w, got, want, family[0])
			}
		}
	}
	for _, w := range []string{"lint", "repo", "design", "über-größe"} {
		if b := DerivationalBase(w); b != "" {
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

// splitByRune is splitIdentifier without its ASCII path.
func splitByRune(s string) []string {
	rs := []rune(s)
	var parts []string
	start := 0
	for i := 1; i < len(rs); i++ {
		prev, cur := rs[i-1], rs[i]
		boundary := false
		switch {
		case unicode.IsLower(prev) && unicode.IsUpper(cur):
			boundary = true
		case unicode.IsUpper(prev) && unicode.IsUpper(cur) && i+1 < len(rs) && unicode.IsLower(rs[i+1]) && !pluralAcronym(rs, i+1):
			boundary = true
		case unicode.IsDigit(prev) != unicode.IsDigit(cur) && (unicode.IsLetter(prev) || unicode.IsLetter(cur)):
			boundary = true
		}
		if boundary {
			parts = append(parts, string(rs[start:i]))
			start = i
		}
	}
	return append(parts, string(rs[start:]))
}

// FuzzSplitIdentifier: the ASCII path splits as the rune-by-rune one.
func FuzzSplitIdentifier(f *testing.F) {
	for _, s := range []string{"runTool", "HTTPServer", "IDs", "APIsFor", "http2Server", "v2", "don't", "a_b-c", "URLs", "", "ABCs1", "x9Y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := splitIdentifier(s), splitByRune(s); !slices.Equal(got, want) {
			t.Fatalf("splitIdentifier(%q) = %q, want %q", s, got, want)
		}
	})
}

// FuzzIdentifierWholes: skipping plain words gives the wholes that
// splitting every field gives.
func FuzzIdentifierWholes(f *testing.F) {
	for _, s := range []string{"The runTool and parse_config, HTTPServer v2", "IDs of URLs", "naïve café-bar", "Don't stop", "a-b c_d E"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		var want []string
		for _, field := range strings.FieldsFunc(text, func(r rune) bool {
			return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && r != '-'
		}) {
			if parts := Words(field); len(parts) >= 2 && !slices.Contains(want, strings.Join(parts, "")) {
				want = append(want, strings.Join(parts, ""))
			}
		}
		if got := identifierWholes(text); !slices.Equal(got, want) {
			t.Fatalf("identifierWholes(%q) = %q, want %q", text, got, want)
		}
	})
}
