package gitsync

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// readSized reads a file whole whatever happened to it between its stat
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
			got, err := readSized(f, int64(tc.stat), int64(tc.limit))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, content[:tc.want]) {
				t.Fatalf("read %d bytes, want the first %d of the file's %d", len(got), tc.want, tc.now)
			}
		})
	}
}
