// Package enginetest is the conformance suite every memory engine passes:
// the local SQLite Store and the team database (memory/postgres) are held
// to the same behaviour for adding, deduplicating, removing, listing,
// visibility, model-tagged vectors, bad input and search.
package enginetest

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/memory"
)

// Harness describes one engine to the suite.
type Harness struct {
	// Scope is the scope the engine stores drafts in.
	Scope memory.Scope
	// Vis sees what the suite writes; Other is a caller who must not (a
	// different project, a different team).
	Vis, Other memory.Visibility
	// Open opens the engine's database with embedder e (nil: none). Within
	// one test every call opens the same database; each test gets its own.
	Open func(t *testing.T, e memory.Embedder) memory.Engine
}

// Run runs the suite.
func Run(t *testing.T, h Harness) {
	t.Run("AddGet", h.addGet)
	t.Run("Dedup", h.dedup)
	t.Run("Remove", h.remove)
	t.Run("ListFilters", h.listFilters)
	t.Run("Visibility", h.visibility)
	t.Run("ModelTaggedVectors", h.modelTagged)
	t.Run("BadInput", h.badInput)
	t.Run("Search", h.search)
	t.Run("PathScoped", h.pathScoped)
	t.Run("RecallTimes", h.recallTimes)
}

func (h Harness) add(t *testing.T, e memory.Engine, content string, kind memory.Kind, topic string) memory.Memory {
	t.Helper()
	a, err := e.Add(context.Background(), h.Vis, memory.Draft{Content: content, Scope: h.Scope, Kind: kind, Topic: topic, Source: "test"})
	if err != nil {
		t.Fatalf("add %q: %v", content, err)
	}
	if a.Existing {
		t.Fatalf("add %q: reported as existing", content)
	}
	return a.Memory
}

func (h Harness) addGet(t *testing.T) {
	ctx := context.Background()
	e := h.Open(t, nil)
	m := h.add(t, e, "  The staging database is reached through bastion-2  ", memory.KindStored, "infra")
	if m.ID == "" || m.Scope != h.Scope || m.Content != "The staging database is reached through bastion-2" || m.Topic != "infra" {
		t.Fatalf("added %+v: want an id, scope %s, trimmed content and topic infra", m, h.Scope)
	}
	got, err := e.Get(ctx, h.Vis, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != m.ID || got.Content != m.Content || got.Kind != memory.KindStored || got.Scope != h.Scope || got.Source != "test" ||
		!got.CreatedAt.Equal(m.CreatedAt) || got.Tokens != memory.EstimateTokens(m.Content) {
		t.Fatalf("get returned %+v, added %+v", got, m)
	}
	if _, err := e.Get(ctx, h.Vis, "01NOSUCHMEMORY0000000000000"); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("get of an unknown id: %v, want ErrNotFound", err)
	}
}

func (h Harness) dedup(t *testing.T) {
	ctx := context.Background()
	e := h.Open(t, nil)
	m := h.add(t, e, "Run the linter before pushing", memory.KindStored, "")
	a, err := e.Add(ctx, h.Vis, memory.Draft{Content: "run the   LINTER before pushing", Scope: h.Scope})
	if err != nil {
		t.Fatal(err)
	}
	if !a.Existing || a.Memory.ID != m.ID {
		t.Fatalf("adding the same fact again gave %+v, want the existing %s", a, m.ID)
	}
	all, err := e.List(ctx, h.Vis, memory.Filter{Scope: h.Scope})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 {
		t.Fatalf("after a duplicate add there are %d memories, want 1", len(all))
	}
}

