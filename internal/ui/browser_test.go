package ui_test

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// requireBrowser makes a missing chromium, node or playwright-core fail
// the browser test instead of skipping it; .ci/run sets it after
// installing them.
const requireBrowser = "ACOLYTE_REQUIRE_BROWSER"

var updateScreenshot = flag.Bool("update-screenshot", false, "write the main view's screenshot to testdata/screenshot.png, which README shows")

// TestInABrowser starts the real `acolyte ui` on a repository holding a
// hostile memory and two observations the real distill step stored (from
// a fake Gemini speaking its wire format), drives it in Debian's chromium
// through playwright-core (testdata/browser/drive.mjs: search, filter,
// edit, forget, review), and checks every change in
// .acolyte/memories.jsonl and git diff. Screenshots of the main views go
// to the test's artifact directory (go test -artifacts).
func TestInABrowser(t *testing.T) {
	driver, err := filepath.Abs(filepath.Join("testdata", "browser"))
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	if _, err := os.Stat("/usr/bin/chromium"); err != nil {
		missing = append(missing, "chromium (apt-get install chromium)")
	}
	if _, err := exec.LookPath("node"); err != nil {
		missing = append(missing, "node (apt-get install nodejs)")
	}
	if _, err := os.Stat(filepath.Join(driver, "node_modules", "playwright-core")); err != nil {
		missing = append(missing, "playwright-core (npm ci --ignore-scripts in internal/ui/testdata/browser)")
	}
	if len(missing) > 0 {
		if os.Getenv(requireBrowser) == "1" {
			t.Fatalf("%s=1 but missing: %s", requireBrowser, strings.Join(missing, ", "))
		}
		t.Skipf("the browser test needs %s", strings.Join(missing, ", "))
	}

	bin := filepath.Join(t.TempDir(), "acolyte")
	build := exec.Command("go", "build", "-o", bin, "github.com/acolyte-dev/acolyte")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	repo := t.TempDir()
	env := append(os.Environ(), "ACOLYTE_HOME="+t.TempDir(), "ACOLYTE_EMBEDDER=static", "GEMINI_API_KEY=", "GOOGLE_API_KEY=",
		"ACOLYTE_TEAM_DB=", "ACOLYTE_TEAM=", "ACOLYTE_SESSION=")
	acolyte := func(args ...string) string {
		t.Helper()
		c := exec.Command(bin, args...)
		c.Dir, c.Env = repo, env
		out, err := c.Output()
		if err != nil {
			t.Fatalf("acolyte %v: %v", args, err)
		}
		return string(out)
	}
	git(t, repo, "init", "-q", "-b", "main")
	writeFile(t, repo, "AGENTS.md", agentsMD)
	writeFile(t, repo, "src/main.go", "package main\n")
	writeFile(t, repo, "docs/deploy.md", "deploy\n")
	acolyte("sync")
	for _, m := range []struct{ topic, content string }{
		{"ops", "The staging database is reached through bastion-2"},
		{"ops", "Production deploys need two approvals"},
		{"ops / incidents", "Pager alerts go to #ops-oncall, never to a person"},
		{"code / layout", "The entry point is src/main.go; flags are parsed in one place"},
		{"docs", "Deploy steps are written up in docs/deploy.md"},
		{"", "Espresso beans are in the kitchen cupboard"},
		{"ops", hostile},
	} {
		acolyte("remember", "--topic", m.topic, "--", m.content)
	}
	acolyte("remember", "--scope", "user", "--", "I prefer table-driven tests")
	distill(t, bin, repo, env)
	git(t, repo, "add", ".")
	git(t, repo, "commit", "-q", "-m", "memories")

	// acolyte ui, as a person starts it.
	ctx, stop := context.WithCancel(t.Context())
	server := exec.CommandContext(ctx, bin, "ui", "--json")
	server.Dir, server.Env = repo, env
	server.Cancel = func() error { return server.Process.Signal(os.Interrupt) }
	stdout, err := server.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	server.Stderr = &stderr
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stop()
		server.Wait()
	})
	var printed struct{ URL string }
	if err := json.NewDecoder(bufio.NewReader(stdout)).Decode(&printed); err != nil {
		t.Fatalf("acolyte ui --json printed no URL: %v\n%s", err, stderr.String())
	}
	if !strings.HasPrefix(printed.URL, "http://127.0.0.1:") || !strings.Contains(printed.URL, "/?token=") {
		t.Fatalf("acolyte ui printed %q", printed.URL)
	}

	shots := t.ArtifactDir()
	drive := exec.CommandContext(t.Context(), "node", "drive.mjs", printed.URL, shots)
	drive.Dir = driver
	out, err := drive.CombinedOutput()
	if err != nil {
		t.Fatalf("the browser run failed: %v\n%s\nserver stderr:\n%s", err, out, stderr.String())
	}
	for _, name := range []string{"main.png", "search.png", "filter.png", "edit-refused.png", "forget.png", "review.png", "add.png", "narrow.png", "charts.png"} {
		if fi, err := os.Stat(filepath.Join(shots, name)); err != nil || fi.Size() < 10_000 {
			t.Errorf("screenshot %s: %v", name, err)
		}
	}
	if *updateScreenshot {
		b, err := os.ReadFile(filepath.Join(shots, "main.png"))
		if err == nil {
			err = os.WriteFile(filepath.Join("testdata", "screenshot.png"), b, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}

	// Every change the browser made is in the file, and in git diff.
	file, err := os.ReadFile(filepath.Join(repo, ".acolyte", "memories.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Production deploys need three approvals", "The user runs integration tests locally.", "bastion-2", "<script>alert(1)</script>", `\u001b]52;c;`,
		"Every migration has a down step", `"source":"ui"`, `"globs":["db/migrations/**"]`} {
		if !strings.Contains(string(file), want) {
			t.Errorf(".acolyte/memories.jsonl lacks %q after the browser run:\n%s", want, file)
		}
	}
	for _, gone := range []string{"two approvals", "Espresso", "CI caches the Go module download", "kJGcW3ALRUn542"} {
		if strings.Contains(string(file), gone) {
			t.Errorf(".acolyte/memories.jsonl still holds %q after the browser run", gone)
		}
	}
	diff := exec.Command("git", "diff", "--", ".acolyte/")
	diff.Dir = repo
	d, err := diff.Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"-{", "Espresso", "+{", "three approvals", "CI caches"} {
		if !strings.Contains(string(d), want) {
			t.Errorf("git diff does not show %q:\n%s", want, d)
		}
	}
	if !strings.Contains(acolyte("list", "--scope", "user"), "table-driven") {
		t.Error("the user memory is gone")
	}
}

// distill runs the real agent against a fake Gemini whose task answer is
// text and whose distill step observes two project facts.
func distill(t *testing.T, bin, repo string, env []string) {
	t.Helper()
	replies := []string{
		`{"text":"The integration tests run locally."}`,
		`{"functionCall":{"name":"memory_observe","args":{"facts":[{"content":"The user runs integration tests locally.","scope":"project","topic":"testing"},{"content":"CI caches the Go module download between runs.","scope":"project","topic":"ci"}]}}}`,
	}
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		i := n
		n++
		mu.Unlock()
		if i >= len(replies) {
			http.Error(w, "the script ended", http.StatusInternalServerError)
			return
		}
		body := `{"candidates":[{"content":{"role":"model","parts":[` + replies[i] + `]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":40,"candidatesTokenCount":5,"totalTokenCount":45}}`
		if strings.HasSuffix(r.URL.Path, ":streamGenerateContent") {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: "+body+"\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, body)
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	run := exec.CommandContext(ctx, bin, "run", "--base-url", srv.URL, "how are the integration tests run?")
	run.Dir = repo
	run.Env = append(env, "GEMINI_API_KEY=test-key")
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("acolyte run: %v\n%s", err, out)
	}
	list := exec.Command(bin, "list", "--kind", "observation")
	list.Dir, list.Env = repo, env
	out, _ := list.Output()
	if strings.Count(string(out), "distill") != 2 {
		t.Fatalf("distill did not store both observations:\n%s", out)
	}
}
