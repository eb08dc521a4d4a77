package cmd_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/acolyte-dev/acolyte/cmd"
	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/memory"
)

// TestMain lets the test binary act as the acolyte command, so every script
// runs real acolyte subprocesses.
func TestMain(m *testing.M) {
	// A command that leaves vectors to make starts `acolyte reindex
	// --background`, which here would be this test binary again; the
	// test of the background fill turns it back on.
	os.Setenv("ACOLYTE_BACKGROUND_FILL", "0")
	testscript.Main(m, map[string]func(){
		"acolyte": func() {
			os.Exit(cmd.Main(context.Background(), os.Args, os.Stdin, os.Stdout, os.Stderr))
		},
	})
}

// isolate gives a script its own acolyte home and settings, no API key, a git identity
// and no system git config, so nothing of the machine's reaches it.
func isolate(env *testscript.Env) {
	env.Setenv("ACOLYTE_HOME", filepath.Join(env.WorkDir, ".acolyte-home"))
	env.Setenv("XDG_CONFIG_HOME", filepath.Join(env.WorkDir, ".config"))
	env.Setenv("GEMINI_API_KEY", "")
	env.Setenv("GOOGLE_API_KEY", "")
	env.Setenv("GIT_AUTHOR_NAME", "Test")
	env.Setenv("GIT_AUTHOR_EMAIL", "test@example.com")
	env.Setenv("GIT_COMMITTER_NAME", "Test")
	env.Setenv("GIT_COMMITTER_EMAIL", "test@example.com")
	env.Setenv("GIT_CONFIG_NOSYSTEM", "1")
}

func TestScripts(t *testing.T) {
	// Each script has its own home, settings and repository; testscript
	// runs them in parallel with each other, and t.Parallel lets them run
	// beside this package's other parallel end-to-end tests.
	t.Parallel()
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join("testdata", "script"),
		Setup: func(env *testscript.Env) error {
			isolate(env)
			env.Setenv("PATH_SAVED", env.Getenv("PATH"))
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"memoriesfile": writeMemoriesFile,
			"scribble":     scribble,
		},
		Condition:           scriptCondition,
		RequireExplicitExec: true,
	})
}

// scriptCondition knows [rofs]: a private mount namespace can bind a
// directory read-only (root, or a user namespace), so a script can make
// ACOLYTE_HOME read-only for root as well, which file modes do not.
func scriptCondition(cond string) (bool, error) {
	if cond != "rofs" {
		return false, fmt.Errorf("unknown condition %q", cond)
	}
	dir, err := os.MkdirTemp("", "acolyte-rofs")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(dir)
	probe := exec.Command("unshare", "-m", "sh", "-c", `mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && ! touch "$1/x" 2>/dev/null`, "sh", dir)
	return probe.Run() == nil, nil
}

// writeMemoriesFile is the script command `memoriesfile N FILE`: FILE
// becomes a memories file of N stored memories with time-ordered ids, the
// same every run, as a project that size would hold.
func writeMemoriesFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: memoriesfile N FILE")
	}
	n, err := strconv.Atoi(args[0])
	ts.Check(err)
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	mems := make([]memory.Memory, n)
	for i := range mems {
		at := t0.Add(time.Duration(i) * time.Second)
		mems[i] = memory.Memory{ID: fmt.Sprintf("01J%023d", i), Kind: memory.KindStored, Source: "cli",
			Content: fmt.Sprintf("generated fact number %d about the build", i), CreatedAt: at, UpdatedAt: at}
	}
	path := ts.MkAbs(args[1])
	ts.Check(os.MkdirAll(filepath.Dir(path), 0o755))
	ts.Check(format.WriteFile(path, mems))
}

// scribble is the script command `scribble DB TABLE`: junk is written
// over the first leaf page of TABLE in the closed database DB, through the
// file alone, as a lost sector or a stray writer would leave it.
func scribble(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: scribble DB TABLE")
	}
	path := ts.MkAbs(args[0])
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	ts.Check(err)
	var page int64
	err = db.QueryRow(`SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY pageno LIMIT 1`, args[1]).Scan(&page)
	db.Close()
	ts.Check(err)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	ts.Check(err)
	defer f.Close()
	junk := make([]byte, 2048)
	rand.Read(junk)
	_, err = f.WriteAt(junk, (page-1)*4096+64)
	ts.Check(err)
}