func (h Harness) remove(t *testing.T) {
	ctx := context.Background()
	e := h.Open(t, nil)
	a := h.add(t, e, "first fact about caching", memory.KindStored, "")
	b := h.add(t, e, "second fact about queues", memory.KindStored, "")
	if _, err := e.Delete(ctx, h.Vis, a.ID, "01NOSUCHMEMORY0000000000000"); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("delete with an unknown id: %v, want ErrNotFound", err)
	}
	if _, err := e.Get(ctx, h.Vis, a.ID); err != nil {
		t.Fatalf("a delete with an unknown id removed a known one: %v", err)
	}
	removed, err := e.Delete(ctx, h.Vis, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 1 || removed[0].ID != a.ID || removed[0].Content != a.Content {
		t.Fatalf("delete returned %+v, want %s", removed, a.ID)
	}
	if _, err := e.Get(ctx, h.Vis, a.ID); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("get after delete: %v, want ErrNotFound", err)
	}
	rs, err := e.Search(ctx, h.Vis, memory.Query{Text: "caching"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 0 {
		t.Fatalf("search finds a removed memory: %+v", rs)
	}
	if _, err := e.Get(ctx, h.Vis, b.ID); err != nil {
		t.Fatalf("the other memory went too: %v", err)
	}
}

func (h Harness) listFilters(t *testing.T) {
	ctx := context.Background()
	e := h.Open(t, nil)
	a := h.add(t, e, "alpha is stored", memory.KindStored, "greek")
	b := h.add(t, e, "beta is observed", memory.KindObservation, "greek")
	c := h.add(t, e, "gamma is stored", memory.KindStored, "")
	// A topic path: the AGENTS.md import files a rule under its headings.
	// A filter keeps the topic and the topics beneath it, whole parts
	// only, and its % and _ are literal.
	d := h.add(t, e, "delta is a nested rule", memory.KindRule, "greek / letters")
	h.add(t, e, "epsilon is a sibling", memory.KindRule, "greeks")
	h.add(t, e, "zeta is filed oddly", memory.KindRule, "gr%k / _")
	// Memories added within one millisecond tie on time and are ordered
	// by id, which is random there: compare as sets, and check the order
	// separately.
	set := func(ms []memory.Memory) string {
		var s []string
		for _, m := range ms {
			s = append(s, m.ID)
		}
		slices.Sort(s)
		return strings.Join(s, ",")
	}
	all, err := e.List(ctx, h.Vis, memory.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.IsSortedFunc(all, func(x, y memory.Memory) int {
		return cmp.Or(x.CreatedAt.Compare(y.CreatedAt), cmp.Compare(x.ID, y.ID))
	}) {
		t.Errorf("list is not oldest first (ties by id): %+v", all)
	}
	for _, tc := range []struct {
		name string
		f    memory.Filter
		want []memory.Memory
	}{
		{"all", memory.Filter{}, all},
		{"scope", memory.Filter{Scope: h.Scope}, all},
		{"kind", memory.Filter{Kind: memory.KindStored}, []memory.Memory{a, c}},
		{"topic", memory.Filter{Topic: "greek"}, []memory.Memory{a, b, d}},
		{"kind and topic", memory.Filter{Kind: memory.KindObservation, Topic: "greek"}, []memory.Memory{b}},
		{"topic path", memory.Filter{Topic: "greek / letters"}, []memory.Memory{d}},
		{"inner heading alone", memory.Filter{Topic: "letters"}, nil},
		{"wildcards are literal", memory.Filter{Topic: "gr_ek"}, nil},
		{"limit", memory.Filter{Limit: 2}, all[:2]},
	} {
		got, err := e.List(ctx, h.Vis, tc.f)
		if err != nil {
			t.Fatal(err)
		}
		if set(got) != set(tc.want) {
			t.Errorf("%s: listed %s, want %s", tc.name, set(got), set(tc.want))
		}
		// Filter.Admits is the same filter for a caller holding the list.
		if admitted := slices.DeleteFunc(slices.Clone(all), func(m memory.Memory) bool { return !tc.f.Admits(m) }); tc.f.Limit == 0 && set(admitted) != set(got) {
			t.Errorf("%s: Filter.Admits keeps %s, the engine lists %s", tc.name, set(admitted), set(got))
		}
	}
}

func (h Harness) visibility(t *testing.T) {
	ctx := context.Background()
	e := h.Open(t, nil)
	m := h.add(t, e, "the deploy key rotates every Monday", memory.KindStored, "")
	if _, err := e.Get(ctx, h.Other, m.ID); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("another caller got the memory: %v", err)
	}
	if got, err := e.List(ctx, h.Other, memory.Filter{}); err != nil || len(got) != 0 {
		t.Fatalf("another caller lists %+v (%v)", got, err)
	}
	if rs, err := e.Search(ctx, h.Other, memory.Query{Text: "deploy key"}); err != nil || len(rs) != 0 {
		t.Fatalf("another caller finds %+v (%v)", rs, err)
	}
	if _, err := e.Delete(ctx, h.Other, m.ID); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("another caller deleting: %v, want ErrNotFound", err)
	}
	if _, err := e.Get(ctx, h.Vis, m.ID); err != nil {
		t.Fatalf("another caller's delete removed it: %v", err)
	}
}

