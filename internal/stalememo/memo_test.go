package stalememo

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/embed/static"
	"github.com/acolyte-dev/acolyte/memory/sqlite"
)

// counting answers by the files' content ("changed" when a file holds
// "new"), counting the memories it is asked about.
type counting struct {
	root  string
	asked int
}

func (c *counting) stale(_ context.Context, mems []memory.Memory) (map[string]memory.Staleness, error) {
	out := map[string]memory.Staleness{}
	for _, m := range mems {
		c.asked++
		var s memory.Staleness
		for _, p := range m.Paths {
			b, err := os.ReadFile(filepath.Join(c.root, p))
			switch {
			case err != nil:
				s.Deleted = append(s.Deleted, p)
			case string(b) == "new":
				s.Changed = append(s.Changed, p)
			}
		}
		if len(s.Changed)+len(s.Deleted) > 0 {
			out[m.ID] = s
		}
	}
	return out, nil
}

func TestMemoAsksOnlyAboutFilesThatMoved(t *testing.T) {
	root := t.TempDir()
	old := time.Now().Add(-time.Hour)
	write := func(name, content string, at time.Time) {
		t.Helper()
		path := filepath.Join(root, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, at, at); err != nil {
			t.Fatal(err)
		}
	}
	write("a.go", "old", old)
	write("b.go", "old", old)
	c := &counting{root: root}
	m := New(root, c.stale)
	mems := []memory.Memory{
		{ID: "a", Commit: "c1", Paths: []string{"a.go"}},
		{ID: "b", Commit: "c1", Paths: []string{"b.go"}},
	}
	ask := func(want map[string]string, wantAsked int) {
		t.Helper()
		c.asked = 0
		got, err := m.Stale(context.Background(), mems)
		if err != nil {
			t.Fatal(err)
		}
		if c.asked != wantAsked {
			t.Errorf("asked about %d memories, want %d", c.asked, wantAsked)
		}
		for _, id := range []string{"a", "b"} {
			s, ok := got[id]
			var what string
			switch {
			case !ok:
				what = "fresh"
			case len(s.Changed) > 0:
				what = "changed"
			case len(s.Deleted) > 0:
				what = "deleted"
			}
			if what != want[id] {
				t.Errorf("%s: %s, want %s", id, what, want[id])
			}
		}
	}
	ask(map[string]string{"a": "fresh", "b": "fresh"}, 2)
	ask(map[string]string{"a": "fresh", "b": "fresh"}, 0) // kept
	write("a.go", "new", old.Add(time.Minute))            // changed, an older mtime than now still moves the stamp
	ask(map[string]string{"a": "changed", "b": "fresh"}, 1)
	ask(map[string]string{"a": "changed", "b": "fresh"}, 0)
	if err := os.Remove(filepath.Join(root, "b.go")); err != nil {
		t.Fatal(err)
	}
	ask(map[string]string{"a": "changed", "b": "deleted"}, 1)
	ask(map[string]string{"a": "changed", "b": "deleted"}, 0)
	// A file written just now may change again within its mtime's tick:
	// its answer is not kept.
	write("b.go", "old", time.Now())
	ask(map[string]string{"a": "changed", "b": "fresh"}, 1)
	ask(map[string]string{"a": "changed", "b": "fresh"}, 1)
	// Another commit is another question.
	mems[0].Commit = "c2"
	ask(map[string]string{"a": "changed", "b": "fresh"}, 2)
}

// oneByOne is a State that reads and writes a value at a time.
type oneByOne struct{ State }

