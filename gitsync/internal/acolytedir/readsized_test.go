package acolytedir

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// ReadSized reads a file whole whatever happened to it between its stat
// and the read: the same size, shrunk, or grown, and a grown file no
// further than one byte past the limit, which the caller refuses.
func TestReadSizedReadsTheFileAsItIsNow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memories.jsonl")
	for _, tc := range []struct {
		name        string
		stat, now   int
		limit, want int
	}{
		{"same size", 1000, 1000, 4096, 1000},
		{"shrank", 1000, 10, 4096, 10},
		{"emptied", 1000, 0, 4096, 0},
		{"grew", 1000, 3000, 4096, 3000},
		{"grew past the limit", 1000, 9000, 4096, 4097},
	} {
		t.Run(tc.name, func(t *testing.T) {
			content := bytes.Repeat([]byte("0123456789abcdef\n"), tc.now/17+1)[:tc.now]
			if err := os.WriteFile(path, content, 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			got, err := ReadSized(f, int64(tc.stat), int64(tc.limit), 0)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, content[:tc.want]) {
				t.Fatalf("read %d bytes, want the first %d of the file's %d", len(got), tc.want, tc.now)
			}
		})
	}
}

// ReadSized with a line limit gives up as soon as it has read more lines,
// across its chunks, and reads a file at the limit whole.
func TestReadSizedGivesUpPastItsLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memories.jsonl")
	line := bytes.Repeat([]byte("a"), 1<<10)
	line[len(line)-1] = '\n'
	lines := 2*ReadChunk/len(line) + 10 // across three chunks
	content := bytes.Repeat(line, lines)
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		maxLines int
		want     error
	}{{lines, nil}, {lines - 1, ErrTooManyLines}, {10, ErrTooManyLines}, {0, nil}} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ReadSized(f, int64(len(content)), int64(len(content)), tc.maxLines)
		f.Close()
		if !errors.Is(err, tc.want) || tc.want == nil && !bytes.Equal(got, content) {
			t.Errorf("at most %d of %d lines: %d bytes, %v; want %v", tc.maxLines, lines, len(got), err, tc.want)
		}
	}
}
