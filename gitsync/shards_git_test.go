package gitsync

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// stagedNames is what the next commit changes under .acolyte/.
func stagedNames(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(runGit(t, root, "diff", "--cached", "--name-only")), "\n") {
		if strings.HasPrefix(l, format.Dir+"/") {
			out = append(out, l)
		}
	}
	return out
}

// The pre-commit hook of a split project stages the shards its rules
// change, and no other memories file.
func TestPreCommitStagesOnlyTheShardsARuleChanges(t *testing.T) {
	w, _ := splitWorkspace(t, format.SplitAt+1)
	root := w.Repo.Root
	runGit(t, root, "add", "-A")
	runGit(t, root, "commit", "-qm", "split")

	gittest.WriteFiles(t, root, map[string]string{"AGENTS.md": "- Run the tests with go test.\n"})
	runGit(t, root, "add", "AGENTS.md")
	res, err := w.RunHook(t.Context(), "pre-commit", nil)
	if err != nil || !res.Staged {
		t.Fatalf("pre-commit: %+v, %v", res, err)
	}
	rule := res.Changes[0]
	want := []string{format.Dir + "/" + format.ShardFile(format.ShardOf(rule.ID))}
	if got := stagedNames(t, root); !slices.Equal(got, want) {
		t.Errorf("staged %v, want %v", got, want)
	}
	staged := runGit(t, root, "show", ":"+want[0])
	if !strings.Contains(staged, "Run the tests with go test.") {
		t.Errorf("the staged shard lacks the rule")
	}
	runGit(t, root, "commit", "-qm", "rule")
	if rep, err := Check(root); err != nil || !rep.OK {
		t.Errorf("check after the commit: %+v, %v", rep.Problems, err)
	}

	// A changed rule is a line removed from one shard and one added,
	// perhaps to another.
	gittest.WriteFiles(t, root, map[string]string{"AGENTS.md": "- Run the tests with go test -race.\n"})
	runGit(t, root, "add", "AGENTS.md")
	res, err = w.RunHook(t.Context(), "pre-commit", nil)
	if err != nil || !res.Staged {
		t.Fatalf("second pre-commit: %+v, %v", res, err)
	}
	var shards []string
	for _, c := range res.Changes {
		shards = append(shards, format.Dir+"/"+format.ShardFile(format.ShardOf(c.ID)))
	}
	slices.Sort(shards)
	if got := stagedNames(t, root); !slices.Equal(got, slices.Compact(shards)) {
		t.Errorf("staged %v, want %v", got, shards)
	}
}

