package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/sqlite"
)

// wordHash is a small real embedder: each word lands in one of dim buckets.
// Texts that share words are close, which is all the contract tests need.
type wordHash struct {
	name  string
	dim   int
	calls int
	fail  error
	mu    sync.Mutex
}

func (w *wordHash) Model() string { return fmt.Sprintf("test:%s/%d", w.name, w.dim) }
func (w *wordHash) Dim() int      { return w.dim }
func (w *wordHash) Embed(_ context.Context, _ memory.Purpose, texts []string) ([][]float32, error) {
	w.mu.Lock()
	w.calls += len(texts)
	w.mu.Unlock()
	if w.fail != nil {
		return nil, w.fail
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, w.dim)
		for _, word := range memory.Words(t) {
			h := fnv.New32a()
			h.Write([]byte(w.name + word))
			v[h.Sum32()%uint32(w.dim)]++
		}
		memory.Normalize32(v)
		out[i] = v
	}
	return out, nil
}

func openStore(t testing.TB, path string, e memory.Embedder) *sqlite.Store {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "acolyte.db")
	}
	s, err := sqlite.Open(context.Background(), path, e)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

var (
	ctx     = context.Background()
	projA   = memory.Visibility{ProjectKey: "/src/a", SessionKey: "s1"}
	projB   = memory.Visibility{ProjectKey: "/src/b", SessionKey: "s2"}
	nowhere = memory.Visibility{}
)

func add(t *testing.T, s *sqlite.Store, vis memory.Visibility, scope memory.Scope, content string) memory.Memory {
	t.Helper()
	a, err := s.Add(ctx, vis, memory.Draft{Content: content, Scope: scope, Source: "test"})
	if err != nil {
		t.Fatalf("add %q: %v", content, err)
	}
	return a.Memory
}

func ids(rs []memory.Result) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}

