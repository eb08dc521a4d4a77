package hooks

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/gitsync"
	"github.com/acolyte-dev/acolyte/internal/gittest"
)

func TestAddLefthookEntryKeepsEveryLineOfTheTeams(t *testing.T) {
	run := ManagerLine("pre-commit")
	for _, tc := range []struct{ name, doc, want string }{
		{"no block", "# team\npre-push:\n  commands:\n    t:\n      run: make\n",
			"# team\npre-push:\n  commands:\n    t:\n      run: make\n" + lefthookEntry("pre-commit")},
		{"commands, four-space indent", "pre-commit:\n    parallel: true\n    commands:\n        lint:\n            run: npm run lint\npost-merge:\n  commands: {}\n",
			"pre-commit:\n    parallel: true\n    commands:\n        acolyte:\n          run: " + run + "\n        lint:\n            run: npm run lint\npost-merge:\n  commands: {}\n"},
		{"jobs", "pre-commit:\n  jobs:\n    - name: lint\n      run: npm run lint\n",
			"pre-commit:\n  jobs:\n    - name: acolyte\n      run: " + run + "\n    - name: lint\n      run: npm run lint\n"},
	} {
		got, err := addLefthookEntry(tc.doc, "pre-commit")
		if err != nil || got != tc.want {
			t.Errorf("%s: %v\n%s\nwant\n%s", tc.name, err, got, tc.want)
		}
	}
	for _, doc := range []string{"pre-commit: {commands: {}}\n", "pre-commit:\n  scripts:\n    x.sh: {}\n"} {
		if _, err := addLefthookEntry(doc, "pre-commit"); !errors.Is(err, errManual) {
			t.Errorf("%q: %v, want a by-hand edit", doc, err)
		}
	}
}

func TestAddPreCommitEntryAppendsToReposAndInstallTypes(t *testing.T) {
	team := "repos:\n- repo: https://github.com/pre-commit/pre-commit-hooks\n  rev: v4.0.0\n  hooks:\n  - id: trailing-whitespace\n\n# done\n"
	// The config names no stage: acolyte's entry names none that 3.2
	// renamed, and nothing else changes, since default_install_hook_types
	// would need a default_stages, which would need one.
	got, err := addPreCommitEntry(team, spelled(team))
	if err != nil {
		t.Fatal(err)
	}
	want := "repos:\n- repo: https://github.com/pre-commit/pre-commit-hooks\n  rev: v4.0.0\n  hooks:\n  - id: trailing-whitespace\n" +
		PreCommitEntry("") + "\n# done\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	for old, renamed := range preCommitOldStages {
		if strings.Contains(got, old+"]") || strings.Contains(got, old+",") || strings.Contains(got, renamed) && !strings.Contains(got, "acolyte hook "+renamed) {
			t.Errorf("the entry names %s or %s:\n%s", old, renamed, got)
		}
	}
	// An entry that names its stages has pre-commit install acolyte's hooks.
	got, err = addPreCommitEntry(team, spellOld)
	if err != nil {
		t.Fatal(err)
	}
	want = "repos:\n- repo: https://github.com/pre-commit/pre-commit-hooks\n  rev: v4.0.0\n  hooks:\n  - id: trailing-whitespace\n" +
		preCommitEntry("", spellOld) + "\n# done\ndefault_install_hook_types: [pre-commit, post-checkout, post-merge, post-rewrite]\n" +
		"default_stages: [commit, merge-commit, prepare-commit-msg, commit-msg, post-commit, manual, push]\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	got, err = addPreCommitEntry("default_install_hook_types: [pre-push, 'pre-commit']  # team\nrepos:\n  - repo: local\n    hooks: []\n", spellOld)
	if err != nil || !strings.HasPrefix(got, "default_install_hook_types: [pre-push, pre-commit, post-checkout, post-merge, post-rewrite]\n") {
		t.Errorf("flow list: %v\n%s", err, got)
	}
	if !strings.HasSuffix(got, "\ndefault_stages: [commit, merge-commit, prepare-commit-msg, commit-msg, post-commit, manual, push]\n") {
		t.Errorf("flow list: the team's hooks without stages must keep to their stages:\n%s", got)
	}
	if _, err := addPreCommitEntry("default_install_hook_types:\n  - pre-push\nrepos:\n  - repo: local\n", spellOld); !errors.Is(err, errManual) {
		t.Errorf("block list: %v, want a by-hand edit", err)
	}
	if _, err := addPreCommitEntry("repos: []\n", spellNoStage); !errors.Is(err, errManual) {
		t.Errorf("flow repos: %v, want a by-hand edit", err)
	}
}

