package static

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/memory"
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

func TestTextWithoutKnownTokensIsZero(t *testing.T) {
	// Whitespace, control characters and a script the vocabulary lacks
	// (Ge'ez) leave no token.
	for i, v := range embed(t, "", "   ", "\x00\x07", "ሰላም ዓለም") {
		if len(v) != dim || norm(v) != 0 {
			t.Errorf("text %d: got length %d and norm %v, want the %d-element zero vector", i, len(v), norm(v), dim)
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

// TestEmbeddedDataIsTheGeneratedFile pins tokvec.bin to the file
// internal/gen wrote from the pinned teacher: a changed file must come
// with a regenerated hash here, a new dataName, and new figures.
func TestEmbeddedDataIsTheGeneratedFile(t *testing.T) {
	const want = "2e43fb53bcb88bf521c18f265a0832934c35547983cb29c715ca0c42bd26c502"
	sum := sha256.Sum256([]byte(data))
	if got := hex.EncodeToString(sum[:]); got != want {
		t.Errorf("tokvec.bin has SHA-256 %s, want %s: regenerate it with go generate, or update the hash with the figures", got, want)
	}
}

// TestPhrasesMeanWhatTheTeacherMeant checks meaning a word-level model
// lacks: each query must lie nearer its paraphrase than the other rules,
// though it shares no content word with it.
func TestPhrasesMeanWhatTheTeacherMeant(t *testing.T) {
	rules := []string{
		"Start the dev server in watch mode before editing",
		"Never hold a lock while doing I/O",
		"Use table-driven tests",
	}
	for q, want := range map[string]int{
		"keep it rebuilding whenever files change": 0,
		"write to disk while holding a mutex":      1,
		"a list of cases in one test function":     2,
	} {
		vs := embed(t, append([]string{q}, rules...)...)
		best := 0
		for i := 1; i < len(rules); i++ {
			if dot(vs[0], vs[1+i]) > dot(vs[0], vs[1+best]) {
				best = i
			}
		}
		if best != want {
			t.Errorf("%q is nearest %q, want %q", q, rules[best], rules[want])
		}
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

// TestIndexedVocabularyFindsWhatTheTableFinds: a large batch looks tokens up
// by hash, a small one by the table's binary search; both find the same
// index for every token of the table and none for others, so a memory's
// vector does not depend on the batch it was embedded in.
func TestIndexedVocabularyFindsWhatTheTableFinds(t *testing.T) {
	e := New()
	table, err := e.load()
	if err != nil {
		t.Fatal(err)
	}
	indexed := e.vocabulary(table, indexedBatch)
	if _, ok := indexed.(wordIndex); !ok {
		t.Fatalf("a batch of %d texts looks tokens up in %T", indexedBatch, indexed)
	}
	for i := range table.Len() {
		w := table.Word(i)
		if got, want := indexed.Find(w), table.Find(w); got != want {
			t.Fatalf("token %q: by hash %d, by binary search %d", w, got, want)
		}
	}
	for _, w := range []string{"", "zzzzqqq", "##", "##zzq", "Cache"} {
		if got, want := indexed.Find(w), table.Find(w); got != want {
			t.Fatalf("%q: by hash %d, by binary search %d", w, got, want)
		}
	}
	texts := make([]string, indexedBatch)
	for i := range texts {
		texts[i] = fmt.Sprintf("The thumbnailer deduplicates HTTPServer uploads, naïvely, %d times", i)
	}
	batch, err := e.Embed(t.Context(), memory.PurposeDocument, texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range texts {
		one, err := e.Embed(t.Context(), memory.PurposeDocument, []string{text})
		if err != nil || !slices.Equal(one[0], batch[i]) {
			t.Fatalf("text %d: alone %v, %v; in a batch %v", i, one, err, batch[i])
		}
	}
}
