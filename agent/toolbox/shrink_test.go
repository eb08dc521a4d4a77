package toolbox

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzShrinkFileContent: a read_file result cut to fit keeps a prefix of
// its content and says where the rest starts, so that reading on from
// next_offset (or next_line) reads every byte once.
func FuzzShrinkFileContent(f *testing.F) {
	f.Add("line one\nline two\n\"quoted\" <tag> & more\n", int64(0), 3, 300)
	f.Add(strings.Repeat("0123456789abcdef\"é", 200), int64(65536), 1, 600)
	f.Add(strings.Repeat("\x01\x02\\\"", 300), int64(7), 9, 512)
	f.Fuzz(func(t *testing.T, content string, offset int64, startLine, max int) {
		if !utf8.ValidString(content) || offset < 0 || startLine < 1 || max < 300 || max > 1<<20 {
			t.Skip()
		}
		raw, _ := json.Marshal(FileContent{Path: "a.txt", StartLine: startLine, Content: content, Offset: offset, TotalLines: 99})
		if len(raw) <= max {
			t.Skip()
		}
		out, ok := shrinkFileContent(raw, max)
		if !ok {
			return // too small a cap for any content: the generic rule takes over
		}
		var fc FileContent
		if err := json.Unmarshal(out, &fc); err != nil || len(out) > max {
			t.Fatalf("%d bytes over %d, or not a FileContent: %v", len(out), max, err)
		}
		if fc.Content == "" || !strings.HasPrefix(content, fc.Content) {
			t.Fatalf("content %q is not a prefix of the original", fc.Content)
		}
		if fc.NextOffset != offset+int64(len(fc.Content)) {
			t.Fatalf("next_offset %d, want %d", fc.NextOffset, offset+int64(len(fc.Content)))
		}
		if strings.HasSuffix(fc.Content, "\n") && fc.NextLine != startLine+strings.Count(fc.Content, "\n") {
			t.Fatalf("next_line %d after %d lines from %d", fc.NextLine, strings.Count(fc.Content, "\n"), startLine)
		}
	})
}