func (h Harness) modelTagged(t *testing.T) {
	ctx := context.Background()
	e := h.Open(t, Concepts("concepts-a"))
	target := h.add(t, e, "staging is reached through bastion-2", memory.KindStored, "")
	h.add(t, e, "coffee is in the second cupboard", memory.KindStored, "")
	h.add(t, e, "release notes go in CHANGES.md", memory.KindStored, "")
	h.add(t, e, "the office closes at six", memory.KindStored, "")
	// "jump host" shares no word with the target: only its vector finds it.
	// Four memories are too few for the relevance floor to judge a
	// vector-only match; the floor has tests of its own.
	rs, err := e.Search(ctx, h.Vis, memory.Query{Text: "jump host", NoFloor: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) == 0 || rs[0].ID != target.ID {
		t.Fatalf("with the model that made the vectors, search gave %+v, want %s first", rs, target.ID)
	}
	// The same vectors under another model's name must never be compared.
	e = h.Open(t, Concepts("concepts-b"))
	rs, err = e.Search(ctx, h.Vis, memory.Query{Text: "jump host"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 0 {
		t.Fatalf("another model's vectors were compared: %+v", rs)
	}
}

func (h Harness) badInput(t *testing.T) {
	ctx := context.Background()
	e := h.Open(t, nil)
	for _, tc := range []struct {
		name string
		d    memory.Draft
		want error
	}{
		{"empty", memory.Draft{Content: "  \n"}, memory.ErrEmpty},
		{"invalid UTF-8", memory.Draft{Content: "bad \xff byte"}, memory.ErrInvalidText},
		{"NUL", memory.Draft{Content: "nul \x00 byte"}, memory.ErrInvalidText},
		{"too large", memory.Draft{Content: strings.Repeat("a", memory.MaxContentBytes+1)}, memory.ErrTooLarge},
		{"unknown kind", memory.Draft{Content: "fine", Kind: "rumour"}, memory.ErrUnknownKind},
		{"multi-line topic", memory.Draft{Content: "fine", Topic: "a\nb"}, memory.ErrInvalidText},
		{"bad glob", memory.Draft{Content: "fine", Globs: []string{"src/[a-"}}, memory.ErrInvalidGlob},
		{"too many globs", memory.Draft{Content: "fine", Globs: manyGlobs(memory.MaxGlobs + 1)}, memory.ErrInvalidGlob},
		{"long glob", memory.Draft{Content: "fine", Globs: []string{strings.Repeat("a", memory.MaxGlobBytes+1)}}, memory.ErrInvalidGlob},
	} {
		tc.d.Scope = h.Scope
		if _, err := e.Add(ctx, h.Vis, tc.d); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if got, err := e.List(ctx, h.Vis, memory.Filter{}); err != nil || len(got) != 0 {
		t.Fatalf("bad input stored %+v (%v)", got, err)
	}
	if _, err := e.Search(ctx, h.Vis, memory.Query{Text: "  "}); err == nil {
		t.Error("an empty search succeeded")
	}
	if _, err := e.Search(ctx, h.Vis, memory.Query{Text: "bad \xff"}); !errors.Is(err, memory.ErrInvalidText) {
		t.Errorf("a search with invalid UTF-8: %v, want ErrInvalidText", err)
	}
}

func (h Harness) search(t *testing.T) {
	ctx := context.Background()
	e := h.Open(t, nil)
	bastion := h.add(t, e, "The staging database is reached through bastion-2", memory.KindStored, "infra")
	h.add(t, e, "Production deploys need two approvals", memory.KindStored, "")
	obs := h.add(t, e, "The staging cluster was rebuilt on Tuesday", memory.KindObservation, "")
	h.add(t, e, "Use runTool for sandboxed commands", memory.KindStored, "")
	rs, err := e.Search(ctx, h.Vis, memory.Query{Text: "how do I reach the staging database"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) == 0 || rs[0].ID != bastion.ID || rs[0].Score <= 0 || rs[0].Score > 1 {
		t.Fatalf("search gave %+v, want %s first with a score in (0, 1]", rs, bastion.ID)
	}
	// The stemmer: "approval" finds "approvals".
	if rs, err = e.Search(ctx, h.Vis, memory.Query{Text: "approval"}); err != nil || len(rs) != 1 {
		t.Fatalf("stemmed search gave %+v (%v), want one result", rs, err)
	}
	// Identifiers are split: "tool" finds runTool.
	if rs, err = e.Search(ctx, h.Vis, memory.Query{Text: "tool"}); err != nil || len(rs) != 1 {
		t.Fatalf("identifier search gave %+v (%v), want one result", rs, err)
	}
	rs, err = e.Search(ctx, h.Vis, memory.Query{Text: "staging", Filter: memory.Filter{Kind: memory.KindObservation}})
	if err != nil || len(rs) != 1 || rs[0].ID != obs.ID {
		t.Fatalf("kind-filtered search gave %+v (%v), want only %s", rs, err, obs.ID)
	}
	rs, err = e.Search(ctx, h.Vis, memory.Query{Text: "staging", Filter: memory.Filter{Limit: 1}})
	if err != nil || len(rs) != 1 {
		t.Fatalf("limited search gave %+v (%v), want 1", rs, err)
	}
	rs, err = e.Search(ctx, h.Vis, memory.Query{Text: "approvals", Queries: []string{"bastion"}})
	if err != nil || len(rs) != 2 {
		t.Fatalf("a search of two queries gave %+v (%v), want a result for each", rs, err)
	}
	if rs, err = e.Search(ctx, h.Vis, memory.Query{Text: "zebra"}); err != nil || len(rs) != 0 {
		t.Fatalf("a search for a word no memory holds gave %+v (%v)", rs, err)
	}
	// A question about something no memory is about finds nothing, though
	// it shares a word with two of them: "staging" covers too little of
	// it to pass the relevance floor. NoFloor shows what the floor held
	// back, so the floor and not a missing match is what emptied it.
	unrelated := memory.Query{Text: "which coffee beans does the staging team order"}
	if rs, err = e.Search(ctx, h.Vis, unrelated); err != nil || len(rs) != 0 {
		t.Fatalf("a search about nothing here gave %+v (%v), want nothing relevant", rs, err)
	}
	unrelated.NoFloor = true
	if rs, err = e.Search(ctx, h.Vis, unrelated); err != nil || len(rs) != 2 {
		t.Fatalf("the same search without the floor gave %+v (%v), want the two staging memories", rs, err)
	}
	// A topic filter keeps the memories beneath the topic too.
	nested := h.add(t, e, "The staging bucket is read-only", memory.KindRule, "infra / storage")
	rs, err = e.Search(ctx, h.Vis, memory.Query{Text: "staging bucket", Filter: memory.Filter{Topic: "infra"}})
	if err != nil || len(rs) != 2 || !slices.ContainsFunc(rs, func(r memory.Result) bool { return r.ID == nested.ID }) {
		t.Fatalf("topic-filtered search gave %+v (%v), want %s and the memory beneath its topic", rs, err, bastion.ID)
	}
	// With a vector side as well: the vectors always put some memory
	// above the crowd, but none near enough to be relevant.
	e = h.Open(t, Concepts("floor"))
	h.add(t, e, "coffee is in the second cupboard", memory.KindStored, "")
	h.add(t, e, "the office closes at six", memory.KindStored, "")
	budget := memory.Query{Text: "what does the marketing budget for next quarter look like"}
	if rs, err = e.Search(ctx, h.Vis, budget); err != nil || len(rs) != 0 {
		t.Fatalf("with vectors, a search about nothing here gave %+v (%v), want nothing relevant", rs, err)
	}
	budget.NoFloor = true
	if rs, err = e.Search(ctx, h.Vis, budget); err != nil || len(rs) == 0 {
		t.Fatalf("with vectors and no floor, the same search gave %+v (%v), want the nearest memories", rs, err)
	}
	if rs, err = e.Search(ctx, h.Vis, memory.Query{Text: "where is the coffee kept"}); err != nil || len(rs) == 0 || !strings.Contains(rs[0].Content, "coffee") {
		t.Fatalf("with vectors, a search about the coffee gave %+v (%v)", rs, err)
	}
}

// pathScoped: a search that names the files at hand ranks the memories
// whose globs match one of them above the rest, finds them even when its
// words do not, returns memories that apply everywhere (memory.AlwaysGlob),
// and keeps the rest, scoped elsewhere or not at all, ranked by meaning.
func (h Harness) pathScoped(t *testing.T) {
	ctx := context.Background()
	e := h.Open(t, nil)
	addScoped := func(content string, globs ...string) memory.Memory {
		t.Helper()
		a, err := e.Add(ctx, h.Vis, memory.Draft{Content: content, Scope: h.Scope, Kind: memory.KindRule, Globs: globs})
		if err != nil {
			t.Fatalf("add %q: %v", content, err)
		}
		return a.Memory
	}
	reversible := addScoped("Write every migration as a reversible pair of up and down files", "migrations/**", "db/migrations/**", "migrations/**")
	components := addScoped("Components export one default function and keep their styles beside them", "*.tsx")
	always := addScoped("Answer in British English spelling", memory.AlwaysGlob)
	unscoped := h.add(t, e, "Database migrations run with make migrate, never by hand", memory.KindStored, "")
	naming := h.add(t, e, "Name branches after their ticket number", memory.KindStored, "")

	got, err := e.Get(ctx, h.Vis, reversible.ID)
	if err != nil || !slices.Equal(got.Globs, []string{"db/migrations/**", "migrations/**"}) {
		t.Fatalf("stored globs %q (%v), want them sorted and each once", got.Globs, err)
	}
	ids := func(rs []memory.Result) []string {
		out := make([]string, len(rs))
		for i, r := range rs {
			out[i] = r.ID
		}
		return out
	}
	search := func(q memory.Query) []string {
		t.Helper()
		rs, err := e.Search(ctx, h.Vis, q)
		if err != nil {
			t.Fatalf("search %+v: %v", q, err)
		}
		for _, r := range rs {
			if r.Score <= 0 || r.Score > 1 {
				t.Fatalf("search %+v: score %v outside (0, 1]", q, r.Score)
			}
		}
		return ids(rs)
	}
	question := "how do I add a column to a table"
	if rs := search(memory.Query{Text: question}); len(rs) != 0 {
		t.Fatalf("without paths, %q found %v: nothing here holds its words", question, rs)
	}
	rs := search(memory.Query{Text: question, Paths: []string{"migrations/0042_add_email.sql"}})
	if len(rs) != 2 || !slices.Contains(rs, reversible.ID) || !slices.Contains(rs, always.ID) {
		t.Fatalf("for a migration, %q found %v, want the migration rule and the rule for every path", question, rs)
	}
	rs = search(memory.Query{Text: "how do migrations run", Paths: []string{"db/migrations/7.sql"}})
	if len(rs) != 3 || !slices.Contains(rs, reversible.ID) || !slices.Contains(rs, unscoped.ID) || !slices.Contains(rs, always.ID) || slices.Contains(rs, components.ID) {
		t.Fatalf("for a migration, \"how do migrations run\" found %v, want the migration rule, the unscoped memory and the rule for every path, not the component rule", rs)
	}
	// The rule for the file at hand ranks first, above the memory that
	// holds every word of the question; the rule for every path, which
	// the file says nothing about, ranks below that match.
	if want := []string{reversible.ID, unscoped.ID, always.ID}; !slices.Equal(rs, want) {
		t.Fatalf("for a migration, \"how do migrations run\" ranked %v, want the migration rule, the unscoped memory, the rule for every path: %v", rs, want)
	}
	// A weak word match (one word of the question, by a memory about
	// something else) ranks below the rule for the file, which shares no
	// word with the question at all.
	rs = search(memory.Query{Text: "how do I name this table", Paths: []string{"migrations/0042_add_email.sql"}})
	if want := []string{reversible.ID, naming.ID, always.ID}; !slices.Equal(rs, want) {
		t.Fatalf("for a migration, \"how do I name this table\" ranked %v, want the migration rule above the memory that shares a word, then the rule for every path: %v", rs, want)
	}
	// A rule for other files is not lost: it still ranks by meaning.
	rs = search(memory.Query{Text: "how do migrations run", Paths: []string{"web/app/page.tsx"}})
	if !slices.Contains(rs, reversible.ID) || !slices.Contains(rs, unscoped.ID) || !slices.Contains(rs, components.ID) || !slices.Contains(rs, always.ID) {
		t.Fatalf("for a component, \"how do migrations run\" found %v, want both migration memories by meaning, and the component rule and the rule for every path by their globs", rs)
	}
	rs = search(memory.Query{Text: "how do migrations run", Paths: []string{"web/app/page.tsx"}, OnlyPath: true})
	if len(rs) != 2 || !slices.Contains(rs, components.ID) || !slices.Contains(rs, always.ID) {
		t.Fatalf("keeping only what applies to a component found %v, want the component rule and the rule for every path", rs)
	}
	if rs := search(memory.Query{Text: "how do migrations run", Paths: []string{"migrations/1.sql"}, Filter: memory.Filter{Kind: memory.KindStored}}); len(rs) != 1 || rs[0] != unscoped.ID {
		t.Fatalf("a kind filter must hold for path-scoped memories too: %v", rs)
	}
	if rs := search(memory.Query{Text: question, Paths: []string{"migrations/1.sql"}, Filter: memory.Filter{Limit: 1}}); len(rs) != 1 {
		t.Fatalf("the limit must hold for path-scoped memories too: %v", rs)
	}
	if _, err := e.Search(ctx, h.Other, memory.Query{Text: question, Paths: []string{"migrations/1.sql"}}); err != nil {
		t.Fatal(err)
	} else if rs, _ := e.Search(ctx, h.Other, memory.Query{Text: question, Paths: []string{"migrations/1.sql"}}); len(rs) != 0 {
		t.Fatalf("another caller's path-scoped search found %v", ids(rs))
	}
	for _, q := range []memory.Query{
		{Text: question, OnlyPath: true},
		{Text: question, Paths: []string{"/etc/passwd"}},
		{Text: question, Paths: []string{"../other/x.go"}},
		{Text: question, Paths: []string{"a\nb"}},
		{Text: question, Paths: slices.Repeat([]string{"a.go"}, memory.MaxQueryPaths+1)},
	} {
		if _, err := e.Search(ctx, h.Vis, q); err == nil {
			t.Errorf("search with paths %q (only %v) succeeded", q.Paths, q.OnlyPath)
		}
	}
}

// recallTimes: a search records when it returned each memory, and only
// those it returned; a repeated search within memory.RecallGranularity
// leaves the recorded time as it was.
func (h Harness) recallTimes(t *testing.T) {
	ctx := context.Background()
	e := h.Open(t, nil)
	found := h.add(t, e, "The staging database is reached through bastion-2", memory.KindStored, "")
	other := h.add(t, e, "Production deploys need two approvals", memory.KindStored, "")
	if !found.RecalledAt.IsZero() {
		t.Fatalf("a new memory has a recall time: %+v", found)
	}
	before := time.Now().Add(-time.Second)
	rs, err := e.Search(ctx, h.Vis, memory.Query{Text: "staging bastion"})
	if err != nil || len(rs) != 1 || rs[0].ID != found.ID {
		t.Fatalf("search gave %+v (%v), want %s", rs, err, found.ID)
	}
	got, err := e.Get(ctx, h.Vis, found.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.RecalledAt.Before(before) || got.RecalledAt.After(time.Now().Add(time.Second)) || !got.RecalledAt.Equal(rs[0].RecalledAt) {
		t.Fatalf("after the search the memory was recalled at %v, the result says %v; want about now", got.RecalledAt, rs[0].RecalledAt)
	}
	if o, err := e.Get(ctx, h.Vis, other.ID); err != nil || !o.RecalledAt.IsZero() {
		t.Fatalf("a memory the search did not return has a recall time: %+v (%v)", o, err)
	}
	if _, err := e.Search(ctx, h.Vis, memory.Query{Text: "staging bastion"}); err != nil {
		t.Fatal(err)
	}
	if again, err := e.Get(ctx, h.Vis, found.ID); err != nil || !again.RecalledAt.Equal(got.RecalledAt) {
		t.Fatalf("a repeated search moved the recall time from %v to %v (%v)", got.RecalledAt, again.RecalledAt, err)
	}
}

// manyGlobs is n distinct globs.
func manyGlobs(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "dir" + strings.Repeat("x", i) + "/**"
	}
	return out
}
