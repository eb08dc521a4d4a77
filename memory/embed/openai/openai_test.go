package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/embed/internal/embedtest"
	"github.com/acolyte-dev/acolyte/memory/sqlite"
)

// server is an OpenAI-compatible embeddings endpoint. By default it answers
// every request correctly, listing the vectors in reverse order as servers
// are allowed to; reply overrides that for the n-th request (from 1).
type server struct {
	t     *testing.T
	dim   int
	reply func(n int, w http.ResponseWriter, req request) bool

	mu       sync.Mutex
	requests []request
	headers  []http.Header
	paths    []string
}

func newServer(t *testing.T, dim int) (*server, *httptest.Server) {
	s := &server{t: t, dim: dim}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return s, ts
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		s.t.Errorf("request body is not JSON: %v", err)
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.headers = append(s.headers, r.Header.Clone())
	s.paths = append(s.paths, r.Method+" "+r.URL.Path)
	n := len(s.requests)
	s.mu.Unlock()
	if s.reply != nil && s.reply(n, w, req) {
		return
	}
	writeVectors(w, req, s.dim)
}

// vectorFor is the server's deterministic "embedding" of a text.
type datum struct {
	Object    string    `json:"object"`
	Index     int       `json:"index"`
	Embedding []float32 `json:"embedding"`
}

func writeVectors(w http.ResponseWriter, req request, dim int) {
	data := make([]datum, len(req.Input))
	for i, text := range req.Input {
		data[len(data)-1-i] = datum{"embedding", i, embedtest.VectorFor(text, dim)}
	}
	writeData(w, req.Model, data)
}

func writeData(w http.ResponseWriter, model string, data []datum) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"object": "list",
		"data":   data,
		"model":  model,
		"usage":  map[string]int{"prompt_tokens": 3, "total_tokens": 3},
	})
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":{"message":%q,"type":"invalid_request_error"}}`, msg)
}

// recorder stands in for the retry sleep so tests see the waits without sleeping.
func newEmbedder(t *testing.T, cfg Config) (*Embedder, *embedtest.Sleeps) {
	t.Helper()
	e, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	rec := &embedtest.Sleeps{}
	e.policy.Sleep = rec.Sleep
	return e, rec
}

func TestEmbedBatchesOrdersAndNormalises(t *testing.T) {
	srv, ts := newServer(t, 4)
	e, _ := newEmbedder(t, Config{BaseURL: ts.URL, Model: "nomic-embed-text", APIKey: "sk-test"})
	in := embedtest.Texts(250)

	got, err := e.Embed(context.Background(), memory.PurposeDocument, in)
	if err != nil {
		t.Fatalf("Embed: %v", err)
	}
	embedtest.AssertUnitVectorsFor(t, got, in, 4)

	var sizes []int
	for i, req := range srv.requests {
		sizes = append(sizes, len(req.Input))
		if srv.paths[i] != "POST /v1/embeddings" {
			t.Errorf("request %d went to %q, want POST /v1/embeddings", i, srv.paths[i])
		}
		if h := srv.headers[i].Get("Authorization"); h != "Bearer sk-test" {
			t.Errorf("Authorization = %q, want the bearer key", h)
		}
		if req.Model != "nomic-embed-text" || req.Dimensions != 0 {
			t.Errorf("request %d model %q dimensions %d, want nomic-embed-text and none", i, req.Model, req.Dimensions)
		}
	}
	if !slices.Equal(sizes, []int{100, 100, 50}) {
		t.Errorf("batch sizes = %v, want [100 100 50]", sizes)
	}
	if e.Dim() != 4 {
		t.Errorf("Dim = %d after the first answer, want the learned 4", e.Dim())
	}
	want := "openai:" + strings.TrimPrefix(ts.URL, "http://") + "/nomic-embed-text"
	if e.Model() != want {
		t.Errorf("Model = %q, want %q", e.Model(), want)
	}
}

