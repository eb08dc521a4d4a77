package gitsync

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/gitsync/derive"
	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/internal/atomicfile"
	"github.com/acolyte-dev/acolyte/memory"
)

const fileHead = `{"acolyte":"memories","version":1}` + "\n"

// line is m's line in the memories file.
func line(m memory.Memory) string {
	return strings.TrimPrefix(string(format.Encode([]memory.Memory{m})), fileHead)
}

func TestHeadingTopicsLoseControlCharacters(t *testing.T) {
	rules, err := derive.RulesFromFile("AGENTS.md", []byte("## Build\x00ing \x1b[1mfast\n\n- Run make before pushing.\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 1 || rules[0].Topic != "building [1mfast" {
		t.Fatalf("rules = %+v", rules)
	}
	path := filepath.Join(t.TempDir(), "memories.jsonl")
	if err := format.WriteFile(path, rules); err != nil {
		t.Fatalf("a rule from a heading with NUL cannot be written: %v", err)
	}
	if _, err := format.ReadFile(path); err != nil {
		t.Fatalf("the written rule poisons the file: %v", err)
	}
}

func TestParseSeedsRejectsInvalidUTF8WithPosition(t *testing.T) {
	_, err := derive.ParseSeeds("seeds.json", []byte("[\n  \"ok\",\n  \"caf\xe9\"\n]"))
	if err == nil || !strings.Contains(err.Error(), "seeds.json:3:7") || !errors.Is(err, memory.ErrInvalidText) {
		t.Fatalf("err = %v; want seeds.json:3:7 and invalid UTF-8", err)
	}
	// A real U+FFFD is text, not an encoding error.
	if seeds, err := derive.ParseSeeds("seeds.json", []byte(`["the \uFFFD and `+"\uFFFD"+` glyphs"]`)); err != nil || len(seeds) != 1 {
		t.Fatalf("valid U+FFFD refused: %v", err)
	}
}

// A bad project file never fails a read: the valid lines are indexed, the
// problem is warned about on every command until it is fixed, and a file
// that cannot be read at all keeps the last import.
func TestRefreshWarnsAndIndexesTheValidLines(t *testing.T) {
	w := workspaceIn(t)
	var warnings []string
	w.Warn = func(m string) { warnings = append(warnings, m) }
	path := format.MemoriesPath(w.Repo.Root)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	poisoned := `{"id":"r-1","kind":"rule","content":"Run make.","topic":"a` + `\u0000"}` + "\n"
	if err := os.WriteFile(path, []byte(fileHead+line(stored("01A", "the parser is hand written", t0))+poisoned), 0o644); err != nil {
		t.Fatal(err)
	}
	for run := range 2 {
		warnings = nil
		got := projectContents(t, w)
		if len(got) != 1 || got[0] != "the parser is hand written" {
			t.Fatalf("run %d: listed %v", run, got)
		}
		if len(warnings) != 1 || !strings.Contains(warnings[0], "memories.jsonl:3:") {
			t.Fatalf("run %d: warnings %q; want one naming line 3", run, warnings)
		}
	}
	// A write is not blocked by the bad line, and keeps it as it was, after
	// the memories; commands go on naming it, at its new line.
	if _, err := w.Add(t.Context(), memory.Draft{Content: "a new fact", Scope: memory.ScopeProject, Kind: memory.KindStored}); err != nil {
		t.Fatalf("a write over a poisoned line: %v", err)
	}
	written, _ := os.ReadFile(path)
	if !strings.HasSuffix(string(written), "\n"+poisoned) || !strings.Contains(string(written), "a new fact") {
		t.Fatalf("the write did not keep the poisoned line at the end:\n%s", written)
	}
	warnings = nil
	if got := projectContents(t, w); len(got) != 2 {
		t.Fatalf("after the write: listed %v", got)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "memories.jsonl:4:") {
		t.Fatalf("after the write: warnings %q; want one naming line 4", warnings)
	}

	conflicted := fileHead + "<<<<<<< HEAD\n" + line(stored("01B", "ours", t0)) + "=======\n>>>>>>> other\n"
	if err := os.WriteFile(path, []byte(conflicted), 0o644); err != nil {
		t.Fatal(err)
	}
	warnings = nil
	if got := projectContents(t, w); len(got) != 2 || got[0] != "the parser is hand written" {
		t.Fatalf("with conflict markers: listed %v; want the last import", got)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "conflict") {
		t.Fatalf("warnings %q", warnings)
	}
}

func TestCheckAsksForSyncAfterAMergeWithoutTheDriver(t *testing.T) {
	root := syncedRepo(t)
	data, _ := os.ReadFile(format.MemoriesPath(root))
	a := stored("01A", "a stored fact", t0)
	// Both sides edited 01A; union kept both lines, after the others.
	data = append(data, line(edited(a, "edited on main", t0.Add(time.Minute)))...)
	data = append(data, line(edited(a, "edited on feature", t0.Add(2*time.Minute)))...)
	if err := os.WriteFile(format.MemoriesPath(root), data, 0o644); err != nil {
		t.Fatal(err)
	}
	report, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	if report.OK || report.Fix != "run `acolyte sync` and commit .acolyte/memories.jsonl" {
		t.Fatalf("report = %+v", report)
	}
	dups := 0
	for _, p := range report.Problems {
		if strings.Contains(p.Message, "id 01A is also on line") && p.Line > 0 {
			dups++
		}
	}
	if dups != 2 {
		t.Fatalf("problems = %+v; want two duplicate lines of 01A", report.Problems)
	}
}

// gitEnv runs git with PATH limited to the system directories, as a GUI
// client or `env PATH=/usr/bin:/bin git pull` does: no acolyte on it.
func gitNoAcolyte(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com"}
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// mergeWithDriver makes two branches that each add a memory and edit 01A,
// installs command as the merge driver and merges them with no acolyte on
// PATH.
func mergeWithDriver(t *testing.T, command string) (repo, out string) {
	t.Helper()
	if _, err := os.Stat("/usr/bin/git"); err != nil {
		t.Skip("needs git in /usr/bin")
	}
	repo = t.TempDir()
	runGit(t, repo, "init", "-q", "-b", "main")
	r, err := Discover(repo)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.InstallMergeDriver(context.Background(), command); err != nil {
		t.Fatal(err)
	}
	if err := EnsureAttributes(repo); err != nil {
		t.Fatal(err)
	}
	a := stored("01A", "fact a", t0)
	commitMemories(t, repo, "base", []memory.Memory{a})
	runGit(t, repo, "checkout", "-q", "-b", "feature")
	commitMemories(t, repo, "feature", []memory.Memory{edited(a, "fact a on feature", t0.Add(2*time.Minute)), stored("01F", "added on feature", t0)})
	runGit(t, repo, "checkout", "-q", "main")
	commitMemories(t, repo, "main", []memory.Memory{edited(a, "fact a on main", t0.Add(time.Minute)), stored("01M", "added on main", t0)})
	return repo, gitNoAcolyte(t, repo, "merge", "--no-edit", "feature")
}

func TestMergeDriverWithoutAcolyteFallsBackToUnion(t *testing.T) {
	repo, out := mergeWithDriver(t, MergeDriverCommand(filepath.Join(t.TempDir(), "gone", "acolyte")))
	if !strings.Contains(out, "union") || strings.Contains(out, "CONFLICT") {
		t.Errorf("git merge output:\n%s", out)
	}
	if status := runGit(t, repo, "status", "--porcelain"); status != "" {
		t.Errorf("the merge left a conflict or changes:\n%s", status)
	}
	data, err := os.ReadFile(format.MemoriesPath(repo))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"added on feature", "added on main", "fact a on feature", "fact a on main"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the union merge lost %q:\n%s", want, data)
		}
	}
	mems, err := format.Decode("memories.jsonl", data)
	if err != nil {
		t.Fatalf("the union result is unreadable: %v", err)
	}
	if string(format.Encode(mems)) != string(format.Encode([]memory.Memory{
		edited(stored("01A", "fact a", t0), "fact a on feature", t0.Add(2*time.Minute)),
		stored("01F", "added on feature", t0), stored("01M", "added on main", t0),
	})) {
		t.Errorf("decoded union result:\n%s", format.Encode(mems))
	}
}

// The path recorded at install time is used even though PATH lacks acolyte.
func TestMergeDriverUsesTheRecordedExecutable(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// A space and a quote in the path must survive the shell git runs.
	dir := filepath.Join(t.TempDir(), "it's a dir")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	wrapper := filepath.Join(dir, "acolyte")
	script := "#!/bin/sh\n[ \"$1\" = merge-driver ] || exit 3\nshift\nACOLYTE_TEST_MERGE_DRIVER=1 exec '" + self + "' \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	repo, out := mergeWithDriver(t, MergeDriverCommand(wrapper))
	if strings.Contains(out, "union") || !strings.Contains(out, "01A: edited on both sides; kept their version") {
		t.Errorf("git merge output:\n%s", out)
	}
	data, _ := os.ReadFile(format.MemoriesPath(repo))
	if !isCanonical(data) || !strings.Contains(string(data), "added on main") || !strings.Contains(string(data), "added on feature") {
		t.Errorf("merged file:\n%s", data)
	}
}

func TestLockRemovesOnlyStaleTemporaryFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), format.Dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * time.Hour)
	files := map[string]time.Time{
		atomicfile.TempPrefix + ".gitattributes-123": old,        // killed write: removed
		atomicfile.TempPrefix + ".gitattributes-456": time.Now(), // may be in flight (no lock): kept
		// Every writer of the memories file holds the lock, so holding it
		// proves this one's writer is gone, however new the file.
		atomicfile.TempPrefix + "memories.jsonl-789": time.Now(),
		"notes.tmp": old, // not ours: kept
	}
	for name, mtime := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	unlock, err := LockDir(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	for name := range files {
		_, err := os.Stat(filepath.Join(dir, name))
		if gone := errors.Is(err, os.ErrNotExist); gone != (name != "notes.tmp" && name != atomicfile.TempPrefix+".gitattributes-456") {
			t.Errorf("%s: removed = %v", name, gone)
		}
	}
}