// pre-commit 4 warns on every run about `commit`, which 3.0 and 3.1 need;
// acolyte follows the team's config, and otherwise spells it as every
// release reads it. The team's hooks without stages: keep their stages.
func TestAddPreCommitEntryFollowsTheTeamsStageNames(t *testing.T) {
	modern := "repos:\n  - repo: local\n    hooks:\n      - id: lint\n        entry: make lint\n        language: system\n        stages: [pre-commit, pre-push]\n"
	got, err := addPreCommitEntry(modern, spelled(modern))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "      stages: [pre-commit]\n") || strings.Contains(got, "stages: [commit]") {
		t.Errorf("the team spells stages as 3.2 does; acolyte's entry must too:\n%s", got)
	}
	if !strings.HasSuffix(got, "\ndefault_stages: [pre-commit, pre-merge-commit, prepare-commit-msg, commit-msg, post-commit, manual, pre-push]\n") {
		t.Errorf("default_stages:\n%s", got)
	}
	for doc, want := range map[string][2]bool{
		"minimum_pre_commit_version: '3.2.0'\nrepos: []\n":                   {true, true},
		"minimum_pre_commit_version: \"2.20\"\nrepos: []\n":                  {false, false},
		"default_stages: [pre-push]\nrepos: []\n":                            {true, true},
		"default_stages: [commit]\nrepos: []\n":                              {false, true},
		"repos:\n- repo: local\n  hooks:\n  - id: x\n    stages: [commit]\n": {false, true},
		"repos:\n- repo: local\n  hooks:\n  - id: x\n    stages: [manual]\n": {false, false},
		"repos:\n- repo: local\n  hooks:\n  - id: x\n":                       {false, false},
		// Lists written over several lines.
		"repos:\n- repo: local\n  hooks:\n  - id: x\n    stages:\n    - manual\n    - pre-push  # team\n": {true, true},
		"repos:\n- repo: local\n  hooks:\n  - id: x\n    stages:\n      - 'push'\n":                       {false, true},
		"repos:\n- repo: local\n  hooks:\n  - id: x\n    stages:\n    - manual\n  - id: pre-push\n":       {false, false},
	} {
		if modern, known := preCommitSpelling(doc); [2]bool{modern, known} != want {
			t.Errorf("preCommitSpelling(%q) = %v, %v, want %v", doc, modern, known, want)
		}
	}
	// A default_stages of the team's is kept, unless it names a hook
	// type acolyte would install: then the edit is the user's.
	got, err = addPreCommitEntry("default_stages: [commit]\nrepos:\n  - repo: local\n    hooks: []\n", spellOld)
	if err != nil || strings.Count(got, "default_stages") != 1 {
		t.Errorf("kept default_stages: %v\n%s", err, got)
	}
	if _, err := addPreCommitEntry("default_stages: [commit, post-merge]\nrepos:\n  - repo: local\n    hooks: []\n", spellOld); !errors.Is(err, errManual) {
		t.Errorf("default_stages naming post-merge: %v, want a by-hand edit", err)
	}
	// Nothing added to install, nothing to keep.
	all := "default_install_hook_types: [pre-commit, post-checkout, post-merge, post-rewrite]\nrepos:\n  - repo: local\n    hooks: []\n"
	if got, err := addPreCommitEntry(all, spelled(all)); err != nil || strings.Contains(got, "default_stages") {
		t.Errorf("all types installed already: %v\n%s", err, got)
	}
}

