package cmd_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// freshCopy is what a newcomer has after cloning: this checkout's tracked
// files, as they are in the worktree, in a new repository with one commit,
// and an environment of their own (home, settings, temporary folder) that
// keeps Go's caches, so that the README's go build needs no network.
func freshCopy(t *testing.T) (dir string, env []string, run func(command string) (string, string, error)) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds acolyte in a copy of the repository")
	}
	tmp := t.TempDir()
	dir = filepath.Join(tmp, "acolyte")
	files, err := exec.Command("git", "-C", "..", "ls-files", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	for _, name := range strings.Split(strings.TrimRight(string(files), "\x00"), "\x00") {
		src := filepath.Join("..", name)
		fi, err := os.Lstat(src)
		if err != nil || !fi.Mode().IsRegular() {
			continue // deleted in the worktree, or not a plain file
		}
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, fi.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	goEnv := map[string]string{}
	for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOROOT"} {
		out, err := exec.Command("go", "env", k).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", k, err)
		}
		goEnv[k] = strings.TrimSpace(string(out))
	}
	home := filepath.Join(tmp, "home")
	tmpdir := filepath.Join(tmp, "tmp")
	for _, d := range []string{home, tmpdir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env = []string{
		"PATH=" + filepath.Join(goEnv["GOROOT"], "bin") + ":/usr/local/bin:/usr/bin:/bin",
		"HOME=" + home, "TMPDIR=" + tmpdir,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"GOCACHE=" + goEnv["GOCACHE"], "GOMODCACHE=" + goEnv["GOMODCACHE"], "GOPATH=" + goEnv["GOPATH"],
		"GOPROXY=off", "GOFLAGS=-p=1", "GEMINI_API_KEY=", "GOOGLE_API_KEY=", "OPENAI_API_KEY=",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
	}
	run = func(command string) (string, string, error) {
		cmd := exec.Command("sh", "-c", command)
		cmd.Dir, cmd.Env = dir, env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		t.Logf("$ %s\n%s%s", command, stdout.String(), stderr.String())
		return stdout.String(), stderr.String(), err
	}
	if _, _, err := run("git init -q -b main && git add -A && git commit -q -m clone"); err != nil {
		t.Fatal(err)
	}
	return dir, env, run
}

// readmeBlocks are the fenced blocks of README.md, in order.
func readmeBlocks(t *testing.T, dir string) []string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range regexp.MustCompile("(?s)```[a-z]*\n(.*?)```").FindAllStringSubmatch(string(readme), -1) {
		out = append(out, m[1])
	}
	return out
}

// TestReadmeHoldsInAFreshCopy follows the README as a newcomer would, in a
// copy of the repository with a home of its own (issue 36): the first
// command finds its fact and leaves nothing in user memory; the install
// block's ./acolyte --version runs; the token table is what prompt --stats
// prints; no command fetches an unpublished module; every benchmark file a
// command names is in the repository.
func TestReadmeHoldsInAFreshCopy(t *testing.T) {
	t.Parallel() // a copy, a home and an environment of its own (freshCopy)
	dir, _, run := freshCopy(t)
	blocks := readmeBlocks(t, dir)
	if len(blocks) < 2 {
		t.Fatal("README.md must open with two commands")
	}

	// The first command: it builds acolyte, finds the fact by meaning, and
	// leaves no fact behind in the user's memory nor a folder in TMPDIR.
	stdout, _, err := run(strings.TrimSpace(blocks[0]))
	if err != nil {
		t.Fatalf("the README's first command failed: %v", err)
	}
	if !strings.Contains(stdout, "bastion-2") {
		t.Fatalf("the README's first command did not find its fact:\n%s", stdout)
	}
	stdout, _, err = run("./acolyte list --scope user --json")
	if err != nil || strings.TrimSpace(stdout) != "[]" {
		t.Errorf("after the README's first command the user scope holds %s (%v); the demo must leave nothing behind", stdout, err)
	}
	if left, _ := os.ReadDir(filepath.Join(filepath.Dir(dir), "tmp")); len(left) > 0 {
		t.Errorf("the README's first command left %s in TMPDIR", left[0].Name())
	}
	if strings.TrimSpace(blocks[1]) != "go test ./..." {
		t.Errorf("the README's second command is %q; .ci/run runs go test ./... as the README's test command", blocks[1])
	}

	// Install: the block that builds acolyte runs as written.
	install := ""
	for _, b := range blocks {
		if strings.HasPrefix(b, "go build -o acolyte .") && strings.Contains(b, "--version") {
			install = b
		}
	}
	if install == "" {
		t.Fatal("README.md has no install block (go build -o acolyte . then --version)")
	}
	if stdout, _, err := run(install); err != nil || !strings.Contains(stdout, "commit") {
		t.Errorf("the README's install block failed (%v):\n%s", err, stdout)
	}

	// No command fetches the module, which is not published.
	for _, b := range blocks {
		if strings.Contains(b, "acolyte-dev/acolyte@") {
			t.Errorf("a README block fetches the unpublished module:\n%s", b)
		}
	}
	// Every benchmark file a command names ships in the repository, unless
	// the command says it is elsewhere ($BENCH/...).
	for _, b := range blocks {
		for _, m := range regexp.MustCompile(`(\$\{?\w+\}?/)?([\w./-]+\.jsonl)`).FindAllStringSubmatch(b, -1) {
			if p := m[2]; m[1] == "" {
				if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
					t.Errorf("a README command names %s, which a clone does not have", p)
				}
			}
		}
	}

	// The token table is what prompt --stats prints.
	type stats struct {
		Tokens map[string]int `json:"tokens"`
		Wire   struct {
			Tokens int `json:"tokens"`
		} `json:"wire"`
	}
	var gemini, openai stats
	for provider, into := range map[string]*stats{"gemini": &gemini, "openai": &openai} {
		stdout, _, err := run("./acolyte prompt --stats --json --provider " + provider)
		if err != nil {
			t.Fatalf("prompt --stats: %v", err)
		}
		if err := json.Unmarshal([]byte(stdout), into); err != nil {
			t.Fatal(err)
		}
	}
	readme, _ := os.ReadFile(filepath.Join(dir, "README.md"))
	row := func(label string) []int {
		t.Helper()
		for _, l := range strings.Split(string(readme), "\n") {
			if strings.HasPrefix(l, "| "+label) || strings.HasPrefix(l, "| **"+label) {
				cells := strings.Split(l, "|")
				var out []int
				for _, n := range regexp.MustCompile(`\d+`).FindAllString(cells[len(cells)-2], -1) {
					v, _ := strconv.Atoi(n)
					out = append(out, v)
				}
				return out
			}
		}
		t.Fatalf("README.md's token table has no row %q", label)
		return nil
	}
	g := gemini.Tokens
	for label, want := range map[string][]int{
		"soul + core instructions":                     {g["soul"] + g["instructions"]},
		"tool declarations, deferred":                  {g["tools_deferred"]},
		"acolyte's first request":                      {g["initial"]},
		"the same as the server receives it":           {gemini.Wire.Tokens, openai.Wire.Tokens},
		"the same with every tool declared up front":   {g["full"]},
		"\"inject everything\": AGENTS.md + every pro": {g["baseline"]},
	} {
		if got := row(label); !slices.Equal(got, want) {
			t.Errorf("README.md's token table says %v for %q; prompt --stats prints %v", got, label, want)
		}
	}
	if want := "The prompt stays at " + strconv.Itoa(g["initial"]) + " tokens"; !strings.Contains(string(readme), want) {
		t.Errorf("README.md should say %q", want)
	}
}
