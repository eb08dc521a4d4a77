package gitsync

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/gitsync/derive"
	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/gitsync/internal/git"
	"github.com/acolyte-dev/acolyte/internal/gittest"
	"github.com/acolyte-dev/acolyte/memory"
)

// tryGit runs git like runGit but hands back the failure, for commits a
// hook may block.
func tryGit(dir string, env []string, args ...string) (string, error) {
	return gittest.Try(dir, env, args...)
}

func refusalFiles(fs []derive.Refusal) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.File)
	}
	slices.Sort(out)
	return out
}

func TestDeriveRefusesEachSecretAndInvalidRuleAlone(t *testing.T) {
	root := t.TempDir()
	long := strings.Repeat("word ", memory.MaxContentBytes/5+10)
	const key = "AKIAQX7NR3JTMB2W5KPL"
	const token = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"
	gittest.WriteFiles(t, root, map[string]string{
		"AGENTS.md":           "# P\n\n- First rule stays.\n- The CI key is " + key + " for deploys.\n- " + long + "\n- Last rule stays.\n",
		"sub/AGENTS.md":       "## " + token + " setup\n\n- Heading secrets leak through the source.\n",
		".acolyte/seeds.json": "[\n  \"Seed one stays.\",\n  \"the bot token is " + token + " here\",\n  42,\n  \"Seed four stays.\"\n]",
	})
	d, err := derive.Worktree(root)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, m := range d.Memories {
		kept = append(kept, m.Content)
	}
	slices.Sort(kept)
	if want := []string{"First rule stays.", "Last rule stays.", "Seed four stays.", "Seed one stays."}; !slices.Equal(kept, want) {
		t.Errorf("kept %q, want %q", kept, want)
	}
	var where []string
	for _, f := range d.Refused {
		where = append(where, strings.SplitN(f.Error(), ": ", 2)[0]+" "+f.Problem)
		for _, secret := range []string{key, token, "word word"} {
			if strings.Contains(f.Error(), secret) {
				t.Errorf("a refusal repeats the text: %v", f)
			}
		}
	}
	want := []string{"AGENTS.md:4 secret", "AGENTS.md:5 invalid", "sub/AGENTS.md:3 secret", ".acolyte/seeds.json:3:3 secret", ".acolyte/seeds.json:4:3 invalid"}
	slices.Sort(want)
	slices.Sort(where)
	if !slices.Equal(where, want) {
		t.Errorf("refused at %q, want %q", where, want)
	}
	if _, err := derive.Memories(root); err == nil {
		t.Error("Derive hid the refusals")
	}
	// check fails and points at the files, since sync would refuse them again.
	report, err := Check(root)
	if err != nil || report.OK || !strings.Contains(report.Fix, "fix AGENTS.md:4") {
		t.Errorf("check: %+v, %v", report, err)
	}
}

func TestDeriveIndexReadsWhatIsStaged(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "repo")
	gittest.WriteFiles(t, base, map[string]string{
		"outside/config":  "- OUTSIDE private line.\n",
		"repo/AGENTS.md":  "- Staged rule.\n",
		"repo/.gitignore": "ignored/\n",
	})
	runGit(t, root, "init", "-q")
	gittest.Symlink(t, "../outside/config", filepath.Join(root, "CLAUDE.md"))
	gittest.Symlink(t, "../AGENTS.md", filepath.Join(root, "sub", "AGENTS.md"))
	gittest.Symlink(t, "../sub/AGENTS.md", filepath.Join(root, "chain", "GEMINI.md"))
	gittest.Symlink(t, "../../outside/config", filepath.Join(root, "far", "AGENTS.md"))
	gittest.WriteFiles(t, root, map[string]string{"ignored/AGENTS.md": "- Ignored rule.\n"})
	runGit(t, root, "add", "-A")
	runGit(t, root, "add", "-f", "ignored/AGENTS.md")
	// Unstaged edits are not the commit's.
	gittest.WriteFiles(t, root, map[string]string{"AGENTS.md": "- Unstaged rule.\n", "GEMINI.md": "- Untracked rule.\n"})
	repo, err := Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	d, err := git.DeriveIndex(t.Context(), &repo.Repo)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, m := range d.Memories {
		kept = append(kept, m.Content)
	}
	slices.Sort(kept)
	if want := []string{"In chain/: Staged rule.", "In sub/: Staged rule.", "Staged rule."}; !slices.Equal(kept, want) {
		t.Errorf("derived %q, want %q", kept, want)
	}
	if files := refusalFiles(d.Skipped); !slices.Equal(files, []string{"CLAUDE.md", "far/AGENTS.md"}) {
		t.Errorf("skipped %v", files)
	}
}

