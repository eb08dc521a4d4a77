package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/embed/static"
	"github.com/acolyte-dev/acolyte/memory/postgres"
)

// testLargeTeam drives the search path of a team too large to read whole
// (postings, cells, a crowd sample) on a small team, by lowering the size
// at which it starts, and checks what a member relies on: it finds what
// the whole-team scan finds, its indexes follow adds, edits and removals,
// and another team's member reads none of them.
func testLargeTeam(t *testing.T, c *cluster) {
	ctx := t.Context()
	db := c.database(t)
	e := static.New()
	s := c.open(t, "alice", db, e)
	postgres.SetWholeTeam(s, 40)
	vis := memory.Visibility{Team: "red"}
	add := func(content string) string {
		t.Helper()
		a, err := s.Add(ctx, vis, memory.Draft{Content: content, Scope: memory.ScopeTeam})
		if err != nil {
			t.Fatal(err)
		}
		return a.Memory.ID
	}
	for _, content := range benchCorpus(1200) {
		add(content)
	}
	espresso := add("The espresso machine in the kitchen needs descaling every month")
	certs := add("Rotate the TLS certificates of the payments gateway before March")
	window := add("The kubernetes upgrade window is Tuesday night")

	conn, err := pgx.Connect(ctx, c.srv.URL("alice", db))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	count := func(sql string, args ...any) int {
		t.Helper()
		var n int
		if err := conn.QueryRow(ctx, sql, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// The writer that brought the team to 40 vectors cut its cells and
	// sketched every vector so far; each later write sketched its own.
	if n := count(`SELECT count(*) FROM team_centroids WHERE team = 'red'`); n != 1 {
		t.Fatalf("%d sets of centroids for red, want 1", n)
	}
	if v, k := count(`SELECT count(*) FROM team_embeddings`), count(`SELECT count(*) FROM team_sketches`); v != 1203 || k != v {
		t.Fatalf("%d vectors and %d sketches, want 1203 of each", v, k)
	}

	search := func(text string) []string {
		t.Helper()
		// No relevance floor: a question in words no memory holds is
		// answered by vectors alone, which the floor (on words) would drop.
		rs, err := s.Search(ctx, vis, memory.Query{Text: text, NoFloor: true})
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]string, len(rs))
		for i, r := range rs {
			ids[i] = r.ID
		}
		return ids
	}
	top := func(text string) string {
		t.Helper()
		if ids := search(text); len(ids) > 0 {
			return ids[0]
		}
		return ""
	}
	// Each query finds what the scan finds: mostly the same ten, and the
	// memory it is about near the top. Without the cells, "cleaning
	// limescale from the coffee maker" would see only the crowd sample
	// (256 of 1203).
	for _, tc := range []struct {
		query, want string
		within      int
	}{
		{"descaling", espresso, 1},                                // a rare word, from its postings
		{"when do we rotate certificates", certs, 1},              // words and kin
		{"cleaning limescale from the coffee maker", espresso, 3}, // no word of the memory's: the cells
		{"when can we upgrade kubernetes", window, 1},             // both
		{"how do I reach the staging database", "", 0},            // many memories hold the words
		{"what about lokodoni and staging with hibe", "", 0},      // words of the corpus
		{"billing queue and the docker runner on friday", "", 0},
	} {
		got := search(tc.query)
		postgres.SetScanOnly(s, true)
		scan := search(tc.query)
		postgres.SetScanOnly(s, false)
		same := 0
		for _, id := range got {
			if slices.Contains(scan, id) {
				same++
			}
		}
		// Six of ten: where many memories hold every word, the order among
		// them is the vector side's, which the large-team path estimates;
		// with the MiniLM-distilled vectors "how do I reach the staging
		// database" kept 6 of the scan's ten (7 with GloVe's).
		if same < min(6, len(scan)) || len(got) != len(scan) {
			t.Errorf("%q: the large-team path found %v, the scan %v: %d in common", tc.query, got, scan, same)
		}
		if tc.want != "" && !slices.Contains(got[:min(tc.within, len(got))], tc.want) {
			t.Errorf("%q: the large-team path found %v, want %s in the first %d", tc.query, got, tc.want, tc.within)
		}
	}

	// A search filtered by kind or topic takes the same path over the
	// memories of that kind or topic, which are its crowd (as they are the
	// scan's): it finds only them, and what the scan finds. About 400 of
	// the 1203 become rules and 120 take the topic "ops", so neither is
	// read whole (40).
	if _, err := conn.Exec(ctx, `UPDATE team_memories SET kind = 'rule' WHERE sample % 3 = 0 OR id = $1`, espresso); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `UPDATE team_memories SET topic = 'ops' WHERE sample % 5 = 1 OR id = $1`, window); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		query, want string
		within      int
		filter      memory.Filter
	}{
		{"descaling", espresso, 1, memory.Filter{Kind: memory.KindRule}},
		{"cleaning limescale from the coffee maker", espresso, 3, memory.Filter{Kind: memory.KindRule}},
		{"how do I reach the staging database", "", 0, memory.Filter{Kind: memory.KindRule}},
		{"billing queue and the docker runner on friday", "", 0, memory.Filter{Kind: memory.KindRule}},
		{"when can we upgrade kubernetes", window, 1, memory.Filter{Topic: "ops"}},
		{"what about lokodoni and staging with hibe", "", 0, memory.Filter{Topic: "ops"}},
		{"staging database", "", 0, memory.Filter{Kind: memory.KindStored, Topic: "ops"}},
	} {
		filtered := func() []memory.Result {
			t.Helper()
			rs, err := s.Search(ctx, vis, memory.Query{Text: tc.query, NoFloor: true, Filter: tc.filter})
			if err != nil {
				t.Fatal(err)
			}
			return rs
		}
		scans := postgres.Scans(s)
		got := filtered()
		if n := postgres.Scans(s) - scans; n != 0 {
			t.Errorf("%q %+v: the search read the whole team, not the indexes", tc.query, tc.filter)
		}
		postgres.SetScanOnly(s, true)
		scan := filtered()
		postgres.SetScanOnly(s, false)
		if len(got) == 0 || len(got) != len(scan) {
			t.Errorf("%q %+v: the large-team path found %d, the scan %d", tc.query, tc.filter, len(got), len(scan))
			continue
		}
		same := 0
		for _, r := range got {
			if (tc.filter.Kind != "" && r.Kind != tc.filter.Kind) || (tc.filter.Topic != "" && r.Topic != tc.filter.Topic) {
				t.Errorf("%q %+v: found %s of kind %s and topic %q", tc.query, tc.filter, r.ID, r.Kind, r.Topic)
			}
			if slices.ContainsFunc(scan, func(x memory.Result) bool { return x.ID == r.ID }) {
				same++
			}
		}
		// The same top results; the crowd is estimated from a sample on
		// the large-team path, so near ties may swap.
		if same < min(7, len(scan)) || !slices.ContainsFunc(got[:min(3, len(got))], func(r memory.Result) bool { return r.ID == scan[0].ID }) {
			t.Errorf("%q %+v: the large-team path found %v, the scan %v: %d in common", tc.query, tc.filter, resultIDs(got), resultIDs(scan), same)
		}
		if tc.want != "" && !slices.ContainsFunc(got[:min(tc.within, len(got))], func(r memory.Result) bool { return r.ID == tc.want }) {
			t.Errorf("%q %+v: the large-team path found %v, want %s in the first %d", tc.query, tc.filter, resultIDs(got), tc.want, tc.within)
		}
	}

	// A vector left without a sketch (a writer racing the one that cut
	// the cells) gets it back from reindex. Only the owner deletes by
	// hand: members may not (teamlock.go).
	c.srv.Admin(t, db, `DELETE FROM team_sketches WHERE id = '`+espresso+`'`)
	if _, err := s.Reindex(ctx, vis, false); err != nil {
		t.Fatal(err)
	}
	if n := count(`SELECT count(*) FROM team_sketches WHERE id = $1`, espresso); n != 1 {
		t.Fatalf("after reindex, the memory has %d sketches, want 1", n)
	}

	if _, err := s.Edit(ctx, vis, window, memory.Revision{Content: "The kubernetes upgrade window moved to Thursday night"}); err != nil {
		t.Fatal(err)
	}
	if n := count(`SELECT count(*) FROM team_terms WHERE id = $1 AND term = 'tuesday'`, window); n != 0 {
		t.Fatalf("after the edit, %d postings of its old word remain", n)
	}
	if got := top("thursday upgrade"); got != window {
		t.Fatalf("after the edit, a search for its new words found %s first, want %s", got, window)
	}
	// The postings carry the memory's topic (schema 5): an edit of the
	// topic moves them with it, and a filter on the outer topic
	// still finds it on the large-team path.
	if _, err := s.Edit(ctx, vis, window, memory.Revision{Content: "The kubernetes upgrade window moved to Thursday night", Topic: "ops / clusters"}); err != nil {
		t.Fatal(err)
	}
	if n := count(`SELECT count(*) FROM team_terms WHERE id = $1 AND topic <> 'ops / clusters'`, window); n != 0 {
		t.Fatalf("after the topic edit, %d postings keep the old topic", n)
	}
	for _, topic := range []string{"ops", "ops / clusters"} {
		rs, err := s.Search(ctx, vis, memory.Query{Text: "thursday upgrade", Method: memory.MethodLexical, Filter: memory.Filter{Topic: topic}})
		if err != nil || len(rs) == 0 || rs[0].ID != window {
			t.Fatalf("after the topic edit, a search under %q found %v (%v), want %s first", topic, rs, err, window)
		}
	}
	if _, err := s.Delete(ctx, vis, certs); err != nil {
		t.Fatal(err)
	}
	if n := count(`SELECT (SELECT count(*) FROM team_terms WHERE id = $1) + (SELECT count(*) FROM team_sketches WHERE id = $1)`, certs); n != 0 {
		t.Fatalf("after the removal, %d postings and sketches of it remain", n)
	}

	// Row-level security covers the new tables: bob (team blue) reads
	// none of red's rows, by hand-written SQL.
	bob, err := pgx.Connect(ctx, c.srv.URL("bob", db))
	if err != nil {
		t.Fatal(err)
	}
	defer bob.Close(context.Background())
	var seen int
	if err := bob.QueryRow(ctx, `SELECT (SELECT count(*) FROM team_terms) + (SELECT count(*) FROM team_sketches) + (SELECT count(*) FROM team_centroids)`).Scan(&seen); err != nil {
		t.Fatal(err)
	}
	if seen != 0 {
		t.Fatalf("bob reads %d rows of red's postings, sketches and centroids", seen)
	}
	if _, err := bob.Exec(ctx, `INSERT INTO team_terms (team, term, id) VALUES ('red', 'planted', $1)`, espresso); err == nil {
		t.Fatal("bob wrote a posting into red")
	}
}

