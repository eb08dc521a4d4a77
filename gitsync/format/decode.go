package format

import (
	"strings"
	"unicode/utf8"
)

// parseCanonical reads a line in the form appendMemory writes it, when its
// strings need no unescaping, without encoding/json: on a large file the
// reflection decoder was half of what `acolyte check` and an import spent.
// Any other line (escapes, another key order, spaces, unknown keys) returns
// false and goes to the strict decoder, so this changes no line's meaning:
// a line it accepts decodes to the same record under encoding/json
// (TestParseCanonicalAgreesWithJSON, FuzzParseCanonical).
func parseCanonical(line string) (record, bool) {
	var r record
	p := canonicalParser{rest: line}
	if !p.lit(`{"id":`) || !p.str(&r.ID) || !p.lit(`,"kind":`) || !p.str(&r.Kind) || !p.lit(`,"content":`) || !p.str(&r.Content) {
		return record{}, false
	}
	for _, f := range [...]struct {
		key string
		dst *string
	}{{`,"topic":`, &r.Topic}, {`,"source":`, &r.Source}, {`,"created":`, &r.Created}, {`,"updated":`, &r.Updated}, {`,"commit":`, &r.Commit}} {
		if strings.HasPrefix(p.rest, f.key) {
			p.rest = p.rest[len(f.key):]
			if !p.str(f.dst) || *f.dst == "" {
				return record{}, false
			}
		}
	}
	if p.lit(`,"paths":[`) {
		for {
			var s string
			if !p.str(&s) {
				return record{}, false
			}
			r.Paths = append(r.Paths, s)
			if !p.lit(",") {
				break
			}
		}
		if !p.lit("]") {
			return record{}, false
		}
	}
	if p.lit(`,"globs":[`) {
		for {
			var s string
			if !p.str(&s) {
				return record{}, false
			}
			r.Globs = append(r.Globs, s)
			if !p.lit(",") {
				break
			}
		}
		if !p.lit("]") {
			return record{}, false
		}
	}
	if p.rest != "}" {
		return record{}, false
	}
	return r, true
}

type canonicalParser struct{ rest string }

func (p *canonicalParser) lit(s string) bool {
	if !strings.HasPrefix(p.rest, s) {
		return false
	}
	p.rest = p.rest[len(s):]
	return true
}

// str reads a quoted string holding no escape, no control character and
// only valid UTF-8, which JSON reads as its bytes unchanged.
func (p *canonicalParser) str(dst *string) bool {
	if !strings.HasPrefix(p.rest, `"`) {
		return false
	}
	end := strings.IndexByte(p.rest[1:], '"')
	if end < 0 {
		return false
	}
	s := p.rest[1 : 1+end]
	for i := 0; i < len(s); i++ {
		if b := s[i]; b < 0x20 || b == '\\' {
			return false
		}
	}
	if !utf8.ValidString(s) {
		return false
	}
	*dst, p.rest = s, p.rest[2+end:]
	return true
}
