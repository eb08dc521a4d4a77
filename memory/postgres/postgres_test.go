package postgres_test

import (
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/embed/static"
	"github.com/acolyte-dev/acolyte/memory/enginetest"
	"github.com/acolyte-dev/acolyte/memory/postgres"
	"github.com/acolyte-dev/acolyte/memory/postgres/pgtest"
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
	t.Run("Schema", func(t *testing.T) { testSchema(t, c) })
	t.Run("SameRanking", func(t *testing.T) { testSameRanking(t, c) })
	t.Run("Edit", func(t *testing.T) { testEdit(t, c) })
	t.Run("Reindex", func(t *testing.T) { testReindex(t, c) })
	t.Run("MigrateFromVersion1", func(t *testing.T) { testMigrateFromVersion1(t, c) })
	t.Run("LargeTeam", func(t *testing.T) { testLargeTeam(t, c) })
}

// testIsolation checks that row-level security, not acolyte's own WHERE
// clauses, keeps one team from another: a raw query over the tables as
// bob sees none of red's rows, and bob cannot write into red.
func testIsolation(t *testing.T, c *cluster) {
	ctx := t.Context()
	db := c.database(t)
	alice := c.open(t, "alice", db, enginetest.Concepts("m"))
	if _, err := alice.Add(ctx, memory.Visibility{Team: "red"}, memory.Draft{Content: "red team secret plan: ship on Friday", Scope: memory.ScopeTeam}); err != nil {
		t.Fatal(err)
	}
	bob := c.open(t, "bob", db, enginetest.Concepts("m"))
	if _, err := bob.Add(ctx, memory.Visibility{Team: "blue"}, memory.Draft{Content: "blue team ships on Monday", Scope: memory.ScopeTeam}); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, c.srv.URL("bob", db))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var memories, vectors int
	var teams string
	if err := conn.QueryRow(ctx, `SELECT count(*), coalesce(string_agg(DISTINCT team, ','), '') FROM team_memories`).Scan(&memories, &teams); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM team_embeddings WHERE team = 'red'`).Scan(&vectors); err != nil {
		t.Fatal(err)
	}
	if memories != 1 || teams != "blue" || vectors != 0 {
		t.Fatalf("bob's own connection sees %d memories of teams %q and %d of red's vectors; want only blue's one", memories, teams, vectors)
	}
	// Asking acolyte for red as bob gets nothing, and writing is refused.
	if got, err := bob.List(ctx, memory.Visibility{Team: "red"}, memory.Filter{}); err != nil || len(got) != 0 {
		t.Fatalf("bob lists red's memories: %+v (%v)", got, err)
	}
	_, err = bob.Add(ctx, memory.Visibility{Team: "red"}, memory.Draft{Content: "bob was here", Scope: memory.ScopeTeam})
	if err == nil || !strings.Contains(err.Error(), "GRANT") {
		t.Fatalf("bob writing into red: %v, want a refusal saying how to grant access", err)
	}
	if _, err := conn.Exec(ctx, `UPDATE team_memories SET team = 'red'`); err == nil {
		t.Fatal("bob moved his memory into red with raw SQL")
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
	local, err := memory.Open(ctx, filepath.Join(t.TempDir(), "m.db"), e)
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