// A secret put in a staged shard by hand blocks the commit, naming the
// shard, on every road a shard reaches the index.
func TestPreCommitRefusesASecretInAStagedShard(t *testing.T) {
	w, mems := splitWorkspace(t, format.SplitAt+1)
	root := w.Repo.Root
	// Committed through the hook first, so that the fast path, which
	// reads only the files it has not verified, is the one to refuse.
	runGit(t, root, "add", "-A")
	if _, err := w.RunHook(t.Context(), "pre-commit", nil); err != nil {
		t.Fatal(err)
	}
	runGit(t, root, "commit", "-qm", "split")
	if _, ok := (precommit.StagedShards{Shards: project.Shards{Root: w.Repo.Root}}).LoadVerifiedShards(w.ws); !ok {
		t.Fatal("no verified files after the first commit")
	}
	target := mems[11]
	rel := format.Dir + "/" + format.ShardFile(format.ShardOf(target.ID))
	path := filepath.Join(root, filepath.FromSlash(rel))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	token := secretstest.Credentials[0].Content
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), target.Content, strings.ReplaceAll(strings.ReplaceAll(token, `\`, `\\`), `"`, `\"`), 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	runGit(t, root, "add", "-A")
	res, err := w.RunHook(t.Context(), "pre-commit", nil)
	if !errors.Is(err, ErrRefused) {
		t.Fatalf("pre-commit let a secret through: %+v, %v", res, err)
	}
	if len(res.Refused) != 1 || res.Refused[0].File != rel || res.Refused[0].Line == 0 {
		t.Errorf("refusal %+v, want one naming %s and its line", res.Refused, rel)
	}
	for _, r := range res.Refused {
		if strings.Contains(r.Message, token) {
			t.Errorf("the refusal repeats the secret: %s", r.Message)
		}
	}
}

// Merges of a split project, with acolyte's driver and with the union
// fallback: each shard merges as the one file does, by id.
func TestASplitProjectMergesShardByShard(t *testing.T) {
	for _, driver := range []bool{true, false} {
		t.Run(map[bool]string{true: "driver", false: "union"}[driver], func(t *testing.T) {
			var root string
			if driver {
				root = newDriverRepo(t)
			} else {
				root = t.TempDir()
				runGit(t, root, "init", "-q", "-b", "main")
			}
			mems := storedMemories(format.SplitAt + 1)
			if err := os.MkdirAll(filepath.Join(root, format.Dir), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := format.WriteFile(format.MemoriesPath(root), mems); err != nil {
				t.Fatal(err)
			}
			w := workspaceAt(t, root)
			if _, err := w.Sync(t.Context()); err != nil {
				t.Fatal(err)
			}
			runGit(t, root, "add", "-A")
			runGit(t, root, "commit", "-qm", "split")
			if !driver {
				attrs, _ := os.ReadFile(filepath.Join(root, format.Dir, acolytedir.AttributesFile))
				if !strings.Contains(string(attrs), project.ShardsUnionAttribute) {
					t.Fatalf("no union fallback for the shards: %q", attrs)
				}
			}
			ctx := t.Context()
			runGit(t, root, "checkout", "-q", "-b", "feature")
			addedThere, err := w.Add(ctx, memory.Draft{Scope: memory.ScopeProject, Kind: memory.KindStored, Content: "added on feature"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Edit(ctx, mems[1].ID, memory.Revision{Content: "edited on feature"}); err != nil {
				t.Fatal(err)
			}
			runGit(t, root, "commit", "-qam", "feature")
			runGit(t, root, "checkout", "-q", "main")
			time.Sleep(5 * time.Millisecond) // ids and edits a millisecond apart
			addedHere, err := w.Add(ctx, memory.Draft{Scope: memory.ScopeProject, Kind: memory.KindStored, Content: "added on main"})
			if err != nil {
				t.Fatal(err)
			}
			// Forgotten on main from the shard feature edited, so that
			// both sides change one shard.
			k := slices.IndexFunc(mems[2:], func(m memory.Memory) bool { return format.ShardOf(m.ID) == format.ShardOf(mems[1].ID) }) + 2
			gone := mems[k]
			if _, err := w.Remove(ctx, gone.ID); err != nil {
				t.Fatal(err)
			}
			runGit(t, root, "add", "-A")
			runGit(t, root, "commit", "-qm", "main")
			runGit(t, root, "merge", "-q", "--no-edit", "feature")

			got := projectContents(t, w)
			for _, want := range []string{addedThere.Memory.Content, addedHere.Memory.Content} {
				if !slices.Contains(got, want) {
					t.Errorf("the merge lost %q", want)
				}
			}
			if slices.Contains(got, gone.Content) {
				t.Errorf("the merge brought back the forgotten %s", gone.ID)
			}
			if !slices.Contains(got, "edited on feature") {
				t.Errorf("the merge lost the edit made on feature")
			}
			if len(got) != len(mems)+1 {
				t.Errorf("%d memories after the merge, want %d", len(got), len(mems)+1)
			}
			if driver {
				// With the driver, the merge alone leaves what check
				// passes: no sync by hand (issue 37).
				if rep, err := Check(root); err != nil || !rep.OK {
					t.Errorf("check after a merge with the driver: %+v, %v", rep.Problems, err)
				}
			}
			if _, err := w.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			if rep, err := Check(root); err != nil || !rep.OK {
				t.Errorf("check after merge and sync: %+v, %v", rep.Problems, err)
			}
		})
	}
}

// The pre-commit hook's fast path for a split project stages exactly what
// its full path stages, for each kind of change a commit brings, reading
// only the shards it must.
func TestPreCommitShardsStagesWhatTheFullPathStages(t *testing.T) {
	clock := time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
	twin := func() *Checkout {
		w, _ := splitWorkspace(t, format.SplitAt+1)
		w.ws.Settle = 0
		w.ws.Now = func() time.Time { return clock }
		gittest.WriteFiles(t, w.Repo.Root, map[string]string{"AGENTS.md": "- Run the tests with go test.\n- Wrap errors with %w.\n"})
		runGit(t, w.Repo.Root, "add", "-A")
		if res, err := w.RunHook(t.Context(), "pre-commit", nil); err != nil || !res.Staged {
			t.Fatalf("first pre-commit: %+v, %v", res, err)
		}
		runGit(t, w.Repo.Root, "commit", "-qm", "rules")
		if _, ok := (precommit.StagedShards{Shards: project.Shards{Root: w.Repo.Root}}).LoadVerifiedShards(w.ws); !ok {
			t.Fatal("the full path recorded no verified files")
		}
		return w
	}
	fast, full := twin(), twin()
	mems := storedMemories(format.SplitAt + 1)
	steps := []struct {
		name   string
		change func(w *Checkout)
	}{
		{"a rule changed", func(w *Checkout) {
			gittest.WriteFiles(t, w.Repo.Root, map[string]string{"AGENTS.md": "- Run the tests with go test -race.\n- Wrap errors with %w.\n"})
		}},
		{"a line added to a shard by hand", func(w *Checkout) {
			m := storedMemories(1)[0]
			m.ID, m.Content = "01K00000000000000000000001", "added to its shard by hand"
			rel := format.ShardFile(format.ShardOf(m.ID))
			path := filepath.Join(w.Repo.Root, format.Dir, rel)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			ms, err := format.Decode(rel, data)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, format.Encode(append(ms, m)), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"a memory forgotten", func(w *Checkout) {
			m := mems[100]
			m.Scope, m.ScopeKey = memory.ScopeProject, w.Repo.Root
			if err := (project.Shards{Root: w.Repo.Root}).Remove(t.Context(), w.ws, []memory.Memory{m}, clock); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, step := range steps {
		for _, w := range []*Checkout{fast, full} {
			step.change(w)
			runGit(t, w.Repo.Root, "add", "-A")
		}
		os.Remove((precommit.StagedShards{Shards: project.Shards{Root: full.Repo.Root}}).VerifiedShardsPath(full.ws))
		ix, err := git.ReadIndex(t.Context(), &fast.Repo.Repo)
		if err != nil {
			t.Fatal(err)
		}
		d, err := derive.From(ix)
		if err != nil {
			t.Fatal(err)
		}
		_, ok, err := (precommit.StagedShards{Shards: project.Shards{Root: fast.Repo.Root}}).PreCommitShards(t.Context(), fast.ws, ix, d, HookResult{})
		ix.Close()
		if err != nil || !ok {
			t.Fatalf("%s: the fast path did not run: %v", step.name, err)
		}
		if _, err := full.RunHook(t.Context(), "pre-commit", nil); err != nil {
			t.Fatalf("%s: full path: %v", step.name, err)
		}
		if a, b := runGit(t, fast.Repo.Root, "write-tree"), runGit(t, full.Repo.Root, "write-tree"); a != b {
			t.Fatalf("%s: the fast path staged another tree than the full path:\n%s", step.name,
				runGit(t, fast.Repo.Root, "diff", "--cached", "--stat"))
		}
		if a, b := worktreeMemories(t, fast.Repo.Root), worktreeMemories(t, full.Repo.Root); a != b {
			t.Fatalf("%s: the fast path left another worktree than the full path", step.name)
		}
		for _, w := range []*Checkout{fast, full} {
			runGit(t, w.Repo.Root, "commit", "-qm", step.name)
			if rep, err := Check(w.Repo.Root); err != nil || !rep.OK {
				t.Fatalf("%s: check after the commit: %+v, %v", step.name, rep.Problems, err)
			}
		}
	}
}

// worktreeMemories is every memories file of the worktree at root, by
// name, as one string.
func worktreeMemories(t *testing.T, root string) string {
	t.Helper()
	shards, _, err := acolytedir.ShardFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, rel := range append([]string{format.MemoriesFile, format.ForgottenFile}, shards...) {
		data, _ := os.ReadFile(filepath.Join(root, format.Dir, rel))
		b.WriteString(rel + "\n" + string(data))
	}
	return b.String()
}

// The worktree's sync after a commit changes the derived memories of a
// split project in their shards alone, from the index, as the full sync
// would.
func TestSyncShardsRewritesOnlyTheRulesShards(t *testing.T) {
	w, _ := splitWorkspace(t, format.SplitAt+1)
	ctx := t.Context()
	gittest.WriteFiles(t, w.Repo.Root, map[string]string{"AGENTS.md": "- Run the tests with go test.\n"})
	if _, err := w.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	before := worktreeMemories(t, w.Repo.Root)
	gittest.WriteFiles(t, w.Repo.Root, map[string]string{"AGENTS.md": "- Run the tests with go test -race.\n"})
	out, ok, err := (project.Shards{Root: w.Repo.Root}).SyncShards(ctx, w.ws, nil)
	if err != nil || !ok {
		t.Fatalf("syncShards did not run: %v", err)
	}
	if len(out.Changes) != 2 {
		t.Errorf("changes %+v, want the old rule removed and the new one added", out.Changes)
	}
	fast := worktreeMemories(t, w.Repo.Root)
	if fast == before {
		t.Fatal("nothing was written")
	}
	if _, err := w.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if worktreeMemories(t, w.Repo.Root) != fast {
		t.Error("the full sync changed what syncShards wrote")
	}
	got := projectContents(t, w)
	if !slices.Contains(got, "Run the tests with go test -race.") || slices.Contains(got, "Run the tests with go test.") {
		t.Errorf("the index does not follow the rule")
	}
	if rep, err := Check(w.Repo.Root); err != nil || !rep.OK {
		t.Errorf("check: %+v, %v", rep.Problems, err)
	}
}
