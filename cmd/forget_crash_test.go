package cmd_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/memory"
)

// A forget killed -9 between writing its tombstones and taking the lines
// out of their shards brings back no forgotten memory and loses no other,
// and the next ordinary write leaves a project that check passes.
func TestAForgetKilledMidwayBringsNothingBack(t *testing.T) {
	t.Parallel() // a gitWorld of its own
	if testing.Short() {
		t.Skip("forgets from a split project of 10,000 memories several times; CI runs it (go test without -short)")
	}
	w := newGitWorld(t, gitSetup{onPath: true})
	root := filepath.Join(t.TempDir(), "repo")
	w.git(filepath.Dir(root), "init", "-q", "-b", "main", root)
	const n = 10_000
	mems := bigMemories(t, format.MemoriesPath(root), n)
	w.acolyte(root, "sync") // splits the project into shards
	w.git(root, "add", "-A")
	w.git(root, "commit", "-qm", "split")
	forgotten := filepath.Join(root, format.Dir, format.ForgottenFile)
	listed := func() map[string]bool {
		var got []memory.Memory
		if err := json.Unmarshal([]byte(w.acolyte(root, "list", "--scope", "project", "--json")), &got); err != nil {
			t.Fatal(err)
		}
		ids := map[string]bool{}
		for _, m := range got {
			ids[m.ID] = true
		}
		return ids
	}
	midway := 0
	for round := range 6 {
		w.git(root, "checkout", "-q", "--", ".")
		w.git(root, "clean", "-qfdx", format.Dir)
		w.acolyte(root, "sync")
		// Ids spread over many shards, so the lines take a while to go.
		var ids []string
		for i := round; i < n; i += 97 {
			ids = append(ids, mems[i].ID)
		}
		before, _ := os.Stat(forgotten)
		cmd := exec.Command(w.exe, append([]string{"forget"}, ids...)...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "PATH="+w.path, "ACOLYTE_HOME="+w.home)
		killWhen(t, cmd, func() bool {
			now, err := os.Stat(forgotten)
			return err == nil && (before == nil || now.Size() != before.Size())
		})
		stillInShards := 0
		for _, id := range ids {
			shard, err := os.ReadFile(filepath.Join(root, format.Dir, format.ShardFile(format.ShardOf(id))))
			if err == nil && strings.Contains(string(shard), id) {
				stillInShards++
			}
		}
		tombstoned, _ := os.ReadFile(forgotten)
		if stillInShards > 0 && strings.Contains(string(tombstoned), ids[0]) {
			midway++
		}
		got := listed()
		gone := 0
		for _, id := range ids {
			if !got[id] {
				gone++
			}
		}
		// The kill may land before any tombstone (all listed) or after
		// them (none listed): never some of the forget's memories back.
		if gone != 0 && gone != len(ids) && strings.Contains(string(tombstoned), ids[len(ids)-1]) {
			t.Fatalf("round %d: %d of %d forgotten memories listed after the kill", round, len(ids)-gone, len(ids))
		}
		if len(got) != n-gone {
			t.Fatalf("round %d: %d memories listed, want %d", round, len(got), n-gone)
		}
		w.acolyte(root, "remember", "--scope", "project", "An ordinary write after the kill.")
		if out := w.acolyte(root, "check"); !strings.Contains(out, "up to date") {
			t.Fatalf("round %d: check after the next write:\n%s", round, out)
		}
		for _, id := range ids {
			shard, _ := os.ReadFile(filepath.Join(root, format.Dir, format.ShardFile(format.ShardOf(id))))
			if gone == len(ids) && strings.Contains(string(shard), id) {
				t.Fatalf("round %d: %s is forgotten but its line is still in its shard after the next write", round, id)
			}
		}
	}
	t.Logf("%d of 6 forgets killed between their tombstones and their lines", midway)
	if midway == 0 {
		t.Skip("no forget was caught between its tombstones and its lines")
	}
}
