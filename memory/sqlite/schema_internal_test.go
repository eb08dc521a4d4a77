package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/memory"
)

// A database written before the lexical index held joined and derived
// forms (schema 1) is re-indexed when opened, so its memories answer
// questions that spell their words differently.
func TestSchema1DatabaseIsReindexed(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "acolyte.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	contents := []string{"Deduplication runs nightly over the archive", "Routes live in internal/http_server"}
	now := time.Now().UnixMilli()
	stmts := []string{migrations[0], `PRAGMA user_version = 1`}
	for _, stmt := range stmts {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range contents {
		m := memory.Memory{Content: c}
		if _, err := db.ExecContext(ctx, `INSERT INTO memories (seq, id, scope, scope_key, kind, content, content_hash, created_at, updated_at, tokens)
			VALUES (?, ?, 'project', 'p', 'stored', ?, ?, ?, ?, 5)`, i+1, c[:4], c, memory.ContentHash(c), now, now); err != nil {
			t.Fatal(err)
		}
		// Schema 1's index: one column, the body alone.
		if _, err := db.ExecContext(ctx, `INSERT INTO memories_fts (rowid, body) VALUES (?, ?)`, i+1, memory.LexicalText(&m)); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	s, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatalf("open a schema 1 database: %v", err)
	}
	defer s.Close()
	if v, err := userVersion(ctx, s.db); err != nil || v != SchemaVersion {
		t.Fatalf("schema version %d (%v) after opening; want %d", v, err, SchemaVersion)
	}
	for _, c := range []struct{ query, want string }{
		{"when are duplicates removed?", contents[0]},
		{"which archive job runs nightly?", contents[0]}, // exact words still found
		{"where is httpserver?", contents[1]},
	} {
		rs, err := s.Search(ctx, memory.Visibility{ProjectKey: "p"}, memory.Query{Text: c.query, NoFloor: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) == 0 || rs[0].Content != c.want {
			t.Errorf("%q found %v; want %q first", c.query, rs, c.want)
		}
	}
}

// Listing one kind of a project's memories reads that kind's rows through
// memories_by_kind, not every row of the project.
func TestListOfAKindUsesTheKindIndex(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "acolyte.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	where, args := visible(memory.Visibility{ProjectKey: "p"}, memory.Filter{Scope: memory.ScopeProject, Kind: memory.KindRule})
	rows, err := s.db.QueryContext(ctx, `EXPLAIN QUERY PLAN SELECT `+memoryColumns+` FROM memories m WHERE `+where+` ORDER BY m.created_at, m.id`, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan += detail + "\n"
	}
	if !strings.Contains(plan, "memories_by_kind") {
		t.Errorf("the plan does not use memories_by_kind:\n%s", plan)
	}
}
