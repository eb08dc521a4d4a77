package cmd_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The forgetting matrix: on real git, in every way git may merge the
// memories file (acolyte's merge driver, git's union merge on a clone
// without hooks, the driver's union fallback when its binary is gone, the
// driver finding acolyte on PATH), every operation that merges (merge,
// pull, rebase, cherry-pick, revert) with a forget on one side and an add
// or an edit on the other must leave the memories the merge driver's rules
// give: the forgotten memory stays forgotten, an edit outlives a forget
// of the version it edited, and reverting a forget brings the memory back.

const (
	alpha   = "Alpha fact: the API server listens on port 8080"
	bravo   = "Bravo fact: webhooks are signed with HMAC-SHA256"
	bravo2  = "Bravo fact: webhooks are signed with Ed25519 since March"
	charlie = "Charlie fact: thumbnails are cached in redis"
	delta   = "Delta fact: the scheduler runs at midnight UTC"
)

// gitSetup is how a clone merges the memories file.
type gitSetup struct {
	name string
	// hooks installs the hooks (and the merge driver).
	hooks bool
	// gone removes the binary the hooks were installed from.
	gone bool
	// onPath leaves acolyte on the PATH git runs hooks and drivers with.
	onPath bool
	// union is true when the memories file is merged line by line.
	union bool
}

var gitSetups = []gitSetup{
	{name: "hooks", hooks: true, onPath: true},
	{name: "no-hooks", onPath: true, union: true},
	{name: "binary-gone", hooks: true, gone: true, union: true},
	{name: "path-only", hooks: true, gone: true, onPath: true},
}

// gitWorld runs git and acolyte for one case of the matrix.
type gitWorld struct {
	t    *testing.T
	exe  string // the acolyte every test command runs, by absolute path
	path string // PATH for git, hooks and the merge driver
	home string
	env  []string // more variables, after the defaults
}

// systemPath is PATH without any directory holding an acolyte (testscript
// puts the test binary on it), so that a setup decides where acolyte is.
func systemPath() string {
	var keep []string
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(dir, "acolyte")); err != nil {
			keep = append(keep, dir)
		}
	}
	return strings.Join(keep, string(os.PathListSeparator))
}

func newGitWorld(t *testing.T, s gitSetup) *gitWorld {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	bin := filepath.Join(base, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(self, filepath.Join(bin, "acolyte")); err != nil {
		t.Skipf("no symlinks: %v", err)
	}
	w := &gitWorld{t: t, exe: filepath.Join(bin, "acolyte"), path: systemPath(), home: filepath.Join(base, "home")}
	if s.onPath {
		w.path = bin + string(os.PathListSeparator) + w.path
	}
	return w
}

func (w *gitWorld) run(dir, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = w.environ()
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String() + stderr.String(), err
	}
	// Warnings on stderr are not part of a --json answer.
	return stdout.String(), nil
}

// environ is the environment of every command the world runs.
func (w *gitWorld) environ() []string {
	env := append(os.Environ(), "PATH="+w.path, "ACOLYTE_HOME="+w.home, "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
		"GEMINI_API_KEY=", "GOOGLE_API_KEY=", "ACOLYTE_TEAM_DB=", "ACOLYTE_TEAM=", "GIT_EDITOR=true")
	return append(env, w.env...)
}

