package postgres

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzFormRanges checks the ranges a search reads team_terms by against
// what they stand for: with COLLATE "C" PostgreSQL compares text bytewise,
// as Go compares strings, so a term lies in a form's range exactly when
// it equals the lexeme (a word form) or begins with it (a prefix form).
// Terms holding U+10FFFF, a noncharacter no text search lexeme has, are
// left out: the prefix range stops below them.
func FuzzFormRanges(f *testing.F) {
	f.Add("deploy", "deployment", true)
	f.Add("deploy", "deploy", false)
	f.Add("deploy", "deploy\x01", false)
	f.Add("stag", "stage", false)
	f.Add("ü", "über", true)
	f.Add("a", "b", true)
	f.Fuzz(func(t *testing.T, lexeme, term string, prefix bool) {
		if lexeme == "" || !utf8.ValidString(lexeme) || !utf8.ValidString(term) ||
			strings.ContainsAny(lexeme+term, "\x00\U0010FFFF") {
			t.Skip()
		}
		fm := form{lexemes: []string{lexeme}, prefix: prefix}
		lo, hi := fm.ranges()
		in := term >= lo[0] && term < hi[0]
		want := term == lexeme || (prefix && strings.HasPrefix(term, lexeme))
		if in != want {
			t.Fatalf("term %q in [%q, %q): %v, want %v", term, lo[0], hi[0], in, want)
		}
		if got := fm.matches([]string{term}); got != want {
			t.Fatalf("form %+v matches %q: %v, want %v", fm, term, got, want)
		}
	})
}
