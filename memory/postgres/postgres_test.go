package postgres_test

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/acolyte-dev/acolyte/internal/pgtest"
	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/embed/static"
	"github.com/acolyte-dev/acolyte/memory/internal/enginetest"
	"github.com/acolyte-dev/acolyte/memory/postgres"
	"github.com/acolyte-dev/acolyte/memory/sqlite"
)

// cluster is one server for the package's tests, with two teams, red and
// blue, and a login role in each: alice (red) and bob (blue). Roles belong
// to the whole server, so they are made once.
type cluster struct {
	srv *pgtest.Server
}

func start(t testing.TB) *cluster {
	t.Helper()
	srv := pgtest.Start(t)
	ctx := t.Context()
	for _, team := range []string{"red", "blue"} {
		if _, err := postgres.Init(ctx, srv.URL("postgres", "postgres"), team); err != nil {
			t.Fatal(err)
		}
	}
	srv.Admin(t, "postgres",
		"CREATE ROLE alice LOGIN", "GRANT acolyte_team_red TO alice",
		"CREATE ROLE bob LOGIN", "GRANT acolyte_team_blue TO bob")
	return &cluster{srv: srv}
}

// database makes a database with the team schema.
func (c *cluster) database(t testing.TB) string {
	t.Helper()
	db := c.srv.NewDatabase(t)
	if _, err := postgres.Init(t.Context(), c.srv.URL("postgres", db), ""); err != nil {
		t.Fatal(err)
	}
	return db
}

func (c *cluster) open(t testing.TB, role, db string, e memory.Embedder) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(t.Context(), c.srv.URL(role, db), e)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func TestPostgres(t *testing.T) {
	c := start(t)
	t.Run("Conformance", func(t *testing.T) {
		var mu sync.Mutex
		dbs := map[string]string{}
		enginetest.Run(t, enginetest.Harness{
			Scope: memory.ScopeTeam,
			Vis:   memory.Visibility{Team: "red", ProjectKey: "/src/a"},
			Other: memory.Visibility{Team: "blue", ProjectKey: "/src/a"},
			Open: func(t *testing.T, e memory.Embedder) memory.Engine {
				mu.Lock()
				db, ok := dbs[t.Name()]
				if !ok {
					db = c.database(t)
					dbs[t.Name()] = db
				}
				mu.Unlock()
				// alice is in red only: the suite's "other" caller (blue)
				// is refused by the database as well as by acolyte.
				return c.open(t, "alice", db, e)
			},
		})
	})
	t.Run("Isolation", func(t *testing.T) { testIsolation(t, c) })
	t.Run("Hostile", func(t *testing.T) { testHostile(t, c) })
	t.Run("MigrateToVersion6", func(t *testing.T) { testMigrateToVersion6(t, c) })
	t.Run("Schema", func(t *testing.T) { testSchema(t, c) })
	t.Run("SameRanking", func(t *testing.T) { testSameRanking(t, c) })
	t.Run("Edit", func(t *testing.T) { testEdit(t, c) })
	t.Run("Reindex", func(t *testing.T) { testReindex(t, c) })
	t.Run("MigrateFromVersion1", func(t *testing.T) { testMigrateFromVersion1(t, c) })
	t.Run("LargeTeam", func(t *testing.T) { testLargeTeam(t, c) })
	t.Run("MigrateToIndexes", func(t *testing.T) { testMigrateToIndexes(t, c) })
	t.Run("HeldLocks", func(t *testing.T) { testHeldLocks(t, c) })
	t.Run("InitGivesUp", func(t *testing.T) { testInitGivesUp(t, c) })
}

