package memory

import (
	"errors"
	"testing"
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