func TestRoundTrip(t *testing.T) {
	s := openStore(t, "", &wordHash{name: "a", dim: 64})
	a, err := s.Add(ctx, projA, memory.Draft{Content: "  Tool execution layers: runTool() dispatches each call ", Scope: memory.ScopeProject, Topic: "tools", Source: "cli"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, projA, a.Memory.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Content != "Tool execution layers: runTool() dispatches each call" || got.Topic != "tools" || got.Source != "cli" ||
		got.Scope != memory.ScopeProject || got.ScopeKey != "/src/a" || got.Kind != memory.KindStored || got.Tokens == 0 ||
		!got.CreatedAt.Equal(a.Memory.CreatedAt) {
		t.Fatalf("round trip changed the memory:\n got %+v\nwant %+v", got, a.Memory)
	}
	if len(got.ID) != 26 {
		t.Errorf("id %q is not a ULID", got.ID)
	}
	rs, err := s.Search(ctx, projA, memory.Query{Text: "how does run tool work"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].ID != a.Memory.ID || rs[0].Score <= 0 {
		t.Fatalf("search did not find it by an identifier's words: %+v", rs)
	}
	again, _ := s.Get(ctx, projA, a.Memory.ID)
	if again.RecalledAt.IsZero() {
		t.Error("search did not record the recall time")
	}
}

func TestPutReplacesByID(t *testing.T) {
	s := openStore(t, "", &wordHash{name: "a", dim: 64})
	m := add(t, s, projA, memory.ScopeUser, "deploys go through the staging cluster")
	m.Content = "deploys go straight to production on Fridays"
	if _, err := s.Put(ctx, m); err != nil {
		t.Fatal(err)
	}
	got, _ := s.Get(ctx, projA, m.ID)
	if got.Content != m.Content {
		t.Fatalf("content = %q", got.Content)
	}
	if rs, _ := s.Search(ctx, projA, memory.Query{Text: "staging cluster"}); len(rs) != 0 && rs[0].ID == m.ID && rs[0].Score > 0.5 {
		// the vector side may still propose it weakly, but the lexical row must be gone
		t.Errorf("old content still ranks strongly: %+v", rs)
	}
	rs, _ := s.Search(ctx, projA, memory.Query{Text: "production Fridays"})
	if len(rs) == 0 || rs[0].ID != m.ID {
		t.Fatalf("new content not found: %+v", rs)
	}
	list, _ := s.List(ctx, projA, memory.Filter{})
	if len(list) != 1 {
		t.Fatalf("replace by id created a second memory: %d", len(list))
	}
}

func TestScopeIsolation(t *testing.T) {
	s := openStore(t, "", &wordHash{name: "a", dim: 64})
	pa := add(t, s, projA, memory.ScopeProject, "alpha project uses postgres")
	pb := add(t, s, projB, memory.ScopeProject, "beta project uses postgres")
	sa := add(t, s, projA, memory.ScopeSession, "session one is debugging postgres")
	u := add(t, s, projA, memory.ScopeUser, "the user prefers postgres over mysql")

	cases := []struct {
		name string
		vis  memory.Visibility
		f    memory.Filter
		want []string
	}{
		{"project A sees its project, its session, and user", projA, memory.Filter{}, []string{pa.ID, sa.ID, u.ID}},
		{"project B sees only its own", projB, memory.Filter{}, []string{pb.ID, u.ID}},
		{"outside any project only user", nowhere, memory.Filter{}, []string{u.ID}},
		{"explicit scope narrows", projA, memory.Filter{Scope: memory.ScopeProject}, []string{pa.ID}},
		{"explicit session scope", projA, memory.Filter{Scope: memory.ScopeSession}, []string{sa.ID}},
		{"another session cannot see it", memory.Visibility{ProjectKey: "/src/a", SessionKey: "s9"}, memory.Filter{Scope: memory.ScopeSession}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rs, err := s.Search(ctx, c.vis, memory.Query{Text: "postgres", Filter: c.f})
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(rs); !sameSet(got, c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
			list, _ := s.List(ctx, c.vis, c.f)
			var listed []string
			for _, m := range list {
				listed = append(listed, m.ID)
			}
			if !sameSet(listed, c.want) {
				t.Fatalf("list got %v, want %v", listed, c.want)
			}
		})
	}
	// Removing through a toolkit of another project must not reach across.
	if _, err := (memory.Scoped{Store: s, Visibility: projB}).Remove(ctx, pa.ID); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("removed another project's memory: %v", err)
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[string]int{}
	for _, x := range a {
		m[x]++
	}
	for _, x := range b {
		m[x]--
	}
	for _, n := range m {
		if n != 0 {
			return false
		}
	}
	return true
}

func TestKindFilter(t *testing.T) {
	s := openStore(t, "", &wordHash{name: "a", dim: 64})
	stored := add(t, s, projA, memory.ScopeProject, "tests run with go test ./...")
	obs, err := s.Add(ctx, projA, memory.Draft{Content: "tests are slow without the cache", Scope: memory.ScopeProject, Kind: memory.KindObservation})
	if err != nil {
		t.Fatal(err)
	}
	rs, _ := s.Search(ctx, projA, memory.Query{Text: "tests", Filter: memory.Filter{Kind: memory.KindObservation}})
	if got := ids(rs); !sameSet(got, []string{obs.Memory.ID}) {
		t.Fatalf("kind filter: got %v", got)
	}
	rs, _ = s.Search(ctx, projA, memory.Query{Text: "tests"})
	if got := ids(rs); !sameSet(got, []string{obs.Memory.ID, stored.ID}) {
		t.Fatalf("one search must cover every kind: got %v", got)
	}
}

func rawCount(t *testing.T, path, q string, args ...any) int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestRemoveCascades(t *testing.T) {
	path := filepath.Join(t.TempDir(), "acolyte.db")
	s := openStore(t, path, &wordHash{name: "a", dim: 64})
	keep := add(t, s, projA, memory.ScopeUser, "keep this zebra fact")
	gone := add(t, s, projA, memory.ScopeUser, "remove this giraffe fact")
	if n := rawCount(t, path, `SELECT count(*) FROM embeddings`); n != 2 {
		t.Fatalf("embeddings before = %d", n)
	}
	removed, err := s.Delete(ctx, projA, gone.ID)
	if err != nil || len(removed) != 1 || removed[0].Content != gone.Content {
		t.Fatalf("delete: %v %v", removed, err)
	}
	if n := rawCount(t, path, `SELECT count(*) FROM embeddings`); n != 1 {
		t.Errorf("embedding not removed: %d left", n)
	}
	if n := rawCount(t, path, `SELECT count(*) FROM memories_fts WHERE memories_fts MATCH 'giraffe'`); n != 0 {
		t.Errorf("lexical row not removed")
	}
	if n := rawCount(t, path, `SELECT count(*) FROM memories_fts`); n != 1 {
		t.Errorf("lexical rows = %d, want 1", n)
	}
	if _, err := s.Delete(ctx, projA, keep.ID, "01NOSUCHID0000000000000000"); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("missing id: %v", err)
	}
	if _, err := s.Get(ctx, projA, keep.ID); err != nil {
		t.Fatalf("a failed multi-delete removed a memory: %v", err)
	}
}

func TestDedup(t *testing.T) {
	s := openStore(t, "", &wordHash{name: "a", dim: 64})
	first := add(t, s, projA, memory.ScopeProject, "Use tabs, not spaces")
	a, err := s.Add(ctx, projA, memory.Draft{Content: "use  TABS, not spaces\n", Scope: memory.ScopeProject})
	if err != nil {
		t.Fatal(err)
	}
	if !a.Existing || a.Memory.ID != first.ID {
		t.Fatalf("duplicate stored again: %+v", a)
	}
	other := add(t, s, projB, memory.ScopeProject, "Use tabs, not spaces")
	if other.ID == first.ID {
		t.Fatal("dedup crossed projects")
	}
}

func TestEmbedderSwitch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "acolyte.db")
	a := &wordHash{name: "a", dim: 64}
	s := openStore(t, path, a)
	m := add(t, s, projA, memory.ScopeUser, "the cache lives in redis")
	s.Close()

	b := &wordHash{name: "b", dim: 32}
	s2 := openStore(t, path, b)
	rs, err := s2.Search(ctx, projA, memory.Query{Text: "where is the cache"})
	if err != nil {
		t.Fatalf("search after switching embedders: %v", err)
	}
	if len(rs) != 1 || rs[0].ID != m.ID {
		t.Fatalf("lexical search must still find it: %+v", rs)
	}
	n, err := s2.Reindex(ctx, false, nil)
	if err != nil || n != 1 {
		t.Fatalf("reindex = %d, %v", n, err)
	}
	if c := rawCount(t, path, `SELECT count(*) FROM embeddings WHERE model = ?`, b.Model()); c != 1 {
		t.Fatalf("vectors of the new model = %d", c)
	}
	if n, _ := s2.Reindex(ctx, false, nil); n != 0 {
		t.Fatalf("second reindex did %d, want 0", n)
	}
}