// testIsolation checks that row-level security, not acolyte's own WHERE
// clauses, keeps one team from another: alice (red) and bob (blue), both
// ordinary login roles, each with hand-written SQL on their own
// connection, can neither read, change nor delete the other team's rows
// in team_memories, team_embeddings or the audit table team_removals, nor
// write a memory in another role's name, nor hide or rewrite a removal.
func testIsolation(t *testing.T, c *cluster) {
	ctx := t.Context()
	db := c.database(t)
	alice := c.open(t, "alice", db, enginetest.Concepts("m"))
	red := memory.Visibility{Team: "red"}
	kept, err := alice.Add(ctx, red, memory.Draft{Content: "red team secret plan: ship on Friday", Scope: memory.ScopeTeam})
	if err != nil {
		t.Fatal(err)
	}
	if kept.Memory.Author != "alice" {
		t.Fatalf("alice's memory has author %q", kept.Memory.Author)
	}
	gone, err := alice.Add(ctx, red, memory.Draft{Content: "red team retro is on Thursdays", Scope: memory.ScopeTeam})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := alice.Delete(ctx, red, gone.Memory.ID); err != nil {
		t.Fatal(err)
	}
	bob := c.open(t, "bob", db, enginetest.Concepts("m"))
	blue := memory.Visibility{Team: "blue"}
	bobs, err := bob.Add(ctx, blue, memory.Draft{Content: "blue team ships on Monday", Scope: memory.ScopeTeam})
	if err != nil {
		t.Fatal(err)
	}
	bobGone, err := bob.Add(ctx, blue, memory.Draft{Content: "blue team standup moved to ten", Scope: memory.ScopeTeam})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bob.Delete(ctx, blue, bobGone.Memory.ID); err != nil {
		t.Fatal(err)
	}

	conns := map[string]*pgx.Conn{}
	for _, role := range []string{"alice", "bob"} {
		conn, err := pgx.Connect(ctx, c.srv.URL(role, db))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		conns[role] = conn
	}
	count := func(role, q string, args ...any) int {
		t.Helper()
		var n int
		if err := conns[role].QueryRow(ctx, q, args...).Scan(&n); err != nil {
			t.Fatalf("%s: %s: %v", role, q, err)
		}
		return n
	}
	// affected runs a statement that must change nothing: either the
	// database refuses it or row-level security leaves it no rows.
	affected := func(role, q string, args ...any) int64 {
		t.Helper()
		tag, err := conns[role].Exec(ctx, q, args...)
		if err != nil {
			return 0
		}
		return tag.RowsAffected()
	}
	// refused runs a statement the database must refuse.
	refused := func(role, q string, args ...any) {
		t.Helper()
		if _, err := conns[role].Exec(ctx, q, args...); err == nil {
			t.Errorf("%s: %s: allowed, want refused", role, q)
		}
	}

	type side struct {
		role, team, other, otherID string
	}
	for _, s := range []side{{"alice", "red", "blue", bobs.Memory.ID}, {"bob", "blue", "red", kept.Memory.ID}} {
		// Reading: every table shows only the role's own team, even when
		// asked for the other's by name or id.
		for _, table := range []string{"team_memories", "team_embeddings", "team_removals"} {
			if n := count(s.role, `SELECT count(*) FROM `+table+` WHERE team <> $1`, s.team); n != 0 {
				t.Errorf("%s reads %d rows of other teams in %s", s.role, n, table)
			}
			if n := count(s.role, `SELECT count(*) FROM `+table+` WHERE team = $1`, s.team); n != 1 {
				t.Errorf("%s reads %d of their own team's rows in %s, want 1", s.role, n, table)
			}
		}
		if n := count(s.role, `SELECT count(*) FROM team_memories WHERE id = $1`, s.otherID); n != 0 {
			t.Errorf("%s reads the other team's memory by id", s.role)
		}
		// Changing and deleting the other team's rows finds none.
		for _, q := range []string{
			`UPDATE team_memories SET content = 'pwned' WHERE team = $1`,
			`UPDATE team_embeddings SET vec = '\x00000000' WHERE team = $1`,
			`DELETE FROM team_embeddings WHERE team = $1`,
			`DELETE FROM team_memories WHERE team = $1`,
		} {
			if n := affected(s.role, q, s.other); n != 0 {
				t.Errorf("%s: %s changed %d rows of %s", s.role, q, n, s.other)
			}
		}
		// Writing into the other team, or moving a row there, is refused.
		refused(s.role, `INSERT INTO team_memories (id, team, kind, content, content_hash, lexical, created_at, updated_at, tokens)
			VALUES ('01JZZZZZZZZZZZZZZZZZZZZZZZ', $1, 'stored', 'planted', 'planted', 'planted', now(), now(), 1)`, s.other)
		refused(s.role, `UPDATE team_memories SET team = $1`, s.other)
		refused(s.role, `INSERT INTO team_embeddings (id, team, model, vec) VALUES ($1, $2, 'm', '\x00000000')`, s.otherID, s.other)
		refused(s.role, `UPDATE team_embeddings SET team = $1`, s.other)
		// The audit table: nobody writes it by hand, for either team, nor
		// changes or removes its rows, their own team's included.
		for _, team := range []string{s.team, s.other} {
			refused(s.role, `INSERT INTO team_removals (team, id, kind, content, author, removed_by)
				VALUES ($1, 'x', 'stored', 'forged', $2, $2)`, team, s.role)
		}
		refused(s.role, `UPDATE team_removals SET removed_by = 'someone else'`)
		refused(s.role, `DELETE FROM team_removals`)
		refused(s.role, `TRUNCATE team_removals`)
		// Nor may a member switch the triggers off.
		refused(s.role, `ALTER TABLE team_memories DISABLE TRIGGER USER`)
		refused(s.role, `SET session_replication_role = replica`)
	}
	// After all that, each team's rows are as they were.
	if got, err := alice.List(ctx, red, memory.Filter{}); err != nil || len(got) != 1 || got[0].Content != kept.Memory.Content {
		t.Fatalf("red's memories after bob's attempts: %+v (%v)", got, err)
	}
	if got, err := bob.List(ctx, blue, memory.Filter{}); err != nil || len(got) != 1 || got[0].Content != bobs.Memory.Content {
		t.Fatalf("blue's memories after alice's attempts: %+v (%v)", got, err)
	}

	// The author is the writing role, whatever the SQL says.
	if _, err := conns["alice"].Exec(ctx, `INSERT INTO team_memories (id, team, kind, content, content_hash, lexical, created_at, updated_at, tokens, author)
		VALUES ('01JYYYYYYYYYYYYYYYYYYYYYYY', 'red', 'stored', 'bob said so', 'h1', 'bob said so', now(), now(), 3, 'bob')`); err != nil {
		t.Fatal(err)
	}
	if _, err := conns["alice"].Exec(ctx, `UPDATE team_memories SET author = 'bob' WHERE team = 'red'`); err != nil {
		t.Fatal(err)
	}
	var authors string
	if err := conns["alice"].QueryRow(ctx, `SELECT string_agg(DISTINCT author, ',') FROM team_memories`).Scan(&authors); err != nil {
		t.Fatal(err)
	}
	if authors != "alice" {
		t.Fatalf("after alice wrote and updated memories naming bob, their authors are %q, want alice", authors)
	}

	// A removal by hand-written SQL is audited like one by acolyte, and a
	// temporary table of the same name cannot capture the audit row.
	// Members may not DELETE by hand (a table's DELETE right lets its
	// holder lock the table against every team); acolyte_forget removes.
	if _, err := conns["alice"].Exec(ctx, `CREATE TEMP TABLE team_removals (LIKE public.team_removals)`); err != nil {
		t.Fatal(err)
	}
	refused("alice", `DELETE FROM team_memories WHERE id = '01JYYYYYYYYYYYYYYYYYYYYYYY'`)
	if n := count("alice", `SELECT count(*) FROM acolyte_forget('red', ARRAY['01JYYYYYYYYYYYYYYYYYYYYYYY'])`); n != 1 {
		t.Fatalf("alice removing her own memory removed %d rows", n)
	}
	if n := count("alice", `SELECT count(*) FROM acolyte_forget('blue', ARRAY[$1])`, bobs.Memory.ID); n != 0 {
		t.Fatalf("alice removed %d of blue's memories through acolyte_forget", n)
	}
	if n := count("alice", `SELECT acolyte_forget_vectors('blue', $1)`, bobs.Memory.ID); n != 0 {
		t.Fatalf("alice removed %d of blue's vectors through acolyte_forget_vectors", n)
	}
	var who, what string
	var when time.Time
	if err := conns["alice"].QueryRow(ctx, `SELECT removed_by, content, removed_at FROM public.team_removals WHERE id = '01JYYYYYYYYYYYYYYYYYYYYYYY'`).Scan(&who, &what, &when); err != nil {
		t.Fatalf("the hand-written removal left no audit row: %v", err)
	}
	if who != "alice" || what != "bob said so" || time.Since(when) > time.Minute {
		t.Fatalf("audit row: removed by %q, content %q, at %v", who, what, when)
	}
	if n := count("alice", `SELECT count(*) FROM pg_temp.team_removals`); n != 0 {
		t.Fatalf("the temporary table captured %d audit rows", n)
	}
	// acolyte's own removal (above) is there too, with its author.
	var author string
	if err := conns["alice"].QueryRow(ctx, `SELECT author FROM public.team_removals WHERE id = $1 AND removed_by = 'alice'`, gone.Memory.ID).Scan(&author); err != nil || author != "alice" {
		t.Fatalf("acolyte's removal: author %q (%v)", author, err)
	}

	// acolyte, asked for red as bob, gets nothing, and its write is
	// refused with advice.
	if got, err := bob.List(ctx, red, memory.Filter{}); err != nil || len(got) != 0 {
		t.Fatalf("bob lists red's memories: %+v (%v)", got, err)
	}
	_, err = bob.Add(ctx, red, memory.Draft{Content: "bob was here", Scope: memory.ScopeTeam})
	if err == nil || !strings.Contains(err.Error(), "GRANT") {
		t.Fatalf("bob writing into red: %v, want a refusal saying how to grant access", err)
	}
}

