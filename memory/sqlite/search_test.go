package sqlite_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/embed/static"
	"github.com/acolyte-dev/acolyte/memory/sqlite"
)

// axes is an embedder whose vectors are chosen by the test: a text listed in
// vecs gets that vector, any other text the zero vector (as an embedder
// gives a text without a word it knows). It lets a test decide what the
// vector side thinks independently of what the words say.
type axes map[string][]float32

func (a axes) Model() string { return "test:axes/4" }
func (a axes) Dim() int      { return 4 }
func (a axes) Embed(_ context.Context, _ memory.Purpose, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = make([]float32, 4)
		copy(out[i], a[t])
		memory.Normalize32(out[i])
	}
	return out, nil
}

var (
	east  = []float32{1, 0, 0, 0}
	north = []float32{0, 1, 0, 0}
	up    = []float32{0, 0, 1, 0}
)

func addAll(t *testing.T, s *sqlite.Store, contents ...string) map[string]string {
	t.Helper()
	ids := map[string]string{}
	for _, c := range contents {
		ids[add(t, s, projA, memory.ScopeProject, c).ID] = c
	}
	return ids
}

func contents(rs []memory.Result, byID map[string]string) []string {
	var out []string
	for _, r := range rs {
		out = append(out, byID[r.ID])
	}
	return out
}

func TestFusionPrefersWhatBothSidesLike(t *testing.T) {
	e := axes{
		"cache eviction":     east,
		"cache alpha notes":  east,  // both sides like it
		"cache bravo notes":  north, // the same words, a distant vector
		"unrelated guidance": east,  // only the vector side likes it
	}
	fillers := make([]string, 6)
	for i := range fillers {
		fillers[i] = fmt.Sprintf("filler number %d", i)
		e[fillers[i]] = up
	}
	s := openStore(t, "", e)
	byID := addAll(t, s, append([]string{"cache bravo notes", "unrelated guidance", "cache alpha notes"}, fillers...)...)

	// NoFloor keeps the tail, which this ranking is about.
	rs, err := s.Search(ctx, projA, memory.Query{Text: "cache eviction", NoFloor: true})
	if err != nil {
		t.Fatal(err)
	}
	got := contents(rs, byID)
	want := []string{"cache alpha notes", "cache bravo notes", "unrelated guidance"}
	if !slices.Equal(got, want) {
		t.Fatalf("ranked %q, want %q", got, want)
	}
	for i, r := range rs {
		if r.Score <= 0 || r.Score > 1 || i > 0 && r.Score >= rs[i-1].Score {
			t.Fatalf("scores must fall in (0, 1] and strictly here, since the sides disagree: %v", scores(rs))
		}
	}
}

func scores(rs []memory.Result) []float64 {
	var out []float64
	for _, r := range rs {
		out = append(out, r.Score)
	}
	return out
}

func TestVectorsProposeNothingWhenNothingStandsOut(t *testing.T) {
	// Every memory is as near the query as every other, so the vector side
	// has no opinion: the memory without the word must not appear, and the
	// lexical order must stand.
	e := axes{"deploy staging": east}
	docs := []string{"deploy to staging twice", "deploy with care", "lunch is at noon", "the printer jams"}
	for _, d := range docs {
		e[d] = east
	}
	s := openStore(t, "", e)
	byID := addAll(t, s, docs...)
	rs, err := s.Search(ctx, projA, memory.Query{Text: "deploy staging"})
	if err != nil {
		t.Fatal(err)
	}
	if got := contents(rs, byID); !slices.Equal(got, []string{"deploy to staging twice", "deploy with care"}) {
		t.Fatalf("got %q", got)
	}
}

func TestQueriesWithoutMeaningfulWords(t *testing.T) {
	s := openStore(t, "", axes{"the printer jams": east})
	addAll(t, s, "the printer jams", "lunch is at noon")
	// Only stop words, and no vector: nothing matches, which is not an error.
	rs, err := s.Search(ctx, projA, memory.Query{Text: "what is it?"})
	if err != nil || len(rs) != 0 {
		t.Fatalf("stop words only: %v %v", scores(rs), err)
	}
	for _, q := range []memory.Query{{Text: ""}, {Text: "  \n\t"}, {Queries: []string{" "}}} {
		if _, err := s.Search(ctx, projA, q); err == nil {
			t.Errorf("query %+v: want an error saying the query is empty", q)
		}
	}
}

func TestStopWordQueryStillFindsByVector(t *testing.T) {
	// "what is it" has no word worth a lexical search, but an embedder that
	// places it may still point at something.
	e := axes{"what is it": east, "the printer jams": east, "lunch is at noon": north, "tea is in the cupboard": up}
	s := openStore(t, "", e)
	byID := addAll(t, s, "the printer jams", "lunch is at noon", "tea is in the cupboard")
	rs, err := s.Search(ctx, projA, memory.Query{Text: "what is it"})
	if err != nil {
		t.Fatal(err)
	}
	if got := contents(rs, byID); !slices.Equal(got, []string{"the printer jams"}) || rs[0].Score <= 0 || rs[0].Score > 1 {
		t.Fatalf("got %q with scores %v", got, scores(rs))
	}
}

func TestPossessivesMatchTheName(t *testing.T) {
	s := openStore(t, "", nil) // lexical only
	byID := addAll(t, s, "[Caroline] I work as a counsellor now", "[Melanie] I paint landscapes")
	rs, err := s.Search(ctx, projA, memory.Query{Text: "What is Caroline's job?"})
	if err != nil {
		t.Fatal(err)
	}
	if got := contents(rs, byID); !slices.Equal(got, []string{"[Caroline] I work as a counsellor now"}) {
		t.Fatalf("got %q", got)
	}
}

