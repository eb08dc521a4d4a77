package cmd_test

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/acolyte-dev/acolyte/cmd"
	"github.com/acolyte-dev/acolyte/internal/pgtest"
	"github.com/acolyte-dev/acolyte/memory/postgres"
)

// A team database that is down, or that goes away mid-call, is named as
// the cause: forget of a team id does not answer "no memory with that
// id" (which would invite the user to think it gone), and a connection
// lost mid-write is explained, not printed as a bare "unexpected EOF".
func TestTeamDatabaseLostIsExplained(t *testing.T) {
	srv := pgtest.Start(t)
	db := srv.NewDatabase(t)
	if _, err := postgres.Init(t.Context(), srv.URL("postgres", db), "red"); err != nil {
		t.Fatal(err)
	}
	proxy := srv.Proxy(t)
	home, repo := t.TempDir(), t.TempDir()
	if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	run := func(args ...string) (int, string, string) {
		var out, errOut strings.Builder
		args = append([]string{"acolyte", "--home", home, "--repo", repo, "--team-db", proxy.URL("postgres", db), "--team", "red"}, args...)
		code := cmd.Run(context.Background(), args, strings.NewReader(""), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	code, out, stderr := run("remember", "--scope", "team", "the staging database is rebuilt every night")
	if code != cmd.ExitOK {
		t.Fatalf("team remember: exit %d: %s", code, stderr)
	}
	id := strings.TrimSpace(out)

	t.Run("forget while down", func(t *testing.T) {
		proxy.Refuse(true)
		defer proxy.Refuse(false)
		proxy.Drop()
		for _, typed := range []string{id, id[:10]} {
			code, _, stderr := run("forget", "--json", typed)
			var e struct {
				Error struct{ Code, Message string }
			}
			if err := json.Unmarshal([]byte(stderr), &e); err != nil {
				t.Fatalf("forget --json %s: stderr is not one JSON error: %v: %s", typed, err, stderr)
			}
			if code != cmd.ExitUsage || e.Error.Code != "team_unreachable" || strings.Contains(e.Error.Message, "no memory with that id") ||
				!strings.Contains(e.Error.Message, "team database") {
				t.Errorf("forget %s with the team database down: exit %d, %+v", typed, code, e.Error)
			}
		}
		// A team write while it is down has the same code.
		code, _, stderr := run("remember", "--json", "--scope", "team", "the wiki moved to docs.internal")
		if code != cmd.ExitUsage || !strings.Contains(stderr, `"code":"team_unreachable"`) {
			t.Errorf("team remember with the team database down: exit %d: %s", code, stderr)
		}
	})

	t.Run("killed mid-write", func(t *testing.T) {
		// The insert waits in a trigger, and its server process is
		// killed (kill -9) while remember waits for the answer.
		srv.Admin(t, db,
			`CREATE FUNCTION hold() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(30); RETURN NEW; END $$`,
			`CREATE TRIGGER hold BEFORE INSERT ON team_memories FOR EACH ROW EXECUTE FUNCTION hold()`)
		done := make(chan struct{})
		var code int
		var stderr string
		go func() {
			defer close(done)
			code, _, stderr = run("remember", "--scope", "team", "deploys wait for the green build")
		}()
		admin, err := pgx.Connect(t.Context(), srv.URL("postgres", db))
		if err != nil {
			t.Fatal(err)
		}
		defer admin.Close(context.Background())
		var pid int
		for start := time.Now(); pid == 0; time.Sleep(20 * time.Millisecond) {
			if time.Since(start) > 10*time.Second {
				t.Fatal("the insert never reached the trigger")
			}
			err := admin.QueryRow(t.Context(), `SELECT pid FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND pid <> pg_backend_pid()`).Scan(&pid)
			if err != nil && !errors.Is(err, pgx.ErrNoRows) {
				t.Fatal(err)
			}
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-done
		if code != cmd.ExitUsage || strings.HasSuffix(strings.TrimSpace(stderr), "unexpected EOF") ||
			!strings.Contains(stderr, "closed the connection") {
			t.Errorf("remember with its server process killed: exit %d: %s", code, stderr)
		}
	})
}