func testSchema(t *testing.T, c *cluster) {
	ctx := t.Context()
	db := c.srv.NewDatabase(t)
	url := c.srv.URL("postgres", db)
	if _, err := postgres.Open(ctx, url, nil); err == nil || !strings.Contains(err.Error(), "acolyte team init") {
		t.Fatalf("opening a database without the schema: %v, want advice to run acolyte team init", err)
	}
	// Two members running init at once: the advisory lock lets one
	// migrate and the other find the schema up to date.
	reports := make(chan postgres.InitReport, 2)
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			r, err := postgres.Init(ctx, url, "")
			reports <- r
			errs <- err
		}()
	}
	migrated := 0
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("concurrent init: %v", err)
		}
		if r := <-reports; r.From == 0 && r.To == postgres.SchemaVersion() {
			migrated++
		} else if r.From != postgres.SchemaVersion() || r.To != r.From {
			t.Fatalf("concurrent init reported %+v", r)
		}
	}
	if migrated != 1 {
		t.Fatalf("%d of two concurrent inits migrated, want 1", migrated)
	}
	r, err := postgres.Init(ctx, url, "")
	if err != nil {
		t.Fatal(err)
	}
	// pgvector is reported as the server has it; this one's is detected,
	// whichever it is, and the schema works either way.
	t.Logf("vector extension available: %v", r.Vector)
	if r.From != r.To {
		t.Fatalf("a third init: %+v; want nothing to do", r)
	}
	r, err = postgres.Init(ctx, url, "green")
	if err != nil || r.TeamRole != "acolyte_team_green" {
		t.Fatalf("init for a new team: %+v, %v; want its role created", r, err)
	}
	if _, err := postgres.Init(ctx, url, "Not A Team"); err == nil || !strings.Contains(err.Error(), "lowercase") {
		t.Fatalf("init with a bad team name: %v", err)
	}
	c.srv.Admin(t, db, "UPDATE acolyte_schema SET version = 99")
	for what, err := range map[string]error{
		"open": func() error { _, err := postgres.Open(ctx, url, nil); return err }(),
		"init": func() error { _, err := postgres.Init(ctx, url, ""); return err }(),
	} {
		if !errors.Is(err, memory.ErrSchemaTooNew) || !strings.Contains(err.Error(), "upgrade acolyte") {
			t.Errorf("%s of a newer schema: %v, want ErrSchemaTooNew and advice to upgrade", what, err)
		}
	}
	if _, err := postgres.Open(ctx, "postgres:///nosuchdb?host="+filepath.Join(t.TempDir(), "nowhere")+"&user=x&password=hunter2hunter2", nil); err == nil ||
		strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "--team-db") {
		t.Fatalf("a failed connection: %v; want advice and no password", err)
	}
}

