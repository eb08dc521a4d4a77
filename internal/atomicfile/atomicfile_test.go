package atomicfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var durable = Options{Perm: 0o644, Durable: true}

// leftovers lists the temporary files Write left in dir.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), TempPrefix) {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestWriteReplacesTheFileWithExactPermissions(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "memories.jsonl")
	if err := os.WriteFile(path, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// 0666 would lose its group and other write bits to a usual umask; the
	// permissions asked for are the ones set.
	if err := Write(path, Options{Perm: 0o666, Durable: true}, Bytes([]byte("new "), []byte("content\n"))); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "new content\n" {
		t.Fatalf("file = %q, %v; want the parts in order", got, err)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o666 {
		t.Errorf("mode = %v, want -rw-rw-rw-", info.Mode().Perm())
	}
	if left := leftovers(t, dir); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestWriteCreatesAMissingFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "catalog.bin")
	if err := Write(path, Options{Perm: 0o600}, Bytes([]byte("x"))); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(path); err != nil || string(got) != "x" {
		t.Fatalf("file = %q, %v", got, err)
	}
}

// A write that fails at any step leaves the old file as it was and no
// temporary file behind: a full disk mid-write must not cost the user the
// file they had.
func TestFailedWriteLeavesTheOldFileAndNoTemporaryFile(t *testing.T) {
	boom := errors.New("disk full")
	cases := map[string]struct {
		fill  func(io.Writer) error
		setup func(t *testing.T, path string)
		want  error
	}{
		"fill fails after writing part": {
			fill: func(w io.Writer) error {
				w.Write([]byte("half of the new"))
				return boom
			},
			want: boom,
		},
		"the rename fails": {
			// A directory where the file should be cannot be renamed over.
			setup: func(t *testing.T, path string) {
				if err := os.Remove(path); err != nil {
					t.Fatal(err)
				}
				if err := os.MkdirAll(filepath.Join(path, "sub"), 0o755); err != nil {
					t.Fatal(err)
				}
			},
			fill: Bytes([]byte("new")),
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "memories.jsonl")
			if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if c.setup != nil {
				c.setup(t, path)
			}
			err := Write(path, durable, c.fill)
			if err == nil {
				t.Fatal("Write succeeded, want an error")
			}
			if c.want != nil && !errors.Is(err, c.want) {
				t.Errorf("err = %v, want %v", err, c.want)
			}
			if c.setup == nil {
				if got, _ := os.ReadFile(path); string(got) != "old\n" {
					t.Errorf("file = %q after a failed write, want the old content", got)
				}
			}
			if left := leftovers(t, dir); len(left) > 0 {
				t.Errorf("temporary files left: %v", left)
			}
		})
	}
}

// A reader racing with writers sees one whole version or another, never a
// mix or a truncated file.
func TestReadersSeeWholeVersionsOnly(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	versions := [][]byte{bytes.Repeat([]byte("a"), 64<<10), bytes.Repeat([]byte("b"), 64<<10)}
	if err := Write(path, Options{Perm: 0o644}, Bytes(versions[0])); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := Write(path, Options{Perm: 0o644}, Bytes(versions[i%2])); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for range 200 {
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, versions[0]) && !bytes.Equal(got, versions[1]) {
			t.Fatalf("a reader saw %d bytes that are neither version", len(got))
		}
	}
	close(stop)
	wg.Wait()
}

