package format

import (
	"bytes"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/acolyte-dev/acolyte/memory"
)

// appendMemory appends m's line to dst exactly as encodeLine(toRecord(m))
// would write it (json.Encoder without HTML escaping, then LF).
// encoding/json's reflection and time.Format were most of what `acolyte
// check` spent on a large file, which encodes every memory at least once.
// TestAppendMemoryMatchesJSON and FuzzAppendMemory hold the two together.
func appendMemory(dst []byte, m memory.Memory) []byte {
	dst = append(dst, `{"id":`...)
	dst = appendJSONString(dst, m.ID)
	dst = append(dst, `,"kind":`...)
	dst = appendJSONString(dst, string(m.Kind))
	dst = append(dst, `,"content":`...)
	dst = appendJSONString(dst, m.Content)
	if m.Topic != "" {
		dst = append(dst, `,"topic":`...)
		dst = appendJSONString(dst, m.Topic)
	}
	if m.Source != "" {
		dst = append(dst, `,"source":`...)
		dst = appendJSONString(dst, m.Source)
	}
	for _, f := range [...]struct {
		key string
		t   time.Time
	}{{`,"created":`, m.CreatedAt}, {`,"updated":`, m.UpdatedAt}} {
		if f.t.IsZero() {
			continue
		}
		dst = append(dst, f.key...)
		if y := f.t.UTC().Year(); y < 0 || y > 9999 {
			dst = appendJSONString(dst, formatTime(f.t))
			continue
		}
		dst = append(dst, '"')
		dst = appendTime(dst, f.t)
		dst = append(dst, '"')
	}
	if m.Commit != "" {
		dst = append(dst, `,"commit":`...)
		dst = appendJSONString(dst, m.Commit)
	}
	paths := m.Paths
	if !sortedUnique(paths) {
		paths = toRecord(m).Paths
	}
	if len(paths) > 0 {
		dst = append(dst, `,"paths":[`...)
		for i, p := range paths {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, p)
		}
		dst = append(dst, ']')
	}
	globs := m.Globs
	if !sortedUnique(globs) || slices.ContainsFunc(globs, func(g string) bool { return g != strings.TrimSpace(g) || g == "" }) {
		globs = memory.NormalizeGlobs(globs)
	}
	if len(globs) > 0 {
		dst = append(dst, `,"globs":[`...)
		for i, g := range globs {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, g)
		}
		dst = append(dst, ']')
	}
	return append(dst, '}', '\n')
}

// sortedUnique reports whether paths are as toRecord leaves them.
func sortedUnique(paths []string) bool {
	for i := 1; i < len(paths); i++ {
		if paths[i-1] >= paths[i] {
			return false
		}
	}
	return true
}

// appendJSONString is encoding/json's string encoding with HTML escaping
// off: quotes, backslashes and control characters escaped, invalid UTF-8 as
// U+FFFD, and U+2028 and U+2029 escaped for JavaScript.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendTime appends t as timeLayout formats it, for years 0 to 9999,
// without time.Format's layout parsing: the file's only time form is fixed.
func appendTime(dst []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	hour, min, sec := t.Clock()
	ms := t.Nanosecond() / int(time.Millisecond)
	return append(dst,
		digit(year/1000), digit(year/100), digit(year/10), digit(year), '-',
		digit(int(month)/10), digit(int(month)), '-', digit(day/10), digit(day), 'T',
		digit(hour/10), digit(hour), ':', digit(min/10), digit(min), ':', digit(sec/10), digit(sec), '.',
		digit(ms/100), digit(ms/10), digit(ms), 'Z')
}

// digit is the last decimal digit of n.
func digit(n int) byte { return byte('0' + n%10) }

// IsCanonical reports whether data is exactly Encode(mems), encoding one
// line at a time instead of the whole file, so that checking a large file
// needs no second copy of it.
func IsCanonical(data []byte, mems []memory.Memory) bool {
	for i := 1; i < len(mems); i++ {
		if mems[i-1].ID > mems[i].ID {
			return bytes.Equal(data, Encode(mems))
		}
	}
	head := encodeLine(header{Acolyte: "memories", Version: Version})
	rest, ok := bytes.CutPrefix(data, head)
	if !ok {
		return false
	}
	var line []byte
	for _, m := range mems {
		line = appendMemory(line[:0], m)
		if rest, ok = bytes.CutPrefix(rest, line); !ok {
			return false
		}
	}
	return len(rest) == 0
}
