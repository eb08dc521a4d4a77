package cmd_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/gitsync"
	"github.com/acolyte-dev/acolyte/gitsync/hooks"
)

// readmeBlock returns the fenced block of README.md whose first line is
// first, so the snippets users copy are the ones tested.
func readmeBlock(t *testing.T, first string) string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile("(?s)```[a-z]*\n(.*?)```").FindAllStringSubmatch(string(readme), -1) {
		if strings.HasPrefix(m[1], first) {
			return m[1]
		}
	}
	t.Fatalf("README.md has no block starting with %q", first)
	return ""
}

// yamlToJSON parses YAML with python3's yaml module, when this machine has
// it: the module graph has no YAML parser, and the snippets are only worth
// testing with a real one.
func yamlToJSON(t *testing.T, doc string, v any) {
	t.Helper()
	cmd := exec.Command("python3", "-c", "import sys, json, yaml; json.dump(yaml.safe_load(sys.stdin), sys.stdout)")
	cmd.Stdin = strings.NewReader(doc)
	out, err := cmd.Output()
	if err != nil {
		if probe := exec.Command("python3", "-c", "import yaml"); probe.Run() != nil {
			t.Skip("no python3 with the yaml module to parse the snippet")
		}
		t.Fatalf("the README's YAML does not parse: %v", err)
	}
	if err := json.Unmarshal(out, v); err != nil {
		t.Fatal(err)
	}
}

// hookRepo is a repository with AGENTS.md staged, where a hook command runs.
func hookRepo(t *testing.T) (dir string, run func(command string, env ...string) error) {
	t.Helper()
	dir = t.TempDir()
	env := append(os.Environ(), "ACOLYTE_HOME="+filepath.Join(t.TempDir(), "home"), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	run = func(command string, extra ...string) error {
		cmd := exec.Command("sh", "-c", command)
		cmd.Dir, cmd.Env = dir, append(slices.Clone(env), extra...)
		out, err := cmd.CombinedOutput()
		t.Logf("%s: %v\n%s", command, err, out)
		return err
	}
	if err := run("git init -q && printf -- '- Run make test before pushing.\\n' > AGENTS.md && git add AGENTS.md"); err != nil {
		t.Fatal(err)
	}
	return dir, run
}

// checkHookCommand runs a documented pre-commit command the way a hook
// manager would: it stages the rule, blocks a staged secret, and lets git
// go on when acolyte is not installed.
func checkHookCommand(t *testing.T, command string) {
	t.Helper()
	dir, run := hookRepo(t)
	if err := run(command); err != nil {
		t.Fatalf("%s failed", command)
	}
	if err := run("git show :.acolyte/memories.jsonl | grep -q 'Run make test'"); err != nil {
		t.Fatalf("%s did not stage the rule", command)
	}
	if err := os.WriteFile(filepath.Join(dir, "AGENTS.md"), []byte("- The CI key is AKIAQX7NR3JTMB2W5KPL here.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run("git add AGENTS.md && " + command); err == nil {
		t.Fatalf("%s let a secret through", command)
	}
	// A teammate without acolyte: git goes on and the line says nothing.
	mate := exec.Command("sh", "-c", command)
	mate.Dir, mate.Env = dir, append(os.Environ(), "PATH=/usr/bin:/bin")
	out, err := mate.CombinedOutput()
	if err != nil {
		t.Fatalf("%s blocks git without acolyte: %v\n%s", command, err, out)
	}
	if len(out) > 0 {
		t.Fatalf("%s, without acolyte on PATH, printed %q; it must say nothing", command, out)
	}
}

func TestReadmeHuskyLine(t *testing.T) {
	block := readmeBlock(t, "if command -v acolyte >/dev/null 2>&1; then acolyte hook pre-commit")
	if line := strings.TrimSpace(block); line != hooks.Line("pre-commit") {
		t.Fatalf("README shows %q, hooks install prints %q", line, hooks.Line("pre-commit"))
	}
	checkHookCommand(t, hooks.Line("pre-commit"))
}

func TestReadmeLefthookSnippet(t *testing.T) {
	var cfg map[string]struct {
		Commands map[string]struct {
			Run string `json:"run"`
		} `json:"commands"`
	}
	yamlToJSON(t, readmeBlock(t, "# lefthook.yml"), &cfg)
	for _, name := range gitsync.Hooks {
		if cfg[name].Commands["acolyte"].Run != hooks.ManagerLine(name) {
			t.Errorf("lefthook %s runs %q", name, cfg[name].Commands["acolyte"].Run)
		}
	}
	checkHookCommand(t, cfg["pre-commit"].Commands["acolyte"].Run)
}

func TestReadmePreCommitFrameworkSnippet(t *testing.T) {
	var cfg struct {
		Types []string `json:"default_install_hook_types"`
		Repos []struct {
			Repo  string `json:"repo"`
			Hooks []struct {
				Entry    string   `json:"entry"`
				Language string   `json:"language"`
				Stages   []string `json:"stages"`
			} `json:"hooks"`
		} `json:"repos"`
	}
	block := readmeBlock(t, "# .pre-commit-config.yaml")
	if _, entry, _ := strings.Cut(block, "repos:\n"); entry != hooks.PreCommitEntry("  ") {
		t.Errorf("README's repos entry:\n%s\nhooks install adds:\n%s", entry, hooks.PreCommitEntry("  "))
	}
	yamlToJSON(t, block, &cfg)
	// Installing acolyte's other hook types through pre-commit would run
	// the team's hooks without stages: in them; acolyte's shims run them.
	if len(cfg.Types) != 0 {
		t.Errorf("the snippet installs %v: a team's hooks without stages: would run there", cfg.Types)
	}
	if len(cfg.Repos) != 1 || cfg.Repos[0].Repo != "local" {
		t.Fatalf("repos: %+v", cfg.Repos)
	}
	var staged []string
	for _, h := range cfg.Repos[0].Hooks {
		staged = append(staged, h.Stages...)
		// 3.0 and 3.1 reject the names 3.2 gave the renamed stages, 4.x
		// warns about the old ones: the snippet names neither.
		for _, renamed := range []string{"commit", "merge-commit", "push", "pre-commit", "pre-merge-commit", "pre-push"} {
			if slices.Contains(h.Stages, renamed) {
				t.Errorf("stage %s is one pre-commit 3.2 renamed; some pre-commit rejects or warns about it", renamed)
			}
		}
		if len(h.Stages) != 0 {
			continue
		}
		// language: system runs the entry as a command line; sh -c is what
		// it names, and -- takes $0, so that the files are "$@".
		entry, opened := strings.CutPrefix(h.Entry, "sh -c '")
		entry, closed := strings.CutSuffix(entry, "' --")
		if !opened || !closed || h.Language != "system" {
			t.Fatalf("entry %q language %q", h.Entry, h.Language)
		}
		checkHookCommand(t, entry)
	}
	staged = slices.Sorted(slices.Values(append(staged, "pre-commit")))
	if want := slices.Sorted(slices.Values(gitsync.Hooks)); !slices.Equal(staged, want) {
		t.Errorf("stages %v, want %v", staged, want)
	}
}