func TestAddRefusesRulesAndSeedsByHand(t *testing.T) {
	w := workspaceIn(t)
	for _, k := range []memory.Kind{memory.KindRule, memory.KindSeed} {
		_, err := w.Add(t.Context(), memory.Draft{Content: "Always run go vet first.", Scope: memory.ScopeProject, Kind: k})
		if !errors.Is(err, ErrDerivedKind) || !strings.Contains(err.Error(), "acolyte sync") {
			t.Errorf("%s: %v", k, err)
		}
	}
	if _, err := os.Stat(format.MemoriesPath(w.Repo.Root)); !errors.Is(err, os.ErrNotExist) {
		t.Error("a refused memory reached the file")
	}
	if _, err := w.Add(t.Context(), memory.Draft{Content: "Always run go vet first.", Scope: memory.ScopeProject, Kind: memory.KindStored}); err != nil {
		t.Error(err)
	}
}

// The pre-commit hook deletes only what it derives: a stored memory, an
// observation and an imported seed in the staged file stay, and one only in
// the worktree file stays there, out of the commit.
func TestPreCommitDeletesOnlyWhatItDerives(t *testing.T) {
	w := workspaceIn(t)
	root := w.Repo.Root
	kept := []memory.Memory{
		stored("01J0000000000000000000000A", "a stored fact", t0),
		{ID: "01J0000000000000000000000B", Kind: memory.KindObservation, Content: "an observation", UpdatedAt: t0},
		{ID: "s-0000000000000001", Kind: memory.KindSeed, Content: "An imported seed.", Source: derive.ImportedSource("seeds.json")},
		{ID: "r-0000000000000001", Kind: memory.KindRule, Content: "A rule AGENTS.md no longer has.", Source: "AGENTS.md"},
	}
	gittest.WriteFiles(t, root, map[string]string{"AGENTS.md": "- Run make test.\n"})
	commitMemories(t, root, "init", kept)
	worktreeOnly := stored("01J0000000000000000000000C", "remembered, not staged", t0)
	if err := format.WriteFile(format.MemoriesPath(root), append(slices.Clone(kept), worktreeOnly)); err != nil {
		t.Fatal(err)
	}
	gittest.WriteFiles(t, root, map[string]string{"AGENTS.md": "- Run make test.\n- Never push on Fridays.\n"})
	runGit(t, root, "add", "AGENTS.md")
	res, err := w.RunHook(t.Context(), "pre-commit", nil)
	if err != nil || !res.Staged {
		t.Fatalf("pre-commit: %+v, %v", res, err)
	}
	staged, err := format.Decode("staged", []byte(runGit(t, root, "show", ":"+format.Dir+"/"+format.MemoriesFile)))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range staged {
		got = append(got, m.Content)
	}
	want := []string{"a stored fact", "an observation", "An imported seed.", "Run make test.", "Never push on Fridays."}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("staged %q, want %q", got, want)
	}
	worktree, err := format.ReadFile(format.MemoriesPath(root))
	if err != nil || !slices.ContainsFunc(worktree, func(m memory.Memory) bool { return m.ID == worktreeOnly.ID }) {
		t.Errorf("the worktree lost a memory it did not derive: %v", err)
	}
}