func (w *gitWorld) git(dir string, args ...string) string {
	w.t.Helper()
	out, err := w.run(dir, "git", args...)
	if err != nil {
		w.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (w *gitWorld) acolyte(dir string, args ...string) string {
	w.t.Helper()
	out, err := w.run(dir, w.exe, args...)
	if err != nil {
		w.t.Fatalf("acolyte %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// remember stores text and commits it, returning its id.
func (w *gitWorld) remember(dir, text string) string {
	w.t.Helper()
	var out struct {
		Memory struct {
			ID string `json:"id"`
		} `json:"memory"`
	}
	if err := json.Unmarshal([]byte(w.acolyte(dir, "remember", "--json", text)), &out); err != nil || out.Memory.ID == "" {
		w.t.Fatalf("remember %q: %v", text, err)
	}
	w.commit(dir, "remember "+text[:5])
	return out.Memory.ID
}

func (w *gitWorld) commit(dir, msg string) {
	w.t.Helper()
	w.git(dir, "add", "-A", ".acolyte")
	w.git(dir, "commit", "-q", "-m", msg)
}

// project lists the project memories' contents, sorted.
func (w *gitWorld) project(dir string) []string {
	w.t.Helper()
	var mems []struct {
		Content string `json:"content"`
	}
	if err := json.Unmarshal([]byte(w.acolyte(dir, "list", "--scope", "project", "--json")), &mems); err != nil {
		w.t.Fatal(err)
	}
	var out []string
	for _, m := range mems {
		out = append(out, m.Content)
	}
	slices.Sort(out)
	return out
}

// clone makes a clone of origin set up as s.
func (w *gitWorld) clone(s gitSetup, origin, name string) string {
	w.t.Helper()
	dir := filepath.Join(filepath.Dir(origin), name)
	w.git(filepath.Dir(origin), "clone", "-q", origin, dir)
	if s.hooks {
		install := *w
		gone := filepath.Join(w.t.TempDir(), "gone")
		if s.gone {
			// Installed from a binary that is then removed, as after an upgrade.
			os.MkdirAll(gone, 0o755)
			os.Symlink(w.exe, filepath.Join(gone, "acolyte"))
			install.exe = filepath.Join(gone, "acolyte")
			install.path = gone + string(os.PathListSeparator) + w.path
		}
		install.acolyte(dir, "hooks", "install")
		if s.gone {
			os.RemoveAll(gone)
		}
	}
	return dir
}

// base makes an origin holding alpha and bravo, bravo last in the file,
// and returns it with bravo's id.
func (w *gitWorld) base() (origin, bravoID string) {
	w.t.Helper()
	root := w.t.TempDir()
	seed := filepath.Join(root, "seed")
	w.git(root, "init", "-q", "-b", "main", seed)
	w.git(seed, "commit", "-q", "--allow-empty", "-m", "init")
	w.remember(seed, alpha)
	bravoID = w.remember(seed, bravo)
	origin = filepath.Join(root, "origin.git")
	w.git(root, "clone", "-q", "--bare", seed, origin)
	return origin, bravoID
}

// otherSide is the change made beside the forget: an add after the
// forgotten memory's line, or an edit of the forgotten memory.
type otherSide struct {
	name string
	do   func(w *gitWorld, dir, bravoID string)
	want []string
}

var otherSides = []otherSide{
	{"add", func(w *gitWorld, dir, _ string) { w.remember(dir, charlie) }, []string{alpha, charlie}},
	{"edit", func(w *gitWorld, dir, id string) {
		w.acolyte(dir, "edit", id, bravo2)
		w.commit(dir, "edit bravo")
	}, []string{alpha, bravo2}},
}

func (w *gitWorld) forget(dir, id string) {
	w.t.Helper()
	w.acolyte(dir, "forget", id)
	w.commit(dir, "forget bravo")
}

// gitOps run one operation; each returns the clone to look at.
var gitOps = []struct {
	name string
	run  func(w *gitWorld, s gitSetup, other otherSide) (dir string, want []string)
}{
	{"merge", func(w *gitWorld, s gitSetup, other otherSide) (string, []string) {
		origin, id := w.base()
		dir := w.clone(s, origin, "repo")
		w.git(dir, "checkout", "-q", "-b", "left")
		w.forget(dir, id)
		w.git(dir, "checkout", "-q", "main")
		other.do(w, dir, id)
		w.git(dir, "merge", "-q", "--no-edit", "left")
		return dir, other.want
	}},
	{"pull", func(w *gitWorld, s gitSetup, other otherSide) (string, []string) {
		origin, id := w.base()
		theirs := w.clone(gitSetup{}, origin, "theirs")
		other.do(w, theirs, id)
		w.git(theirs, "push", "-q", "origin", "main")
		dir := w.clone(s, origin, "repo")
		w.git(dir, "reset", "-q", "--hard", "HEAD~1")
		w.acolyte(dir, "list")
		w.forget(dir, id)
		w.git(dir, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
		return dir, other.want
	}},
	{"rebase", func(w *gitWorld, s gitSetup, other otherSide) (string, []string) {
		origin, id := w.base()
		dir := w.clone(s, origin, "repo")
		w.git(dir, "checkout", "-q", "-b", "left")
		w.forget(dir, id)
		w.git(dir, "checkout", "-q", "main")
		other.do(w, dir, id)
		w.git(dir, "checkout", "-q", "left")
		w.git(dir, "rebase", "-q", "main")
		return dir, other.want
	}},
	{"cherry-pick", func(w *gitWorld, s gitSetup, other otherSide) (string, []string) {
		origin, id := w.base()
		dir := w.clone(s, origin, "repo")
		w.git(dir, "checkout", "-q", "-b", "left")
		w.forget(dir, id)
		w.git(dir, "checkout", "-q", "main")
		other.do(w, dir, id)
		if out, err := w.run(dir, "git", "cherry-pick", "left"); err != nil {
			// A merge that dropped the forget leaves nothing to commit.
			if !strings.Contains(out, "now empty") {
				w.t.Fatalf("git cherry-pick: %v\n%s", err, out)
			}
			w.git(dir, "cherry-pick", "--skip")
		}
		return dir, other.want
	}},
	{"revert", func(w *gitWorld, s gitSetup, other otherSide) (string, []string) {
		// Forget, then add (or edit another memory), then revert the
		// forget: the memory comes back and the later change stays.
		origin, id := w.base()
		dir := w.clone(s, origin, "repo")
		w.forget(dir, id)
		if other.name == "add" {
			w.remember(dir, charlie)
			w.git(dir, "revert", "--no-edit", "HEAD~1")
			return dir, []string{alpha, bravo, charlie}
		}
		var found []struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal([]byte(w.acolyte(dir, "list", "--scope", "project", "--json")), &found); err != nil || len(found) != 1 {
			w.t.Fatalf("want alpha alone before the revert: %v %v", found, err)
		}
		w.acolyte(dir, "edit", found[0].ID, alpha+", behind nginx")
		w.commit(dir, "edit alpha")
		w.git(dir, "revert", "--no-edit", "HEAD~1")
		return dir, []string{alpha + ", behind nginx", bravo}
	}},
}

func TestForgettingSurvivesEveryMerge(t *testing.T) {
	// Every case is a world of its own (gitWorld: temp dirs, environment),
	// and most of its time is spent waiting for git and acolyte processes.
	t.Parallel()
	if testing.Short() {
		t.Skip("the whole merge matrix on real git; CI runs it (go test without -short)")
	}
	for _, s := range gitSetups {
		for _, op := range gitOps {
			for _, other := range otherSides {
				t.Run(s.name+"/"+op.name+"/"+other.name, func(t *testing.T) {
					t.Parallel()
					w := newGitWorld(t, s)
					dir, want := op.run(w, s, other)
					if got := w.project(dir); !slices.Equal(got, want) {
						t.Fatalf("after %s: project memories\n%q\nwant\n%q", op.name, got, want)
					}
					// sync makes the files canonical and check then passes,
					// with the same memories.
					w.acolyte(dir, "sync")
					if out, err := w.run(dir, w.exe, "check"); err != nil {
						t.Fatalf("check after sync: %v\n%s", err, out)
					}
					if got := w.project(dir); !slices.Equal(got, want) {
						t.Fatalf("after sync: project memories\n%q\nwant\n%q", got, want)
					}
				})
			}
		}
	}
}

// Reverting a commit that added a memory removes it where the merge driver
// runs. A union merge cannot: the revert deletes the line next to lines a
// later commit appended, and union keeps every line of both sides there, so
// git reports "nothing to commit"; the clone needs `acolyte hooks install`.
func TestRevertOfAnAddRemovesTheMemory(t *testing.T) {
	t.Parallel()
	for _, s := range gitSetups {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			if s.union {
				t.Skip("a union merge keeps a reverted line that touches a later one; see the comment")
			}
			w := newGitWorld(t, s)
			origin, _ := w.base()
			dir := w.clone(s, origin, "repo")
			w.remember(dir, charlie)
			w.remember(dir, delta)
			w.git(dir, "revert", "--no-edit", "HEAD~1")
			if got, want := w.project(dir), []string{alpha, bravo, delta}; !slices.Equal(got, want) {
				t.Fatalf("after reverting the add: %q, want %q", got, want)
			}
		})
	}
}
