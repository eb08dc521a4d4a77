package gitsync

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/gitsync/internal/acolytedir"
	"github.com/acolyte-dev/acolyte/gitsync/internal/project"
	"github.com/acolyte-dev/acolyte/internal/gittest"
	"github.com/acolyte-dev/acolyte/memory"
)

// dropCaches deletes every cache caches.go lists: the folder of the
// clone's on-disk caches and the import state the index keeps.
func dropCaches(t *testing.T, w *Checkout) {
	t.Helper()
	if err := os.RemoveAll(project.CacheDir(&w.Repo.Repo)); err != nil {
		t.Fatal(err)
	}
	if err := w.ws.Store.SetState(t.Context(), w.ws.StateKey(), ""); err != nil {
		t.Fatal(err)
	}
}

// cacheSnapshot is what a user relies on after a step: the memories the
// checkout's files hold, the project memories the index finds, and what
// check says. Memories are named by content, kind, topic and source, not
// by id or time: the two clones of the test make their own ids.
func cacheSnapshot(t *testing.T, w *Checkout) string {
	t.Helper()
	describe := func(mems []memory.Memory) []string {
		var out []string
		for _, m := range mems {
			out = append(out, fmt.Sprintf("%s|%s|%s|%s", m.Kind, m.Topic, m.Source, m.Content))
		}
		slices.Sort(out)
		return out
	}
	read, err := project.ReadProject(w.Repo.Root)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := acolytedir.ReadTombstones(w.Repo.Root)
	if err != nil {
		t.Fatal(err)
	}
	kept, _ := format.Forget(read.Decoded.Memories, ts.List)
	listed, err := w.List(t.Context(), memory.Filter{Scope: memory.ScopeProject})
	if err != nil {
		t.Fatal(err)
	}
	report, err := Check(w.Repo.Root)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("files:\n%s\nindex:\n%s\ncheck ok: %v %v\n",
		strings.Join(describe(kept), "\n"), strings.Join(describe(listed), "\n"), report.OK, report.Problems)
}

// Every cache is derived, so a clone that loses all of them before every
// step of an ordinary day (remember, edit, forget, a rule committed
// through the hook, a change by another process, a branch merged back)
// ends each step where a clone that kept them does, in either layout.
func TestDroppingEveryCacheChangesNothing(t *testing.T) {
	t.Parallel() // its own repositories and index, hundreds of ms to seconds of git and SQLite
	for _, c := range []struct {
		name string
		n    int
	}{{"one file", 20}, {"shards", format.SplitAt + 20}} {
		t.Run(c.name, func(t *testing.T) {
			twin := func() (*Checkout, []memory.Memory) {
				w, mems := splitWorkspace(t, c.n)
				gittest.WriteFiles(t, w.Repo.Root, map[string]string{"AGENTS.md": "- Run the tests with go test.\n"})
				runGit(t, w.Repo.Root, "add", "-A")
				if _, err := w.RunHook(t.Context(), "pre-commit", nil); err != nil {
					t.Fatal(err)
				}
				runGit(t, w.Repo.Root, "commit", "-qm", "start")
				return w, mems
			}
			cached, mems := twin()
			dropped, _ := twin()
			ctx := t.Context()
			commit := func(w *Checkout, msg string) error {
				runGit(t, w.Repo.Root, "add", "-A")
				if _, err := w.RunHook(ctx, "pre-commit", nil); err != nil {
					return err
				}
				runGit(t, w.Repo.Root, "commit", "-qm", msg)
				return nil
			}
			steps := []struct {
				name string
				do   func(w *Checkout) error
			}{
				{"remember", func(w *Checkout) error {
					_, err := w.Add(ctx, memory.Draft{Scope: memory.ScopeProject, Kind: memory.KindStored, Content: "Releases are cut on Thursdays."})
					return err
				}},
				{"edit", func(w *Checkout) error {
					_, err := w.Edit(ctx, mems[3].ID, memory.Revision{Content: "fact number 3, revised by hand", Topic: "tests"})
					return err
				}},
				{"forget", func(w *Checkout) error {
					_, err := w.Remove(ctx, mems[5].ID)
					return err
				}},
				{"rule committed through the hook", func(w *Checkout) error {
					gittest.WriteFiles(t, w.Repo.Root, map[string]string{"AGENTS.md": "- Run the tests with go test -race.\n- Wrap errors with %w.\n"})
					return commit(w, "rules")
				}},
				{"a change by another process", func(w *Checkout) error {
					return Update(ctx, w.Repo.Root, func(ms []memory.Memory) ([]memory.Memory, error) {
						for i := range ms {
							if ms[i].ID == mems[7].ID {
								ms[i].Content = "fact number 7, changed by another process"
							}
						}
						return ms, nil
					})
				}},
				{"a branch merged back", func(w *Checkout) error {
					home := strings.TrimSpace(runGit(t, w.Repo.Root, "rev-parse", "--abbrev-ref", "HEAD"))
					runGit(t, w.Repo.Root, "checkout", "-qb", "side")
					if _, err := w.Add(ctx, memory.Draft{Scope: memory.ScopeProject, Kind: memory.KindStored, Content: "The side branch tried a new cache."}); err != nil {
						return err
					}
					if err := commit(w, "side"); err != nil {
						return err
					}
					runGit(t, w.Repo.Root, "checkout", "-q", home)
					if _, err := w.RunHook(ctx, "post-checkout", []string{"a", "b", "1"}); err != nil {
						return err
					}
					runGit(t, w.Repo.Root, "merge", "-q", "--no-edit", "side")
					_, err := w.RunHook(ctx, "post-merge", []string{"0"})
					return err
				}},
			}
			for _, st := range steps {
				if err := st.do(cached); err != nil {
					t.Fatalf("%s, with the caches: %v", st.name, err)
				}
				dropCaches(t, dropped)
				if err := st.do(dropped); err != nil {
					t.Fatalf("%s, without the caches: %v", st.name, err)
				}
				want := cacheSnapshot(t, cached)
				dropCaches(t, dropped)
				if got := cacheSnapshot(t, dropped); got != want {
					t.Fatalf("%s: without the caches\n%s\nwith them\n%s", st.name, got, want)
				}
			}
			if _, err := os.Stat(filepath.Join(project.CacheDir(&cached.Repo.Repo), "verified.json")); err != nil && c.n <= format.SplitAt {
				t.Errorf("the clone that kept its caches has no pre-commit record, so the test did not exercise it: %v", err)
			}
		})
	}
}
