package derive

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/acolyte-dev/acolyte/memory"
)

// SeedsFile is the seeds file's name inside .acolyte/ (format.Dir).
const SeedsFile = "seeds.json"

// seedObject is the long form of one seed; the short form is a bare string.
type seedObject struct {
	Content *string `json:"content"`
	Topic   string  `json:"topic"`
}

// ParseSeeds reads a seeds file: a JSON array whose elements are strings or
// {"content": …, "topic": …} objects, mixed as the author likes. name is the
// file's base name, which becomes every seed's source. Errors give the line
// and column of the offending element.
func ParseSeeds(name string, data []byte) ([]memory.Memory, error) {
	seeds, err := parseSeeds(name, data)
	if err != nil {
		return nil, err
	}
	out := make([]memory.Memory, 0, len(seeds))
	for _, s := range seeds {
		if s.err != nil {
			return nil, fmt.Errorf("%s:%d:%d: seed %d: %w", name, s.line, s.col, s.index, s.err)
		}
		out = append(out, s.Memory)
	}
	return out, nil
}

// parsedSeed is one element of a seeds file, kept with where it starts so a
// refusal can name its line; err is why the element is not a valid seed.
type parsedSeed struct {
	memory.Memory
	index, line, col int
	err              error
}

// parseSeeds reads every element of a seeds file. An element that is not a
// valid seed fails alone (its err says why, without the position); the error is for a file that is
// not a JSON array at all, where no element can be trusted.
func parseSeeds(name string, data []byte) ([]parsedSeed, error) {
	c := cursor{data: data}
	at := func(offset int64) string {
		line, col := c.position(offset)
		return fmt.Sprintf("%s:%d:%d", name, line, col)
	}
	// encoding/json would quietly turn invalid UTF-8 into U+FFFD, storing
	// text nobody wrote; refuse it where it is, as the CLI does.
	if !utf8.Valid(data) {
		bad := int64(len(data))
		for i := 0; i < len(data); {
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size <= 1 {
				bad = int64(i)
				break
			}
			i += size
		}
		return nil, fmt.Errorf("%s: %w: the file contains invalid UTF-8; save it as UTF-8", at(bad), memory.ErrInvalidText)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", at(dec.InputOffset()), jsonProblem(err))
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, fmt.Errorf("%s: a seeds file is a JSON array of strings or {\"content\": …, \"topic\": …} objects", at(0))
	}
	var seeds []parsedSeed
	firstAt := make(map[string]string)
	for index := 1; dec.More(); index++ {
		start := elementStart(data, dec.InputOffset())
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("%s: seed %d: %w", at(dec.InputOffset()), index, jsonProblem(err))
		}
		line, col := c.position(start)
		s := parsedSeed{index: index, line: line, col: col}
		content, topic, err := decodeSeed(raw)
		switch {
		case err != nil:
			s.err = err
		case memory.ValidateContent(content) != nil:
			s.err = memory.ValidateContent(content)
		case memory.ValidateTopic(topic) != nil:
			s.err = memory.ValidateTopic(topic)
		}
		if s.err == nil {
			id := seedID(content)
			if first, dup := firstAt[id]; dup {
				s.err = fmt.Errorf("says the same as seed at %s; remove one of them", first)
			} else {
				firstAt[id] = at(start)
			}
			s.Memory = memory.Memory{
				ID:      id,
				Scope:   memory.ScopeProject,
				Kind:    memory.KindSeed,
				Content: content,
				Topic:   topic,
				Source:  name,
			}
		}
		seeds = append(seeds, s)
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("%s: %w", at(dec.InputOffset()), jsonProblem(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: unexpected data after the array; a seeds file holds exactly one array", at(dec.InputOffset()))
	}
	return seeds, nil
}

func decodeSeed(raw json.RawMessage) (content, topic string, err error) {
	switch raw[0] {
	case '"':
		err = json.Unmarshal(raw, &content)
		return content, "", err
	case '{':
		var obj seedObject
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&obj); err != nil {
			return "", "", fmt.Errorf("%w; a seed object has only \"content\" (a string) and \"topic\" (a string)", jsonProblem(err))
		}
		if obj.Content == nil {
			return "", "", errors.New("the object has no \"content\"")
		}
		return *obj.Content, obj.Topic, nil
	}
	return "", "", fmt.Errorf("is %s; each seed is a string or a {\"content\": …, \"topic\": …} object", jsonKind(raw[0]))
}

// seedID derives a seed's id from its content alone: the same fact seeded
// from two files is one memory.
func seedID(content string) string {
	return "s-" + shortHash(memory.Normalize(content))
}

func jsonKind(first byte) string {
	switch first {
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

// jsonProblem rewords encoding/json errors without their Go type names.
func jsonProblem(err error) error {
	var syntax *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("the JSON ends too early; is a ] or } missing?")
	case errors.As(err, &syntax):
		return fmt.Errorf("malformed JSON: %s", syntax.Error())
	case errors.As(err, &typeErr):
		return fmt.Errorf("%q must be a %s, not a %s", typeErr.Field, typeErr.Type.Kind(), typeErr.Value)
	}
	return err
}

// elementStart skips the separator and blanks the decoder has not consumed
// yet, so positions point at the element itself.
func elementStart(data []byte, offset int64) int64 {
	for offset < int64(len(data)) && strings.IndexByte(" \t\r\n,", data[offset]) >= 0 {
		offset++
	}
	return offset
}

// cursor is position over offsets that only grow, as a parse meets its
// elements: it counts the bytes since the last offset only. position from
// the file's start for every seed made a seeds file of n seeds cost n²
// (20,000 seeds, 1 MB, took a check 5 s; a million never finished).
type cursor struct {
	data      []byte
	offset    int64 // the last offset asked for
	line      int   // its line, less one
	lineStart int64 // where that line starts
}

// position is position(c.data, offset); an offset before the last one is
// counted from the start.
func (c *cursor) position(offset int64) (line, col int) {
	offset = min(offset, int64(len(c.data)))
	if offset < c.offset {
		return position(c.data, offset)
	}
	seen := c.data[c.offset:offset]
	if n := bytes.Count(seen, []byte("\n")); n > 0 {
		c.line += n
		c.lineStart = c.offset + int64(bytes.LastIndexByte(seen, '\n')) + 1
	}
	c.offset = offset
	return c.line + 1, int(offset-c.lineStart) + 1
}

// position turns a byte offset into a 1-based line and column.
func position(data []byte, offset int64) (line, col int) {
	offset = min(offset, int64(len(data)))
	before := data[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(offset) - bytes.LastIndexByte(before, '\n')
	return line, col
}
