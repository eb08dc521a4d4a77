package sqlite_test

import (
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/sqlite"
)

// damagedStore makes a user store of n memories, closes it with everything
// checkpointed into the main file, and scribbles over the leaf pages of
// table (as a lost sector or a stray writer would), leaving the header
// and every other page intact. Its last daily check is a day old.
func damagedStore(t *testing.T, n int, table string, pages int) (path string, contents map[string]string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "acolyte.db")
	s := openStore(t, path, &wordHash{name: "h", dim: 16})
	contents = map[string]string{}
	for i := range n {
		m := add(t, s, nowhere, memory.ScopeUser, fmt.Sprintf("fact %d: the uploader retries large uploads %d times with backoff and jitter", i, i))
		contents[m.ID] = m.Content
	}
	s.Close()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	// The store last checked itself a day ago.
	if _, err := db.Exec(`UPDATE state SET value = '0' WHERE key = 'verified_at'`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	scribble(t, path, table, pages)
	return path, contents
}

// scribble writes junk over the first leaf pages of table in the closed
// database at path, through the file alone, as a stray writer would.
func scribble(t *testing.T, path, table string, pages int) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query(`SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY pageno LIMIT ?`, table, pages)
	if err != nil {
		t.Fatal(err)
	}
	var victims []int64
	for rows.Next() {
		var p int64
		rows.Scan(&p)
		victims = append(victims, p)
	}
	rows.Close()
	db.Close()
	if len(victims) == 0 {
		t.Fatalf("table %s has no leaf page to damage", table)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range victims {
		junk := make([]byte, 2048)
		rand.Read(junk)
		if _, err := f.WriteAt(junk, (p-1)*4096+64); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
}

// A page scribbled over between two commands, the day's check long done,
// is found by the next write, whatever its scope, though that write
// touches no damaged page (issue 37: user writes went on succeeding). A
// file left as acolyte wrote it is not checked again.
func TestAScribbleIsFoundByTheNextWriteOfAnyScope(t *testing.T) {
	path := filepath.Join(t.TempDir(), "acolyte.db")
	e := &wordHash{name: "h", dim: 16}
	s := openStore(t, path, e)
	for i := range 300 {
		add(t, s, nowhere, memory.ScopeUser, fmt.Sprintf("fact %d: the uploader retries large uploads %d times with backoff", i, i))
	}
	s.Close()

	s = openStore(t, path, e)
	checked, err := s.GetState(ctx, "verified_at")
	if err != nil || checked == "" {
		t.Fatalf("the day's check left no mark: %q, %v", checked, err)
	}
	add(t, s, nowhere, memory.ScopeUser, "a fact written by a second command")
	if again, _ := s.GetState(ctx, "verified_at"); again != checked {
		t.Errorf("a file untouched since the last command was checked again (verified_at %s -> %s)", checked, again)
	}
	s.Close()

	scribble(t, path, "memories", 1)
	s = openStore(t, path, e)
	_, err = s.Add(ctx, nowhere, memory.Draft{Content: "written to a scribbled file", Scope: memory.ScopeUser})
	if !errors.Is(err, memory.ErrCorrupt) || !strings.Contains(err.Error(), "acolyte reindex --repair") {
		t.Fatalf("a user write to a scribbled file: want ErrCorrupt naming the repair, got %v", err)
	}
	if err := s.CheckWritable(ctx); !errors.Is(err, memory.ErrCorrupt) {
		t.Errorf("CheckWritable after the refusal: %v", err)
	}
}

// A long-lived store (an MCP server, the UI) that found the file sound at
// its first write finds a scribble made while it runs at its next one.
func TestAScribbleWhileAStoreRunsIsFoundByItsNextWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "acolyte.db")
	e := &wordHash{name: "h", dim: 16}
	s := openStore(t, path, e)
	for i := range 300 {
		add(t, s, nowhere, memory.ScopeUser, fmt.Sprintf("fact %d: the uploader retries large uploads %d times with backoff", i, i))
	}
	s.Close()
	s = openStore(t, path, e)
	add(t, s, nowhere, memory.ScopeUser, "the server's first write")
	scribble(t, path, "memories", 1)
	_, err := s.Add(ctx, nowhere, memory.Draft{Content: "the server's write after the scribble", Scope: memory.ScopeUser})
	if !errors.Is(err, memory.ErrCorrupt) || !strings.Contains(err.Error(), "acolyte reindex --repair") {
		t.Fatalf("a running store's write after a scribble: want ErrCorrupt naming the repair, got %v", err)
	}
}

