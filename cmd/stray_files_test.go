package cmd_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/memory"
)

// temps lists the temporary files acolyte's writers make in dir.
func temps(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".tmp-") {
			out = append(out, e.Name())
		}
	}
	return out
}

// killMidWrite starts cmd and kills it with SIGKILL as soon as a temporary
// file shows in one of dirs, returning the directory it showed in, or ""
// when the command finished first.
func killMidWrite(t *testing.T, cmd *exec.Cmd, dirs ...string) string {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	for {
		for _, d := range dirs {
			if len(temps(t, d)) > 0 {
				cmd.Process.Signal(syscall.SIGKILL)
				<-done
				return d
			}
		}
		select {
		case <-done:
			return ""
		default:
		}
	}
}

// bigMemories writes a memories file of n memories, large enough that its
// write takes long enough to be caught in the middle.
func bigMemories(t *testing.T, path string, n int) []memory.Memory {
	t.Helper()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mems := make([]memory.Memory, n)
	for i := range mems {
		at := t0.Add(time.Duration(i) * time.Second)
		mems[i] = memory.Memory{ID: memory.NewID(at), Kind: memory.KindStored, Scope: memory.ScopeProject,
			Content: fmt.Sprintf("fact %d: %s", i, strings.Repeat("the service keeps a warm cache of session tokens ", 4)), CreatedAt: at, UpdatedAt: at}
	}
	if err := format.WriteFile(path, mems); err != nil {
		t.Fatal(err)
	}
	return mems
}

// A merge driver killed mid-write leaves its temporary file in .acolyte/,
// never in the worktree root, and the next command removes it; so does a
// killed remember. Neither waits for the files to age.
func TestKilledWritersLeaveNoTempFiles(t *testing.T) {
	w := newGitWorld(t, gitSetup{onPath: true})
	root := filepath.Join(t.TempDir(), "repo")
	w.git(filepath.Dir(root), "init", "-q", "-b", "main", root)
	dir := filepath.Join(root, format.Dir)
	mems := bigMemories(t, format.MemoriesPath(root), 10000)
	w.acolyte(root, "list", "--scope", "project", "--limit", "1")

	base := filepath.Join(root, ".git", "base")
	theirs := filepath.Join(root, ".git", "theirs")
	data, _ := os.ReadFile(format.MemoriesPath(root))
	os.WriteFile(base, data, 0o644)
	added := mems[0]
	added.ID, added.Content = memory.NewID(time.Now()), "theirs adds a fact"
	os.WriteFile(theirs, format.Encode(append(mems, added)), 0o644)

	caught := map[string]int{}
	for range 15 {
		ours := filepath.Join(root, ".merge_file_TEST01")
		os.WriteFile(ours, data, 0o644)
		cmd := exec.Command(w.exe, "merge-driver", base, ours, theirs)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "PATH="+w.path, "ACOLYTE_HOME="+w.home)
		if where := killMidWrite(t, cmd, root, dir); where != "" {
			caught[where]++
		}
		os.Remove(ours)
		if caught[root]+caught[dir] >= 2 {
			break
		}
	}
	if caught[root] > 0 {
		t.Errorf("a killed merge driver left %v in the worktree root", temps(t, root))
	}
	w.acolyte(root, "search", "session tokens", "--limit", "1")
	if left := append(temps(t, root), temps(t, dir)...); len(left) > 0 {
		t.Errorf("after %v killed merge drivers and the next command, temporary files are left: %v", caught, left)
	}

	killed := 0
	for i := 0; i < 20 && killed < 2; i++ {
		cmd := exec.Command(w.exe, "remember", fmt.Sprintf("killed remember %d", i))
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "PATH="+w.path, "ACOLYTE_HOME="+w.home)
		if killMidWrite(t, cmd, dir) != "" {
			killed++
		}
	}
	if killed+caught[root]+caught[dir] == 0 {
		t.Skip("no writer was caught mid-write")
	}
	w.acolyte(root, "search", "session tokens", "--limit", "1")
	if left := temps(t, dir); len(left) > 0 {
		t.Errorf("after %d killed remembers and one search, temporary files are left: %v", killed, left)
	}
}
