package memory

import "testing"

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
