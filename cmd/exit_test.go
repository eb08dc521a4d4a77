package cmd_test

import (
	"context"
	"database/sql"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/acolyte-dev/acolyte/cmd"
)

// A database another process holds for longer than the busy timeout is a
// "could not run" (2), not a "no" (1), and the message says which file
// and what to do. The test waits out sqlite.BusyTimeout once.
func TestLockedDatabaseExits2(t *testing.T) {
	t.Parallel()
	home, repo := t.TempDir(), t.TempDir()
	if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	run := func(args ...string) (int, string) {
		var out, errOut strings.Builder
		args = append([]string{"acolyte", "--home", home, "--repo", repo}, args...)
		code := cmd.Run(context.Background(), args, strings.NewReader(""), &out, &errOut)
		return code, errOut.String()
	}
	if code, stderr := run("remember", "--scope", "user", "the first fact creates the database"); code != cmd.ExitOK {
		t.Fatalf("remember: exit %d: %s", code, stderr)
	}
	path := filepath.Join(home, "acolyte.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(context.Background(), "ROLLBACK")

	code, stderr := run("remember", "--scope", "user", "a second fact waits for the lock")
	if code != cmd.ExitUsage || !strings.Contains(stderr, "database is locked: "+path) || !strings.Contains(stderr, "retry") {
		t.Fatalf("remember on a locked database: exit %d, want %d: %s", code, cmd.ExitUsage, stderr)
	}
}