// testSameRanking checks the fusion is shared: the same memories in the
// local store and the team database, searched with the same embedder,
// come back in the same order.
func testSameRanking(t *testing.T, c *cluster) {
	ctx := t.Context()
	e := static.New()
	team := c.open(t, "alice", c.database(t), e)
	local, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "m.db"), e)
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	facts := []string{
		"The staging database is reached through bastion-2",
		"Production deploys need two approvals from the platform team",
		"The CI runners cache Go modules between builds",
		"Caroline adopted a puppy named Biscuit last spring",
		"Integration tests start a real PostgreSQL server in a temp dir",
		"The billing service is written in Kotlin and deployed weekly",
		"Use the staging Kafka cluster for load tests, never production",
		"Melanie went camping with her kids by the lake in July",
		"Release notes live in CHANGES.md and are written before tagging",
		"The on-call rotation changes every Monday at noon",
		"Database migrations must be reversible and reviewed by two people",
		"Our coffee machine is descaled on Fridays",
		"The CI runner configuration lives in .github/workflows",
	}
	vis := memory.Visibility{Team: "red", ProjectKey: "/p"}
	for _, f := range facts {
		if _, err := team.Add(ctx, vis, memory.Draft{Content: f, Scope: memory.ScopeTeam}); err != nil {
			t.Fatal(err)
		}
		if _, err := local.Add(ctx, vis, memory.Draft{Content: f, Scope: memory.ScopeProject}); err != nil {
			t.Fatal(err)
		}
	}
	order := func(rs []memory.Result) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Content)
		}
		return out
	}
	// Kin count on both, at half weight: "db" finds "database" (an
	// abbreviation), "config" finds "configuration" (a prefix).
	for _, q := range []string{"how do I reach the staging database", "who approves a deploy", "camping trip", "database changes",
		"tests with postgres", "dog", "how do I reach the staging db", "db migrations", "who has to approve", "runner config",
		"where do the release notes go"} {
		lr, err := local.Search(ctx, vis, memory.Query{Text: q, Filter: memory.Filter{Limit: 3}})
		if err != nil {
			t.Fatal(err)
		}
		tr, err := team.Search(ctx, vis, memory.Query{Text: q, Filter: memory.Filter{Limit: 3}})
		if err != nil {
			t.Fatal(err)
		}
		if len(lr) == 0 || strings.Join(order(lr), "|") != strings.Join(order(tr), "|") {
			t.Errorf("%q:\n local %q\n team  %q", q, order(lr), order(tr))
		}
	}
	// Each method ranks alike on both engines: words alone, vectors alone.
	for _, method := range []memory.Method{memory.MethodLexical, memory.MethodVector} {
		for _, q := range []string{"how do I reach the staging database", "who approves a deploy", "camping trip",
			"tests with postgres", "dog", "db migrations", "runner config", "where do the release notes go"} {
			query := memory.Query{Text: q, Method: method, Filter: memory.Filter{Limit: 3}}
			lr, err := local.Search(ctx, vis, query)
			if err != nil {
				t.Fatal(err)
			}
			tr, err := team.Search(ctx, vis, query)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(order(lr), "|") != strings.Join(order(tr), "|") {
				t.Errorf("%s %q:\n local %q\n team  %q", method, q, order(lr), order(tr))
			}
		}
	}
	// The methods differ: a question sharing no word with its answer is
	// found by vectors only, and lexical search finds nothing for it.
	for method, want := range map[memory.Method]int{memory.MethodLexical: 0, memory.MethodVector: 3} {
		tr, err := team.Search(ctx, vis, memory.Query{Text: "dog", Method: method, Filter: memory.Filter{Limit: 3}})
		if err != nil || len(tr) != want {
			t.Errorf("team search %s for dog: %q (%v), want %d results", method, order(tr), err, want)
		}
	}
	// Words with apostrophes become kin forms too; the tsquery quoting
	// must hold against them and against tsquery syntax in the text.
	for _, q := range []string{"O'Brien's database", "don'tcare o'reilly's:* | ! & db's"} {
		if _, err := team.Search(ctx, vis, memory.Query{Text: q}); err != nil {
			t.Errorf("%q: %v", q, err)
		}
	}
	// Questions about nothing here find nothing on both, by the same
	// relevance floor. Without it both find something: the vector side
	// always lifts some memory above the crowd (in an order that int8
	// and float32 vectors need not agree on when nothing stands out).
	for _, q := range []string{"what is the capital of Mongolia", "what breed is the office cat",
		"how many vacation days do new hires get"} {
		for _, noFloor := range []bool{false, true} {
			query := memory.Query{Text: q, NoFloor: noFloor, Filter: memory.Filter{Limit: 3}}
			lr, err := local.Search(ctx, vis, query)
			if err != nil {
				t.Fatal(err)
			}
			tr, err := team.Search(ctx, vis, query)
			if err != nil {
				t.Fatal(err)
			}
			if (len(lr) == 0) == noFloor || (len(tr) == 0) == noFloor {
				t.Errorf("%q (no floor: %v):\n local %q\n team  %q", q, noFloor, order(lr), order(tr))
			}
		}
	}
}

