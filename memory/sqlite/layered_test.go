package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/acolyte-dev/acolyte/internal/flock"
	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/sqlite"
)

// layeredStore opens a store whose embedder is layered: a model and an
// instant embedder that place words differently, so each one's vectors
// are told apart by their model name.
func layeredStore(t *testing.T, path string) (*sqlite.Store, *wordHash, *wordHash) {
	t.Helper()
	model, instant := &wordHash{name: "model", dim: 64}, &wordHash{name: "instant", dim: 32}
	return openStore(t, path, memory.WithInstant(model, instant)), model, instant
}

func facts(n int) []memory.Memory {
	ms := make([]memory.Memory, n)
	for i := range ms {
		ms[i] = memory.Memory{ID: fmt.Sprintf("f%03d", i), Kind: memory.KindStored, Content: fmt.Sprintf("fact %d: the deploy job number %d runs on runner %d", i, i, i%7)}
	}
	return ms
}

func pending(t *testing.T, s *sqlite.Store) int {
	t.Helper()
	n, err := s.Pending(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func searchVectors(t *testing.T, s *sqlite.Store, vis memory.Visibility, text string) string {
	t.Helper()
	rs, err := s.Search(ctx, vis, memory.Query{Text: text, NoFloor: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) == 0 {
		t.Fatalf("search %q found nothing", text)
	}
	return rs[0].Vectors
}

// A remember is small enough to get the model's vector before it returns:
// nothing is left for later, and search runs in the model's space.
func TestSmallWriteGetsTheModelsVectorAtOnce(t *testing.T) {
	s, model, instant := layeredStore(t, "")
	if _, err := s.Add(ctx, nowhere, memory.Draft{Scope: memory.ScopeUser, Kind: memory.KindStored, Content: "The staging database is reached through bastion-2"}); err != nil {
		t.Fatal(err)
	}
	if n := pending(t, s); n != 0 || s.LeftPending() {
		t.Fatalf("after one remember: %d pending, LeftPending %v; want none", n, s.LeftPending())
	}
	vecs, err := s.VectorModels(ctx, nowhere)
	if err != nil {
		t.Fatal(err)
	}
	if got := vecs[memory.ScopeUser]; got[model.Model()] != 1 || got[instant.Model()] != 1 {
		t.Fatalf("vectors by model %v; want one of each", got)
	}
	if got := searchVectors(t, s, nowhere, "staging database"); got != model.Model() {
		t.Fatalf("search ranked by %q; want the model's vectors", got)
	}
}

// An import of many memories returns with the instant vectors alone; until
// Fill makes the model's, search runs in the instant space, and says so.
// The model's vectors of a memory whose content then changes are not used.
func TestLargeImportSearchesInstantVectorsUntilFilled(t *testing.T) {
	s, model, instant := layeredStore(t, "")
	vis := memory.Visibility{ProjectKey: "p"}
	if _, err := s.ReplaceScope(ctx, memory.ScopeProject, "p", facts(40)); err != nil {
		t.Fatal(err)
	}
	if model.calls != 0 {
		t.Fatalf("the import embedded %d texts with the model; want none before it returns", model.calls)
	}
	if n := pending(t, s); n != 40 || !s.LeftPending() {
		t.Fatalf("after importing 40: %d pending, LeftPending %v", n, s.LeftPending())
	}
	if got := searchVectors(t, s, vis, "deploy job runner"); got != instant.Model() {
		t.Fatalf("before the fill, search ranked by %q; want the instant vectors", got)
	}
	var seen []int
	n, err := s.Fill(ctx, func(done, total int) { seen = append(seen, done) })
	if err != nil || n != 40 {
		t.Fatalf("Fill = %d, %v; want 40", n, err)
	}
	if len(seen) == 0 || seen[len(seen)-1] != 40 {
		t.Errorf("Fill reported progress %v; want it to end at 40", seen)
	}
	if n := pending(t, s); n != 0 {
		t.Fatalf("%d pending after Fill", n)
	}
	if got := searchVectors(t, s, vis, "deploy job runner"); got != model.Model() {
		t.Fatalf("after the fill, search ranked by %q; want the model's vectors", got)
	}

	// Ten memories change in one import, too many to embed at once: their
	// model vectors are of the old text, so search goes back to instant.
	changed := facts(40)
	for i := range 10 {
		changed[i].Content += " (moved to the new cluster)"
	}
	if _, err := s.ReplaceScope(ctx, memory.ScopeProject, "p", changed); err != nil {
		t.Fatal(err)
	}
	if n := pending(t, s); n != 10 {
		t.Fatalf("%d pending after 10 changed; want 10", n)
	}
	if got := searchVectors(t, s, vis, "new cluster"); got != instant.Model() {
		t.Fatalf("with stale model vectors, search ranked by %q; want the instant vectors", got)
	}
}

// A fill stopped half way (the process killed, here its context ended
// after the first batch) keeps what it committed, and the next one, from
// another Store on the same file, makes only the rest.
func TestFillInterruptedGoesOnWhereItStopped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "acolyte.db")
	s, _, _ := layeredStore(t, path)
	if _, err := s.ReplaceScope(ctx, memory.ScopeProject, "p", facts(150)); err != nil {
		t.Fatal(err)
	}
	stop, cancel := context.WithCancel(ctx)
	n, err := s.Fill(stop, func(done, total int) { cancel() })
	if err == nil || n != 64 {
		t.Fatalf("interrupted Fill = %d, %v; want 64 and the context's error", n, err)
	}
	if left := pending(t, s); left != 150-64 {
		t.Fatalf("%d pending after an interrupted fill; want %d", left, 150-64)
	}
	s.Close()

	again, model, _ := layeredStore(t, path)
	if n, err := again.Fill(ctx, nil); err != nil || n != 150-64 {
		t.Fatalf("second Fill = %d, %v; want the %d left", n, err, 150-64)
	}
	if model.calls != 150-64 {
		t.Fatalf("second Fill embedded %d texts; want only the %d left", model.calls, 150-64)
	}
}

// Only one process fills a database at a time: another's lock makes
// FillInBackground return without embedding anything.
func TestFillInBackgroundLeavesItToTheProcessAlreadyFilling(t *testing.T) {
	path := filepath.Join(t.TempDir(), "acolyte.db")
	s, model, _ := layeredStore(t, path)
	if _, err := s.ReplaceScope(ctx, memory.ScopeProject, "p", facts(20)); err != nil {
		t.Fatal(err)
	}
	held, err := os.OpenFile(path+"-fill.lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := flock.TryLock(held); !ok || err != nil {
		t.Fatalf("TryLock = %v, %v", ok, err)
	}
	if !s.Filling() {
		t.Fatal("Filling = false while another process holds the lock")
	}
	if n, ran, err := s.FillInBackground(ctx, nil); ran || n != 0 || err != nil || model.calls != 0 {
		t.Fatalf("FillInBackground beside another filler = %d, %v, %v (%d embedded); want it to leave the work", n, ran, err, model.calls)
	}
	held.Close()
	if s.Filling() {
		t.Fatal("Filling = true once the lock is free")
	}
	if n, ran, err := s.FillInBackground(ctx, nil); !ran || n != 20 || err != nil {
		t.Fatalf("FillInBackground once the lock is free = %d, %v, %v; want 20", n, ran, err)
	}
}
