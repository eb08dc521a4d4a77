package mcp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/acolyte-dev/acolyte/agent/mcp"
	"github.com/acolyte-dev/acolyte/agent/toolbox"
	"github.com/acolyte-dev/acolyte/memory"
)

// contradictions is testdata/contradictions.json.
type contradictions struct {
	Pairs []struct {
		Old string `json:"old"`
		New string `json:"new"`
	} `json:"pairs"`
	Distractors []string `json:"distractors"`
	Unrelated   []string `json:"unrelated"`
}

// TestAddShowsTheMemoryANewFactContradicts measures memory_add's similar
// memories on the contradicting pairs of testdata/contradictions.json, on
// the built-in embedder: every old fact and every distractor is stored,
// then each new fact is added through a real SDK client. It reports how
// often the contradicted memory is among those returned (recall), and how
// often a fact unrelated to everything stored still gets some (noise).
func TestAddShowsTheMemoryANewFactContradicts(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "contradictions.json"))
	if err != nil {
		t.Fatal(err)
	}
	var set contradictions
	if err := json.Unmarshal(b, &set); err != nil {
		t.Fatal(err)
	}
	store := openStore(t, filepath.Join(t.TempDir(), "acolyte.db"))
	defer store.Close()
	tk := memory.Scoped{Store: store}
	oldIDs := make([]string, len(set.Pairs))
	for i, p := range set.Pairs {
		added, err := tk.Add(t.Context(), memory.Draft{Content: p.Old, Scope: memory.ScopeUser, Kind: memory.KindStored})
		if err != nil {
			t.Fatal(err)
		}
		oldIDs[i] = added.Memory.ID
	}
	for _, d := range set.Distractors {
		if _, err := tk.Add(t.Context(), memory.Draft{Content: d, Scope: memory.ScopeUser, Kind: memory.KindStored}); err != nil {
			t.Fatal(err)
		}
	}
	cs := serve(t, tk, mcp.Options{})
	add := func(content string) toolbox.MemoryAdded {
		var added toolbox.MemoryAdded
		if res := callTool(t, cs, "memory_add", map[string]any{"content": content}, &added); res.IsError {
			t.Fatalf("memory_add %q failed", content)
		}
		var removed toolbox.MemoryRemoved
		callTool(t, cs, "memory_remove", map[string]any{"id": added.ID}, &removed) // each new fact meets the old set alone
		return added
	}

	found, first := 0, 0
	for i, p := range set.Pairs {
		added := add(p.New)
		rank := slices.IndexFunc(added.Similar, func(h toolbox.MemoryHit) bool { return h.ID == oldIDs[i] })
		switch {
		case rank == 0:
			first++
			found++
		case rank > 0:
			found++
		default:
			t.Logf("missed: %q does not bring back %q (got %d others)", p.New, p.Old, len(added.Similar))
		}
	}
	noisy, shown := 0, 0
	for _, u := range set.Unrelated {
		added := add(u)
		if len(added.Similar) > 0 {
			noisy++
		}
		shown += len(added.Similar)
	}
	recall := float64(found) / float64(len(set.Pairs))
	t.Logf("contradicted memory among similar: %d/%d (%.0f%%), first: %d/%d; unrelated facts with any similar: %d/%d, %.1f shown on average",
		found, len(set.Pairs), 100*recall, first, len(set.Pairs), noisy, len(set.Unrelated), float64(shown)/float64(len(set.Unrelated)))
	// The floor is below what the built-in embedder measures (docs/mcp.md,
	// "Near memories"), so that an embedder or ranking change that loses the point of
	// similar fails here.
	if recall < 0.8 {
		t.Errorf("memory_add returned the contradicted memory for %.0f%% of the pairs, want at least 80%%", 100*recall)
	}
}