func TestWriteInStaysInsideTheRoot(t *testing.T) {
	base := t.TempDir()
	work := filepath.Join(base, "work")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(work, "sub"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(work, "escape")); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(work)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()

	if err := WriteIn(root, "sub/notes.txt", Options{Perm: 0o640}, Bytes([]byte("inside"))); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(work, "sub", "notes.txt")); err != nil || string(got) != "inside" {
		t.Errorf("sub/notes.txt = %q, %v", got, err)
	}
	if info, err := os.Stat(filepath.Join(work, "sub", "notes.txt")); err != nil || info.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v, %v; want -rw-r-----", info.Mode().Perm(), err)
	}
	for _, name := range []string{"escape/x.txt", "../outside/y.txt"} {
		if err := WriteIn(root, name, Options{Perm: 0o644}, Bytes([]byte("out"))); err == nil {
			t.Errorf("WriteIn(%q) succeeded, want a refusal", name)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) > 0 {
		t.Errorf("files written outside the root: %v", entries)
	}
	if left := leftovers(t, filepath.Join(work, "sub")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestRemoveStaleRemovesOnlyOldTemporaryFilesOfTheNamedFiles(t *testing.T) {
	old := time.Now().Add(-2 * time.Hour)
	files := map[string]time.Time{
		TempPrefix + "catalog.bin-123":   old,        // killed write: removed
		TempPrefix + "catalog.bin-456":   time.Now(), // may be in flight: kept
		TempPrefix + "catalog.bin.x-789": old,        // another file's: kept
		"catalog.bin.tmp-1":              old,        // not ours: kept
	}
	dir := t.TempDir()
	for name, mtime := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	RemoveStale(dir, time.Hour, "catalog.bin")
	for name := range files {
		_, err := os.Stat(filepath.Join(dir, name))
		if gone := errors.Is(err, os.ErrNotExist); gone != (name == TempPrefix+"catalog.bin-123") {
			t.Errorf("%s: removed = %v", name, gone)
		}
	}
	// Without names, every old temporary file of ours goes.
	RemoveStale(dir, time.Hour)
	for name := range files {
		_, err := os.Stat(filepath.Join(dir, name))
		wantGone := strings.HasPrefix(name, TempPrefix) && name != TempPrefix+"catalog.bin-456"
		if gone := errors.Is(err, os.ErrNotExist); gone != wantGone {
			t.Errorf("%s after a sweep of all: removed = %v", name, gone)
		}
	}
}

// A temporary file whose writer has exited goes at once, however new; one
// whose writer runs stays until it is old.
func TestRemoveStaleGoesByTheWritersLiveness(t *testing.T) {
	exited := exec.Command("true")
	if err := exited.Run(); err != nil {
		t.Skip("no true command:", err)
	}
	dead, alive := exited.Process.Pid, os.Getpid()
	if processAlive(dead) {
		t.Skipf("pid %d was reused already", dead)
	}
	files := map[string]bool{ // name: removed
		fmt.Sprintf("%smemories.jsonl-p%d-ABCDEFGHIJ", TempPrefix, dead):  true,
		fmt.Sprintf("%smemories.jsonl-p%d-ABCDEFGHIJ", TempPrefix, alive): false,
		TempPrefix + "memories.jsonl-KLMNOPQRST":                          false, // no pid: by age
	}
	dir := t.TempDir()
	for name := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	RemoveStale(dir, time.Hour, "memories.jsonl")
	for name, want := range files {
		_, err := os.Stat(filepath.Join(dir, name))
		if gone := errors.Is(err, os.ErrNotExist); gone != want {
			t.Errorf("%s: removed = %v, want %v", name, gone, want)
		}
	}
	// Write names its files so.
	var seen string
	Write(filepath.Join(dir, "f"), durable, func(io.Writer) error {
		seen = strings.Join(leftovers(t, dir), " ")
		return nil
	})
	if pid, ok := writerPID(strings.Fields(seen)[len(strings.Fields(seen))-1]); !ok || pid != alive {
		t.Errorf("temporary files %q do not carry the writer's pid %d", seen, alive)
	}
}

// TempDir puts the temporary file where asked, not beside the file.
func TestWriteMakesItsTemporaryFileInTempDir(t *testing.T) {
	root := t.TempDir()
	tmp := filepath.Join(root, ".acolyte")
	os.Mkdir(tmp, 0o755)
	var inRoot, inTmp []string
	err := Write(filepath.Join(root, ".merge_file_x"), Options{Perm: 0o644, TempDir: tmp}, func(w io.Writer) error {
		inRoot, inTmp = leftovers(t, root), leftovers(t, tmp)
		_, err := w.Write([]byte("merged"))
		return err
	})
	if err != nil || len(inRoot) != 0 || len(inTmp) != 1 {
		t.Fatalf("during the write: root %v, TempDir %v, err %v", inRoot, inTmp, err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, ".merge_file_x")); string(b) != "merged" {
		t.Fatalf("file holds %q", b)
	}
}

// WriteFile makes the folder a fresh clone lacks, writes the parts in
// order, and gives the file exactly the permission asked, whatever the
// umask; a path it cannot make a folder for is an error naming it.
func TestWriteFileMakesItsFolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".acolyte", "memories.jsonl")
	if err := WriteFile(path, 0o644, []byte("a\n"), []byte("b\n")); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "a\nb\n" {
		t.Fatalf("read %q, %v; want the parts in order", got, err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("stat: %v, %v; want 0644", fi.Mode(), err)
	}
	blocked := filepath.Join(path, "under-a-file", "x")
	if err := WriteFile(blocked, 0o644, []byte("x")); err == nil || !strings.Contains(err.Error(), filepath.Dir(blocked)) {
		t.Fatalf("writing under a file: %v; want an error naming the folder", err)
	}
}
