package cmd_test

import (
	"encoding/json"
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

// A sync killed -9 while it splits a project, after writing some of the
// shards, loses no memory and duplicates none: the inbox still holds every
// line until the shards are written, a reader reads both as one set, and
// the next sync finishes the split, which check then passes.
func TestASplitKilledMidwayLosesNothing(t *testing.T) {
	t.Parallel() // a gitWorld of its own
	if testing.Short() {
		t.Skip("splits 10,000 memories five times; CI runs it (go test without -short)")
	}
	w := newGitWorld(t, gitSetup{onPath: true})
	root := filepath.Join(t.TempDir(), "repo")
	w.git(filepath.Dir(root), "init", "-q", "-b", "main", root)
	const n = 10_000
	bigMemories(t, format.MemoriesPath(root), n)
	w.git(root, "add", "-A")
	w.git(root, "commit", "-qm", "one file")
	shardsDir := filepath.Join(root, format.Dir, format.ShardsDir)
	count := func() int {
		var mems []memory.Memory
		if err := json.Unmarshal([]byte(w.acolyte(root, "list", "--scope", "project", "--json")), &mems); err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, m := range mems {
			if seen[m.ID] {
				t.Fatalf("%s listed twice", m.ID)
			}
			seen[m.ID] = true
		}
		return len(mems)
	}
	caught := 0
	for _, after := range []int{1, 64, 128, 200, 255} {
		w.git(root, "checkout", "-q", "--", ".")
		w.git(root, "clean", "-qfdx", format.Dir)
		cmd := exec.Command(w.exe, "sync")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "PATH="+w.path, "ACOLYTE_HOME="+w.home)
		if killWhen(t, cmd, func() bool {
			entries, _ := os.ReadDir(shardsDir)
			return len(entries) >= after
		}) {
			caught++
		}
		if got := count(); got != n {
			t.Fatalf("killed after %d shard files: %d memories listed, want %d", after, got, n)
		}
		w.acolyte(root, "sync")
		if got := count(); got != n {
			t.Fatalf("the sync after the kill left %d memories, want %d", got, n)
		}
		if out := w.acolyte(root, "check"); !strings.Contains(out, "up to date") {
			t.Fatalf("check after the finished split:\n%s", out)
		}
		data, err := os.ReadFile(format.MemoriesPath(root))
		if err != nil || string(data) != string(format.Encode(nil)) {
			t.Fatalf("the inbox holds more than its header after the finished split: %v", err)
		}
	}
	if caught == 0 {
		t.Skip("no sync was caught mid-split")
	}
}

// killWhen starts cmd and kills it -9 as soon as ready holds, polling every
// 100 µs, or lets it finish first; it reports whether it killed it.
func killWhen(t *testing.T, cmd *exec.Cmd, ready func() bool) bool {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	for {
		select {
		case <-done:
			return false
		default:
		}
		if ready() {
			cmd.Process.Signal(syscall.SIGKILL)
			<-done
			return true
		}
		time.Sleep(100 * time.Microsecond)
	}
}
