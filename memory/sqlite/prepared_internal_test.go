package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/acolyte-dev/acolyte/memory"
)

// A statement the Store keeps prepared answers from the database as it is
// now: a long-lived MCP server must see what a command in another process
// wrote since, memories and bookkeeping alike, and a prepared statement
// left holding a read snapshot would hide it.
func TestPreparedStatementsSeeOtherProcessesWrites(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "acolyte.db")
	server, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	command, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer command.Close()
	vis := memory.Visibility{}
	for round := range 3 {
		want := fmt.Sprintf("value %d", round)
		if err := command.SetState(ctx, "key", want); err != nil {
			t.Fatal(err)
		}
		if got, err := server.GetState(ctx, "key"); err != nil || got != want {
			t.Fatalf("round %d: the server read %q, %v; want %q", round, got, err, want)
		}
		content := fmt.Sprintf("the deploy script tags release %d", round)
		added, err := command.Add(ctx, vis, memory.Draft{Content: content, Scope: memory.ScopeUser, Kind: memory.KindStored})
		if err != nil {
			t.Fatal(err)
		}
		found, ok, err := server.FindContent(ctx, memory.ScopeUser, "", content)
		if err != nil || !ok || found.ID != added.Memory.ID {
			t.Fatalf("round %d: the server found %+v, %v, %v; want %s", round, found, ok, err, added.Memory.ID)
		}
		results, err := server.Search(ctx, vis, memory.Query{Text: fmt.Sprintf("release %d", round), Method: memory.MethodLexical})
		if err != nil || len(results) == 0 || results[0].ID != added.Memory.ID {
			t.Fatalf("round %d: the server's search found %+v, %v", round, results, err)
		}
	}
	if len(server.stmts) == 0 {
		t.Error("the server kept no statement prepared")
	}
}

// The Store keeps at most maxPrepared statements; past that a statement is
// run unprepared and still answers, and Close closes every one it kept.
func TestPreparedStatementsAreBounded(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "acolyte.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range maxPrepared + 5 {
		var got int
		if err := s.queryRow(ctx, fmt.Sprintf("SELECT %d", i)).Scan(&got); err != nil || got != i {
			t.Fatalf("SELECT %d read %d, %v", i, got, err)
		}
	}
	if len(s.stmts) != maxPrepared {
		t.Errorf("%d statements kept, want the bound, %d", len(s.stmts), maxPrepared)
	}
	if s.prepared(ctx, "SELECT 'one more'") != nil {
		t.Error("a statement past the bound was kept")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if len(s.stmts) != 0 {
		t.Errorf("%d statements left after Close", len(s.stmts))
	}
}