// Update (acolyte seed FILE) never rewrites a file whose rewrite would drop
// a line: a duplicate id sends the user to sync, which says what it drops,
// and an invalid line is kept as it was, after the memories.
func TestUpdateRefusesFilesItWouldRewriteWithLoss(t *testing.T) {
	root := t.TempDir()
	a := stored("01A", "fact a", t0)
	path := format.MemoriesPath(root)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	add := func(m []memory.Memory) ([]memory.Memory, error) { return append(m, stored("01Z", "new", t0)), nil }
	data := fileHead + line(edited(a, "fact a, later", t0.Add(time.Hour))) + line(a)
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	err := Update(t.Context(), root, add)
	var le *format.LineError
	if !errors.As(err, &le) || le.Line < 2 || !strings.Contains(err.Error(), "acolyte sync") {
		t.Fatalf("Update = %v; want a refusal naming the line and acolyte sync", err)
	}
	if got, _ := os.ReadFile(path); string(got) != data {
		t.Fatal("Update rewrote the file")
	}
	bad := `{"id":"01B","kind":"nonsense","content":"x y"}` + "\n"
	if err := os.WriteFile(path, []byte(fileHead+bad+line(a)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Update(t.Context(), root, add); err != nil {
		t.Fatalf("Update over an invalid line: %v", err)
	}
	if got, _ := os.ReadFile(path); string(got) != fileHead+line(a)+line(stored("01Z", "new", t0))+bad {
		t.Fatalf("file after Update:\n%s", got)
	}
	// Out of order alone loses nothing: Update writes it back sorted.
	if err := os.WriteFile(path, []byte(fileHead+line(stored("01B", "b", t0))+line(a)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Update(t.Context(), root, add); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !isCanonical(got) || !strings.Contains(string(got), "01Z") {
		t.Fatalf("file after Update:\n%s", got)
	}
}

// The merge driver records the path acolyte was started by when it is a
// symlink to the running binary (a package manager's stable link), and the
// binary itself otherwise.
func TestInstalledExecutablePrefersTheStableSymlink(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "acolyte")
	if err := os.Symlink(self, link); err != nil {
		t.Skip("no symlinks here:", err)
	}
	run := func(path string) string {
		cmd := exec.Command(path)
		cmd.Env = append(os.Environ(), "ACOLYTE_TEST_PRINT_EXECUTABLE=1")
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	if got := run(link); got != link {
		t.Errorf("started by the symlink, recorded %q; want %q", got, link)
	}
	if got := run(self); got != self {
		t.Errorf("started directly, recorded %q; want %q", got, self)
	}
}

// An acolyte that fails (an input it refuses, an old version) also falls
// back to the union merge instead of leaving a conflict with only our side.
func TestMergeDriverFallsBackWhenAcolyteFails(t *testing.T) {
	failing := filepath.Join(t.TempDir(), "acolyte")
	if err := os.WriteFile(failing, []byte("#!/bin/sh\necho 'acolyte: refused' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	repo, out := mergeWithDriver(t, MergeDriverCommand(failing))
	if !strings.Contains(out, "acolyte: refused") || !strings.Contains(out, "union") || strings.Contains(out, "CONFLICT") {
		t.Errorf("git merge output:\n%s", out)
	}
	data, _ := os.ReadFile(format.MemoriesPath(repo))
	if !strings.Contains(string(data), "added on feature") || !strings.Contains(string(data), "added on main") {
		t.Errorf("merged file lost a side:\n%s", data)
	}
}
