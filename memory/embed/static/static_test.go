package static

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/embed/static/internal/wordvec"
)

func embed(t *testing.T, texts ...string) [][]float32 {
	t.Helper()
	vs, err := New().Embed(context.Background(), memory.PurposeDocument, texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != len(texts) {
		t.Fatalf("got %d vectors for %d texts", len(vs), len(texts))
	}
	return vs
}

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

func TestVectorsHaveDimAndUnitLength(t *testing.T) {
	e := New()
	for i, v := range embed(t, "Tool execution layers", "HTTPServer", "the", "The quick brown fox jumps over the lazy dog.") {
		if len(v) != e.Dim() {
			t.Errorf("vector %d has %d elements, want %d", i, len(v), e.Dim())
		}
		if n := norm(v); math.Abs(n-1) > 1e-5 {
			t.Errorf("vector %d has length %v, want 1", i, n)
		}
	}
}

func TestIdenticalTextsHaveCosineOne(t *testing.T) {
	vs := embed(t, "memory search uses hybrid ranking", "memory search uses hybrid ranking")
	if c := dot(vs[0], vs[1]); math.Abs(float64(c)-1) > 1e-5 {
		t.Errorf("cosine of identical texts = %v, want 1", c)
	}
}

func TestRelatedTextIsCloser(t *testing.T) {
	vs := embed(t,
		"how does tool execution work",
		"Tool execution layers: runTool() dispatches each call",
		"My grandmother grows tomatoes in her garden every summer",
	)
	related, unrelated := dot(vs[0], vs[1]), dot(vs[0], vs[2])
	if related <= unrelated {
		t.Errorf("cosine to related text %v is not above cosine to unrelated text %v", related, unrelated)
	}
}

func TestQueryAndDocumentShareOneSpace(t *testing.T) {
	ctx := context.Background()
	e := New()
	q, err := e.Embed(ctx, memory.PurposeQuery, []string{"sqlite store"})
	if err != nil {
		t.Fatal(err)
	}
	d, err := e.Embed(ctx, memory.PurposeDocument, []string{"sqlite store"})
	if err != nil {
		t.Fatal(err)
	}
	if c := dot(q[0], d[0]); math.Abs(float64(c)-1) > 1e-5 {
		t.Errorf("query and document vectors of the same text have cosine %v, want 1", c)
	}
}

func TestTextWithoutKnownWordsIsZero(t *testing.T) {
	// GloVe as packaged by wink has no one-letter words, so "a" is unknown.
	for i, v := range embed(t, "", "   ", "?!--//", "zzqxv qqwzzk", "a") {
		if len(v) != 100 || norm(v) != 0 {
			t.Errorf("text %d: got length %d and norm %v, want the 100-element zero vector", i, len(v), norm(v))
		}
	}
}

func TestEmbedNothing(t *testing.T) {
	if vs := embed(t); len(vs) != 0 {
		t.Errorf("got %d vectors for no texts", len(vs))
	}
}

func TestEmbedHonoursCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := New().Embed(ctx, memory.PurposeDocument, []string{"hello"}); err == nil {
		t.Error("Embed with a cancelled context returned no error")
	}
}

func TestInflectionsFallBackToStems(t *testing.T) {
	e := New()
	tb, err := e.load()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ word, base string }{
		{"embeddings", "embedding"},
		{"caching", "cache"},
		{"chunked", "chunk"},
		{"html5", "html"}, // letter and digit parts; "5" itself is not in GloVe
	} {
		if tb.Find(c.word) >= 0 {
			t.Fatalf("%q is in the vocabulary; pick a rarer inflection for this test", c.word)
		}
		got := e.lookup(tb, c.word)
		if len(got) != 1 || tb.Word(got[0]) != c.base {
			words := []string{}
			for _, i := range got {
				words = append(words, tb.Word(i))
			}
			t.Errorf("lookup(%q) = %q, want [%q]", c.word, words, c.base)
		}
	}
	if got := e.lookup(tb, "zzqxv"); len(got) != 0 {
		t.Errorf("lookup of a non-word found %d entries", len(got))
	}
}

func TestModelNamesTheEmbeddedData(t *testing.T) {
	e := New()
	tb, err := e.load()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(e.Model(), tb.Name) {
		t.Errorf("Model() = %q does not name the embedded data %q", e.Model(), tb.Name)
	}
	if !strings.HasPrefix(e.Model(), "static:") {
		t.Errorf("Model() = %q lacks the provider prefix", e.Model())
	}
}

// Every vocabulary word must be reachable: the tokeniser has to be able to
// produce it unchanged.
func TestEveryVocabularyWordIsAToken(t *testing.T) {
	tb, err := New().load()
	if err != nil {
		t.Fatal(err)
	}
	for i := range tb.Len() {
		w := tb.Word(i)
		if got := Words(w); len(got) != 1 || got[0] != w {
			t.Fatalf("Words(%q) = %q: the word can never be looked up", w, got)
		}
		if tb.Find(w) != i {
			t.Fatalf("Find(%q) = %d, want %d: words are not sorted", w, tb.Find(w), i)
		}
	}
	if tb.Len() < 10000 {
		t.Errorf("vocabulary has only %d words", tb.Len())
	}
	if w := wordvec.Weight(0, tb.SourceN); w >= wordvec.Weight(5000, tb.SourceN) {
		t.Errorf("SIF weight of the most frequent word %v is not below that of a rarer one", w)
	}
}

