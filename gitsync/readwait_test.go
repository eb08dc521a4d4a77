package gitsync

import (
	"context"
	"database/sql"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/gitsync/internal/project"
	"github.com/acolyte-dev/acolyte/memory"
)

// holdWriteLock takes the database's write lock on a connection of its own,
// as another process's long transaction would, until the returned function
// is called.
func holdWriteLock(t *testing.T, path string) (release func()) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(t.Context(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			conn.ExecContext(context.Background(), "ROLLBACK")
			conn.Close()
			db.Close()
		})
	}
	t.Cleanup(release)
	return release
}

type warnings struct {
	mu   sync.Mutex
	seen []string
}

func (w *warnings) add(m string) { w.mu.Lock(); w.seen = append(w.seen, m); w.mu.Unlock() }
func (w *warnings) all() string  { w.mu.Lock(); defer w.mu.Unlock(); return strings.Join(w.seen, "\n") }

// Another process keeping SQLite's write lock (a stuck hook, a long
// transaction) must not turn a project write that reached
// .acolyte/memories.jsonl into a failure, nor stall a search for the whole
// busy timeout: the write is reported done with the index behind, the
// search answers from the index as it stands, and the next command, once
// the lock is free, catches up.
func TestALockedDatabaseNeitherFailsASavedWriteNorStallsASearch(t *testing.T) {
	w := workspaceIn(t)
	var warned warnings
	w.Warn = warned.add
	ctx := t.Context()
	first, err := w.Add(ctx, memory.Draft{Scope: memory.ScopeProject, Content: "the uploader retries large uploads three times"})
	if err != nil {
		t.Fatal(err)
	}
	release := holdWriteLock(t, indexOf(w).Path())

	start := time.Now()
	second, err := w.Add(ctx, memory.Draft{Scope: memory.ScopeProject, Content: "the mailer batches emails every five minutes"})
	took := time.Since(start)
	if err != nil {
		t.Fatalf("a write saved to the memories file was reported as a failure: %v", err)
	}
	if took > project.WriteIndexWait+time.Second {
		t.Errorf("the write waited %v for the locked database; the bound is %v", took, project.WriteIndexWait)
	}
	if !strings.Contains(warned.all(), "index is behind") {
		t.Errorf("no warning that the index is behind; warnings: %q", warned.all())
	}
	data, err := os.ReadFile(format.MemoriesPath(w.Repo.Root))
	if err != nil || !strings.Contains(string(data), second.Memory.ID) {
		t.Fatalf("the memories file lacks the write (%v):\n%s", err, data)
	}

	start = time.Now()
	got, err := w.Search(ctx, memory.Query{Text: "uploads retries"})
	took = time.Since(start)
	if err != nil {
		t.Fatalf("search with the database locked: %v", err)
	}
	if took > project.ReadImportWait+time.Second {
		t.Errorf("the search waited %v for the locked database; the bound is %v", took, project.ReadImportWait)
	}
	if len(got) == 0 || got[0].ID != first.Memory.ID {
		t.Errorf("the search did not answer from the index as it stands: %+v", got)
	}
	if !strings.Contains(warned.all(), "not re-imported") {
		t.Errorf("no warning that the search used the index as it was; warnings: %q", warned.all())
	}

	release()
	got, err = w.Search(ctx, memory.Query{Text: "mailer batches emails"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 || got[0].ID != second.Memory.ID {
		t.Errorf("once the lock was free, the next command did not catch up: %+v", got)
	}
}