// testMigrateToIndexes checks that schema 4 serves the memories written
// before it: init fills their postings, and cuts the cells of a team that
// already has cellsFrom (1,024) vectors of a model, so the large-team
// path finds old memories by their words and by their vectors.
func testMigrateToIndexes(t *testing.T, c *cluster) {
	ctx := t.Context()
	db := c.srv.NewDatabase(t)
	c.srv.Admin(t, db, postgres.Migration(1), postgres.Migration(2), postgres.Migration(3), "UPDATE acolyte_schema SET version = 3")
	conn, err := pgx.Connect(ctx, c.srv.URL("postgres", db))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	e := static.New()
	contents := append(benchCorpus(1100), "The espresso machine in the kitchen needs descaling every month")
	var mrows, erows [][]any
	var espresso string
	for i, content := range contents {
		m := memory.Memory{ID: fmt.Sprintf("01JAAAAAAAAAAAAAAAAAA%05d", i), Content: content}
		vs, err := e.Embed(ctx, memory.PurposeDocument, []string{memory.EmbedText(&m)})
		if err != nil {
			t.Fatal(err)
		}
		memory.Normalize32(vs[0])
		mrows = append(mrows, []any{m.ID, "red", "stored", content, memory.ContentHash(content), postgres.Lexical(&m), time.Now(), time.Now(), 10})
		erows = append(erows, []any{m.ID, "red", e.Model(), postgres.EncodeVector(vs[0])})
		espresso = m.ID
	}
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"team_memories"},
		[]string{"id", "team", "kind", "content", "content_hash", "lexical", "created_at", "updated_at", "tokens"}, pgx.CopyFromRows(mrows)); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"team_embeddings"}, []string{"id", "team", "model", "vec"}, pgx.CopyFromRows(erows)); err != nil {
		t.Fatal(err)
	}
	if r, err := postgres.Init(ctx, c.srv.URL("postgres", db), ""); err != nil || r.From != 3 {
		t.Fatalf("migrating from 3: %+v (%v)", r, err)
	}
	var postings, centroids, sketches int
	if err := conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM team_terms WHERE id = $1), (SELECT count(*) FROM team_centroids),
		(SELECT count(*) FROM team_sketches)`, espresso).Scan(&postings, &centroids, &sketches); err != nil {
		t.Fatal(err)
	}
	if postings == 0 || centroids != 1 || sketches != len(contents) {
		t.Fatalf("after migrating: %d postings of a memory, %d sets of centroids, %d sketches of %d vectors", postings, centroids, sketches, len(contents))
	}
	s := c.open(t, "alice", db, e)
	// Filtered by kind, the postings' copy of it (schema 5) must hold the
	// old memories' kind, or the lexical side finds nothing.
	for _, q := range []memory.Query{
		{Text: "descaling", NoFloor: true},
		{Text: "cleaning limescale from the coffee maker", NoFloor: true},
		{Text: "descaling", NoFloor: true, Method: memory.MethodLexical, Filter: memory.Filter{Kind: memory.KindStored}},
	} {
		rs, err := s.Search(ctx, memory.Visibility{Team: "red"}, q)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(rs[:min(3, len(rs))], func(r memory.Result) bool { return r.ID == espresso }) {
			t.Fatalf("after migrating, %+v found %v, not the old memory about it", q, rs)
		}
	}
}

func resultIDs(rs []memory.Result) []string {
	ids := make([]string, len(rs))
	for i, r := range rs {
		ids[i] = r.ID
	}
	return ids
}
