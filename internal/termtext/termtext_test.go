package termtext

import (
	"strings"
	"testing"
)

func TestEscape(t *testing.T) {
	for _, c := range []struct{ in, one, text string }{
		{"plain text, é and 日本", "plain text, é and 日本", "plain text, é and 日本"},
		{"clip \x1b]52;c;aGk=\x07 end", `clip \x1b]52;c;aGk=\x07 end`, `clip \x1b]52;c;aGk=\x07 end`},
		{"\x1b]8;;https://evil\x1b\\link\x1b]8;;\x1b\\", `\x1b]8;;https://evil\x1b\link\x1b]8;;\x1b\`, `\x1b]8;;https://evil\x1b\link\x1b]8;;\x1b\`},
		{"red \x1b[31m\x1b[2J", `red \x1b[31m\x1b[2J`, `red \x1b[31m\x1b[2J`},
		{"c1 csi \u009b2J", `c1 csi \u009b2J`, `c1 csi \u009b2J`},
		{"bidi \u202eevil\u2066", `bidi \u202eevil\u2066`, `bidi \u202eevil\u2066`},
		{"bad \xff byte", `bad \xff byte`, `bad \xff byte`},
		{"two\nlines\tand tab\r", `two\x0alines\x09and tab\x0d`, "two\nlines\tand tab\\x0d"},
		{`a literal \x1b and C:\Users`, `a literal \x1b and C:\Users`, `a literal \x1b and C:\Users`},
		{"del \x7f nul \x00", `del \x7f nul \x00`, `del \x7f nul \x00`},
	} {
		if got := Escape(c.in); got != c.one {
			t.Errorf("Escape(%q) = %q, want %q", c.in, got, c.one)
		}
		if got := EscapeText(c.in); got != c.text {
			t.Errorf("EscapeText(%q) = %q, want %q", c.in, got, c.text)
		}
	}
}

// FuzzEscape: what Escape prints holds no control character, no C1 control
// and no invalid UTF-8, whatever it was given.
func FuzzEscape(f *testing.F) {
	f.Add("\x1b]52;c;aGk=\x07")
	f.Add("\u009b\u202e\xff")
	f.Fuzz(func(t *testing.T, s string) {
		for _, out := range []string{Escape(s), EscapeText(s)} {
			if !strings.ContainsFunc(out, func(r rune) bool {
				return (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || unsafeRune(r) || r == '\uFFFD' && !strings.ContainsRune(s, '\uFFFD')
			}) {
				continue
			}
			t.Fatalf("Escape(%q) = %q still holds a control character", s, out)
		}
		if strings.ContainsAny(Escape(s), "\n\t") {
			t.Fatalf("Escape(%q) keeps a newline or tab", s)
		}
	})
}
