package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/embed/static"
)

// bulkSample is n project memories as a large file holds them, in id
// order: topics, paths, globs, identifiers, a rule, and some without times
// (which take the clock).
func bulkSample(n int) []memory.Memory {
	words := []string{"cache", "parser", "runTool", "upload_queue", "billing", "HTTPServer", "retry", "lock", "shard", "token"}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ms := make([]memory.Memory, n)
	for i := range ms {
		m := memory.Memory{ID: fmt.Sprintf("01K%08d", i), Kind: memory.KindStored,
			Content: fmt.Sprintf("The %s %s handles large uploads %d times (note %d)", words[i%10], words[(i/10)%10], i%7, i),
			Source:  "bench", CreatedAt: t0.Add(time.Duration(i) * time.Second), UpdatedAt: t0.Add(time.Duration(i) * time.Minute)}
		switch i % 5 {
		case 0:
			m.Topic = "area " + words[i%3]
		case 1:
			m.Paths = []string{"cmd/app.go", fmt.Sprintf("svc/%d.go", i%4)}
		case 2:
			m.Globs = []string{"**/*.go"}
			m.Kind = memory.KindRule
			m.Source = "AGENTS.md#Rules"
		case 3:
			m.CreatedAt, m.UpdatedAt = time.Time{}, time.Time{}
		}
		ms[i] = m
	}
	return ms
}

// dumpIndex is every row an import writes: memories, vectors and the
// lexical index's text, in seq order.
func dumpIndex(t *testing.T, s *Store) []string {
	t.Helper()
	var out []string
	for _, q := range []string{
		`SELECT seq, id, scope, scope_key, kind, content, topic, source, content_hash, created_at, updated_at, recalled_at, tokens, commit_hash, paths, globs FROM memories ORDER BY seq`,
		`SELECT seq, model, dim, content_hash, hex(vec) FROM embeddings ORDER BY seq`,
		`SELECT rowid, body, forms FROM memories_fts ORDER BY rowid`,
	} {
		rows, err := s.db.QueryContext(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]sql.NullString, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprint(vals))
		}
		rows.Close()
	}
	return out
}

// schemaOf is every table, index and trigger as the schema defines it.
func schemaOf(t *testing.T, s *Store) []string {
	t.Helper()
	rows, err := s.db.QueryContext(t.Context(), `SELECT type || ' ' || name || ' ' || tbl_name || ' ' || coalesce(sql, '') FROM sqlite_schema ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var def string
		if err := rows.Scan(&def); err != nil {
			t.Fatal(err)
		}
		out = append(out, def)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestBulkImportMatchesUpsert: an import into an empty scope, written in
// bulk, leaves the rows, vectors, lexical index and search results that
// the row-by-row upsert leaves, beside another scope's memories.
func TestBulkImportMatchesUpsert(t *testing.T) {
	ctx := t.Context()
	now := time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
	const key = "/src/app"
	ms := bulkSample(3*embedBatch + 17) // batches of embedBatch, and a short one
	open := func() *Store {
		s, err := Open(ctx, filepath.Join(t.TempDir(), "acolyte.db"), static.New())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		s.now = func() time.Time { return now }
		// Another scope's rows first, so the import's seqs do not start at 1.
		if _, err := s.ReplaceScope(ctx, memory.ScopeUser, "", bulkSample(3)); err != nil {
			t.Fatal(err)
		}
		return s
	}
	bulk, rows := open(), open()
	if _, err := bulk.ReplaceScope(ctx, memory.ScopeProject, key, append([]memory.Memory(nil), ms...)); err != nil {
		t.Fatal(err)
	}
	// One memory first, below bulkMin, makes the scope non-empty, so the
	// rest go through upsert one row at a time, in the same order.
	if _, err := rows.ReplaceScope(ctx, memory.ScopeProject, key, append([]memory.Memory(nil), ms[:1]...)); err != nil {
		t.Fatal(err)
	}
	st, err := rows.ReplaceScope(ctx, memory.ScopeProject, key, append([]memory.Memory(nil), ms...))
	if err != nil || st.Added != len(ms)-1 {
		t.Fatalf("row by row: %+v, %v", st, err)
	}
	got, want := dumpIndex(t, bulk), dumpIndex(t, rows)
	if len(got) != 3*(len(ms)+3) {
		t.Fatalf("bulk import wrote %d rows, want %d", len(got), 3*(len(ms)+3))
	}
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			t.Fatalf("row %d:\nbulk %s\nrows %s", i, got[i], want[i])
		}
	}
	if len(got) != len(want) {
		t.Fatalf("bulk %d rows, row by row %d", len(got), len(want))
	}
	for _, s := range []*Store{bulk, rows} {
		if _, err := s.db.ExecContext(ctx, `INSERT INTO memories_fts (memories_fts) VALUES ('integrity-check')`); err != nil {
			t.Fatalf("lexical index: %v", err)
		}
		// Every index holds exactly its table's rows, the one the bulk
		// import built after them (bulkIndex) included.
		var check string
		if err := s.db.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
			t.Fatalf("integrity check: %q, %v", check, err)
		}
	}
	if a, b := schemaOf(t, bulk), schemaOf(t, rows); !reflect.DeepEqual(a, b) {
		t.Fatalf("schema after a bulk import:\n%q\nrow by row:\n%q", a, b)
	}
	vis := memory.Visibility{ProjectKey: key}
	for _, q := range []string{"how are large uploads handled", "run tool", "HTTP server retry", "billing shard lock note 4242", "area cache"} {
		a, err := bulk.Search(ctx, vis, memory.Query{Text: q, Filter: memory.Filter{Limit: 20}})
		if err != nil {
			t.Fatal(err)
		}
		b, err := rows.Search(ctx, vis, memory.Query{Text: q, Filter: memory.Filter{Limit: 20}})
		if err != nil {
			t.Fatal(err)
		}
		if len(a) == 0 || !reflect.DeepEqual(a, b) {
			t.Errorf("search %q:\nbulk %v\nrows %v", q, a, b)
		}
	}
}

// failAfter embeds its first batch and fails every later one.
type failAfter struct {
	memory.Embedder
	calls atomic.Int32
}

func (f *failAfter) Embed(ctx context.Context, p memory.Purpose, texts []string) ([][]float32, error) {
	if f.calls.Add(1) > 1 {
		return nil, errors.New("quota exceeded")
	}
	return f.Embedder.Embed(ctx, p, texts)
}

// TestBulkImportKeepsVectorsUpToAFailedBatch: as upsert's embed, a batch
// the embedder fails and every batch after it are stored without vectors,
// with the warning to reindex; whichever batch fails, the memories are all
// stored and found lexically.
func TestBulkImportKeepsVectorsUpToAFailedBatch(t *testing.T) {
	ctx := t.Context()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "acolyte.db"), &failAfter{Embedder: static.New()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ms := bulkSample(4 * embedBatch)
	st, err := s.ReplaceScope(ctx, memory.ScopeProject, "/src/app", ms)
	if err != nil || st.Added != len(ms) || !strings.Contains(st.Warning, "quota exceeded") || !strings.Contains(st.Warning, "reindex") {
		t.Fatalf("import: %+v, %v", st, err)
	}
	var memories, vectors, maxWithVector, minWithout int
	if err := s.db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM memories), (SELECT count(*) FROM embeddings),
		(SELECT coalesce(max(seq), 0) FROM embeddings), (SELECT coalesce(min(seq), 0) FROM memories WHERE seq NOT IN (SELECT seq FROM embeddings))`).
		Scan(&memories, &vectors, &maxWithVector, &minWithout); err != nil {
		t.Fatal(err)
	}
	// Only one batch, the first the workers took, can have its vectors,
	// and only if it was the first batch of the file.
	if memories != len(ms) || vectors != 0 && (vectors != embedBatch || maxWithVector >= minWithout) {
		t.Fatalf("%d memories, %d vectors (the last at seq %d, the first without at %d)", memories, vectors, maxWithVector, minWithout)
	}
	if rs, err := s.Search(ctx, memory.Visibility{ProjectKey: "/src/app"}, memory.Query{Text: "billing", Filter: memory.Filter{Limit: 5}}); err != nil || len(rs) == 0 {
		t.Fatalf("lexical search after a failed embedding: %v, %v", rs, err)
	}
}

