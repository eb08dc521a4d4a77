package static

import (
	"context"
	"math"
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
