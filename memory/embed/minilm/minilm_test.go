package minilm

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/memory"
)

// dataSHA256 is minilm.bin's hash, as DATA_LICENSE.md states it.
const dataSHA256 = "eedbe07a75d8331c0f95a7a0de06d2a730605d934bd05bbe4ea0f2b64ec61530"

func TestEmbeddedDataIsTheGeneratedFile(t *testing.T) {
	sum := sha256.Sum256([]byte(data))
	if got := hex.EncodeToString(sum[:]); got != dataSHA256 {
		t.Errorf("minilm.bin has SHA-256 %s, want %s: regenerate it with go generate, or update the hash with the figures", got, dataSHA256)
	}
	licence, err := os.ReadFile("DATA_LICENSE.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(licence), dataSHA256) {
		t.Error("DATA_LICENSE.md does not state minilm.bin's SHA-256")
	}
}

type reference struct {
	Text   string    `json:"text"`
	IDs    []int     `json:"ids"`
	Vector []float32 `json:"vector"`
}

// readReferences reads what onnxruntime, running the teacher's fp32 ONNX
// export, made of a set of texts (testdata/reference.py).
func readReferences(t *testing.T) []reference {
	t.Helper()
	f, err := os.Open("testdata/reference.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []reference
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r reference
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) < 5 {
		t.Fatalf("%d references, want the whole file", len(out))
	}
	return out
}

func cosine(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	return ab / math.Sqrt(aa*bb)
}

// minCosine is how far quantising the weights to int8 may move a vector
// from the fp32 model's: measured 0.99947 at worst on the references of
// real text. Degenerate texts, with no word or one token repeated, whose
// states quantisation error does not average out, get 0.996 at worst.
func minCosine(r reference) float64 {
	if len(r.IDs) <= 3 || strings.Count(r.Text, r.Text[:2]) == len(r.Text)/2 {
		return 0.995
	}
	return 0.999
}

// TestVectorsMatchTheTeacher holds the tokeniser to the teacher's token
// ids and the encoder's vectors to the teacher's, for every text in one
// call (packed into shared passes) and for each text alone.
func TestVectorsMatchTheTeacher(t *testing.T) {
	refs := readReferences(t)
	e := New()
	m, err := e.load()
	if err != nil {
		t.Fatal(err)
	}
	texts := make([]string, len(refs))
	for i, r := range refs {
		texts[i] = r.Text
		if got := m.Tokenize(r.Text); !slices.Equal(got, r.IDs) {
			t.Errorf("Tokenize(%.40q) = %v, teacher's %v", r.Text, got, r.IDs)
		}
	}
	together, err := e.Embed(context.Background(), memory.PurposeDocument, texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range refs {
		alone, err := e.Embed(context.Background(), memory.PurposeQuery, []string{r.Text})
		if err != nil {
			t.Fatal(err)
		}
		if c := cosine(alone[0], r.Vector); c < minCosine(r) {
			t.Errorf("%.40q: cosine with the teacher %.5f, want at least %.3f", r.Text, c, minCosine(r))
		}
		if c := cosine(together[i], alone[0]); c < 1-1e-5 {
			t.Errorf("%.40q: embedded with others, cosine %.7f with its vector alone", r.Text, c)
		}
		if len(alone[0]) != e.Dim() {
			t.Errorf("%d dimensions, Dim says %d", len(alone[0]), e.Dim())
		}
	}
}

// TestManyTextsRunInSeveralPasses checks a batch larger than one pass,
// which runs passes side by side, returns each text's vector in order.
func TestManyTextsRunInSeveralPasses(t *testing.T) {
	refs := readReferences(t)
	var texts []string
	for range 8 {
		for _, r := range refs {
			texts = append(texts, r.Text)
		}
	}
	e := New()
	got, err := e.Embed(context.Background(), memory.PurposeDocument, texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(texts) {
		t.Fatalf("%d vectors for %d texts", len(got), len(texts))
	}
	for i, v := range got {
		if r := refs[i%len(refs)]; cosine(v, r.Vector) < minCosine(r) {
			t.Errorf("text %d (%.30q): cosine with the teacher %.5f", i, texts[i], cosine(v, r.Vector))
		}
	}
	if out, err := e.Embed(context.Background(), memory.PurposeDocument, nil); err != nil || len(out) != 0 {
		t.Errorf("Embed of no texts = %d vectors, %v", len(out), err)
	}
}

func TestPackKeepsEveryTextOnce(t *testing.T) {
	lens := []int{3, 200, 100, 300, 5, 5, 250, 1}
	ids := make([][]int, len(lens))
	for i, n := range lens {
		ids[i] = make([]int, n)
	}
	spans := pack(ids, 256)
	next := 0
	for _, s := range spans {
		if s.lo != next || s.hi <= s.lo {
			t.Fatalf("spans %v do not cover the texts in order", spans)
		}
		tokens := 0
		for _, x := range ids[s.lo:s.hi] {
			tokens += len(x)
		}
		if tokens > 256 && s.hi-s.lo > 1 {
			t.Errorf("span %v holds %d tokens", s, tokens)
		}
		next = s.hi
	}
	if next != len(ids) {
		t.Fatalf("spans %v end at %d of %d texts", spans, next, len(ids))
	}
}

// BenchmarkSearchQuery is what a search embeds: the question and each of
// its words alone (the soft matches' vectors), in one call.
func BenchmarkSearchQuery(b *testing.B) {
	e := New()
	q := "how do I reach the staging database"
	texts := append([]string{q}, memory.QueryWords(q)...)
	if _, err := e.Embed(context.Background(), memory.PurposeQuery, texts); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := e.Embed(context.Background(), memory.PurposeQuery, texts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(texts)), "texts")
}

// BenchmarkFill is the background fill's work: 64 memories of typical
// length, one Embed call, as Store.Fill makes it.
func BenchmarkFill(b *testing.B) {
	e := New()
	texts := make([]string, 64)
	for i := range texts {
		texts[i] = fmt.Sprintf("Memory %d: integration tests need the postgres container, so start it with docker compose up db before running make test", i)
	}
	for b.Loop() {
		if _, err := e.Embed(context.Background(), memory.PurposeDocument, texts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N)/64, "ms/memory")
}
