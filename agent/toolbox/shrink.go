package toolbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// ShrunkKey marks a result that was cut to fit: its value says what was
// cut and how to get the rest.
const ShrunkKey = "shrunk"

// Shrink cuts a tool result, a JSON object, to at most max bytes, by the
// tool's own rule when it has one (read_file keeps where to read on), else
// by ShrinkJSON.
func (t Tool) Shrink(raw json.RawMessage, max int) json.RawMessage {
	if len(raw) <= max {
		return raw
	}
	if t.shrink != nil {
		if out, ok := t.shrink(raw, max); ok && len(out) <= max {
			return out
		}
	}
	return ShrinkJSON(raw, max)
}

// ShrinkJSON cuts a JSON object to at most max bytes and keeps every field
// it can: the longest strings lose their middle (the head and the tail
// stay, where a command's context and its errors are), the longest lists
// their last items, and a shrunk field says how much it lost. What is not
// an object, or cannot be cut that way, becomes {"shrunk": …, "head": …}.
func ShrinkJSON(raw json.RawMessage, max int) json.RawMessage {
	if len(raw) <= max {
		return raw
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) == nil && obj != nil {
		if out, ok := shrinkObject(obj, len(raw), max); ok {
			return out
		}
	}
	return shrinkWhole(raw, max)
}

func shrinkObject(obj map[string]json.RawMessage, size, limit int) (json.RawMessage, bool) {
	dropped := map[string]int{}  // bytes cut from the middle of a string field
	items := map[string][2]int{} // items kept of a list field, and how many it had
	for range 12 {
		out := marshalWith(obj, size, dropped, items)
		if len(out) <= limit {
			return out, true
		}
		// The largest field pays for the excess, and a bit more so the
		// note fits too.
		key := largestField(obj)
		if key == "" {
			return nil, false
		}
		v := obj[key]
		keep := max(len(v)-(len(out)-limit+64), 16)
		var str string
		var list []json.RawMessage
		switch {
		case json.Unmarshal(v, &str) == nil:
			if d, ok := dropped[key]; ok {
				// Cut again: the marker of the first cut goes too.
				str = strings.Replace(str, cutMarker(d), "", 1)
			}
			head, tail, d := cutMiddle(str, keep*len(str)/max(len(v), 1))
			if d == 0 {
				return nil, false
			}
			dropped[key] += d
			obj[key], _ = marshalNoHTML(head + cutMarker(dropped[key]) + tail)
		case json.Unmarshal(v, &list) == nil && len(list) > 1:
			n := min(max(len(list)*keep/max(len(v), 1), 1), len(list)-1)
			had := len(list)
			if k, ok := items[key]; ok {
				had = k[1]
			}
			items[key] = [2]int{n, had}
			obj[key], _ = json.Marshal(list[:n])
		default:
			return nil, false
		}
	}
	return nil, false
}

func cutMarker(n int) string { return fmt.Sprintf("\n… [%d bytes cut here] …\n", n) }

// largestField names the longest string or list, the only fields worth
// cutting, or "" when none is longer than a short note.
func largestField(obj map[string]json.RawMessage) string {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	best, size := "", 64
	for _, k := range keys {
		v := bytes.TrimSpace(obj[k])
		if len(v) > size && (v[0] == '"' || v[0] == '[') && k != ShrunkKey {
			best, size = k, len(v)
		}
	}
	return best
}

func marshalWith(obj map[string]json.RawMessage, size int, dropped map[string]int, items map[string][2]int) json.RawMessage {
	var cut []string
	for k, d := range dropped {
		cut = append(cut, fmt.Sprintf("%s lost %d bytes from its middle", k, d))
	}
	for k, n := range items {
		cut = append(cut, fmt.Sprintf("%s kept its first %d of %d items", k, n[0], n[1]))
	}
	if len(cut) > 0 {
		sort.Strings(cut)
		obj[ShrunkKey], _ = json.Marshal(fmt.Sprintf("this result was %d bytes, cut to fit: %s; ask for less to see the rest", size, strings.Join(cut, ", ")))
	}
	b, _ := json.Marshal(obj) // values are valid JSON
	return b
}