// A database whose pages were scribbled over, with its header intact,
// takes writes that touch only healthy pages, and SQLite says nothing; the
// damage then spreads. The first write of a command that finds it (the
// daily check, or any query hitting a bad page) refuses, names the way
// out, and every later command refuses too; reads still work where they
// can. Repair brings every readable memory back into a sound file and
// keeps the damaged one.
func TestDamagedDatabaseIsRefusedForWritesAndRepaired(t *testing.T) {
	path, contents := damagedStore(t, 300, "embeddings", 3)
	s := openStore(t, path, &wordHash{name: "h", dim: 16})
	_, err := s.Add(ctx, nowhere, memory.Draft{Content: "written to a damaged file", Scope: memory.ScopeUser})
	if !errors.Is(err, memory.ErrCorrupt) || !strings.Contains(err.Error(), "acolyte reindex --repair") {
		t.Fatalf("a write to a damaged database: want ErrCorrupt naming the repair, got %v", err)
	}
	if got, err := s.List(ctx, nowhere, memory.Filter{}); err != nil || len(got) != len(contents) {
		t.Errorf("reads of the healthy table: %d memories, %v", len(got), err)
	}
	s.Close()

	// A later command, past the daily check, refuses as well.
	s = openStore(t, path, &wordHash{name: "h", dim: 16})
	if s.Damaged() == "" {
		t.Error("the damage was forgotten by the next command")
	}
	if err := s.SetState(ctx, "k", "v"); !errors.Is(err, memory.ErrCorrupt) {
		t.Errorf("a bookkeeping write to a damaged database: %v", err)
	}
	s.Close()

	r, err := sqlite.Repair(ctx, path, &wordHash{name: "h", dim: 16})
	if err != nil {
		t.Fatal(err)
	}
	if r.Recovered != len(contents) || r.Unreadable != 0 {
		t.Errorf("repair recovered %d of %d (%d unreadable); the memories table was intact", r.Recovered, len(contents), r.Unreadable)
	}
	if b, err := os.ReadFile(r.Backup); err != nil || len(b) == 0 {
		t.Errorf("the damaged file was not kept at %s: %v", r.Backup, err)
	}
	s = openStore(t, path, &wordHash{name: "h", dim: 16})
	if err := s.Verify(ctx); err != nil || s.Damaged() != "" {
		t.Fatalf("the repaired database: %v %q", err, s.Damaged())
	}
	got, err := s.List(ctx, nowhere, memory.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range got {
		if contents[m.ID] != m.Content {
			t.Errorf("memory %s came back as %q, want %q", m.ID, m.Content, contents[m.ID])
		}
	}
	if len(got) != len(contents) {
		t.Errorf("%d memories after repair, want %d", len(got), len(contents))
	}
	if rs := mustSearch(t, s, "uploader retries large uploads 42 times"); len(rs) == 0 {
		t.Error("the repaired database finds nothing")
	}
	add(t, s, nowhere, memory.ScopeUser, "written after the repair")
}

// When the memories table itself is damaged, Repair keeps every row it
// can still read, counts what it skipped, and never invents a memory.
func TestRepairSkipsUnreadableStretchesOfMemories(t *testing.T) {
	path, contents := damagedStore(t, 300, "memories", 1)
	r, err := sqlite.Repair(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Recovered == 0 || r.Recovered >= len(contents) || r.Unreadable == 0 {
		t.Errorf("repair of a damaged memories table: %d of %d recovered, %d unreadable", r.Recovered, len(contents), r.Unreadable)
	}
	s := openStore(t, path, nil)
	got, err := s.List(ctx, nowhere, memory.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range got {
		if contents[m.ID] != m.Content {
			t.Errorf("memory %s came back as %q, want %q", m.ID, m.Content, contents[m.ID])
		}
	}
}

// The mark is about one file: a database created where a damaged one was
// removed starts unmarked.
func TestANewDatabaseIsNotMarkedByARemovedOne(t *testing.T) {
	path, _ := damagedStore(t, 50, "embeddings", 1)
	s := openStore(t, path, &wordHash{name: "h", dim: 16})
	if err := s.Verify(ctx); !errors.Is(err, memory.ErrCorrupt) {
		t.Fatalf("verify a damaged file: %v", err)
	}
	s.Close()
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(path + suffix)
	}
	s = openStore(t, path, &wordHash{name: "h", dim: 16})
	if s.Damaged() != "" {
		t.Fatalf("a new database carries the old one's mark: %q", s.Damaged())
	}
	add(t, s, nowhere, memory.ScopeUser, "a fact in the new database")
}