func TestEmbedFailureKeepsMemory(t *testing.T) {
	e := &wordHash{name: "a", dim: 64, fail: errors.New("429 rate limited")}
	s := openStore(t, "", e)
	a, err := s.Add(ctx, projA, memory.Draft{Content: "the staging host is stg-3", Scope: memory.ScopeUser})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(a.Warning, "reindex") {
		t.Errorf("warning should point at reindex: %q", a.Warning)
	}
	rs, _ := s.Search(ctx, projA, memory.Query{Text: "staging host"})
	if len(rs) != 1 {
		t.Fatalf("un-embedded memory not found lexically: %+v", rs)
	}
	e.fail = nil
	if n, err := s.Reindex(ctx, false, nil); n != 1 || err != nil {
		t.Fatalf("reindex = %d, %v", n, err)
	}
}

func TestBadInput(t *testing.T) {
	s := openStore(t, "", &wordHash{name: "a", dim: 64})
	cases := map[string]struct {
		d    memory.Draft
		want error
	}{
		"empty":        {memory.Draft{Content: "  \n"}, memory.ErrEmpty},
		"too large":    {memory.Draft{Content: strings.Repeat("x", memory.MaxContentBytes+1)}, memory.ErrTooLarge},
		"invalid utf8": {memory.Draft{Content: "bad \xff byte"}, memory.ErrInvalidText},
		"nul":          {memory.Draft{Content: "bin\x00ary"}, memory.ErrInvalidText},
		"scope":        {memory.Draft{Content: "x", Scope: "galaxy"}, memory.ErrUnknownScope},
		"team":         {memory.Draft{Content: "x", Scope: memory.ScopeTeam}, memory.ErrNoTeam},
		"kind":         {memory.Draft{Content: "x", Kind: "wish"}, memory.ErrUnknownKind},
		"no project":   {memory.Draft{Content: "x", Scope: memory.ScopeProject}, memory.ErrNoScopeKey},
	}
	for name, c := range cases {
		_, err := s.Add(ctx, nowhere, c.d)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", name, err, c.want)
		}
	}
	if list, _ := s.List(ctx, nowhere, memory.Filter{}); len(list) != 0 {
		t.Fatalf("bad input was stored: %+v", list)
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "acolyte.db")
	s := openStore(t, path, nil)
	add(t, s, nowhere, memory.ScopeUser, "survives a refused open")
	s.Close()
	db, _ := sql.Open("sqlite", "file:"+path)
	if _, err := db.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, sqlite.SchemaVersion+1)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err := sqlite.Open(ctx, path, nil)
	if !errors.Is(err, memory.ErrSchemaTooNew) || !strings.Contains(err.Error(), "upgrade acolyte") {
		t.Fatalf("newer schema: %v", err)
	}
	if n := rawCount(t, path, `SELECT count(*) FROM memories`); n != 1 {
		t.Fatalf("refused open touched data: %d", n)
	}
}

func TestCorruptDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "acolyte.db")
	if err := os.WriteFile(path, []byte(strings.Repeat("not a database ", 400)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := sqlite.Open(ctx, path, nil)
	if !errors.Is(err, memory.ErrCorrupt) || !strings.Contains(err.Error(), "acolyte reindex --repair") {
		t.Fatalf("corrupt database: %v", err)
	}
	b, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(b), "not a database") {
		t.Fatal("open overwrote a file it could not read")
	}
}

func TestConcurrentWriters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "acolyte.db")
	const writers, each = 8, 50
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := sqlite.Open(ctx, path, &wordHash{name: "a", dim: 16})
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			for i := range each {
				if _, err := s.Add(ctx, nowhere, memory.Draft{Content: fmt.Sprintf("writer %d fact %d", w, i)}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := rawCount(t, path, `SELECT count(*) FROM memories`); n != writers*each {
		t.Fatalf("stored %d memories, want %d", n, writers*each)
	}
	if n := rawCount(t, path, `SELECT count(*) FROM memories_fts`); n != writers*each {
		t.Fatalf("lexical rows %d, want %d", n, writers*each)
	}
}

func TestReplaceScope(t *testing.T) {
	e := &wordHash{name: "a", dim: 64}
	s := openStore(t, "", e)
	mk := func(id, content string) memory.Memory {
		return memory.Memory{ID: id, Kind: memory.KindStored, Content: content}
	}
	st, err := s.ReplaceScope(ctx, memory.ScopeProject, "/src/a", []memory.Memory{mk("01A", "one fact"), mk("01B", "two fact")})
	if err != nil || st.Added != 2 {
		t.Fatalf("first import: %+v %v", st, err)
	}
	calls := e.calls
	st, err = s.ReplaceScope(ctx, memory.ScopeProject, "/src/a", []memory.Memory{mk("01A", "one fact"), mk("01C", "three fact")})
	if err != nil || st.Added != 1 || st.Removed != 1 || st.Unchanged != 1 {
		t.Fatalf("second import: %+v %v", st, err)
	}
	if e.calls-calls != 1 {
		t.Fatalf("re-embedded %d memories, want only the new one", e.calls-calls)
	}
	list, _ := s.List(ctx, projA, memory.Filter{Scope: memory.ScopeProject})
	if len(list) != 2 || list[0].ID != "01A" || list[1].ID != "01C" {
		t.Fatalf("after import: %+v", list)
	}
}

// initialVector places a text by its first letter, so a query like "ggg"
// shares no word with "giraffes have long necks" and only the vector side,
// reading the packed vectors, can find it.
type initialVector struct{}

func (initialVector) Model() string { return "test:initial/26" }
func (initialVector) Dim() int      { return 26 }
func (initialVector) Embed(_ context.Context, _ memory.Purpose, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = make([]float32, 26)
		if t != "" && t[0] >= 'a' && t[0] <= 'z' {
			out[i][t[0]-'a'] = 1
		}
	}
	return out, nil
}