// cutMiddle keeps about keep bytes of s, half from each end, cut between
// characters, and says how many bytes it dropped between them.
func cutMiddle(s string, keep int) (head, tail string, dropped int) {
	if keep >= len(s) {
		return s, "", 0
	}
	h := keep / 2
	for h > 0 && !utf8.RuneStart(s[h]) {
		h--
	}
	t := len(s) - keep/2
	for t < len(s) && !utf8.RuneStart(s[t]) {
		t++
	}
	if t < h {
		t = h
	}
	return s[:h], s[t:], t - h
}

// shrinkWhole keeps the start of a JSON text as a string, for results that
// are not objects or whose size is not in their strings and lists.
func shrinkWhole(raw json.RawMessage, max int) json.RawMessage {
	text := strings.ToValidUTF8(string(raw), "\uFFFD")
	keep := max / 2
	for {
		for keep > 0 && keep < len(text) && !utf8.RuneStart(text[keep]) {
			keep--
		}
		keep = min(keep, len(text))
		b, _ := json.Marshal(map[string]any{
			ShrunkKey: fmt.Sprintf("this result was %d bytes, over the %d-byte limit; head is its start; ask for less to see the rest", len(raw), max),
			"head":    text[:keep],
		})
		if len(b) <= max || keep == 0 {
			if len(b) > max {
				b, _ = json.Marshal(map[string]string{ShrunkKey: fmt.Sprintf("this result was %d bytes, over the %d-byte limit", len(raw), max)})
			}
			return b
		}
		keep = keep * max / len(b) * 9 / 10
	}
}

// marshalNoHTML encodes s as a JSON string without escaping <, > and &,
// which a model reads more easily and which take fewer bytes.
func marshalNoHTML(s string) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// shrinkFileContent is read_file's rule: the content keeps its start, cut
// at a line's end when one fits, and the result says where to read on, so
// that reading on from next_line or next_offset reads every byte once.
func shrinkFileContent(raw json.RawMessage, max int) (json.RawMessage, bool) {
	var fc FileContent
	if json.Unmarshal(raw, &fc) != nil || fc.Content == "" {
		return nil, false
	}
	empty := fc
	empty.Content, empty.Note = "", strings.Repeat("x", 200) // room for the note
	overhead := len(mustJSON(empty))
	room := max - overhead
	if room < 16 {
		return nil, false
	}
	content := fc.Content
	// The longest prefix whose JSON fits room: escaping makes it shorter
	// than room, by how much depends on the text.
	lo, hi := 0, min(len(content), room)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if len(mustJSON(content[:mid])) <= room {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	cut := lo
	for cut > 0 && cut < len(content) && !utf8.RuneStart(content[cut]) {
		cut--
	}
	if nl := strings.LastIndexByte(content[:cut], '\n'); nl >= cut/2 {
		cut = nl + 1
	}
	if cut == 0 {
		return nil, false
	}
	head := content[:cut]
	fc.Content = head
	fc.EndLine = fc.StartLine + strings.Count(head[:len(head)-1], "\n")
	fc.NextOffset = fc.Offset + int64(cut)
	fc.NextLine = 0
	how := fmt.Sprintf("offset %d", fc.NextOffset)
	if head[len(head)-1] == '\n' {
		fc.NextLine = fc.StartLine + strings.Count(head, "\n")
		how = fmt.Sprintf("start_line %d (or offset %d)", fc.NextLine, fc.NextOffset)
	}
	fc.Note = fmt.Sprintf("shrunk to %d of %d bytes to fit the context; call read_file with %s to read on", cut, len(content), how)
	return mustJSON(fc), true
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v) // strings and numbers only
	return b
}
