package gitsync

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/gitsync/derive"
	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/gitsync/internal/acolytedir"
	"github.com/acolyte-dev/acolyte/gitsync/internal/git"
	"github.com/acolyte-dev/acolyte/gitsync/internal/precommit"
	"github.com/acolyte-dev/acolyte/gitsync/internal/project"
	"github.com/acolyte-dev/acolyte/internal/gittest"
	"github.com/acolyte-dev/acolyte/internal/secrets/secretstest"
	"github.com/acolyte-dev/acolyte/memory"
)

// precommitRepo is a repository whose memories and rules the pre-commit
// hook committed once, so that it holds a verified blob, as after any
// commit made with the hook installed. Every run of it is identical, so two
// of them are twins.
func precommitRepo(t *testing.T) *Checkout {
	t.Helper()
	w := workspaceIn(t)
	w.ws.Settle = 0
	clock := time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
	w.ws.Now = func() time.Time { return clock }
	root := w.Repo.Root
	var mems []memory.Memory
	for i := range 40 {
		mems = append(mems, stored(fmt.Sprintf("01J%023d", 10*i), fmt.Sprintf("stored fact number %d", i), t0))
	}
	gittest.WriteFiles(t, root, map[string]string{
		"AGENTS.md":           "# Rules\n\n- Run the tests with go test.\n- Wrap errors with %w.\n",
		"docs/AGENTS.md":      "- Docs are written in British English.\n",
		".acolyte/seeds.json": `[{"content": "The project is a Go CLI."}]` + "\n",
	})
	commitMemories(t, root, "init", mems)
	if _, err := w.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	if res, err := w.RunHook(t.Context(), "pre-commit", nil); err != nil || !res.Staged {
		t.Fatalf("first pre-commit: %+v, %v", res, err)
	}
	runGit(t, root, "commit", "-qm", "rules")
	if _, ok := precommit.LoadVerified(w.ws); !ok {
		t.Fatal("the full path recorded no verified blob")
	}
	return w
}

// preCommitBy runs the hook's work as preCommit does, through the fast
// path when fast and the full path otherwise, and says whether the fast
// path did it.
func preCommitBy(t *testing.T, w *Checkout, fast bool) (HookResult, bool, error) {
	t.Helper()
	ix, err := git.ReadIndex(t.Context(), &w.Repo.Repo)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	d, err := derive.From(ix)
	if err != nil {
		t.Fatal(err)
	}
	res := HookResult{Warnings: d.Skipped, Refused: d.Refused}
	if len(d.Refused) > 0 {
		return res, false, ErrRefused
	}
	if fast {
		if res, ok, err := (precommit.StagedOneFile{OneFile: project.OneFile{Root: w.Repo.Root}}).PreCommitFast(t.Context(), w.ws, ix, d, res); ok || err != nil {
			return res, ok, err
		}
	}
	res, err = (precommit.StagedOneFile{OneFile: project.OneFile{Root: w.Repo.Root}}).PreCommitFull(t.Context(), w.ws, ix, d, res)
	return res, false, err
}

// hookOutcome is everything a pre-commit run leaves that a user or the
// next command sees.
type hookOutcome struct {
	Staged, Worktree, Forgotten string
	Changes                     []Change
	Restaged                    bool
	Warnings, Refused           []derive.Refusal
	Import                      memory.ReplaceStats
	Indexed                     []string
	Err                         string
}

