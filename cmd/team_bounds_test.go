package cmd_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/memory/team"

	"github.com/acolyte-dev/acolyte/internal/pgtest"
	"github.com/acolyte-dev/acolyte/memory/postgres"
)

// Local work never waits for the team database: through a fault proxy that
// slows every packet or stalls them all, hooks, a project remember, sync
// and check never connect, an unscoped search answers from local memory
// within the wait its pace learned (team.Pace) and says the team part was left out, and a team-scoped
// command fails within its call's bound instead of taking minutes.
func TestTeamCallsNeverHoldUpLocalWork(t *testing.T) {
	srv := pgtest.Start(t)
	if _, err := postgres.Init(t.Context(), srv.URL("postgres", "postgres"), "red"); err != nil {
		t.Fatal(err)
	}
	srv.Admin(t, "postgres", "CREATE ROLE alice LOGIN", "GRANT acolyte_team_red TO alice")
	db := srv.NewDatabase(t)
	if _, err := postgres.Init(t.Context(), srv.URL("postgres", db), ""); err != nil {
		t.Fatal(err)
	}
	p := srv.Proxy(t)
	w := newGitWorld(t, gitSetup{onPath: true})
	w.env = []string{"ACOLYTE_TEAM_DB=" + p.URL("alice", db), "ACOLYTE_TEAM=red"}
	root := filepath.Join(t.TempDir(), "repo")
	w.git(filepath.Dir(root), "init", "-q", "-b", "main", root)
	w.git(root, "commit", "-q", "--allow-empty", "-m", "init")
	w.acolyte(root, "hooks", "install")
	w.acolyte(root, "remember", "--scope", "team", "staging is reached through bastion-2")
	// While the team is healthy, unscoped searches find its memories, and
	// each teaches the pace how long the team takes to answer.
	var learned time.Duration
	for range team.PaceSamples {
		start := time.Now()
		if out := w.acolyte(root, "search", "how is staging reached"); !strings.Contains(out, "bastion-2") {
			t.Fatalf("a search with a healthy team database did not find the team's memory: %q", out)
		}
		learned = max(learned, time.Since(start))
	}
	t.Logf("healthy team: the slowest of %d unscoped searches took %v", team.PaceSamples, learned.Round(time.Millisecond))
	before := p.Accepted()

	p.Delay(300 * time.Millisecond)
	w.acolyte(root, "remember", "the API server listens on port 8080")
	w.commit(root, "a project fact")             // pre-commit
	w.git(root, "checkout", "-q", "-b", "topic") // post-checkout
	w.acolyte(root, "sync")
	w.acolyte(root, "check")
	if n := p.Accepted() - before; n != 0 {
		t.Errorf("hooks, a project remember, sync and check opened %d team connections", n)
	}

	// The figures for docs/team.md, printed with -v;
	// the bounds are asserted below, and speed is not.
	var stderr string
	timed := func(env []string, name string, args ...string) time.Duration {
		saved := w.env
		w.env = env
		defer func() { w.env = saved }()
		start := time.Now()
		if name == "git" {
			w.git(root, args...)
		} else {
			_, stderr = w.acolyteSplit(t, root, args...)
		}
		return time.Since(start)
	}
	for _, c := range []struct {
		what string
		env  []string
	}{{"no team database", nil}, {"team database at 300 ms a packet", w.env}} {
		first := timed(c.env, "acolyte", "search", "API server port")
		if c.env != nil {
			// The first search after the team turned slow waits what the
			// pace learned, not the longest wait: a team that answered in
			// tens of milliseconds has not for a few hundred.
			waited := regexp.MustCompile(`waited ([0-9.]+m?s)\)`).FindStringSubmatch(stderr)
			if waited == nil {
				t.Errorf("the first search with a slow team did not say how long it waited: %q", stderr)
			} else if d, _ := time.ParseDuration(waited[1]); d >= team.PaceMax && learned < team.PaceMax/4 {
				t.Errorf("the first search with a slow team waited %v although healthy searches took at most %v", d, learned.Round(time.Millisecond))
			}
		}
		next := timed(c.env, "acolyte", "search", "API server port")
		checkout := timed(c.env, "git", "checkout", "-q", "main")
		timed(c.env, "git", "checkout", "-q", "topic")
		t.Logf("%s: search %v, the next search %v, post-checkout hook (git checkout) %v, project remember %v", c.what,
			first.Round(time.Millisecond), next.Round(time.Millisecond), checkout.Round(time.Millisecond),
			timed(c.env, "acolyte", "remember", "fact "+c.what).Round(time.Millisecond))
		if next > 700*time.Millisecond {
			t.Errorf("%s: the search after a slow one took %v; it should wait the team only briefly", c.what, next.Round(time.Millisecond))
		}
	}
	for _, fault := range []string{"delay", "stall"} {
		if fault == "stall" {
			p.Stall(true)
		}
		start := time.Now()
		out, stderr := w.acolyteSplit(t, root, "search", "API server port")
		took := time.Since(start)
		if !strings.Contains(out, "8080") {
			t.Errorf("%s: search did not answer from local memory: %q", fault, out)
		}
		if !strings.Contains(stderr, "team memories are left out") {
			t.Errorf("%s: search did not say the team part was left out: %q", fault, stderr)
		}
		if took > time.Second+slackCmd {
			t.Errorf("%s: search took %v with a slow team database", fault, took.Round(time.Millisecond))
		}
	}
	// At 2 s a packet, as measured in issue 24 (a team remember took 88 s).
	p.Stall(false)
	p.Delay(2 * time.Second)
	start := time.Now()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, w.exe, "remember", "--scope", "team", "the VPN drops idle sessions")
	cmd.Dir = root
	cmd.Env = w.environ()
	out, err := cmd.CombinedOutput()
	if took := time.Since(start); err == nil || took > postgres.CallTimeout+slackCmd {
		t.Errorf("a team remember at 2 s a packet: %v after %v: %s", err, took.Round(time.Millisecond), out)
	}
	p.Delay(0)
}

// slackCmd is what a command may take past a bound: starting the process,
// and a busy machine.
const slackCmd = time.Second

// acolyteSplit runs acolyte and returns its stdout and stderr apart.
func (w *gitWorld) acolyteSplit(t *testing.T, dir string, args ...string) (string, string) {
	t.Helper()
	cmd := exec.Command(w.exe, args...)
	cmd.Dir = dir
	cmd.Env = w.environ()
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("acolyte %s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String(), stderr.String()
}
