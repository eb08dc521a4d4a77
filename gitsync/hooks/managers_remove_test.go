package hooks

import (
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/gitsync"
)

// What hooks uninstall takes out is what hooks install --write put in: the
// team's files come back byte for byte.
func TestRemovingManagerLinesUndoesAddingThem(t *testing.T) {
	for _, team := range []string{
		"",
		"#!/bin/sh\nnpm test\n",
		"#!/bin/sh\nnpm test\nexit 0\n",
	} {
		for _, name := range gitsync.Hooks {
			added := addHookLine(team, Line(name))
			got := removeHookLines(added, name)
			if strings.TrimSpace(team) == "" {
				if got != "" {
					t.Errorf("a script acolyte created came back as %q, want it removed", got)
				}
				continue
			}
			if got != team {
				t.Errorf("hook script %q: added %q, removed %q", team, added, got)
			}
		}
	}
	// An old line, from before the PATH check, goes too.
	if got := removeHookLines("#!/bin/sh\nnpm test\nacolyte hook pre-commit || [ $? -ne 3 ]\n", "pre-commit"); got != "#!/bin/sh\nnpm test\n" {
		t.Errorf("old line: %q", got)
	}

	for _, team := range []string{
		"# The team's hooks.\npre-commit:\n  commands:\n    lint:\n      run: make lint\n",
		"pre-commit:\n  jobs:\n    - name: lint\n      run: make lint\npost-merge:\n  commands:\n    deps:\n      run: npm ci\n",
		"",
	} {
		doc := team
		for _, name := range gitsync.Hooks {
			var err error
			if doc, err = addLefthookEntry(doc, name); err != nil {
				t.Fatal(err)
			}
		}
		for _, name := range gitsync.Hooks {
			doc = removeLefthookEntry(doc, name)
		}
		if strings.TrimRight(doc, "\n") != strings.TrimRight(team, "\n") {
			t.Errorf("lefthook.yml %q came back as %q", team, doc)
		}
	}

	every := []stageSpelling{spellNoStage, spellOld, spellNew}
	for team, spellings := range map[string][]stageSpelling{
		"repos:\n- repo: https://github.com/pre-commit/pre-commit-hooks\n  rev: v4.0.0\n  hooks:\n  - id: trailing-whitespace\n":                                                                      every,
		"default_install_hook_types: [pre-commit, pre-push]\nrepos:\n  - repo: local\n    hooks:\n      - id: lint\n        entry: make lint\n        language: system\n        stages: [pre-push]\n": every,
		// The team installs post-merge itself: an entry that names no
		// stage never touched that, so uninstalling leaves it.
		"default_install_hook_types: [pre-commit, post-merge]\nrepos:\n  - repo: local\n    hooks: []\n": {spellNoStage},
	} {
		for _, spelling := range spellings {
			added, err := addPreCommitEntry(team, spelling)
			if err != nil {
				t.Fatal(err)
			}
			got, manual := removePreCommitEntry(added)
			if got != team || manual != "" {
				t.Errorf("pre-commit config %q, spelling %v: added\n%s\nremoved (%q)\n%s", team, spelling, added, manual, got)
			}
		}
	}

	team := "{\n  \"name\": \"app\",\n  \"simple-git-hooks\": {\n    \"pre-commit\": \"npx lint-staged\"\n  }\n}\n"
	doc := []byte(team)
	for _, name := range gitsync.Hooks {
		hooks := map[string]string{"pre-commit": "npx lint-staged"}
		var err error
		if doc, err = setJSONStrings(doc, []string{"simple-git-hooks"}, [][2]string{{name, chainCommand(hooks[name], ManagerLine(name))}}); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.Contains(string(doc), "acolyte hook post-rewrite") {
		t.Fatalf("nothing was added: %s", doc)
	}
	if got, manual := removePackageCommands(string(doc), []string{"simple-git-hooks"}); got != team || manual != "" {
		t.Errorf("package.json:\n%s\nremoved (%q):\n%s", doc, manual, got)
	}
}

// Lines an earlier acolyte wrote, which ran acolyte unchecked, are put
// inside the PATH check in every manager's file; the check's own lines
// and everything else stay.
func TestUpgradeLegacyPutsOldLinesInsideThePathCheck(t *testing.T) {
	for doc, want := range map[string]string{
		"#!/bin/sh\nnpm test\nacolyte hook post-merge \"$@\" || [ $? -ne 3 ]\n":                        "#!/bin/sh\nnpm test\n" + Line("post-merge") + "\n",
		"pre-commit:\n  commands:\n    acolyte:\n      run: acolyte hook pre-commit || [ $? -ne 3 ]\n": "pre-commit:\n  commands:\n    acolyte:\n      run: " + ManagerLine("pre-commit") + "\n",
		"        entry: sh -c 'acolyte hook pre-commit || [ $? -ne 3 ]'\n":                             "        entry: sh -c '" + ManagerLine("pre-commit") + "'\n",
		`"pre-commit": "npm test && { acolyte hook pre-commit || [ $? -ne 3 ]; }",`:                    `"pre-commit": "npm test && { ` + ManagerLine("pre-commit") + `; }",`,
	} {
		got, hooks := upgradeLegacy(doc)
		if got != want || len(hooks) != 1 {
			t.Errorf("upgradeLegacy(%q) = %q, %v\nwant %q", doc, got, hooks, want)
		}
		if again, hooks := upgradeLegacy(got); again != got || len(hooks) != 0 {
			t.Errorf("upgrading %q again changed it: %q", got, again)
		}
	}
}
