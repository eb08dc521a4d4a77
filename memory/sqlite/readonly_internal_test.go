package sqlite

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/memory"
)

// dirState is every name in dir with its size and modification time, and
// the database's bytes: what a read-only home must keep as it was.
func dirState(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s %d %s\n", e.Name(), fi.Size(), fi.ModTime())
	}
	data, err := os.ReadFile(filepath.Join(dir, "acolyte.db"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "acolyte.db sha256 %x\n", sha256.Sum256(data))
	return b.String()
}

// The store of a home this process cannot write (issue 37) searches and
// lists as it stands, refuses every write naming the directory and the
// fix, and leaves the directory exactly as it was: no -wal, -shm, catalog
// or mark. (The decision itself, readOnlyReason, is the operating
// system's; root passes file modes, so the binary's test, home_read_only,
// uses a read-only mount.)
func TestAReadOnlyHomeIsReadAndNeverWritten(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "acolyte.db")
	s, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"the cache evicts large uploads first", "deploys go out on Tuesdays"} {
		if _, err := s.Add(ctx, memory.Visibility{}, memory.Draft{Content: c, Scope: memory.ScopeUser}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	before := dirState(t, dir)

	s, err = openReadOnly(ctx, path, nil, "permission denied")
	if err != nil {
		t.Fatalf("open a read-only home: %v", err)
	}
	got, err := s.List(ctx, memory.Visibility{}, memory.Filter{})
	if err != nil || len(got) != 2 {
		t.Errorf("list a read-only home: %d memories, %v", len(got), err)
	}
	rs, err := s.Search(ctx, memory.Visibility{}, memory.Query{Text: "when do deploys go out"})
	if err != nil || len(rs) == 0 || !strings.Contains(rs[0].Memory.Content, "Tuesdays") {
		t.Errorf("search a read-only home: %v, %v", rs, err)
	}
	if _, err := s.Counts(ctx, memory.Visibility{}); err != nil {
		t.Errorf("count a read-only home: %v", err)
	}
	writes := map[string]error{}
	_, writes["add"] = s.Add(ctx, memory.Visibility{}, memory.Draft{Content: "a new fact", Scope: memory.ScopeUser})
	_, writes["delete"] = s.Delete(ctx, memory.Visibility{}, got[0].ID)
	writes["state"] = s.SetState(ctx, "k", "v")
	writes["wait"] = s.WaitWritable(ctx, 0)
	writes["check"] = s.CheckWritable(ctx)
	for what, err := range writes {
		if !errors.Is(err, memory.ErrIO) || !strings.Contains(err.Error(), dir+" is read-only (permission denied)") ||
			!strings.Contains(err.Error(), "chmod u+w "+dir) || !strings.Contains(err.Error(), "ACOLYTE_HOME") {
			t.Errorf("%s in a read-only home: %v; want ErrIO naming %s and the fix", what, err, dir)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if after := dirState(t, dir); after != before {
		t.Errorf("the read-only home changed:\n%s\nwas\n%s", after, before)
	}

	// Nothing to read is said as such, with the fix.
	_, err = openReadOnly(ctx, filepath.Join(dir, "none.db"), nil, "permission denied")
	if !errors.Is(err, memory.ErrIO) || !strings.Contains(err.Error(), "no database at") {
		t.Errorf("open a missing database in a read-only home: %v", err)
	}
}

// readOnlyReason asks the operating system: a directory without write
// permission (chmod -w, issue 37's case) is read-only for a user other
// than root. Root, who writes there anyway, runs the test again as user
// nobody.
func TestReadOnlyReasonFollowsPermissions(t *testing.T) {
	if os.Geteuid() == 0 {
		runAsNobody(t, "TestReadOnlyReasonFollowsPermissions")
		return
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "acolyte.db")
	if r := readOnlyReason(path); r != "" {
		t.Fatalf("a writable directory is read-only: %s", r)
	}
	os.Chmod(dir, 0o500)
	defer os.Chmod(dir, 0o700)
	if r := readOnlyReason(path); !strings.Contains(r, "permission denied") {
		t.Errorf("a directory without write permission: reason %q", r)
	}
	os.Chmod(dir, 0o700)
	if err := os.WriteFile(path, nil, 0o400); err != nil {
		t.Fatal(err)
	}
	if r := readOnlyReason(path); !strings.Contains(r, "acolyte.db: permission denied") {
		t.Errorf("a database without write permission: reason %q", r)
	}
}

// runAsNobody runs test again in a copy of this test binary as user
// nobody (setpriv), and fails with it; it skips where setpriv cannot
// switch users.
func runAsNobody(t *testing.T, test string) {
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("root writes without write permission, and there is no setpriv to run as nobody")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Where nobody can run the copy and keep its temporary files.
	dir, err := os.MkdirTemp("", "acolyte-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	tmp := filepath.Join(dir, "tmp")
	if err := errors.Join(os.Chmod(dir, 0o755), os.Mkdir(tmp, 0o777), os.Chmod(tmp, 0o777)); err != nil {
		t.Fatal(err)
	}
	bin, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	copyExe := filepath.Join(dir, "sqlite.test")
	if err := os.WriteFile(copyExe, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "true").Run() != nil {
		t.Skip("root writes without write permission, and setpriv cannot switch to nobody here")
	}
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", copyExe, "-test.run=^"+test+"$", "-test.v")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "HOME="+tmp)
	cmd.Dir = tmp
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+test) {
		t.Fatalf("%s as nobody: %v\n%s", test, err, out)
	}
}