// The packed copy of the vectors must follow every write, from this
// process or another, and a damaged pack must be rebuilt, never trusted.
func TestVectorPackFollowsWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "acolyte.db")
	s := openStore(t, path, initialVector{})
	zebra := add(t, s, nowhere, memory.ScopeUser, "zebra crossings are striped")
	add(t, s, nowhere, memory.ScopeUser, "badgers dig setts")
	add(t, s, nowhere, memory.ScopeUser, "cats sleep a lot")
	if got := ids(mustSearch(t, s, "zzz")); len(got) == 0 || got[0] != zebra.ID {
		t.Fatalf("first search: %v", got)
	}
	packs, _ := filepath.Glob(path + "-catalog-*")
	if len(packs) != 1 {
		t.Fatalf("catalog files: %v", packs)
	}
	giraffe := add(t, s, nowhere, memory.ScopeUser, "giraffes have long necks")
	if got := ids(mustSearch(t, s, "ggg")); len(got) == 0 || got[0] != giraffe.ID {
		t.Fatalf("search after a write missed the new vector: %v", got)
	}
	// Replaced, as every writer of the catalog replaces it: truncating a
	// file a search has mapped would fault its reader (SIGBUS).
	if err := os.WriteFile(packs[0]+".new", []byte("acolyte-vectors/1\ngarbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(packs[0]+".new", packs[0]); err != nil {
		t.Fatal(err)
	}
	if got := ids(mustSearch(t, s, "ggg")); len(got) == 0 || got[0] != giraffe.ID {
		t.Fatalf("search with a damaged pack: %v", got)
	}
	other := openStore(t, path, initialVector{})
	otter := add(t, other, nowhere, memory.ScopeUser, "otters hold hands")
	if got := ids(mustSearch(t, s, "ooo")); len(got) == 0 || got[0] != otter.ID {
		t.Fatalf("search after another process wrote: %v", got)
	}
}

// mustSearch searches without the relevance floor: its callers test which
// memories the catalog offers, with queries no memory's words hold.
func mustSearch(t *testing.T, s *sqlite.Store, q string) []memory.Result {
	t.Helper()
	rs, err := s.Search(ctx, nowhere, memory.Query{Text: q, NoFloor: true})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func TestReindexAll(t *testing.T) {
	e := &wordHash{name: "a", dim: 16}
	s := openStore(t, "", e)
	add(t, s, nowhere, memory.ScopeUser, "one fact")
	add(t, s, nowhere, memory.ScopeUser, "another fact")
	if n, err := s.Reindex(ctx, false, nil); n != 0 || err != nil {
		t.Fatalf("nothing needed embedding, got %d, %v", n, err)
	}
	before := e.calls
	var seen []int
	n, err := s.Reindex(ctx, true, func(done, total int) { seen = append(seen, done, total) })
	if n != 2 || err != nil || e.calls-before != 2 {
		t.Fatalf("reindex --all embedded %d (%d calls), %v", n, e.calls-before, err)
	}
	if len(seen) != 2 || seen[0] != 2 || seen[1] != 2 {
		t.Fatalf("progress = %v", seen)
	}
}

// A catalog left beside a database that was deleted and created again must
// not be trusted, even when the new database has made as many writes.
func TestCatalogOfADeletedDatabaseIsNotTrusted(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "acolyte.db")
	s := openStore(t, path, initialVector{})
	for _, fact := range []string{"zebra crossings are striped", "badgers dig setts", "cats sleep a lot"} {
		add(t, s, nowhere, memory.ScopeUser, fact)
	}
	mustSearch(t, s, "zzz")
	s.Close()
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(path + suffix)
	}
	// Three writes again: the same generation count as the old catalog.
	s2 := openStore(t, path, initialVector{})
	giraffe := add(t, s2, nowhere, memory.ScopeUser, "giraffes have long necks")
	add(t, s2, nowhere, memory.ScopeUser, "otters hold hands")
	add(t, s2, nowhere, memory.ScopeUser, "moles dig tunnels")
	got := ids(mustSearch(t, s2, "ggg"))
	if len(got) == 0 || got[0] != giraffe.ID {
		t.Fatalf("search in the new database: %v", got)
	}
}