func testEdit(t *testing.T, c *cluster) {
	ctx := t.Context()
	s := c.open(t, "alice", c.database(t), enginetest.Concepts("m"))
	vis := memory.Visibility{Team: "red"}
	a, err := s.Add(ctx, vis, memory.Draft{Content: "staging is behind bastion-1", Scope: memory.ScopeTeam})
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.Edit(ctx, vis, a.Memory.ID, memory.Revision{Content: "staging is behind bastion-2", Topic: "infra"})
	if err != nil {
		t.Fatal(err)
	}
	if m.Content != "staging is behind bastion-2" || m.Topic != "infra" || !m.UpdatedAt.After(a.Memory.UpdatedAt) {
		t.Fatalf("edited to %+v", m)
	}
	if rs, err := s.Search(ctx, vis, memory.Query{Text: "bastion-1"}); err != nil || len(rs) != 1 || rs[0].Content != m.Content {
		// bastion-1 still matches "bastion"; the result must be the new text.
		t.Fatalf("search after edit: %+v (%v)", rs, err)
	}
	if _, err := s.Edit(ctx, vis, a.Memory.ID, memory.Revision{Content: "bad \xff"}); !errors.Is(err, memory.ErrInvalidText) {
		t.Fatalf("edit to invalid text: %v", err)
	}
	// An edit's globs are stored, and a path-scoped search follows them; an
	// edit that does not set globs keeps them, one that sets none drops them.
	m, err = s.Edit(ctx, vis, a.Memory.ID, memory.Revision{Content: m.Content, SetGlobs: true, Globs: []string{"infra/**"}})
	if err != nil || !slices.Equal(m.Globs, []string{"infra/**"}) {
		t.Fatalf("edit of a team memory's globs: %v, %v", m.Globs, err)
	}
	if got, err := s.Get(ctx, vis, a.Memory.ID); err != nil || !slices.Equal(got.Globs, []string{"infra/**"}) {
		t.Fatalf("the team database holds globs %v (%v) after the edit", got.Globs, err)
	}
	if rs, err := s.Search(ctx, vis, memory.Query{Text: "unrelated words", Paths: []string{"infra/main.tf"}, OnlyPath: true}); err != nil || len(rs) != 1 || rs[0].ID != a.Memory.ID {
		t.Fatalf("a search for a file the new globs match: %+v (%v)", rs, err)
	}
	if m, err = s.Edit(ctx, vis, a.Memory.ID, memory.Revision{Content: "staging is behind bastion-3"}); err != nil || !slices.Equal(m.Globs, []string{"infra/**"}) {
		t.Fatalf("an edit that does not set globs: %v, %v", m.Globs, err)
	}
	if m, err = s.Edit(ctx, vis, a.Memory.ID, memory.Revision{Content: "staging is behind bastion-3", SetGlobs: true}); err != nil || len(m.Globs) != 0 {
		t.Fatalf("an edit that drops the globs: %v, %v", m.Globs, err)
	}
	if got, err := s.Get(ctx, vis, a.Memory.ID); err != nil || len(got.Globs) != 0 {
		t.Fatalf("the team database holds globs %v (%v) after dropping them", got.Globs, err)
	}
}

