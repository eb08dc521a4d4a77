package memory

import (
	"errors"
	"fmt"
	"testing"
	"unicode"
)

func TestValidateContentRefusesWhatShowsOtherwise(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		refused    bool
	}{
		{"plain", "tests run with go test", false},
		{"hebrew, natural direction", "שלום world", false},
		{"right-to-left mark", "price\u200f 10", false},
		{"escape codes only", "\x1b[2J\x1b[1;1H\b\a\r\n", true},
		{"escape code around text", "\x1b[1mbold\x1b[0m", false},
		{"tabs and bells", "\t\a\t", true},
		{"right-to-left override", "access \u202egranted", true},
		{"left-to-right embedding", "a\u202ab", true},
		{"first strong isolate", "a\u2068b\u2069", true},
	} {
		err := ValidateContent(tc.text)
		if got := errors.Is(err, ErrInvalidText); got != tc.refused {
			t.Errorf("%s: ValidateContent(%q) = %v, refused want %v", tc.name, tc.text, err, tc.refused)
		}
	}
	if err := ValidateTopic("ops\u2066"); !errors.Is(err, ErrInvalidText) {
		t.Errorf("a topic with an isolate: %v", err)
	}
}

// glyphsByRune is validateGlyphs as it was before it stopped decoding at
// the first visible rune: the reference FuzzValidateGlyphs holds it to.
func glyphsByRune(text string) error {
	visible := false
	inCSI, afterESC := false, false
	for i, r := range text {
		if isBidiControl(r) {
			return bidiError(r, i)
		}
		switch {
		case afterESC && r == '[':
			inCSI = true
		case inCSI:
			inCSI = r < 0x40 || r > 0x7e
		case !unicode.IsControl(r) && !unicode.IsSpace(r):
			visible = true
		}
		afterESC = r == 0x1b
	}
	if !visible {
		return fmt.Errorf("%w: it holds only control characters; give the fact to remember as text", ErrInvalidText)
	}
	return nil
}

// FuzzValidateGlyphs: the search for bidirectional controls after the
// first visible rune gives the same answer, and the same message, as
// decoding every rune, invalid UTF-8 included.
func FuzzValidateGlyphs(f *testing.F) {
	for _, s := range []string{"plain", "a\u202ab", "\x1b[1mb\x1b[0m", "\t\a", "x\xe2\x80", "x\xe2\xe2\x80\xaa", "x\xe2\x81\xa9y", "\xe2\x80\xaa", "x\u2028\u2066"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got, want := validateGlyphs(text), glyphsByRune(text)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("validateGlyphs(%q) = %v, want %v", text, got, want)
		}
	})
}
