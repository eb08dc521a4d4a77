package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/memory/team"

	"github.com/jackc/pgx/v5"

	"github.com/acolyte-dev/acolyte/agent/toolbox"
	"github.com/acolyte-dev/acolyte/gitsync"
	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/internal/enginetest"
	"github.com/acolyte-dev/acolyte/memory/sqlite"
)

// TestWithTeam drives team.Toolkit over a local store and a real team
// database, and the agent's memory tools over it: team drafts reach only
// the team database, past the credential check; searches and listings
// without a scope fuse both sides; forget finds each id where it lives.
func TestWithTeam(t *testing.T) {
	c := start(t)
	ctx := t.Context()
	e := enginetest.Concepts("m")
	teamDB := c.open(t, "alice", c.database(t), e)
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "acolyte.db"), e)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	vis := memory.Visibility{SessionKey: "s1", Team: "red"}
	local := memory.Scoped{Store: store, Visibility: vis}
	tk := team.Toolkit{Local: local, Team: teamDB, Visibility: vis, Refuse: gitsync.RefuseSecret}

	shared, err := tk.Add(ctx, memory.Draft{Content: "staging is reached through bastion-2", Scope: memory.ScopeTeam})
	if err != nil {
		t.Fatal(err)
	}
	own, err := tk.Add(ctx, memory.Draft{Content: "I keep my staging notes in ~/notes", Scope: memory.ScopeUser})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := store.List(ctx, vis, memory.Filter{}); len(got) != 1 || got[0].ID != own.Memory.ID {
		t.Fatalf("the local store holds %+v, want only the user memory", got)
	}
	if got, _ := teamDB.List(ctx, vis, memory.Filter{}); len(got) != 1 || got[0].ID != shared.Memory.ID {
		t.Fatalf("the team database holds %+v, want only the team memory", got)
	}

	_, err = tk.Add(ctx, memory.Draft{Content: "The deploy key is AKIAQX7NR3JTMB2W5KPL", Scope: memory.ScopeTeam})
	if !errors.Is(err, memory.ErrSecret) || strings.Contains(err.Error(), "AKIA") {
		t.Fatalf("a credential for the team: %v, want memory.ErrSecret without the secret", err)
	}
	if _, err := (team.Toolkit{Local: local, Team: teamDB, Visibility: vis}).Add(ctx, memory.Draft{Content: "fine", Scope: memory.ScopeTeam}); err == nil {
		t.Fatal("without a credential check a team write went through")
	}

	rs, err := tk.Search(ctx, memory.Query{Text: "staging"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 {
		t.Fatalf("an unscoped search found %+v, want the team and the user memory", rs)
	}
	// Nothing relevant on either side: the merge finds nothing (the CLI's
	// exit 1), though "staging" matches a memory on each, which each side
	// offers without the floor.
	budget := memory.Query{Text: "which coffee beans does the staging team order"}
	if rs, err := tk.Search(ctx, budget); err != nil || len(rs) != 0 {
		t.Fatalf("an unscoped search about nothing here found %+v (%v), want nothing relevant", rs, err)
	}
	budget.Scope = memory.ScopeTeam
	if rs, err := tk.Search(ctx, budget); err != nil || len(rs) != 0 {
		t.Fatalf("a team search about nothing here found %+v (%v), want nothing relevant", rs, err)
	}
	budget.Scope, budget.NoFloor = "", true
	if rs, err := tk.Search(ctx, budget); err != nil || len(rs) != 2 {
		t.Fatalf("the unscoped search without the floor found %+v (%v), want both memories", rs, err)
	}
	rs, err = tk.Search(ctx, memory.Query{Text: "staging", Filter: memory.Filter{Scope: memory.ScopeUser}})
	if err != nil || len(rs) != 1 || rs[0].ID != own.Memory.ID {
		t.Fatalf("a user-scope search found %+v (%v)", rs, err)
	}
	all, err := tk.List(ctx, memory.Filter{})
	if err != nil || len(all) != 2 {
		t.Fatalf("an unscoped listing: %+v (%v)", all, err)
	}

	edited, err := tk.Edit(ctx, shared.Memory.ID, memory.Revision{Content: "staging is reached through bastion-3"})
	if err != nil || edited.Content != "staging is reached through bastion-3" {
		t.Fatalf("edit of a team memory: %+v (%v)", edited, err)
	}
	if _, err := tk.Edit(ctx, shared.Memory.ID, memory.Revision{Content: "key AKIAQX7NR3JTMB2W5KPL"}); !errors.Is(err, memory.ErrSecret) {
		t.Fatalf("editing a credential into a team memory: %v", err)
	}

	// A typo among the ids removes nothing, on either side.
	if _, err := tk.Remove(ctx, shared.Memory.ID, "01NOSUCHMEMORY0000000000000"); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("remove with an unknown id: %v", err)
	}
	if _, err := teamDB.Get(ctx, vis, shared.Memory.ID); err != nil {
		t.Fatalf("a failed remove removed the team memory: %v", err)
	}
	removed, err := tk.Remove(ctx, shared.Memory.ID, own.Memory.ID)
	if err != nil || len(removed) != 2 {
		t.Fatalf("remove of one memory on each side: %+v (%v)", removed, err)
	}

	// The agent's (and the MCP server's) tools offer team only here, and
	// project in neither: these toolkits are outside any repository.
	enums := func(tk memory.Toolkit) string {
		var out []string
		for _, tool := range toolbox.MemoryTools(tk) {
			if tool.Name == "memory_add" || tool.Name == "memory_search" {
				var s struct {
					Properties struct{ Scope struct{ Enum []string } }
				}
				if err := json.Unmarshal(tool.Schema, &s); err != nil {
					t.Fatal(err)
				}
				out = append(out, tool.Name+"="+strings.Join(s.Properties.Scope.Enum, ","))
			}
		}
		return strings.Join(out, " ")
	}
	if got := enums(tk); got != "memory_search=user,session,team memory_add=user,team" {
		t.Errorf("with a team database the tools offer %s", got)
	}
	if got := enums(local); got != "memory_search=user,session memory_add=user" {
		t.Errorf("without one they offer %s", got)
	}
	for _, tool := range toolbox.MemoryTools(tk) {
		if tool.Name != "memory_add" {
			continue
		}
		res, err := tool.Call(ctx, json.RawMessage(`{"content": "the release train leaves on Thursdays", "scope": "team"}`))
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := teamDB.List(ctx, vis, memory.Filter{}); len(got) != 1 || got[0].Content != "the release train leaves on Thursdays" {
			t.Fatalf("memory_add with scope team gave %+v; the team holds %+v", res, got)
		}
		_, err = tool.Call(ctx, json.RawMessage(`{"content": "key AKIAQX7NR3JTMB2W5KPL", "scope": "team"}`))
		var te *toolbox.Error
		if !errors.As(err, &te) || te.Code != toolbox.CodeSecret {
			t.Fatalf("memory_add of a credential to the team: %v", err)
		}
	}
}