// BenchmarkImportEmptyScope is a fresh clone's first import of n project
// memories into an empty index, in process: bulkAdd, with the vectors and
// lexical texts worked out beside SQLite.
func BenchmarkImportEmptyScope(b *testing.B) {
	ms := bulkSample(20_000)
	for b.Loop() {
		b.StopTimer()
		s, err := Open(b.Context(), filepath.Join(b.TempDir(), "acolyte.db"), static.New())
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := s.ReplaceScope(b.Context(), memory.ScopeProject, "/src/app", append([]memory.Memory(nil), ms...)); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		s.Close()
		b.StartTimer()
	}
}

// TestBulkImportSavesTheCatalog: a bulk import into an empty database
// leaves the search catalog, kept and in its file, at the new generation
// and exactly as a rebuild from the tables makes it, so the first search
// reads no row back; with the embedder failing part way too.
func TestBulkImportSavesTheCatalog(t *testing.T) {
	for _, tc := range []struct {
		name     string
		embedder memory.Embedder
	}{
		{"vectors", static.New()},
		{"failed batch", &failAfter{Embedder: static.New()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			s, err := Open(ctx, filepath.Join(t.TempDir(), "acolyte.db"), tc.embedder)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := s.ReplaceScope(ctx, memory.ScopeProject, "/src/app", bulkSample(3*embedBatch+17)); err != nil {
				t.Fatal(err)
			}
			savedMatchesDatabase(t, s)
			gen, err := s.generation(ctx)
			if err != nil {
				t.Fatal(err)
			}
			kept := s.savedCatalog(gen, s.model())
			if kept == nil {
				t.Fatal("no catalog kept at the import's generation")
			}
			defer s.releaseCatalog(kept)
			rebuilt, err := s.buildCatalog(ctx, s.model())
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(kept.seqs, rebuilt.seqs) || !reflect.DeepEqual(kept.groups, rebuilt.groups) ||
				!reflect.DeepEqual(kept.scopes, rebuilt.scopes) || !reflect.DeepEqual(kept.keys, rebuilt.keys) ||
				!reflect.DeepEqual(kept.kinds, rebuilt.kinds) || !reflect.DeepEqual(kept.vecAt, rebuilt.vecAt) ||
				!reflect.DeepEqual(kept.scales, rebuilt.scales) || !reflect.DeepEqual(kept.vecs, rebuilt.vecs) ||
				kept.dim != rebuilt.dim || kept.generation != rebuilt.generation {
				t.Fatalf("kept catalog differs from a rebuild: %d memories, %d vectors; rebuilt %d, %d",
					len(kept.seqs), len(kept.scales), len(rebuilt.seqs), len(rebuilt.scales))
			}
		})
	}
}
