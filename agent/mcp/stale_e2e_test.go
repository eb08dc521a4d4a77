package mcp_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acolyte-dev/acolyte/agent/toolbox"
)

// A memory_search hit whose cited files changed or went since the memory
// was written says so, and a fresh one does not: the real `acolyte mcp`,
// whose cmd wiring asks git, driven by the SDK's client in a real
// repository.
func TestSearchMarksStaleMemories(t *testing.T) {
	f := newFixture(t, committedMemory)
	for _, name := range []string{"deploy.sh", "release.sh", "backup.sh"} {
		if err := os.MkdirAll(filepath.Join(f.repo, "scripts"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(f.repo, "scripts", name), []byte("#!/bin/sh\necho "+name+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f.git(t, "add", "scripts")
	f.git(t, "commit", "-q", "-m", "scripts")
	cs := f.connect(t)

	ids := map[string]string{}
	for key, fact := range map[string]string{
		"deploy":  "Deploys run scripts/deploy.sh with the staging flag",
		"release": "Releases are cut by scripts/release.sh from main",
		"backup":  "Backups are taken by scripts/backup.sh every night",
	} {
		var added toolbox.MemoryAdded
		if res := callTool(t, cs, "memory_add", map[string]any{"content": fact, "scope": "project"}, &added); res.IsError || added.ID == "" {
			t.Fatalf("memory_add %q: %+v", fact, added)
		}
		ids[key] = added.ID
	}
	find := func(query, key string) toolbox.MemoryHit {
		t.Helper()
		hits := search(t, cs, query)
		i := slices.IndexFunc(hits.Memories, func(h toolbox.MemoryHit) bool { return h.ID == ids[key] })
		if i < 0 {
			t.Fatalf("%q did not find the %s memory: %+v", query, key, hits.Memories)
		}
		anyStale := slices.ContainsFunc(hits.Memories, func(h toolbox.MemoryHit) bool { return h.Stale != nil })
		if verify := strings.Contains(hits.Note, "verify"); verify != anyStale {
			t.Errorf("%q: a stale hit: %v, but note %q", query, anyStale, hits.Note)
		}
		return hits.Memories[i]
	}
	queries := map[string]string{"deploy": "which script runs deploys", "release": "how are releases cut",
		"backup": "how are backups taken"}
	for key, q := range queries {
		if h := find(q, key); h.Stale != nil {
			t.Errorf("before any change, the %s memory is marked stale: %+v", key, h.Stale)
		}
	}

	if err := os.WriteFile(filepath.Join(f.repo, "scripts", "deploy.sh"), []byte("#!/bin/sh\necho changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.git(t, "rm", "-q", "scripts/release.sh")
	f.git(t, "commit", "-q", "-am", "change deploy, drop release")

	if h := find(queries["deploy"], "deploy"); h.Stale == nil || !slices.Equal(h.Stale.Changed, []string{"scripts/deploy.sh"}) || len(h.Stale.Deleted) != 0 {
		t.Errorf("deploy memory after its script changed: stale %+v, want changed scripts/deploy.sh", h.Stale)
	}
	if h := find(queries["release"], "release"); h.Stale == nil || !slices.Equal(h.Stale.Deleted, []string{"scripts/release.sh"}) || len(h.Stale.Changed) != 0 {
		t.Errorf("release memory after its script went: stale %+v, want deleted scripts/release.sh", h.Stale)
	}
	if h := find(queries["backup"], "backup"); h.Stale != nil {
		t.Errorf("backup memory, whose script is unchanged, is marked stale: %+v", h.Stale)
	}
	// The text a client without structured content reads says it too.
	res := callTool(t, cs, "memory_search", map[string]any{"query": queries["deploy"]}, nil)
	var txt strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			txt.WriteString(tc.Text)
		}
	}
	if !strings.Contains(txt.String(), `"stale":{"changed":["scripts/deploy.sh"]}`) {
		t.Errorf("memory_search's text shows no stale field: %s", txt.String())
	}
}