// TestWithTeamSlowTeam: while the team database cannot answer (here an
// administrator's transaction holds a lock on the team's memories), a
// search or listing without a scope returns the local memories after
// TeamWait, and says why the team's were left out; a team-scoped search
// is about the team, so it fails instead of answering with nothing.
func TestWithTeamSlowTeam(t *testing.T) {
	c := start(t)
	ctx := t.Context()
	db := c.database(t)
	teamDB := c.open(t, "alice", db, nil)
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "acolyte.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	vis := memory.Visibility{Team: "red"}
	var warnings []error
	tk := team.Toolkit{Local: memory.Scoped{Store: store, Visibility: vis}, Team: teamDB, Visibility: vis,
		Refuse: gitsync.RefuseSecret, TeamWait: 10 * time.Second, Warn: func(err error) { warnings = append(warnings, err) }}
	for _, d := range []memory.Draft{{Content: "staging is reached through bastion-2", Scope: memory.ScopeTeam},
		{Content: "my staging notes are in ~/notes", Scope: memory.ScopeUser}} {
		if _, err := tk.Add(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	if rs, err := tk.Search(ctx, memory.Query{Text: "staging"}); err != nil || len(rs) != 2 || len(warnings) != 0 {
		t.Fatalf("with the team database answering: %+v (%v), warnings %v", rs, err, warnings)
	}

	admin, err := pgx.Connect(ctx, c.srv.URL("postgres", db))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	lock, err := admin.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Rollback(ctx)
	if _, err := lock.Exec(ctx, `LOCK TABLE team_memories IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	// A healthy server had all the time it needed above (a loaded
	// machine can take longer than a short wait); the stuck one gets a
	// short wait.
	tk.TeamWait = 300 * time.Millisecond
	start := time.Now()
	rs, err := tk.Search(ctx, memory.Query{Text: "staging"})
	took := time.Since(start)
	if err != nil || len(rs) != 1 || rs[0].Scope != memory.ScopeUser {
		t.Fatalf("with the team database stuck, search found %+v (%v), want the user memory", rs, err)
	}
	if took > 2*time.Second {
		t.Fatalf("with the team database stuck, search took %v; TeamWait is 300ms", took)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0].Error(), "team search") || !errors.Is(warnings[0], context.DeadlineExceeded) {
		t.Fatalf("warnings: %v, want one saying the team search ran out of time", warnings)
	}
	if ms, err := tk.List(ctx, memory.Filter{}); err != nil || len(ms) != 1 || len(warnings) != 2 {
		t.Fatalf("with the team database stuck, list gave %+v (%v), warnings %v", ms, err, warnings)
	}
	// A model never sees stderr: the memory tools say it in their answer.
	args := map[string]string{"memory_search": `{"query": "staging"}`, "memory_list": `{}`}
	for _, tool := range toolbox.MemoryToolsFor(tk, "mcp") {
		if args[tool.Name] == "" {
			continue
		}
		got, err := tool.Call(ctx, json.RawMessage(args[tool.Name]))
		if err != nil {
			t.Fatalf("%s with the team database stuck: %v", tool.Name, err)
		}
		hits := got.(toolbox.MemoryHits)
		if len(hits.Memories) != 1 || !strings.Contains(hits.Team, "deadline exceeded") {
			t.Errorf("%s with the team database stuck: %+v, want the user memory and a team field saying why the team's are missing", tool.Name, hits)
		}
	}
	if _, note := team.Note(ctx); note() != "" {
		t.Errorf("a fresh team.Note says %q", note())
	}
	tctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, err := tk.Search(tctx, memory.Query{Text: "staging", Filter: memory.Filter{Scope: memory.ScopeTeam}}); err == nil {
		t.Fatal("a team-scoped search with the team database stuck succeeded")
	}
	// Without Warn the failure is the caller's to handle.
	tk.Warn = nil
	if _, err := tk.Search(ctx, memory.Query{Text: "staging"}); err == nil || !strings.Contains(err.Error(), "team search") {
		t.Fatalf("without Warn, a stuck team search: %v, want its error", err)
	}
}
