package mapfile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/acolyte-dev/acolyte/internal/mapfile"
)

// A mapped file replaced by rename, or written past its end, still reads
// as it was mapped: what the catalog's and the shadow's readers rely on.
func TestAMappingOutlivesARenameAndAnAppend(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, []byte("first version\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	data, unmap, err := mapfile.Map(path)
	if err != nil {
		t.Fatal(err)
	}
	defer unmap()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("appended\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	next := filepath.Join(dir, "g")
	if err := os.WriteFile(next, []byte("second version, longer\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(next, path); err != nil {
		t.Fatal(err)
	}
	if string(data) != "first version\n" {
		t.Errorf("mapped bytes = %q, want the file as it was mapped", data)
	}
	again, unmapAgain, err := mapfile.Map(path)
	if err != nil {
		t.Fatal(err)
	}
	defer unmapAgain()
	if string(again) != "second version, longer\n" {
		t.Errorf("a new mapping = %q, want the renamed file", again)
	}
}

func TestAnEmptyOrMissingFileIsAnError(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{empty, filepath.Join(dir, "missing")} {
		if _, _, err := mapfile.Map(path); err == nil {
			t.Errorf("Map(%s) succeeded, want an error", filepath.Base(path))
		}
	}
}
