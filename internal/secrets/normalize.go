package secrets

import (
	"strings"
	"unicode/utf8"
)

// normalize undoes what hides a credential from the rules without
// changing it: invisible characters inside it (zero-width spaces and
// joiners, word joiners, byte-order marks, soft hyphens), backticks that
// split it into code spans, and a line break that splits it in two. It
// returns the rewritten text and, for each of its bytes and one past the
// end, the offset in text it came from; changed is false when there was
// nothing to undo.
func normalize(text string) (out string, origin []int, changed bool) {
	if !hasInvisible(text) && !hasSplit(text) {
		return "", nil, false // the common case, found without copying
	}
	// Invisible characters first, so that one between two code spans
	// does not hide the split.
	visible, first, dropped := rewrite(text, "\xc2\xe2\xef", invisibleAt)
	out, second, joined := rewrite(visible, "`\r\n", splitLength)
	if !dropped && !joined {
		return "", nil, false
	}
	origin = second
	if dropped {
		for i, o := range second {
			origin[i] = first[o]
		}
	}
	return out, origin, true
}

// rewrite drops from text each span skip measures (its length at i, or
// 0 to keep the byte), returning the rest and, for each of its bytes and
// one past the end, its offset in text. skip is asked only at the bytes
// in stops (bytes, not runes); the runs between them are copied whole.
func rewrite(text, stops string, skip func(text string, i int) int) (string, []int, bool) {
	var stop [256]bool
	for k := 0; k < len(stops); k++ {
		stop[stops[k]] = true
	}
	var b strings.Builder
	b.Grow(len(text))
	origin := make([]int, 0, len(text)+1)
	changed := false
	for i := 0; i < len(text); {
		j := i
		for j < len(text) && !stop[text[j]] {
			j++
		}
		b.WriteString(text[i:j])
		for k := i; k < j; k++ {
			origin = append(origin, k)
		}
		if i = j; i == len(text) {
			break
		}
		if n := skip(text, i); n > 0 {
			i += n
			changed = true
			continue
		}
		b.WriteByte(text[i])
		origin = append(origin, i)
		i++
	}
	return b.String(), append(origin, len(text)), changed
}

func splitLength(text string, i int) int {
	if j, ok := splitAt(text, i); ok {
		return j - i
	}
	return 0
}

// invisibles are the characters normalize drops.
var invisibles = []string{"\u00ad", "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"}

func hasInvisible(text string) bool {
	// Every invisible is outside ASCII, and most texts are ASCII: one pass
	// over the bytes instead of one search per invisible.
	ascii := true
	for i := 0; i < len(text) && ascii; i++ {
		ascii = text[i] < utf8.RuneSelf
	}
	if ascii {
		return false
	}
	for _, r := range invisibles {
		if strings.Contains(text, r) {
			return true
		}
	}
	return false
}

// hasSplit reports whether splitAt would join anything in text, looking
// only at its backticks and line breaks.
func hasSplit(text string) bool {
	// Most texts hold neither, which IndexByte finds faster than IndexAny.
	if strings.IndexByte(text, '\n') < 0 && strings.IndexByte(text, '`') < 0 {
		return false
	}
	for i := 0; i < len(text); {
		j := strings.IndexAny(text[i:], "`\n")
		if j < 0 {
			return false
		}
		i += j
		// A split at a line break may start at the \r before it.
		at := i
		if text[i] == '\n' && i > 0 && text[i-1] == '\r' {
			at = i - 1
		}
		if _, ok := splitAt(text, at); ok {
			return true
		}
		i++
	}
	return false
}

// invisibleAt is the length of the invisible character at text[i], or 0.
func invisibleAt(text string, i int) int {
	if c := text[i]; c != 0xC2 && c != 0xE2 && c != 0xEF {
		return 0
	}
	for _, r := range invisibles {
		if strings.HasPrefix(text[i:], r) {
			return len(r)
		}
	}
	return 0
}

// splitAt reports whether text[i] starts a split inside a token, and
// where the token resumes: backticks between two token bytes
// (gh`p_…`…), or a line break after a long run of token bytes and before
// another (a token wrapped at the margin, a PEM body). Short runs are
// words, which prose wraps every line.
func splitAt(text string, i int) (int, bool) {
	switch text[i] {
	case '`':
		j := i
		for j < len(text) && text[j] == '`' {
			j++
		}
		return j, i > 0 && j < len(text) && tokenByte(text[i-1]) && tokenByte(text[j])
	case '\n', '\r':
		j := i
		if text[j] == '\r' {
			j++
		}
		if j >= len(text) || text[j] != '\n' {
			return 0, false
		}
		j++
		// The next line's indentation, and the markers of a quote (>),
		// continue the line the token started on.
		for j < len(text) && (text[j] == ' ' || text[j] == '\t' || text[j] == '>') {
			j++
		}
		before, after := runBefore(text, i), runAfter(text, j)
		return j, before >= 8 && after >= 4 && (hasTokenMark(text[i-before:i]) || hasTokenMark(text[j:j+after]))
	}
	return 0, false
}

// hasTokenMark reports whether a run holds a digit or one of _+/=, as a
// token's halves do and the long words prose wraps do not.
func hasTokenMark(run string) bool {
	return strings.ContainsAny(run, "0123456789_+/=")
}

func tokenByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("_-+/=.", c) >= 0
}

func runBefore(text string, i int) int {
	n := 0
	for i > 0 && tokenByte(text[i-1]) {
		i--
		n++
	}
	return n
}

func runAfter(text string, j int) int {
	n := 0
	for j < len(text) && tokenByte(text[j]) {
		j++
		n++
	}
	return n
}