func TestMatchingEveryConceptOutranksOneRareWord(t *testing.T) {
	s := openStore(t, "", nil) // lexical only
	docs := []string{"the eviction notice came", "cache eviction needs a policy", "the cache is warm", "a policy for lunch", "the policy on leave"}
	for i := range 6 {
		docs = append(docs, fmt.Sprintf("the cache layer %d", i)) // cache is the commonest word
	}
	byID := addAll(t, s, docs...)
	rs, err := s.Search(ctx, projA, memory.Query{Text: "cache eviction policy", NoFloor: true})
	if err != nil {
		t.Fatal(err)
	}
	got := contents(rs, byID)
	if len(got) < 3 || got[0] != "cache eviction needs a policy" || got[1] != "the eviction notice came" {
		t.Fatalf("the memory holding all three words, then the one holding the rarest: got %q", got)
	}
}

// TestResultsFarBelowTheBestAreLeftOut: a search keeps only results within
// reach of its best one, and NoFloor keeps them all.
func TestResultsFarBelowTheBestAreLeftOut(t *testing.T) {
	s := openStore(t, "", nil) // lexical only
	docs := []string{"cache eviction needs a policy", "the eviction notice came", "the cache is warm"}
	for i := range 6 {
		docs = append(docs, fmt.Sprintf("the cache layer %d", i))
	}
	byID := addAll(t, s, docs...)
	q := memory.Query{Text: "cache eviction policy"}
	cut, err := s.Search(ctx, projA, q)
	if err != nil {
		t.Fatal(err)
	}
	q.NoFloor = true
	all, err := s.Search(ctx, projA, q)
	if err != nil {
		t.Fatal(err)
	}
	if len(cut) == 0 || len(cut) >= len(all) {
		t.Fatalf("kept %d of %d results, want fewer but at least one", len(cut), len(all))
	}
	if got := contents(cut, byID)[0]; got != "cache eviction needs a policy" {
		t.Errorf("best result %q", got)
	}
	for _, r := range cut {
		if r.Score < 0.4*cut[0].Score {
			t.Errorf("kept a result scoring %v, below 0.4 of the best %v", r.Score, cut[0].Score)
		}
	}
	if last := all[len(cut)]; last.Score >= 0.4*all[0].Score {
		t.Errorf("left out a result scoring %v, not below 0.4 of the best %v", last.Score, all[0].Score)
	}
}

func TestSoftMatchesCreditWordsAMemoryOnlyImplies(t *testing.T) {
	// The whole query has no vector here, so only the words' own vectors
	// can tell the two family memories apart: "camping" points east, and
	// so does the memory about a campfire and a tent.
	e := axes{
		"camping":                  east,
		"family camping trip":      north,
		"family campfire and tent": east,
		"family dinner at home":    up,
	}
	docs := []string{"family dinner at home", "family campfire and tent", "family camping trip"}
	for i := range 6 {
		f := fmt.Sprintf("filler number %d", i)
		e[f] = []float32{0, 0, 0, 1}
		docs = append(docs, f)
	}
	s := openStore(t, "", e)
	byID := addAll(t, s, docs...)
	rs, err := s.Search(ctx, projA, memory.Query{Text: "family camping"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"family camping trip", "family campfire and tent", "family dinner at home"}
	if got := contents(rs, byID); !slices.Equal(got, want) {
		t.Fatalf("a held word beats an implied one, which beats none: got %q, want %q", got, want)
	}
}

func TestSoftMatchesGiveWordsNoMemoryHoldsASay(t *testing.T) {
	// No memory says "glamping", so the lexical index alone cannot choose
	// between the two weekends; the word's vector can.
	e := axes{"glamping": east, "weekend in a yurt": east, "weekend at home": up}
	docs := []string{"weekend at home", "weekend in a yurt"}
	for i := range 6 {
		f := fmt.Sprintf("filler number %d", i)
		e[f] = north
		docs = append(docs, f)
	}
	s := openStore(t, "", e)
	byID := addAll(t, s, docs...)
	rs, err := s.Search(ctx, projA, memory.Query{Text: "glamping weekend"})
	if err != nil {
		t.Fatal(err)
	}
	if got := contents(rs, byID); len(got) < 2 || got[0] != "weekend in a yurt" || got[1] != "weekend at home" {
		t.Fatalf("got %q", got)
	}
}

// BenchmarkSearch10k searches 10,000 memories in one project with the
// default embedder: the work of one `acolyte search` after opening the store.
func BenchmarkSearch10k(b *testing.B) {
	s, err := sqlite.Open(ctx, b.TempDir()+"/acolyte.db", static.New())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	subjects := []string{"the cache", "deploys", "the parser", "Caroline", "the build", "tests", "the API", "Melanie's garden"}
	verbs := []string{"needs", "broke after", "was rewritten for", "depends on", "is faster than", "talked about"}
	objects := []string{"redis", "a new release", "the staging cluster", "painting", "go 1.26", "a support group", "the kids"}
	ms := make([]memory.Memory, 10000)
	for i := range ms {
		ms[i] = memory.Memory{ID: fmt.Sprintf("m%05d", i), Kind: memory.KindStored, Content: fmt.Sprintf("%s %s %s (note %d)",
			subjects[i%len(subjects)], verbs[i/len(subjects)%len(verbs)], objects[i/7%len(objects)], i)}
	}
	if _, err := s.ReplaceScope(ctx, memory.ScopeProject, projA.ProjectKey, ms); err != nil {
		b.Fatal(err)
	}
	for i := 0; b.Loop(); i++ {
		q := []string{"What did Caroline say about the support group?", "why did the cache break", "staging deploys"}[i%3]
		if _, err := s.Search(ctx, projA, memory.Query{Text: q}); err != nil {
			b.Fatal(err)
		}
	}
}