// testReindex: a member whose embedder differs from the one that stored
// the team's memories adds vectors of its own model beside them, after
// which its searches find by vector too, and the first model's still do.
func testReindex(t *testing.T, c *cluster) {
	ctx := t.Context()
	db := c.database(t)
	vis := memory.Visibility{Team: "red"}
	a := c.open(t, "alice", db, enginetest.Concepts("model-a"))
	for _, f := range []string{"staging is reached through bastion-2", "coffee is in the second cupboard",
		"release notes go in CHANGES.md", "the office closes at six"} {
		if _, err := a.Add(ctx, vis, memory.Draft{Content: f, Scope: memory.ScopeTeam}); err != nil {
			t.Fatal(err)
		}
	}
	b := c.open(t, "alice", db, enginetest.Concepts("model-b"))
	// Four memories are too few for the relevance floor to judge a
	// vector-only match (see enginetest's ModelTaggedVectors).
	if rs, err := b.Search(ctx, vis, memory.Query{Text: "jump host", NoFloor: true}); err != nil || len(rs) != 0 {
		t.Fatalf("before reindex, model b found %+v (%v)", rs, err)
	}
	n, err := b.Reindex(ctx, vis, false)
	if err != nil || n != 4 {
		t.Fatalf("reindex embedded %d (%v), want 4", n, err)
	}
	if n, err := b.Reindex(ctx, vis, false); err != nil || n != 0 {
		t.Fatalf("a second reindex embedded %d (%v), want 0", n, err)
	}
	if n, err := b.Reindex(ctx, vis, true); err != nil || n != 4 {
		t.Fatalf("reindex --all embedded %d (%v), want 4", n, err)
	}
	for _, s := range []*postgres.Store{a, b} {
		rs, err := s.Search(ctx, vis, memory.Query{Text: "jump host", NoFloor: true})
		if err != nil || len(rs) == 0 || !strings.Contains(rs[0].Content, "bastion-2") {
			t.Fatalf("after reindex a search by vector found %+v (%v)", rs, err)
		}
	}
}

