package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
)

// jsonMember is one member of the object a package.json edit targets.
type jsonMember struct {
	key        string
	start, end int // the value's bytes
}

// jsonObjectAt finds the object at keys in a JSON document: the offsets of
// its braces and its members. It reads tokens, so the bytes around them
// (formatting, key order) are the author's, untouched.
func jsonObjectAt(doc []byte, keys []string) (open, close int, members []jsonMember, err error) {
	if !json.Valid(doc) {
		// The token stream ends quietly in the middle of a truncated document.
		return -1, -1, nil, errors.New("not valid JSON; fix it first")
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	var path []string
	var stack []bool // per open container: is it an object
	expectKey := false
	pendingKey := ""
	open, close = -1, -1
	for {
		before := int(dec.InputOffset())
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return -1, -1, nil, fmt.Errorf("not valid JSON: %w", err)
		}
		inObject := len(stack) > 0 && stack[len(stack)-1]
		if inObject && expectKey {
			if d, ok := tok.(json.Delim); !ok || d != '}' {
				pendingKey, expectKey = tok.(string), false
				continue
			}
		}
		valueStart := skipColon(doc, before)
		if inObject && slices.Equal(path, keys) && len(stack) == len(keys)+1 {
			if d, ok := tok.(json.Delim); !ok || (d != '}' && d != ']') {
				members = append(members, jsonMember{key: pendingKey, start: valueStart})
			}
		}
		switch d, _ := tok.(json.Delim); d {
		case '{', '[':
			if inObject {
				path = append(path, pendingKey)
			} else if len(stack) > 0 {
				path = append(path, "[]")
			}
			stack = append(stack, d == '{')
			if d == '{' && slices.Equal(path, keys) && len(stack) == len(keys)+1 {
				if open >= 0 {
					return -1, -1, nil, fmt.Errorf("%w: %q appears twice", errManual, keys)
				}
				open = int(dec.InputOffset()) - 1
			}
		case '}', ']':
			if d == '}' && slices.Equal(path, keys) && len(stack) == len(keys)+1 && open >= 0 && close < 0 {
				close = int(dec.InputOffset()) - 1
			}
			stack = stack[:len(stack)-1]
			if len(path) > 0 && len(stack) > 0 {
				path = path[:len(path)-1]
			}
		}
		if n := len(members); n > 0 && members[n-1].end == 0 && len(stack) == len(keys)+1 && slices.Equal(path, keys) {
			members[n-1].end = int(dec.InputOffset())
		}
		if len(stack) > 0 && stack[len(stack)-1] {
			expectKey = true
		}
	}
	if open < 0 || close < 0 {
		return -1, -1, nil, fmt.Errorf("%w: it has no %q object", errManual, keys)
	}
	return open, close, members, nil
}

// skipColon moves past the whitespace, `:` or `,` before a token.
func skipColon(doc []byte, i int) int {
	for i < len(doc) && (doc[i] == ' ' || doc[i] == '\t' || doc[i] == '\n' || doc[i] == '\r' || doc[i] == ':' || doc[i] == ',') {
		i++
	}
	return i
}

// setJSONStrings sets string members of the object at keys, replacing a
// member's value in place or adding the member before the closing brace,
// indented as the object's first member is.
func setJSONStrings(doc []byte, keys []string, set [][2]string) ([]byte, error) {
	for _, kv := range set {
		open, close, members, err := jsonObjectAt(doc, keys)
		if err != nil {
			return nil, err
		}
		value, err := marshalNoEscape(kv[1])
		if err != nil {
			return nil, err
		}
		if i := slices.IndexFunc(members, func(m jsonMember) bool { return m.key == kv[0] }); i >= 0 {
			m := members[i]
			if doc[m.start] != '"' {
				return nil, fmt.Errorf("%w: %s is not a string", errManual, kv[0])
			}
			doc = slices.Concat(doc[:m.start], value, doc[m.end:])
			continue
		}
		key, _ := marshalNoEscape(kv[0])
		member := slices.Concat(key, []byte(": "), value)
		last := bytes.TrimRight(doc[open+1:close], " \t\r\n")
		indent := []byte(" ")
		if len(members) > 0 {
			if nl := bytes.LastIndexByte(doc[:members[0].start], '\n'); nl > open {
				indent = []byte("\n")
				indent = append(indent, leadingSpace(doc[nl+1:])...)
			}
		} else if bytes.IndexByte(doc[open:close], '\n') >= 0 {
			indent = append([]byte("\n"), leadingSpace(doc[bytes.LastIndexByte(doc[:open], '\n')+1:])...)
			indent = append(indent, "  "...)
		}
		at := open + 1 + len(last)
		sep := []byte(",")
		if len(bytes.TrimSpace(last)) == 0 {
			sep = nil
		}
		doc = slices.Concat(doc[:at], sep, indent, member, doc[at:])
	}
	return doc, nil
}

func leadingSpace(b []byte) []byte {
	n := 0
	for n < len(b) && (b[n] == ' ' || b[n] == '\t') {
		n++
	}
	return b[:n]
}

// marshalNoEscape encodes s as JSON without escaping &, < and >, which
// shell commands are full of and a person reads in package.json.
func marshalNoEscape(s string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}
