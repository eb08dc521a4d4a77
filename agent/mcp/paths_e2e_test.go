package mcp_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/agent/toolbox"
	"github.com/acolyte-dev/acolyte/memory"
)

// A client that names the files at hand gets the rules scoped to them
// first, whatever its question's words, with the rules for every file;
// rules scoped elsewhere still rank by meaning, and only_path keeps what
// applies. Driven through the SDK's client over `acolyte mcp`.
func TestSearchRanksRulesForTheFilesAtHand(t *testing.T) {
	rule := func(id, content string, globs ...string) memory.Memory {
		return memory.Memory{ID: id, Scope: memory.ScopeProject, Kind: memory.KindRule, Content: content,
			Source: ".cursor/rules/x.mdc", Globs: globs}
	}
	migrations := rule("r-0000000000000001", "Write every schema change as a reversible pair of up and down files", "migrations/**")
	components := rule("r-0000000000000002", "Write function components and keep their styles beside them", "**/*.tsx")
	always := rule("r-0000000000000003", "Answer in British English spelling", memory.AlwaysGlob)
	f := newFixture(t, committedMemory, migrations, components, always)
	cs := f.connect(t)

	ids := func(hits toolbox.MemoryHits) []string {
		var out []string
		for _, h := range hits.Memories {
			out = append(out, h.ID)
		}
		return out
	}
	searchWith := func(args map[string]any) toolbox.MemoryHits {
		t.Helper()
		var hits toolbox.MemoryHits
		if res := callTool(t, cs, "memory_search", args, &hits); res.IsError {
			t.Fatalf("memory_search %v failed", args)
		}
		return hits
	}
	question := "how do I add a column to the users table"
	if hits := search(t, cs, question); len(hits.Memories) != 0 {
		t.Fatalf("without paths, %q found %v", question, ids(hits))
	}
	hits := searchWith(map[string]any{"query": question, "paths": []string{"migrations/0042_add_email.sql"}})
	if got := ids(hits); len(got) != 2 || !slices.Contains(got, migrations.ID) || !slices.Contains(got, always.ID) {
		t.Fatalf("for a migration, %q found %v; want the migration rule and the rule for every file", question, got)
	}
	for _, h := range hits.Memories {
		want := migrations.Globs
		if h.ID == always.ID {
			want = always.Globs
		}
		if !slices.Equal(h.Globs, want) {
			t.Errorf("hit %s shows globs %q, want %q", h.ID, h.Globs, want)
		}
	}
	hits = searchWith(map[string]any{"query": "how do the integration tests start postgres", "paths": []string{"web/app/page.tsx"}})
	if got := ids(hits); !slices.Contains(got, committedMemory.ID) || !slices.Contains(got, components.ID) || slices.Contains(got, migrations.ID) {
		t.Fatalf("for a component, a question about tests found %v; want the unscoped answer and the component rule", got)
	}
	hits = searchWith(map[string]any{"query": "how do the integration tests start postgres", "paths": []string{"web/app/page.tsx"}, "only_path": true})
	if got := ids(hits); len(got) != 2 || !slices.Contains(got, components.ID) || !slices.Contains(got, always.ID) {
		t.Fatalf("only_path found %v; want the component rule and the rule for every file", got)
	}
	for _, bad := range []map[string]any{
		{"query": question, "paths": []string{"/etc/passwd"}},
		{"query": question, "paths": []string{"../other/x.go"}},
		{"query": question, "only_path": true},
		{"query": question, "paths": slices.Repeat([]string{"a.go"}, memory.MaxQueryPaths+1)},
		{"query": question, "paths": "migrations/1.sql"},
	} {
		var e toolbox.Error
		if res := callTool(t, cs, "memory_search", bad, &e); !res.IsError || !strings.Contains(e.Message, "path") {
			t.Errorf("memory_search %v: error %+v, want a tool error about the paths", bad, e)
		}
	}
	// The server carries on.
	if hits := search(t, cs, "how do the integration tests start postgres"); !slices.Contains(ids(hits), committedMemory.ID) {
		t.Fatalf("after bad calls, search found %v", ids(hits))
	}
}
