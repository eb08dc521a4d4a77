package toolbox_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/acolyte-dev/acolyte/agent/internal/agenttest"
	"github.com/acolyte-dev/acolyte/agent/toolbox"
	"github.com/acolyte-dev/acolyte/gitsync"
	"github.com/acolyte-dev/acolyte/memory"
)

// The agent's memory_search marks a hit whose cited files changed or went
// since it was written, through the Stale its configuration is given (here
// gitsync's, as the CLI wires it), and leaves a fresh hit unmarked.
func TestMemorySearchMarksStaleHits(t *testing.T) {
	root := t.TempDir()
	for k, v := range map[string]string{"GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "t@example.com",
		"GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1"} {
		t.Setenv(k, v)
	}
	git := func(args ...string) {
		t.Helper()
		c := exec.Command("git", args...)
		c.Dir = root
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	write := func(name, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q", "-b", "main")
	write("scripts/deploy.sh", "echo deploy\n")
	write("scripts/release.sh", "echo release\n")
	write("scripts/backup.sh", "echo backup\n")
	git("add", ".")
	git("commit", "-q", "-m", "scripts")

	repo, err := gitsync.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	_, store := agenttest.Open(t)
	ws := gitsync.NewCheckout(repo, store, "")
	stale := func(ctx context.Context, mems []memory.Memory) (map[string]memory.Staleness, error) {
		found, err := repo.StaleAmong(ctx, mems)
		out := map[string]memory.Staleness{}
		for _, s := range found {
			out[s.Memory.ID] = memory.Staleness{Changed: s.Changed, Deleted: s.Deleted}
		}
		return out, err
	}
	tools := toolbox.MemoryConfig{Toolkit: ws, Source: toolbox.SourceAgent, Stale: stale}.AgentTools()

	facts := map[string]string{
		"deploy":  "Deploys run scripts/deploy.sh with the staging flag",
		"release": "Releases are cut by scripts/release.sh from main",
		"backup":  "Backups are taken by scripts/backup.sh every night",
	}
	ids := map[string]string{}
	for key, fact := range facts {
		res, err := call(t, tools, "memory_add", `{"content": "`+fact+`", "scope": "project"}`)
		if err != nil {
			t.Fatal(err)
		}
		ids[key] = res.(toolbox.MemoryAdded).ID
	}
	// find searches for a fact by its own words, with the given tools.
	find := func(tools []toolbox.Tool, key string) toolbox.MemoryHit {
		t.Helper()
		res, err := call(t, tools, "memory_search", `{"query": "`+facts[key]+`"}`)
		if err != nil {
			t.Fatal(err)
		}
		hits := res.(toolbox.MemoryHits).Memories
		i := slices.IndexFunc(hits, func(h toolbox.MemoryHit) bool { return h.ID == ids[key] })
		if i < 0 {
			t.Fatalf("searching for the %s memory did not find it: %+v", key, hits)
		}
		return hits[i]
	}
	for key := range facts {
		if h := find(tools, key); h.Stale != nil {
			t.Errorf("before any change, the %s memory is marked stale: %+v", key, h.Stale)
		}
	}

	write("scripts/deploy.sh", "echo deploy --fast\n")
	git("rm", "-q", "scripts/release.sh")
	git("commit", "-q", "-am", "change deploy, drop release")

	if h := find(tools, "deploy"); h.Stale == nil || !slices.Equal(h.Stale.Changed, []string{"scripts/deploy.sh"}) || len(h.Stale.Deleted) != 0 {
		t.Errorf("deploy memory after its script changed: stale %+v, want changed scripts/deploy.sh", h.Stale)
	}
	if h := find(tools, "release"); h.Stale == nil || !slices.Equal(h.Stale.Deleted, []string{"scripts/release.sh"}) || len(h.Stale.Changed) != 0 {
		t.Errorf("release memory after its script went: stale %+v, want deleted scripts/release.sh", h.Stale)
	}
	if h := find(tools, "backup"); h.Stale != nil {
		t.Errorf("backup memory, whose script is unchanged, is marked stale: %+v", h.Stale)
	}
	// Without a Stale, nothing is marked: the toolbox knows no git.
	if h := find(toolbox.MemoryTools(ws), "deploy"); h.Stale != nil {
		t.Errorf("with no Stale configured, the deploy memory is marked: %+v", h.Stale)
	}
}
