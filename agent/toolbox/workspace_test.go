package toolbox

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// newTestWorkspace makes a workspace inside a temp dir, with a sibling
// "outside" directory holding a secret that no tool may reach.
func newTestWorkspace(t *testing.T) (*Sandbox, string) {
	t.Helper()
	base := t.TempDir()
	root := filepath.Join(base, "repo")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{root, outside, filepath.Join(root, "pkg", "sub"), filepath.Join(root, ".git")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeTestFile(t, filepath.Join(outside, "secret.txt"), "top secret\n")
	writeTestFile(t, filepath.Join(root, "main.go"), "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n")
	writeTestFile(t, filepath.Join(root, "pkg", "a.go"), "package pkg\n\n// TODO: tidy\nfunc A() int { return 1 }\n")
	writeTestFile(t, filepath.Join(root, "pkg", "sub", "b_test.go"), "package sub\n// TODO: test more\n")
	writeTestFile(t, filepath.Join(root, "README.md"), "# demo\n")
	writeTestFile(t, filepath.Join(root, ".git", "config"), "[core]\n")
	if err := os.WriteFile(filepath.Join(root, "logo.png"), []byte{0x89, 'P', 'N', 'G', 0, 0, 1, 2}, 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := NewSandbox(root)
	if err != nil {
		t.Fatal(err)
	}
	return w, outside
}

func writeTestFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func callTool(t *testing.T, tools []Tool, name string, args any) (any, error) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools {
		if tool.Name == name {
			return tool.Call(context.Background(), raw)
		}
	}
	t.Fatalf("no tool %s", name)
	return nil, nil
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	var te *Error
	if !errors.As(err, &te) {
		t.Fatalf("want tool error %s, got %v", code, err)
	}
	if te.Code != code {
		t.Fatalf("want code %s, got %s (%s)", code, te.Code, te.Message)
	}
}

// resolveAbs resolves p as read_file would and returns the absolute path
// it designates.
func resolveAbs(w *Sandbox, p string) (string, error) {
	root, err := w.openRoot()
	if err != nil {
		return "", err
	}
	defer root.Close()
	rel, err := w.resolve(context.Background(), root, p, readAccess)
	if err != nil {
		return "", err
	}
	return filepath.Join(w.Root, rel), nil
}

func TestResolveRefusesEscapes(t *testing.T) {
	w, outside := newTestWorkspace(t)
	if err := os.Symlink(outside, filepath.Join(w.Root, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(w.Root, "pkg", "secret-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "not-yet"), filepath.Join(w.Root, "dangling")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{
		"../../etc/passwd",
		"../outside/secret.txt",
		"pkg/../../outside/secret.txt",
		"/etc/passwd",
		filepath.Join(outside, "secret.txt"),
		"escape/secret.txt",
		"escape/new-file.txt",
		"escape",
		"pkg/secret-link",
		"dangling",
	} {
		if _, err := resolveAbs(w, p); err == nil {
			t.Errorf("Resolve(%q) succeeded; want outside_workspace", p)
		} else {
			wantCode(t, err, CodeOutsideWorkspace)
		}
	}
}

func TestResolveAllowsInsidePaths(t *testing.T) {
	w, _ := newTestWorkspace(t)
	if err := os.Symlink(filepath.Join(w.Root, "pkg"), filepath.Join(w.Root, "pkglink")); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		"main.go":                          filepath.Join(w.Root, "main.go"),
		"./pkg/../main.go":                 filepath.Join(w.Root, "main.go"),
		filepath.Join(w.Root, "README.md"): filepath.Join(w.Root, "README.md"),
		"pkglink/a.go":                     filepath.Join(w.Root, "pkg", "a.go"),
		"new/dir/file.txt":                 filepath.Join(w.Root, "new", "dir", "file.txt"),
	}
	for in, want := range cases {
		got, err := resolveAbs(w, in)
		if err != nil {
			t.Errorf("Resolve(%q): %v", in, err)
			continue
		}
		if got != want {
			t.Errorf("Resolve(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestReadFileSandboxErrorIsCodedJSON(t *testing.T) {
	w, _ := newTestWorkspace(t)
	_, err := callTool(t, w.Tools(), "read_file", map[string]any{"path": "../../etc/passwd"})
	wantCode(t, err, CodeOutsideWorkspace)
	b, mErr := json.Marshal(AsError(err))
	if mErr != nil {
		t.Fatal(mErr)
	}
	var shape struct {
		Error struct{ Code, Message string }
	}
	if err := json.Unmarshal(b, &shape); err != nil || shape.Error.Code != CodeOutsideWorkspace || shape.Error.Message == "" {
		t.Fatalf("error JSON = %s", b)
	}
}

func TestReadFile(t *testing.T) {
	w, _ := newTestWorkspace(t)
	res, err := callTool(t, w.Tools(), "read_file", map[string]any{"path": "main.go", "start_line": 3, "end_line": 4})
	if err != nil {
		t.Fatal(err)
	}
	fc := res.(FileContent)
	if fc.Content != "func main() {\n\tprintln(\"hi\")\n" || fc.StartLine != 3 || fc.EndLine != 4 || fc.TotalLines != 5 {
		t.Fatalf("got %+v", fc)
	}
	_, err = callTool(t, w.Tools(), "read_file", map[string]any{"path": "logo.png"})
	wantCode(t, err, CodeBinaryFile)
	_, err = callTool(t, w.Tools(), "read_file", map[string]any{"path": "missing.go"})
	wantCode(t, err, CodeNotFound)
	_, err = callTool(t, w.Tools(), "read_file", map[string]any{"path": "main.go", "start_line": 99})
	wantCode(t, err, CodeInvalidArgs)
	_, err = callTool(t, w.Tools(), "read_file", map[string]any{"file": "main.go"})
	wantCode(t, err, CodeInvalidArgs)
}

func TestReadFileContinuesLongFiles(t *testing.T) {
	w, _ := newTestWorkspace(t)
	line := strings.Repeat("x", 99) + "\n"
	writeTestFile(t, filepath.Join(w.Root, "long.txt"), strings.Repeat(line, 2000))
	res, err := callTool(t, w.Tools(), "read_file", map[string]any{"path": "long.txt"})
	if err != nil {
		t.Fatal(err)
	}
	first := res.(FileContent)
	if first.NextLine == 0 || len(first.Content) > maxReadBytes || first.EndLine != first.NextLine-1 {
		t.Fatalf("first part: end %d next %d len %d", first.EndLine, first.NextLine, len(first.Content))
	}
	// Reading on from next_line until it is unset must yield every line once.
	var all strings.Builder
	all.WriteString(first.Content)
	next := first.NextLine
	for parts := 1; next != 0; parts++ {
		if parts > 10 {
			t.Fatal("read_file never reached the end")
		}
		res, err := callTool(t, w.Tools(), "read_file", map[string]any{"path": "long.txt", "start_line": next})
		if err != nil {
			t.Fatal(err)
		}
		part := res.(FileContent)
		if part.StartLine != next {
			t.Fatalf("part starts at %d, want %d", part.StartLine, next)
		}
		all.WriteString(part.Content)
		next = part.NextLine
	}
	if all.String() != strings.Repeat(line, 2000) {
		t.Fatalf("reassembled %d bytes, want %d", all.Len(), 2000*len(line))
	}
}

func TestListFilesGlob(t *testing.T) {
	w, outside := newTestWorkspace(t)
	if err := os.Symlink(outside, filepath.Join(w.Root, "escape")); err != nil {
		t.Fatal(err)
	}
	res, err := callTool(t, w.Tools(), "list_files", map[string]any{"pattern": "**/*.go"})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(res.(FileList).Files, ",")
	if got != "main.go,pkg/a.go,pkg/sub/b_test.go" {
		t.Fatalf("**/*.go = %s", got)
	}
	res, err = callTool(t, w.Tools(), "list_files", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res.(FileList).Files {
		if strings.HasPrefix(f, ".git/") || strings.Contains(f, "secret") {
			t.Errorf("listing includes %s", f)
		}
	}
	_, err = callTool(t, w.Tools(), "list_files", map[string]any{"pattern": "../outside/*"})
	wantCode(t, err, CodeOutsideWorkspace)
}

func TestSearchCode(t *testing.T) {
	w, _ := newTestWorkspace(t)
	res, err := callTool(t, w.Tools(), "search_code", map[string]any{"pattern": `TODO: \w+`})
	if err != nil {
		t.Fatal(err)
	}
	m := res.(CodeMatches).Matches
	if len(m) != 2 || m[0] != (CodeMatch{"pkg/a.go", 3, "// TODO: tidy"}) || m[1].Path != "pkg/sub/b_test.go" {
		t.Fatalf("matches = %+v", m)
	}
	res, err = callTool(t, w.Tools(), "search_code", map[string]any{"pattern": "TODO", "glob": "**/*_test.go"})
	if err != nil {
		t.Fatal(err)
	}
	if m := res.(CodeMatches).Matches; len(m) != 1 || m[0].Path != "pkg/sub/b_test.go" {
		t.Fatalf("glob-limited matches = %+v", m)
	}
	res, err = callTool(t, w.Tools(), "search_code", map[string]any{"pattern": "TODO", "max_results": 1})
	if err != nil {
		t.Fatal(err)
	}
	if cm := res.(CodeMatches); len(cm.Matches) != 1 || !cm.Truncated {
		t.Fatalf("capped = %+v", cm)
	}
	_, err = callTool(t, w.Tools(), "search_code", map[string]any{"pattern": "("})
	wantCode(t, err, CodeInvalidArgs)
}

func TestEditFile(t *testing.T) {
	w, outside := newTestWorkspace(t)
	tools := w.Tools()
	if _, err := callTool(t, tools, "edit_file", map[string]any{"path": "pkg/a.go", "old": "return 1", "new": "return 2"}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(w.Root, "pkg", "a.go")); !strings.Contains(string(b), "return 2") {
		t.Fatalf("edit not applied: %s", b)
	}
	_, err := callTool(t, tools, "edit_file", map[string]any{"path": "pkg/a.go", "old": "return 1", "new": "x"})
	wantCode(t, err, CodeNoMatch)
	writeTestFile(t, filepath.Join(w.Root, "dup.txt"), "a\na\n")
	_, err = callTool(t, tools, "edit_file", map[string]any{"path": "dup.txt", "old": "a", "new": "b"})
	wantCode(t, err, CodeAmbiguousMatch)
	if b, _ := os.ReadFile(filepath.Join(w.Root, "dup.txt")); string(b) != "a\na\n" {
		t.Fatalf("ambiguous edit changed the file: %q", b)
	}
	res, err := callTool(t, tools, "edit_file", map[string]any{"path": "docs/new.md", "old": "", "new": "hello\n"})
	if err != nil || !res.(FileWritten).Created {
		t.Fatalf("create: %v %+v", err, res)
	}
	_, err = callTool(t, tools, "edit_file", map[string]any{"path": "docs/new.md", "old": "", "new": "again"})
	wantCode(t, err, CodeInvalidArgs)

	if err := os.Symlink(outside, filepath.Join(w.Root, "escape")); err != nil {
		t.Fatal(err)
	}
	_, err = callTool(t, tools, "edit_file", map[string]any{"path": "escape/secret.txt", "old": "top", "new": "no"})
	wantCode(t, err, CodeOutsideWorkspace)
	if b, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(b) != "top secret\n" {
		t.Fatalf("secret changed: %q", b)
	}
}

func TestWriteFileStaysInside(t *testing.T) {
	w, outside := newTestWorkspace(t)
	if err := os.Symlink(filepath.Join(outside, "planted"), filepath.Join(w.Root, "dangling")); err != nil {
		t.Fatal(err)
	}
	_, err := callTool(t, w.Tools(), "write_file", map[string]any{"path": "dangling", "content": "x"})
	wantCode(t, err, CodeOutsideWorkspace)
	if _, err := os.Stat(filepath.Join(outside, "planted")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("write followed a dangling symlink outside: %v", err)
	}
	if err := os.Chmod(filepath.Join(w.Root, "main.go"), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := callTool(t, w.Tools(), "write_file", map[string]any{"path": "main.go", "content": "package main\n"})
	if err != nil || res.(FileWritten).Created {
		t.Fatalf("overwrite: %v %+v", err, res)
	}
	st, _ := os.Stat(filepath.Join(w.Root, "main.go"))
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("mode changed to %v", st.Mode().Perm())
	}
}

func TestRunShell(t *testing.T) {
	w, _ := newTestWorkspace(t)
	var asked []string
	w.Confirm = func(cmd string) bool { asked = append(asked, cmd); return !strings.Contains(cmd, "rm") }
	res, err := callTool(t, w.Tools(), "run_shell", map[string]any{"command": "pwd; echo oops >&2; exit 3"})
	if err != nil {
		t.Fatal(err)
	}
	sr := res.(ShellResult)
	if sr.ExitCode != 3 || !strings.Contains(sr.Output, w.Root) || !strings.Contains(sr.Output, "oops") {
		t.Fatalf("result %+v", sr)
	}
	_, err = callTool(t, w.Tools(), "run_shell", map[string]any{"command": "rm -rf pkg"})
	wantCode(t, err, CodeDenied)
	if _, err := os.Stat(filepath.Join(w.Root, "pkg")); err != nil {
		t.Fatal("denied command ran")
	}
	if len(asked) != 2 {
		t.Fatalf("Confirm asked %d times", len(asked))
	}

	w.ShellTimeout = 300 * time.Millisecond
	res, err = callTool(t, w.Tools(), "run_shell", map[string]any{"command": "sleep 30 & sleep 30"})
	if err != nil {
		t.Fatal(err)
	}
	if sr := res.(ShellResult); !sr.TimedOut {
		t.Fatalf("want timeout, got %+v", sr)
	}

	w.Confirm = nil
	_, err = callTool(t, w.Tools(), "run_shell", map[string]any{"command": "true"})
	wantCode(t, err, CodeDenied)
}
