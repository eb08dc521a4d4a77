// Package termtext makes text safe to print on a terminal. Memory text comes
// from clones, models and files nobody reviewed: printed raw, an escape
// sequence in it could write the clipboard (OSC 52), show a link that goes
// elsewhere (OSC 8), rewrite what is already on screen (CSI) or hide text
// (bidirectional overrides). Every command that prints such text in its
// text output passes it through here; JSON output is escaped by
// encoding/json already.
package termtext

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Escape returns s with every control character, terminal escape and
// invalid byte shown as a Go-style escape (\x1b, \u009b, \xff), so it prints
// as the characters it holds. Backslashes are left alone: text that already
// went through %q (format.Describe) prints unchanged, and a literal "\x1b"
// that reads like an escaped ESC is harmless. Newlines and tabs are escaped too: use it for
// one-line fields (a table cell, a command to confirm).
func Escape(s string) string { return escape(s, false) }

// EscapeText is Escape for multi-line text (a model's reply, a command's
// output, a message): newlines and tabs are kept.
func EscapeText(s string) string { return escape(s, true) }

func escape(s string, keepLines bool) string {
	if safe(s, keepLines) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case keepLines && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// safe reports whether s prints as itself, which is most text: the common
// case costs one scan and no allocation.
func safe(s string, keepLines bool) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && !(keepLines && (c == '\n' || c == '\t')) || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || unsafeRune(r) {
			return false
		}
		i += size
	}
	return true
}

// unsafeRune is a character past ASCII that a terminal or the eye does not
// show as itself: C1 controls (U+009B is a one-byte CSI), the line and
// paragraph separators, and the bidirectional controls that reorder text.
func unsafeRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x2028 || r == 0x2029:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	}
	return false
}

// OneLine shortens s to one line of at most max characters, its runs of
// white space made one space, escaped for the terminal: a table cell or a
// line of tool activity.
func OneLine(s string, max int) string {
	s = Escape(strings.Join(strings.Fields(s), " "))
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}