// check and sync agree on the next step: a stored memory with a secret is
// not something sync removes, so check does not send the user to sync.
func TestCheckAdvisesForgetForAStoredSecret(t *testing.T) {
	root := t.TempDir()
	leaked := stored("01J0000000000000000000000A", "the bot token is ghp_16C7e42F292c6912E7710c838347Ae178B4a", t0)
	if err := format.WriteFile(format.MemoriesPath(root), []memory.Memory{leaked}); err != nil {
		t.Fatal(err)
	}
	report, err := Check(root)
	if err != nil || report.OK || report.Fix != "run `acolyte forget "+leaked.ID+"`, rotate the credentials, and commit .acolyte/memories.jsonl" {
		t.Fatalf("check: %+v, %v", report, err)
	}
	if strings.Contains(fmt.Sprint(report), "ghp_") {
		t.Error("the report repeats the secret")
	}
}
func TestDeriveWorktreeNeverReadsOutsideTheRepository(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "repo")
	gittest.WriteFiles(t, base, map[string]string{
		"outside/config":     "- OUTSIDE private line one.\n- OUTSIDE private line two.\n",
		"outside/seeds.json": `["OUTSIDE seed"]`,
		"repo/AGENTS.md":     "- Run make test before pushing.\n",
		"repo/docs/rules.md": "- Docs use British English.\n",
	})
	gittest.Symlink(t, "../outside/config", filepath.Join(root, "CLAUDE.md"))
	gittest.Symlink(t, "../../outside/config", filepath.Join(root, "sub", "AGENTS.md"))
	gittest.Symlink(t, filepath.Join(base, "outside", "config"), filepath.Join(root, "abs", "AGENTS.md"))
	gittest.Symlink(t, "../../outside/seeds.json", filepath.Join(root, format.Dir, derive.SeedsFile))
	// Inside the repository, relative and absolute links are fine.
	gittest.Symlink(t, "docs/rules.md", filepath.Join(root, "GEMINI.md"))
	gittest.Symlink(t, filepath.Join(root, "docs", "rules.md"), filepath.Join(root, "web", "AGENTS.md"))

	d, err := derive.Worktree(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range d.Memories {
		if strings.Contains(m.Content, "OUTSIDE") {
			t.Errorf("derived outside content: %+v", m)
		}
	}
	got := make(map[string]memory.Memory)
	for _, m := range d.Memories {
		got[m.Content] = m
	}
	if _, ok := got["Docs use British English."]; !ok {
		t.Errorf("a link inside the repository was not read: %v", got)
	}
	if _, ok := got["In web/: Docs use British English."]; !ok {
		t.Errorf("an absolute link inside the repository was not read: %v", got)
	}
	want := []string{".acolyte/seeds.json", "CLAUDE.md", "abs/AGENTS.md", "sub/AGENTS.md"}
	if files := refusalFiles(d.Skipped); !slices.Equal(files, want) {
		t.Errorf("skipped %v, want %v", files, want)
	}
	if len(d.Refused) != 0 {
		t.Errorf("refused %v", d.Refused)
	}
	// Check agrees: a file that holds the outside rules is not fresh.
	// The rule an outside CLAUDE.md would give, as if a merge had brought
	// it in: check must see that derivation no longer makes it.
	leaked, err := derive.RulesFromFile("CLAUDE.md", []byte("- OUTSIDE private line one.\n"))
	if err != nil || len(leaked) != 1 {
		t.Fatalf("rules of the outside line: %v, %v", leaked, err)
	}
	leaked[0].Scope = memory.ScopeProject
	outside := derive.Refresh(nil, append(d.Memories, leaked[0]))
	if err := format.WriteFile(format.MemoriesPath(root), outside); err != nil {
		t.Fatal(err)
	}
	report, err := Check(root)
	if err != nil || report.OK || len(report.Changes) != 1 || report.Changes[0].Op != "remove" {
		t.Fatalf("check of a file with outside content: %+v, %v", report, err)
	}
}