// testMigrateFromVersion1: a database made by an acolyte of schema
// version 1, holding a memory, is refused until team init migrates it;
// then its memory is found, and a search records the recall time in the
// column version 2 added.
func testMigrateFromVersion1(t *testing.T, c *cluster) {
	ctx := t.Context()
	db := c.srv.NewDatabase(t)
	c.srv.Admin(t, db, postgres.Migration(1), "UPDATE acolyte_schema SET version = 1",
		`INSERT INTO team_memories (id, team, kind, content, content_hash, lexical, created_at, updated_at, tokens)
		 VALUES ('01JAAAAAAAAAAAAAAAAAAAAAAA', 'red', 'stored', 'The staging database is reached through bastion-2', 'h',
		         'The staging database is reached through bastion 2', now(), now(), 12)`)
	url := c.srv.URL("alice", db)
	if _, err := postgres.Open(ctx, url, nil); err == nil || !strings.Contains(err.Error(), "run `acolyte team init` to migrate it") {
		t.Fatalf("opening a version 1 database: %v, want advice to run team init", err)
	}
	r, err := postgres.Init(ctx, c.srv.URL("postgres", db), "")
	if err != nil || r.From != 1 || r.To != postgres.SchemaVersion() {
		t.Fatalf("migrating: %+v (%v), want from 1 to %d", r, err, postgres.SchemaVersion())
	}
	s := c.open(t, "alice", db, nil)
	vis := memory.Visibility{Team: "red"}
	rs, err := s.Search(ctx, vis, memory.Query{Text: "staging database bastion"})
	if err != nil || len(rs) != 1 {
		t.Fatalf("after migrating, search found %+v (%v)", rs, err)
	}
	if m, err := s.Get(ctx, vis, rs[0].ID); err != nil || m.RecalledAt.IsZero() {
		t.Fatalf("after migrating, the search recorded no recall time: %+v (%v)", m, err)
	}
}