// A new process has learned no dimension yet, and must still find the
// vectors an earlier one stored: the store's search looks them up by
// Model before it embeds anything. It was "/0" against the stored "/4",
// and the search ranked by words alone.
func TestFreshProcessRanksByTheStoredVectors(t *testing.T) {
	_, ts := newServer(t, 4)
	path := filepath.Join(t.TempDir(), "acolyte.db")
	ctx := context.Background()
	first, _ := newEmbedder(t, Config{BaseURL: ts.URL})
	s, err := sqlite.Open(ctx, path, first)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"The staging database is reached through bastion-2", "Releases are cut on Tuesdays"} {
		if _, err := s.Add(ctx, memory.Visibility{}, memory.Draft{Scope: memory.ScopeUser, Kind: memory.KindStored, Content: c}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()

	fresh, _ := newEmbedder(t, Config{BaseURL: ts.URL})
	before := fresh.Model()
	s, err = sqlite.Open(ctx, path, fresh)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rs, err := s.Search(ctx, memory.Visibility{}, memory.Query{Text: "staging database", NoFloor: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) == 0 || rs[0].Vectors != before {
		t.Fatalf("a fresh process's search = %+v; want results ranked by %s's vectors", rs, before)
	}
	if fresh.Model() != before {
		t.Errorf("Model changed from %q to %q once the dimension was learned", before, fresh.Model())
	}
}

func TestEmbedWithoutKeySendsNoAuthorization(t *testing.T) {
	srv, ts := newServer(t, 3)
	e, _ := newEmbedder(t, Config{BaseURL: ts.URL + "/v1/"})
	if _, err := e.Embed(context.Background(), memory.PurposeQuery, []string{"q"}); err != nil {
		t.Fatalf("Embed: %v", err)
	}
	if h := srv.headers[0].Get("Authorization"); h != "" {
		t.Errorf("Authorization = %q, want none without a key", h)
	}
	if srv.requests[0].Model != DefaultModel || srv.paths[0] != "POST /v1/embeddings" {
		t.Errorf("request = %s for model %q, want POST /v1/embeddings for %q", srv.paths[0], srv.requests[0].Model, DefaultModel)
	}
}

func TestConfiguredDimIsRequestedAndEnforced(t *testing.T) {
	srv, ts := newServer(t, 8)
	e, _ := newEmbedder(t, Config{BaseURL: ts.URL, Model: "text-embedding-3-small", Dim: 8})
	if e.Dim() != 8 || !strings.HasSuffix(e.Model(), "/text-embedding-3-small/8") {
		t.Fatalf("before any request Dim = %d, Model = %q; want the configured 8", e.Dim(), e.Model())
	}
	if _, err := e.Embed(context.Background(), memory.PurposeDocument, []string{"a"}); err != nil {
		t.Fatalf("Embed: %v", err)
	}
	if srv.requests[0].Dimensions != 8 {
		t.Errorf("request dimensions = %d, want 8", srv.requests[0].Dimensions)
	}

	srv.dim = 5 // the server ignores the requested dimension
	_, err := e.Embed(context.Background(), memory.PurposeDocument, []string{"a"})
	if !errors.Is(err, ErrBadResponse) || !strings.Contains(err.Error(), "5-dimensional") {
		t.Errorf("err = %v, want ErrBadResponse naming the 5 dimensions", err)
	}
}

func TestLearnedDimIsHeldToLaterAnswers(t *testing.T) {
	srv, ts := newServer(t, 3)
	e, _ := newEmbedder(t, Config{BaseURL: ts.URL})
	if _, err := e.Embed(context.Background(), memory.PurposeDocument, []string{"a"}); err != nil {
		t.Fatalf("Embed: %v", err)
	}
	srv.dim = 6 // someone swapped the model behind the same name
	got, err := e.Embed(context.Background(), memory.PurposeDocument, []string{"a"})
	if !errors.Is(err, ErrBadResponse) || got != nil {
		t.Errorf("got %v, %v; want no vectors and ErrBadResponse", got, err)
	}
	if e.Dim() != 3 {
		t.Errorf("Dim = %d, want it to stay 3", e.Dim())
	}
}

func TestUnauthorisedIsNotRetried(t *testing.T) {
	for _, status := range []int{http.StatusUnauthorized, http.StatusForbidden} {
		srv, ts := newServer(t, 3)
		srv.reply = func(_ int, w http.ResponseWriter, _ request) bool {
			writeError(w, status, "Incorrect API key provided")
			return true
		}
		e, rec := newEmbedder(t, Config{BaseURL: ts.URL, APIKey: "wrong"})
		got, err := e.Embed(context.Background(), memory.PurposeDocument, []string{"a"})
		if !errors.Is(err, ErrKeyRejected) || got != nil {
			t.Errorf("%d: got %v, %v; want ErrKeyRejected", status, got, err)
		}
		if err != nil && !strings.Contains(err.Error(), "Incorrect API key provided") {
			t.Errorf("%d: error %q does not pass on the server's message", status, err)
		}
		if len(srv.requests) != 1 || len(rec.Waits) != 0 {
			t.Errorf("%d: %d requests, %d waits; a rejected key must not be retried", status, len(srv.requests), len(rec.Waits))
		}
	}
}

func TestRateLimitIsRetriedAfterRetryAfter(t *testing.T) {
	srv, ts := newServer(t, 3)
	srv.reply = func(n int, w http.ResponseWriter, _ request) bool {
		if n > 1 {
			return false
		}
		w.Header().Set("Retry-After", "2")
		writeError(w, http.StatusTooManyRequests, "Rate limit reached")
		return true
	}
	e, rec := newEmbedder(t, Config{BaseURL: ts.URL, Backoff: time.Millisecond})
	in := []string{"a", "bb"}
	got, err := e.Embed(context.Background(), memory.PurposeDocument, in)
	if err != nil {
		t.Fatalf("Embed: %v", err)
	}
	embedtest.AssertUnitVectorsFor(t, got, in, 3)
	if len(srv.requests) != 2 || !slices.Equal(rec.Waits, []time.Duration{2 * time.Second}) {
		t.Errorf("%d requests, waits %v; want 2 requests and one 2s wait as Retry-After asked", len(srv.requests), rec.Waits)
	}
}

func TestServerErrorsBackOffThenSucceed(t *testing.T) {
	srv, ts := newServer(t, 3)
	srv.reply = func(n int, w http.ResponseWriter, _ request) bool {
		if n > 2 {
			return false
		}
		w.WriteHeader(http.StatusBadGateway)
		fmt.Fprint(w, "<html>bad gateway</html>")
		return true
	}
	e, rec := newEmbedder(t, Config{BaseURL: ts.URL, Backoff: 10 * time.Millisecond})
	if _, err := e.Embed(context.Background(), memory.PurposeDocument, []string{"a"}); err != nil {
		t.Fatalf("Embed: %v", err)
	}
	if want := []time.Duration{10 * time.Millisecond, 20 * time.Millisecond}; !slices.Equal(rec.Waits, want) {
		t.Errorf("waits = %v, want exponential %v", rec.Waits, want)
	}
}

func TestPersistentRateLimitGivesUp(t *testing.T) {
	srv, ts := newServer(t, 3)
	srv.reply = func(_ int, w http.ResponseWriter, _ request) bool {
		writeError(w, http.StatusTooManyRequests, "Rate limit reached")
		return true
	}
	e, _ := newEmbedder(t, Config{BaseURL: ts.URL, MaxAttempts: 3, Backoff: time.Millisecond})
	got, err := e.Embed(context.Background(), memory.PurposeDocument, []string{"a"})
	if !errors.Is(err, ErrUnavailable) || got != nil {
		t.Fatalf("got %v, %v; want no vectors and ErrUnavailable", got, err)
	}
	if !strings.Contains(err.Error(), "429") || !strings.Contains(err.Error(), "gave up after 3 attempts") {
		t.Errorf("error %q should name the status and the attempts", err)
	}
	if len(srv.requests) != 3 {
		t.Errorf("%d requests, want 3", len(srv.requests))
	}
}

func TestSlowServerTimesOut(t *testing.T) {
	srv, ts := newServer(t, 3)
	srv.reply = func(_ int, w http.ResponseWriter, _ request) bool {
		time.Sleep(500 * time.Millisecond)
		return false
	}
	e, _ := newEmbedder(t, Config{BaseURL: ts.URL, Timeout: 20 * time.Millisecond})
	_, err := e.Embed(context.Background(), memory.PurposeDocument, []string{"a"})
	if !errors.Is(err, ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want ErrUnavailable and DeadlineExceeded", err)
	}
	if !strings.Contains(err.Error(), "did not answer within 20ms") {
		t.Errorf("error %q should say how long it waited", err)
	}
}

func TestUnreachableServer(t *testing.T) {
	ts := httptest.NewServer(http.NotFoundHandler())
	ts.Close()
	e, _ := newEmbedder(t, Config{BaseURL: ts.URL})
	_, err := e.Embed(context.Background(), memory.PurposeDocument, []string{"a"})
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "is the server running?") {
		t.Errorf("err = %v, want ErrUnavailable asking whether the server runs", err)
	}
}

func TestBadAnswersAreRejectedWhole(t *testing.T) {
	cases := map[string]func(w http.ResponseWriter, req request){
		"malformed JSON": func(w http.ResponseWriter, _ request) {
			fmt.Fprint(w, `{"object":"list","data":[{"embedding":[0.1,`)
		},
		"too few vectors": func(w http.ResponseWriter, req request) {
			writeData(w, req.Model, []datum{{"embedding", 0, embedtest.VectorFor("a", 3)}})
		},
		"repeated index": func(w http.ResponseWriter, req request) {
			writeData(w, req.Model, []datum{{"embedding", 0, embedtest.VectorFor("a", 3)}, {"embedding", 0, embedtest.VectorFor("a", 3)}})
		},
		"mixed dimensions": func(w http.ResponseWriter, req request) {
			writeData(w, req.Model, []datum{{"embedding", 0, embedtest.VectorFor("a", 3)}, {"embedding", 1, embedtest.VectorFor("a", 4)}})
		},
		"empty vector": func(w http.ResponseWriter, req request) {
			writeData(w, req.Model, []datum{{"embedding", 0, nil}, {"embedding", 1, embedtest.VectorFor("a", 3)}})
		},
	}
	for name, answer := range cases {
		t.Run(name, func(t *testing.T) {
			srv, ts := newServer(t, 3)
			srv.reply = func(_ int, w http.ResponseWriter, req request) bool { answer(w, req); return true }
			e, _ := newEmbedder(t, Config{BaseURL: ts.URL})
			got, err := e.Embed(context.Background(), memory.PurposeDocument, []string{"a", "b"})
			if !errors.Is(err, ErrBadResponse) || got != nil {
				t.Errorf("got %v, %v; want no vectors and ErrBadResponse", got, err)
			}
			if e.Dim() != 0 {
				t.Errorf("Dim = %d, a rejected answer must not teach the dimension", e.Dim())
			}
		})
	}
}

func TestFailedLaterBatchReturnsNoVectors(t *testing.T) {
	srv, ts := newServer(t, 3)
	srv.reply = func(n int, w http.ResponseWriter, _ request) bool {
		if n < 2 {
			return false
		}
		writeError(w, http.StatusBadRequest, "input too long")
		return true
	}
	e, _ := newEmbedder(t, Config{BaseURL: ts.URL, BatchSize: 2})
	got, err := e.Embed(context.Background(), memory.PurposeDocument, embedtest.Texts(3))
	if err == nil || got != nil || !strings.Contains(err.Error(), "input too long") {
		t.Errorf("got %v, %v; want no vectors and the server's complaint", got, err)
	}
	if len(srv.requests) != 2 {
		t.Errorf("%d requests, want 2 (a 400 is not retried)", len(srv.requests))
	}
}

func TestBaseURLForms(t *testing.T) {
	for base, want := range map[string]string{
		"http://localhost:11434":                                   "http://localhost:11434/v1/embeddings",
		"http://localhost:11434/":                                  "http://localhost:11434/v1/embeddings",
		"http://localhost:1234/v1":                                 "http://localhost:1234/v1/embeddings",
		"https://api.openai.com/v1/":                               "https://api.openai.com/v1/embeddings",
		"https://generativelanguage.googleapis.com/v1beta/openai/": "https://generativelanguage.googleapis.com/v1beta/openai/embeddings",
		"http://proxy:8080/v1/embeddings":                          "http://proxy:8080/v1/embeddings",
	} {
		e, err := New(Config{BaseURL: base})
		if err != nil {
			t.Errorf("New(%q): %v", base, err)
			continue
		}
		if e.endpoint != want {
			t.Errorf("base %q posts to %q, want %q", base, e.endpoint, want)
		}
	}
	for _, bad := range []string{"localhost:11434", "ftp://host/v1", "http://", "::"} {
		if _, err := New(Config{BaseURL: bad}); err == nil || !strings.Contains(err.Error(), DefaultBaseURL) {
			t.Errorf("New(%q) = %v, want an error showing a valid example", bad, err)
		}
	}
}

func TestEmbedNothing(t *testing.T) {
	srv, ts := newServer(t, 3)
	e, _ := newEmbedder(t, Config{BaseURL: ts.URL})
	got, err := e.Embed(context.Background(), memory.PurposeDocument, nil)
	if err != nil || len(got) != 0 || len(srv.requests) != 0 {
		t.Errorf("got %v, %v after %d requests; want nothing and no request", got, err, len(srv.requests))
	}
}

// BenchmarkEmbed measures the client's own cost of one full batch of
// 768-dimensional vectors: encoding, decoding, checking and normalising.
func BenchmarkEmbed(b *testing.B) {
	in := embedtest.Texts(DefaultBatchSize)
	var answer bytes.Buffer
	rec := httptest.NewRecorder()
	writeVectors(rec, request{Model: DefaultModel, Input: in}, 768)
	answer.Write(rec.Body.Bytes())
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Write(answer.Bytes())
	}))
	defer ts.Close()
	e, err := New(Config{BaseURL: ts.URL})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Embed(context.Background(), memory.PurposeDocument, in); err != nil {
			b.Fatal(err)
		}
	}
}