// A CLI search is a process of its own: a memo over the same store keeps
// what an earlier one asked, while the files stay as they were, whether
// the store reads and writes many values at once or one at a time.
func TestMemoKeepsAnswersInState(t *testing.T) {
	root := t.TempDir()
	old := time.Now().Add(-time.Hour)
	for _, name := range []string{"a.go", "b.go"} {
		path := filepath.Join(root, name)
		if err := os.WriteFile(path, []byte("new"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, old, old); err != nil {
			t.Fatal(err)
		}
	}
	for _, batch := range []bool{true, false} {
		store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "acolyte.db"), static.New())
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		var state State = store
		if !batch {
			state = oneByOne{store}
		}
		mems := []memory.Memory{{ID: "a", Commit: "c1", Paths: []string{"a.go"}}, {ID: "b", Commit: "c1", Paths: []string{"b.go"}}}
		for i, wantAsked := range []int{2, 0} {
			c := &counting{root: root}
			m := New(root, c.stale)
			m.State = state
			got, err := m.Stale(context.Background(), mems)
			if err != nil {
				t.Fatal(err)
			}
			if c.asked != wantAsked || len(got["a"].Changed) != 1 || len(got["b"].Changed) != 1 {
				t.Errorf("batch %v, process %d: asked %d, want %d; answer %+v", batch, i, c.asked, wantAsked, got)
			}
		}
		// Another root is another checkout.
		c := &counting{root: root}
		m := New(root+"/", c.stale)
		m.State = state
		if _, err := m.Stale(context.Background(), mems); err != nil || c.asked != 2 {
			t.Errorf("batch %v, another root: asked %d, want 2 (%v)", batch, c.asked, err)
		}
	}
}

// transactions counts the batches written to a store.
type transactions struct {
	*sqlite.Store
	n int
}

func (s *transactions) SetStates(ctx context.Context, values map[string]string) error {
	s.n++
	return s.Store.SetStates(ctx, values)
}

// What the wrapped check keeps through NewKeeping's state reaches the
// store with the memo's own answers, in one batch, and reads back
// through the same state.
func TestNewKeepingWritesTheChecksFindsWithItsAnswers(t *testing.T) {
	root := t.TempDir()
	old := time.Now().Add(-time.Hour)
	path := filepath.Join(root, "a.go")
	if err := os.WriteFile(path, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "acolyte.db"), static.New())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	counted := &transactions{Store: store}
	c := &counting{root: root}
	var readBack string
	m := NewKeeping(root, counted, func(kept BatchState) memory.StaleFunc {
		return func(ctx context.Context, mems []memory.Memory) (map[string]memory.Staleness, error) {
			got, _ := kept.GetStates(ctx, []string{"blob:c1:a.go"})
			readBack = got["blob:c1:a.go"]
			if err := kept.SetStates(ctx, map[string]string{"blob:c1:a.go": "found"}); err != nil {
				return nil, err
			}
			return c.stale(ctx, mems)
		}
	})
	mems := []memory.Memory{{ID: "a", Commit: "c1", Paths: []string{"a.go"}}}
	if got, err := m.Stale(context.Background(), mems); err != nil || len(got["a"].Changed) != 1 {
		t.Fatalf("Stale = %+v, %v", got, err)
	}
	if counted.n != 1 {
		t.Errorf("%d batches written, want the check's find and the answer in one", counted.n)
	}
	if v, err := store.GetState(context.Background(), "blob:c1:a.go"); err != nil || v != "found" {
		t.Errorf("the check's find in the store: %q, %v", v, err)
	}
	// Another process's memo reads the find back through its state.
	c2 := &counting{root: root}
	NewKeeping(root, store, func(kept BatchState) memory.StaleFunc {
		return func(ctx context.Context, mems []memory.Memory) (map[string]memory.Staleness, error) {
			got, _ := kept.GetStates(ctx, []string{"blob:c1:a.go"})
			readBack = got["blob:c1:a.go"]
			return c2.stale(ctx, mems)
		}
	}).Stale(context.Background(), []memory.Memory{{ID: "b", Commit: "c1", Paths: []string{"a.go"}}})
	if readBack != "found" {
		t.Errorf("the next check read %q back, want what the first kept", readBack)
	}
}
