// Package configfile reads acolyte's config.json, one flat JSON object of
// setting names to strings, and says where and what is wrong with it as
// FILE:LINE:COLUMN, never repeating a value: a value may be a key.
package configfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Parse reads the settings in b, the file at path, whose names must be
// among known; suggest, when set, names the known setting a misspelt one
// probably meant ("" for none).
func Parse(path string, b []byte, known []string, suggest func(typed string) string) (map[string]string, error) {
	const want = `config.json must be one flat JSON object of setting names to strings, e.g. {"embedder": "static"}`
	at := func(off int64) string {
		line, col := 1, 1
		for _, ch := range b[:min(int(off), len(b))] {
			if ch == '\n' {
				line, col = line+1, 1
			} else {
				col++
			}
		}
		return fmt.Sprintf("%s:%d:%d", path, line, col)
	}
	bad := func(off int64, format string, args ...any) error {
		return fmt.Errorf("%s: %s; %s", at(off), fmt.Sprintf(format, args...), want)
	}
	syntax := func(err error, off int64) error {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return bad(se.Offset, "%v", se)
		}
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return bad(int64(len(b)), "the file ends early")
		}
		return bad(off, "%v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err != nil {
		return nil, syntax(err, 0)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, bad(0, "it is not a JSON object")
	}
	values := map[string]string{}
	for dec.More() {
		keyAt := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return nil, syntax(err, keyAt)
		}
		key := tok.(string) // inside an object, json.Decoder yields only string keys here
		if !slices.Contains(known, key) {
			hint := ""
			if near := suggestFor(suggest, key); near != "" {
				hint = fmt.Sprintf("did you mean %q? ", near)
			}
			return nil, bad(keyAt+int64(skipSeparators(b[keyAt:])), "unknown setting %q; %sthe settings are %s", key, hint, strings.Join(known, ", "))
		}
		valueAt := dec.InputOffset()
		tok, err = dec.Token()
		if err != nil {
			return nil, syntax(err, valueAt)
		}
		v, ok := tok.(string)
		if !ok {
			return nil, bad(valueAt+int64(skipSeparators(b[valueAt:])), "%q must be a string, got %s", key, jsonKind(tok))
		}
		values[key] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, syntax(err, dec.InputOffset())
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, bad(dec.InputOffset(), "unexpected data after the object")
	}
	return values, nil
}

// skipSeparators counts the whitespace, commas and colons before a token,
// since json.Decoder's offset stops at the end of the previous one.
func skipSeparators(b []byte) int {
	n := 0
	for n < len(b) && strings.IndexByte(" \t\r\n:,", b[n]) >= 0 {
		n++
	}
	return n
}

func jsonKind(tok json.Token) string {
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			return "an array"
		}
		return "an object"
	case bool:
		return "a boolean"
	case float64, json.Number:
		return "a number"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", tok)
}

func suggestFor(suggest func(string) string, typed string) string {
	if suggest == nil {
		return ""
	}
	return suggest(typed)
}