func outcomeOf(t *testing.T, w *Checkout, res HookResult, err error) hookOutcome {
	t.Helper()
	root := w.Repo.Root
	o := hookOutcome{Changes: res.Changes, Restaged: res.Staged, Warnings: res.Warnings, Refused: res.Refused, Import: res.Import.ReplaceStats}
	if err != nil {
		o.Err = err.Error()
	}
	o.Staged, _ = tryGit(root, nil, "show", ":"+acolytedir.MemoriesRel)
	worktree, _ := os.ReadFile(format.MemoriesPath(root))
	forgotten, _ := os.ReadFile(format.ForgottenPath(root))
	o.Worktree, o.Forgotten = string(worktree), string(forgotten)
	if _, err := w.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	indexed, err := w.List(t.Context(), memory.Filter{Scope: memory.ScopeProject})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range indexed {
		// The index stamps a derived memory, which has no time, when it
		// takes it.
		if derive.IsDerived(m) {
			m.UpdatedAt = time.Time{}
		}
		o.Indexed = append(o.Indexed, m.ID+" "+m.UpdatedAt.Format(time.RFC3339Nano)+" "+m.Content)
	}
	slices.Sort(o.Indexed)
	return o
}

// The fast path of the pre-commit hook must leave exactly what the full
// path leaves: the same staged bytes, worktree file, index and report, on
// real repositories, for every kind of staged change; and take the full
// path itself wherever it cannot vouch for the staged file.
func TestPreCommitFastPathWritesWhatTheFullPathWrites(t *testing.T) {
	secret := secretstest.Credentials[0].Content
	cases := []struct {
		name          string
		fast, refused bool
		edit          func(t *testing.T, w *Checkout)
	}{
		{"one rule changed", true, false, func(t *testing.T, w *Checkout) {
			gittest.WriteFiles(t, w.Repo.Root, map[string]string{"AGENTS.md": "# Rules\n\n- Run the tests with go test -race.\n- Wrap errors with %w.\n"})
			runGit(t, w.Repo.Root, "add", "AGENTS.md")
		}},
		{"nothing changed", true, false, func(t *testing.T, w *Checkout) {}},
		{"rules added, removed and a seed changed", true, false, func(t *testing.T, w *Checkout) {
			gittest.WriteFiles(t, w.Repo.Root, map[string]string{
				"AGENTS.md":           "# Rules\n\n- Wrap errors with %w.\n- Never push on Fridays.\n",
				"api/AGENTS.md":       "- Handlers return JSON.\n",
				".acolyte/seeds.json": `[{"content": "The project is a Go CLI with a web UI."}]` + "\n",
			})
			os.Remove(filepath.Join(w.Repo.Root, "docs/AGENTS.md"))
			runGit(t, w.Repo.Root, "add", "-A", "AGENTS.md", "api", "docs", ".acolyte/seeds.json")
		}},
		{"a rule changed in the worktree only", true, false, func(t *testing.T, w *Checkout) {
			gittest.WriteFiles(t, w.Repo.Root, map[string]string{"AGENTS.md": "# Rules\n\n- Run the tests.\n"})
		}},
		{"a memory remembered and staged beside a rule", true, false, func(t *testing.T, w *Checkout) {
			remember(t, w, "the cache is warmed on startup")
			gittest.WriteFiles(t, w.Repo.Root, map[string]string{"AGENTS.md": "# Rules\n\n- Run the tests with make.\n"})
			runGit(t, w.Repo.Root, "add", "-A")
		}},
		{"a memory remembered, not staged", true, false, func(t *testing.T, w *Checkout) {
			remember(t, w, "the cache is warmed on startup")
			gittest.WriteFiles(t, w.Repo.Root, map[string]string{"AGENTS.md": "# Rules\n\n- Run the tests with make.\n"})
			runGit(t, w.Repo.Root, "add", "AGENTS.md")
		}},
		{"a hand edit an import recorded, staged", true, false, func(t *testing.T, w *Checkout) {
			replaceInFile(t, format.MemoriesPath(w.Repo.Root), "stored fact number 7", "stored fact number seven")
			w.Refresh(t.Context())
			runGit(t, w.Repo.Root, "add", "-A")
		}},
		{"a hand edit staged, not imported", false, false, func(t *testing.T, w *Checkout) {
			replaceInFile(t, format.MemoriesPath(w.Repo.Root), "stored fact number 7", "stored fact number seven")
			runGit(t, w.Repo.Root, "add", "-A")
		}},
		{"a memory forgotten and staged", false, false, func(t *testing.T, w *Checkout) {
			m := stored(fmt.Sprintf("01J%023d", 30), "stored fact number 3", t0)
			if err := w.ws.RemoveInPlace(t.Context(), []memory.Memory{m}, t0.Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
			runGit(t, w.Repo.Root, "add", "-A")
		}},
		{"a secret in a stored line the worktree adds", true, false, func(t *testing.T, w *Checkout) {
			m := stored("01K00000000000000000000000", secret, t0)
			appendLine(t, w, m)
			w.Refresh(t.Context())
		}},
		{"a secret in a staged line's topic", false, true, func(t *testing.T, w *Checkout) {
			m := stored("01K00000000000000000000000", "a harmless fact", t0)
			m.Topic = secret
			appendLine(t, w, m)
			runGit(t, w.Repo.Root, "add", "-A")
		}},
		{"a secret in a staged line's paths, the line imported first", false, true, func(t *testing.T, w *Checkout) {
			m := stored("01K00000000000000000000000", "a harmless fact", t0)
			m.Paths = []string{"docs/" + secret}
			appendLine(t, w, m)
			w.Refresh(t.Context())
			runGit(t, w.Repo.Root, "add", "-A")
		}},
		{"a staged line out of canonical form", false, false, func(t *testing.T, w *Checkout) {
			f, err := os.OpenFile(format.MemoriesPath(w.Repo.Root), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(f, `{"id":"01K00000000000000000000000", "kind":"stored","content":"spaced","source":"cli","created":"2025-03-01T12:00:00.123Z","updated":"2025-03-01T12:00:00.123Z"}`+"\n")
			f.Close()
			runGit(t, w.Repo.Root, "add", "-A")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var outcomes [2]hookOutcome
			for i, fast := range []bool{true, false} {
				w := precommitRepo(t)
				c.edit(t, w)
				res, tookFast, err := preCommitBy(t, w, fast)
				if fast && tookFast != c.fast {
					t.Errorf("fast path taken: %v, want %v", tookFast, c.fast)
				}
				if refused := errors.Is(err, ErrRefused); refused != c.refused {
					t.Errorf("refused: %v (%v), want %v", refused, err, c.refused)
				}
				outcomes[i] = outcomeOf(t, w, res, err)
				if err == nil {
					// The next checkout's import diffs against the shadow.
					assertShadowMakesTheFile(t, w, fmt.Sprintf("the hook (fast path %v)", fast))
				}
			}
			fastOut, fullOut := outcomes[0], outcomes[1]
			// The twins live in different directories.
			if fastOut.Err != "" || fullOut.Err != "" {
				fastOut.Err, fullOut.Err = filepath.Base(fastOut.Err), filepath.Base(fullOut.Err)
			}
			fv, wv := reflect.ValueOf(fastOut), reflect.ValueOf(fullOut)
			for i := range fv.NumField() {
				if a, b := fv.Field(i).Interface(), wv.Field(i).Interface(); !reflect.DeepEqual(a, b) {
					if as, ok := a.([]string); ok {
						bs := b.([]string)
						a = slices.DeleteFunc(slices.Clone(as), func(s string) bool { return slices.Contains(bs, s) })
						b = slices.DeleteFunc(slices.Clone(bs), func(s string) bool { return slices.Contains(as, s) })
					}
					t.Errorf("%s: the fast path left\n%+v\nthe full path\n%+v", fv.Type().Field(i).Name, a, b)
				}
			}
		})
	}
}

// remember is Add without its random id: the same in both twins.
func remember(t *testing.T, w *Checkout, content string) {
	t.Helper()
	m := stored("01K00000000000000000000001", content, t0)
	m.ScopeKey = w.Repo.Root
	if _, err := w.ws.AddInPlace(t.Context(), m); err != nil {
		t.Fatal(err)
	}
}

func replaceInFile(t *testing.T, path, old, new string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil || !bytes.Contains(data, []byte(old)) {
		t.Fatalf("%s holds no %q: %v", path, old, err)
	}
	if err := os.WriteFile(path, bytes.Replace(data, []byte(old), []byte(new), 1), 0o644); err != nil {
		t.Fatal(err)
	}
}

// appendLine writes m at the end of the worktree's memories file by hand,
// past acolyte's secret guard, as a hand edit or a merge could.
func appendLine(t *testing.T, w *Checkout, m memory.Memory) {
	t.Helper()
	path := format.MemoriesPath(w.Repo.Root)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	mems, err := format.Decode("", data)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, format.Encode(append(mems, m)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A record another build of acolyte wrote vouches for nothing: its secret
// detector may have let through what this one refuses.
func TestVerifiedBlobIsTiedToTheBuildThatChecked(t *testing.T) {
	w := precommitRepo(t)
	v, ok := precommit.LoadVerified(w.ws)
	if !ok || v.SHA256 == "" || len(v.Derived) != 4 {
		t.Fatalf("recorded %+v, %v", v, ok)
	}
	v.Build = "another build"
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(precommit.VerifiedPath(w.ws), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := precommit.LoadVerified(w.ws); ok {
		t.Error("a record of another build was trusted")
	}
	if _, fast, err := preCommitBy(t, w, true); fast || err != nil {
		t.Errorf("fast path taken: %v, %v", fast, err)
	}
	if v, ok := precommit.LoadVerified(w.ws); !ok || v.Build != precommit.BuildKey() {
		t.Errorf("the full path did not record its own check: %+v", v)
	}
}

// A stage that fails (here git cannot lock the index) fails the hook, and
// the blob it wrote is not recorded as verified: the next commit must not
// start from a blob the index never held. The worktree sync that ran beside
// it is kept, and the next run stages what it left.
func TestAFailedStageFailsTheHookAndIsNotVerified(t *testing.T) {
	w := precommitRepo(t)
	root := w.Repo.Root
	before, ok := precommit.LoadVerified(w.ws)
	if !ok {
		t.Fatal("no verified blob to start from")
	}
	stagedBefore := runGit(t, root, "show", ":"+acolytedir.MemoriesRel)
	gittest.WriteFiles(t, root, map[string]string{"AGENTS.md": "# Rules\n\n- Run the tests with go test -race.\n- Wrap errors with %w.\n"})
	runGit(t, root, "add", "AGENTS.md")
	lock := filepath.Join(root, ".git", "index.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, fast, err := preCommitBy(t, w, true)
	if !fast || err == nil || !bytes.Contains([]byte(err.Error()), []byte("index.lock")) {
		t.Fatalf("fast path %v, error %v; want the fast path to fail on the locked index", fast, err)
	}
	if got := runGit(t, root, "show", ":"+acolytedir.MemoriesRel); got != stagedBefore {
		t.Error("the staged memories changed though staging failed")
	}
	if v, _ := precommit.LoadVerified(w.ws); v.Memories != before.Memories {
		t.Errorf("verified blob moved to %s, which the index does not hold", v.Memories)
	}
	if data, err := os.ReadFile(format.MemoriesPath(root)); err != nil || !bytes.Contains(data, []byte("go test -race")) {
		t.Errorf("the worktree file lacks the new rule: %v", err)
	}

	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	if res, err := w.RunHook(t.Context(), "pre-commit", nil); err != nil || !res.Staged {
		t.Fatalf("pre-commit after the lock was gone: %+v, %v", res, err)
	}
	if got := runGit(t, root, "show", ":"+acolytedir.MemoriesRel); !bytes.Contains([]byte(got), []byte("go test -race")) {
		t.Error("the next run did not stage the new rule")
	}
}