func BenchmarkLoad(b *testing.B) {
	for b.Loop() {
		if _, err := New().load(); err != nil {
			b.Fatal(err)
		}
	}
}

func benchmarkEmbed(b *testing.B, purpose memory.Purpose, text string) {
	e := New()
	ctx := context.Background()
	texts := []string{text}
	for b.Loop() {
		if _, err := e.Embed(ctx, purpose, texts); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEmbedQuery(b *testing.B) {
	benchmarkEmbed(b, memory.PurposeQuery, "how does tool execution work")
}

func BenchmarkEmbedDocument(b *testing.B) {
	benchmarkEmbed(b, memory.PurposeDocument,
		"Tool execution layers: runTool() in agent/toolbox dispatches each call to the registered tool, "+
			"wraps its error with the tool name and returns the JSON result to the model loop.")
}

func TestNeighbors(t *testing.T) {
	e := New()
	got, err := e.Neighbors("database", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 8 {
		t.Fatalf("Neighbors(database, 10) = %q, want the 8 the file lists", got)
	}
	if slices.Contains(got, "database") {
		t.Errorf("Neighbors(database) includes the word itself: %q", got)
	}
	if !slices.Contains(got, "databases") || !slices.Contains(got, "data") {
		t.Errorf("Neighbors(database) = %q, want databases and data among them", got)
	}
	if few, _ := e.Neighbors("database", 3); !slices.Equal(few, got[:3]) {
		t.Errorf("Neighbors(database, 3) = %q, want the nearest three of %q", few, got)
	}
	// An inflection outside the vocabulary borrows its stem's neighbours.
	stem, _ := e.Neighbors("chunk", 8)
	if inflected, _ := e.Neighbors("chunked", 8); len(stem) == 0 || !slices.Equal(inflected, stem) {
		t.Errorf("Neighbors(chunked) = %q, want those of chunk, %q", inflected, stem)
	}
	for _, w := range []string{"zzqxv", "", "two words"} {
		if got, err := e.Neighbors(w, 5); err != nil || got != nil {
			t.Errorf("Neighbors(%q) = %q, %v; want nothing", w, got, err)
		}
	}
	if got, err := e.Neighbors("database", 0); err != nil || got != nil {
		t.Errorf("Neighbors(database, 0) = %q, %v; want nothing", got, err)
	}
}

// The shipped lists must be what a search over every vector finds: the
// nearest by the cosine of the quantised vectors, ties to the lower index,
// leaving out the word itself and the common words.
func TestNeighborsMatchBruteForce(t *testing.T) {
	e := New()
	tb, err := e.load()
	if err != nil {
		t.Fatal(err)
	}
	if tb.Neighbours != 8 || tb.CommonRanks != 100 {
		t.Fatalf("wordvec.bin lists %d neighbours skipping ranks below %d, want 8 and 100", tb.Neighbours, tb.CommonRanks)
	}
	for _, w := range []string{"database", "test", "deploy", "sister", "paint", "the", "running", "memory"} {
		i := tb.Find(w)
		if i < 0 {
			t.Fatalf("%q is not in the vocabulary", w)
		}
		type hit struct {
			j   int
			cos float32
		}
		var hits []hit
		for j := range tb.Len() {
			if j == i || tb.Rank(j) < tb.CommonRanks {
				continue
			}
			var dot int32
			a, b := tb.Quant(i), tb.Quant(j)
			for d := range tb.Dim {
				dot += int32(int8(a[d])) * int32(int8(b[d]))
			}
			hits = append(hits, hit{j, float32(dot) / (tb.QNorm(i) * tb.QNorm(j))})
		}
		slices.SortStableFunc(hits, func(x, y hit) int { return cmp.Compare(y.cos, x.cos) })
		var want []string
		for _, h := range hits[:tb.Neighbours] {
			want = append(want, tb.Word(h.j))
		}
		got, err := e.Neighbors(w, tb.Neighbours)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("Neighbors(%q) = %q, %v; brute force finds %q", w, got, err, want)
		}
	}
}

// Every word has a full list of distinct, uncommon other words, so query
// expansion never hits a gap.
func TestEveryWordHasNeighbours(t *testing.T) {
	tb, err := New().load()
	if err != nil {
		t.Fatal(err)
	}
	for i := range tb.Len() {
		seen := map[int]bool{}
		for n := range tb.Neighbours {
			j := tb.Neighbour(i, n)
			switch {
			case j < 0:
				t.Fatalf("%q has only %d neighbours", tb.Word(i), n)
			case j == i || seen[j]:
				t.Fatalf("%q lists %q twice or itself", tb.Word(i), tb.Word(j))
			case tb.Rank(j) < tb.CommonRanks:
				t.Fatalf("%q lists the common word %q", tb.Word(i), tb.Word(j))
			}
			seen[j] = true
		}
	}
}

func BenchmarkNeighbors(b *testing.B) {
	e := New()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Neighbors("database", 10); err != nil {
			b.Fatal(err)
		}
	}
}