// A config that spells stages has acolyte follow it; one that names none
// gets an entry that names no renamed stage, whatever pre-commit is
// installed here, unless the team's default_stages would keep a hook
// without stages: out of the commit stage. (The hook-manager scripts run
// the real 3.0.4 and 4.7.0.)
func TestPreCommitChoiceFollowsTheConfigAlone(t *testing.T) {
	bin := t.TempDir()
	// A pre-commit here says 4.x: the choice must not ask it.
	gittest.WriteFiles(t, bin, map[string]string{"pre-commit": "#!/bin/sh\necho 'pre-commit 4.7.0'\n"})
	if err := os.Chmod(filepath.Join(bin, "pre-commit"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	none := "repos:\n- repo: local\n  hooks:\n  - id: x\n"
	for _, c := range []struct {
		doc  string
		want stageSpelling
		note string
	}{
		{none, spellNoStage, "every pre-commit from 3.0 on reads it silently"},
		{none + "    stages: [commit]\n", spellOld, "migrate-config"},
		{none + "    stages: [pre-commit]\n", spellNew, ""},
		{"minimum_pre_commit_version: '3.2.0'\n" + none, spellNew, ""},
		{"default_stages: [manual]\n" + none, spellOld, "default_stages leaves out the commit stage"},
		{"default_stages: [push]\n" + none, spellOld, "migrate-config"},
	} {
		got, note := preCommitChoice(c.doc)
		if got != c.want || (c.note == "") != (note == "") || !strings.Contains(note, c.note) {
			t.Errorf("%q: spelling %v, note %q; want %v, a note with %q", c.doc, got, note, c.want, c.note)
		}
		if strings.Contains(note, "need") && strings.Contains(note, "3.0 and 3.1") {
			t.Errorf("%q: the note still tells 3.0 and 3.1 users to upgrade: %q", c.doc, note)
		}
	}
}

// spelled is the spelling acolyte takes from the team's config alone.
func spelled(doc string) stageSpelling {
	spelling, _ := preCommitChoice(doc)
	return spelling
}

func TestAddHookLineGoesBeforeAFinalExit(t *testing.T) {
	for script, want := range map[string]string{
		"":                                "#!/bin/sh\nL\n",
		"#!/bin/sh\nnpm test\n":           "#!/bin/sh\nnpm test\nL\n",
		"#!/bin/sh\nnpm test\nexit 0\n\n": "#!/bin/sh\nnpm test\nL\nexit 0\n",
	} {
		if got := addHookLine(script, "L"); got != want {
			t.Errorf("%q: got %q, want %q", script, got, want)
		}
	}
}

// husky 4 keeps its hooks in package.json and installs itself into
// .git/hooks; acolyte sets its commands there and writes no shim.
func TestInstallHooksWithHusky4SetsThePackageEntries(t *testing.T) {
	root := t.TempDir()
	gittest.Run(t, root, "init", "-q")
	gittest.WriteFiles(t, root, map[string]string{
		"package.json":          "{\n  \"husky\": {\n    \"hooks\": {\n      \"pre-commit\": \"npm test\"\n    }\n  }\n}\n",
		".git/hooks/pre-commit": "#!/bin/sh\n# husky\n. \"$(dirname \"$0\")/husky.sh\"\n",
	})
	if err := os.Chmod(filepath.Join(root, ".git/hooks/pre-commit"), 0o755); err != nil {
		t.Fatal(err)
	}
	repo, err := gitsync.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Install(t.Context(), repo, "/usr/local/bin/acolyte", true)
	if err != nil || res.Manager != ManagerHusky4 {
		t.Fatalf("%+v, %v", res, err)
	}
	for _, it := range res.Integrations {
		if !it.Written {
			t.Errorf("%s was not written: %+v", it.File, it)
		}
	}
	want := "{\n  \"husky\": {\n    \"hooks\": {\n      \"pre-commit\": \"npm test && { if command -v acolyte >/dev/null 2>&1; then acolyte hook pre-commit || [ $? -ne 3 ]; fi; }\",\n" +
		"      \"post-checkout\": \"if command -v acolyte >/dev/null 2>&1; then acolyte hook post-checkout || [ $? -ne 3 ]; fi\",\n      \"post-merge\": \"if command -v acolyte >/dev/null 2>&1; then acolyte hook post-merge || [ $? -ne 3 ]; fi\",\n" +
		"      \"post-rewrite\": \"if command -v acolyte >/dev/null 2>&1; then acolyte hook post-rewrite || [ $? -ne 3 ]; fi\"\n    }\n  }\n}\n"
	if b, _ := os.ReadFile(filepath.Join(root, "package.json")); string(b) != want {
		t.Errorf("package.json:\n%s\nwant\n%s", b, want)
	}
	if b, _ := os.ReadFile(filepath.Join(root, ".git/hooks/pre-commit")); strings.Contains(string(b), shimMarker) {
		t.Error("a shim replaced husky's hook")
	}
	hooks, _, err := Status(t.Context(), repo)
	if err != nil || !hooks[slices.IndexFunc(hooks, func(h State) bool { return h.Name == "pre-commit" })].Installed {
		t.Errorf("status after the edit: %+v, %v", hooks, err)
	}
}

// A manager that moves the shim aside runs it under another name; it still
// does its own hook's work (issue 21: unknown hook "pre-commit.legacy").
func TestShimRunUnderAnotherNameRunsItsOwnHook(t *testing.T) {
	root := t.TempDir()
	gittest.Run(t, root, "init", "-q")
	repo, err := gitsync.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(t.TempDir(), "acolyte")
	gittest.WriteFiles(t, filepath.Dir(exe), map[string]string{"acolyte": fakeAcolyte})
	if err := os.Chmod(exe, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(t.Context(), repo, exe, false); err != nil {
		t.Fatal(err)
	}
	hooks := filepath.Join(root, ".git", "hooks")
	if err := os.Rename(filepath.Join(hooks, "pre-commit"), filepath.Join(hooks, "pre-commit.legacy")); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(hooks, "pre-commit.legacy")).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "fake acolyte hook pre-commit") {
		t.Errorf("%v: %s", err, out)
	}
}

// keepsLines says whether every line of before is in after, in order: the
// editors only ever add text to a team's file.
func keepsLines(before, after string) bool {
	rest := strings.Split(after, "\n")
	for _, l := range strings.Split(strings.TrimRight(before, "\n"), "\n") {
		i := slices.Index(rest, l)
		if i < 0 {
			return false
		}
		rest = rest[i+1:]
	}
	return true
}

func FuzzManagerConfigEdits(f *testing.F) {
	f.Add("pre-commit:\n  commands:\n    lint:\n      run: x\n")
	f.Add("repos:\n- repo: local\n  hooks: []\ndefault_install_hook_types: [pre-push]\n")
	f.Add("pre-commit:\n  jobs:\n  - run: x\n")
	f.Fuzz(func(t *testing.T, doc string) {
		if out, err := addLefthookEntry(doc, "pre-commit"); err == nil {
			if !keepsLines(doc, out) || !strings.Contains(yamlBlock(out, "pre-commit"), "acolyte hook pre-commit") {
				t.Errorf("lefthook %q became %q", doc, out)
			}
		}
		if out, err := addPreCommitEntry(doc, spelled(doc)); err == nil {
			named := spelled(doc) != spellNoStage
			if !strings.Contains(yamlBlock(out, "repos"), "acolyte hook post-merge") || (named && !strings.Contains(out, preCommitTypes+": [")) || (!named && !keepsLines(doc, out)) {
				t.Errorf("pre-commit %q became %q", doc, out)
			}
		}
		if out := addHookLine(doc, "L"); !slices.Contains(strings.Split(out, "\n"), "L") || (strings.TrimSpace(doc) != "" && !keepsLines(doc, out)) {
			t.Errorf("hook script %q became %q", doc, out)
		}
	})
}