// Searches share the catalog a Store keeps while writes replace it; a
// replaced catalog must stay readable until the last search using it ends.
func TestSearchesDuringWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "acolyte.db")
	s := openStore(t, path, &wordHash{name: "c", dim: 32})
	other := openStore(t, path, &wordHash{name: "c", dim: 32})
	for i := range 50 {
		add(t, s, nowhere, memory.ScopeUser, fmt.Sprintf("seed fact %d about caching", i))
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for r := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 40 {
				rs, err := s.Search(ctx, nowhere, memory.Query{Text: "caching fact", Filter: memory.Filter{Limit: 3}})
				if err != nil || len(rs) == 0 {
					errs <- fmt.Errorf("searcher %d: %d results, %v", r, len(rs), err)
					return
				}
			}
		}()
	}
	for i := range 40 {
		w := s
		if i%2 == 1 {
			w = other
		}
		if _, err := w.Add(ctx, nowhere, memory.Draft{Content: fmt.Sprintf("written during searches %d caching", i)}); err != nil {
			t.Fatal(err)
		}
		// Each Store saves a catalog file the other then maps.
		mustSearch(t, w, "caching")
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	rs := mustSearch(t, s, "written during searches 39")
	if len(rs) == 0 || !strings.Contains(rs[0].Content, "searches 39") {
		t.Fatalf("the last write is not found: %+v", rs)
	}
}

// A new database is created in WAL mode, which the file keeps: concurrent
// hooks and agents depend on it.
func TestNewDatabaseUsesWAL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "acolyte.db")
	s := openStore(t, path, nil)
	add(t, s, nowhere, memory.ScopeUser, "a fact")
	s.Close()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var mode string
	if err := db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode != "wal" {
		t.Fatalf("journal mode %q, want wal", mode)
	}
}

// cancelOnEmbed cancels the caller's context while it embeds, as a Ctrl-C
// during a long import would.
type cancelOnEmbed struct {
	*wordHash
	cancel context.CancelFunc
}

func (c cancelOnEmbed) Embed(ctx context.Context, p memory.Purpose, texts []string) ([][]float32, error) {
	c.cancel()
	return c.wordHash.Embed(ctx, p, texts)
}

// The import's statements run without the driver's per-statement interrupt,
// so cancellation is checked between rows instead: a cancelled import must
// still stop, and leave nothing of itself behind.
func TestCancelledImportStopsAndWritesNothing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := openStore(t, "", cancelOnEmbed{&wordHash{name: "w", dim: 16}, cancel})
	var mems []memory.Memory
	for i := range 1000 {
		mems = append(mems, memory.Memory{ID: fmt.Sprintf("01A%05d", i), Kind: memory.KindStored, Content: fmt.Sprintf("fact number %d", i)})
	}
	if _, err := s.ReplaceScope(ctx, memory.ScopeUser, "", mems); !errors.Is(err, context.Canceled) {
		t.Fatalf("import with its context cancelled: %v, want context.Canceled", err)
	}
	got, err := s.List(context.Background(), memory.Visibility{}, memory.Filter{})
	if err != nil || len(got) != 0 {
		t.Fatalf("after a cancelled import: %d memories, %v; want none", len(got), err)
	}
}
