package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/embed/internal/embedtest"
)

const testKey = "AIza-test-key"

// The request body of batchEmbedContents, as the Gemini API defines it.
type batchRequest struct {
	Requests []struct {
		Model   string `json:"model"`
		Content struct {
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"content"`
		TaskType             string `json:"taskType"`
		OutputDimensionality int    `json:"outputDimensionality"`
	} `json:"requests"`
}

func (b batchRequest) texts() []string {
	var out []string
	for _, r := range b.Requests {
		for _, p := range r.Content.Parts {
			out = append(out, p.Text)
		}
	}
	return out
}

// server is a Gemini API that answers batchEmbedContents at the dimension
// each request asks for; reply overrides that for the n-th request (from 1).
type server struct {
	t     *testing.T
	reply func(n int, w http.ResponseWriter, req batchRequest) bool

	mu       sync.Mutex
	requests []batchRequest
	targets  []string
	keys     []string
}

func newServer(t *testing.T) (*server, *httptest.Server) {
	s := &server{t: t}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return s, ts
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req batchRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		s.t.Errorf("request body is not JSON: %v", err)
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.targets = append(s.targets, r.Method+" "+r.URL.Path)
	s.keys = append(s.keys, r.Header.Get("x-goog-api-key"))
	n := len(s.requests)
	s.mu.Unlock()
	if s.reply != nil && s.reply(n, w, req) {
		return
	}
	dim := 0
	if len(req.Requests) > 0 {
		dim = req.Requests[0].OutputDimensionality
	}
	writeVectors(w, req.texts(), dim)
}

// vectorFor is the server's deterministic "embedding" of a text.
func writeVectors(w http.ResponseWriter, texts []string, dim int) {
	type embedding struct {
		Values []float32 `json:"values"`
	}
	resp := struct {
		Embeddings []embedding `json:"embeddings"`
	}{}
	for _, t := range texts {
		resp.Embeddings = append(resp.Embeddings, embedding{embedtest.VectorFor(t, dim)})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

// writeError answers like the Gemini API does: a google.rpc.Status body.
func writeError(w http.ResponseWriter, code int, status, msg string, details ...string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	fmt.Fprintf(w, `{"error":{"code":%d,"message":%q,"status":%q,"details":[%s]}}`, code, msg, status, strings.Join(details, ","))
}

// recorder stands in for the retry sleep so tests see the waits without sleeping.
func newEmbedder(t *testing.T, cfg Config) (*Embedder, *embedtest.Sleeps) {
	t.Helper()
	e, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	rec := &embedtest.Sleeps{}
	e.policy.Sleep = rec.Sleep
	return e, rec
}

func TestEmbedSpeaksBatchEmbedContents(t *testing.T) {
	srv, ts := newServer(t)
	e, _ := newEmbedder(t, Config{APIKey: testKey, BaseURL: ts.URL})
	in := embedtest.Texts(250)

	got, err := e.Embed(context.Background(), memory.PurposeDocument, in)
	if err != nil {
		t.Fatalf("Embed: %v", err)
	}
	embedtest.AssertUnitVectorsFor(t, got, in, DefaultDim)

	var sizes []int
	var sent []string
	for i, req := range srv.requests {
		sizes = append(sizes, len(req.Requests))
		sent = append(sent, req.texts()...)
		if want := "POST /v1beta/models/gemini-embedding-001:batchEmbedContents"; srv.targets[i] != want {
			t.Errorf("request %d = %q, want %q", i, srv.targets[i], want)
		}
		if srv.keys[i] != testKey {
			t.Errorf("request %d x-goog-api-key = %q, want the key", i, srv.keys[i])
		}
		for _, r := range req.Requests {
			if r.Model != "models/gemini-embedding-001" || r.TaskType != "RETRIEVAL_DOCUMENT" || r.OutputDimensionality != DefaultDim {
				t.Fatalf("request %d entry = model %q task %q dim %d, want models/gemini-embedding-001 RETRIEVAL_DOCUMENT %d",
					i, r.Model, r.TaskType, r.OutputDimensionality, DefaultDim)
			}
		}
	}
	if !slices.Equal(sizes, []int{100, 100, 50}) {
		t.Errorf("batch sizes = %v, want [100 100 50]", sizes)
	}
	if !slices.Equal(sent, in) {
		t.Errorf("the texts sent differ from the texts given")
	}
	if e.Model() != "gemini:gemini-embedding-001/768" || e.Dim() != 768 {
		t.Errorf("Model = %q, Dim = %d; want gemini:gemini-embedding-001/768 and 768", e.Model(), e.Dim())
	}
}

func TestQueriesUseQueryTaskTypeAndConfiguredModel(t *testing.T) {
	srv, ts := newServer(t)
	e, _ := newEmbedder(t, Config{APIKey: testKey, BaseURL: ts.URL, Model: "models/text-embedding-004", Dim: 256})
	in := []string{"where is the config read?"}
	got, err := e.Embed(context.Background(), memory.PurposeQuery, in)
	if err != nil {
		t.Fatalf("Embed: %v", err)
	}
	embedtest.AssertUnitVectorsFor(t, got, in, 256)
	r := srv.requests[0].Requests[0]
	if r.TaskType != "RETRIEVAL_QUERY" || r.OutputDimensionality != 256 || r.Model != "models/text-embedding-004" {
		t.Errorf("sent task %q dim %d model %q, want RETRIEVAL_QUERY 256 models/text-embedding-004", r.TaskType, r.OutputDimensionality, r.Model)
	}
	if srv.targets[0] != "POST /v1beta/models/text-embedding-004:batchEmbedContents" {
		t.Errorf("request went to %q", srv.targets[0])
	}
	if e.Model() != "gemini:text-embedding-004/256" {
		t.Errorf("Model = %q, want gemini:text-embedding-004/256", e.Model())
	}
}

func TestMissingKey(t *testing.T) {
	_, err := New(context.Background(), Config{})
	if !errors.Is(err, ErrNoKey) {
		t.Fatalf("err = %v, want ErrNoKey", err)
	}
	for _, name := range []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error %q does not say to set %s", err, name)
		}
	}
}

func TestKeyFromEnv(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{}, ""},
		{map[string]string{"GEMINI_API_KEY": "g"}, "g"},
		{map[string]string{"GOOGLE_API_KEY": "o"}, "o"},
		{map[string]string{"GEMINI_API_KEY": "g", "GOOGLE_API_KEY": "o"}, "o"},
	} {
		getenv := func(k string) string { return tc.env[k] }
		if got := KeyFromEnv(getenv); got != tc.want {
			t.Errorf("KeyFromEnv(%v) = %q, want %q", tc.env, got, tc.want)
		}
	}
}

func TestRejectedKeyIsNotRetried(t *testing.T) {
	invalidKey := `{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com"}`
	for name, answer := range map[string]func(w http.ResponseWriter){
		"401": func(w http.ResponseWriter) {
			writeError(w, 401, "UNAUTHENTICATED", "Request had invalid authentication credentials.")
		},
		"403": func(w http.ResponseWriter) {
			writeError(w, 403, "PERMISSION_DENIED", "Method doesn't allow unregistered callers.")
		},
		"400 invalid key": func(w http.ResponseWriter) { writeError(w, 400, "INVALID_ARGUMENT", "API key not valid.", invalidKey) },
	} {
		t.Run(name, func(t *testing.T) {
			srv, ts := newServer(t)
			srv.reply = func(_ int, w http.ResponseWriter, _ batchRequest) bool { answer(w); return true }
			e, rec := newEmbedder(t, Config{APIKey: "wrong", BaseURL: ts.URL})
			got, err := e.Embed(context.Background(), memory.PurposeDocument, []string{"a"})
			if !errors.Is(err, ErrKeyRejected) || got != nil {
				t.Fatalf("got %v, %v; want no vectors and ErrKeyRejected", got, err)
			}
			if !strings.Contains(err.Error(), "rejected the key") || !strings.Contains(err.Error(), "GEMINI_API_KEY") {
				t.Errorf("error %q should say the key was rejected and where it comes from", err)
			}
			if len(srv.requests) != 1 || len(rec.Waits) != 0 {
				t.Errorf("%d requests, %d waits; a rejected key must not be retried", len(srv.requests), len(rec.Waits))
			}
		})
	}
}

func TestRateLimitWaitsAsLongAsAsked(t *testing.T) {
	for name, tc := range map[string]struct {
		answer func(w http.ResponseWriter)
		want   time.Duration
	}{
		"Retry-After header": {func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "2")
			writeError(w, 429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota).")
		}, 2 * time.Second},
		"RetryInfo detail": {func(w http.ResponseWriter) {
			writeError(w, 429, "RESOURCE_EXHAUSTED", "You exceeded your current quota.",
				`{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"3s"}`)
		}, 3 * time.Second},
	} {
		t.Run(name, func(t *testing.T) {
			srv, ts := newServer(t)
			srv.reply = func(n int, w http.ResponseWriter, _ batchRequest) bool {
				if n > 1 {
					return false
				}
				tc.answer(w)
				return true
			}
			e, rec := newEmbedder(t, Config{APIKey: testKey, BaseURL: ts.URL, Dim: 4, Backoff: time.Millisecond})
			in := []string{"a", "bb"}
			got, err := e.Embed(context.Background(), memory.PurposeDocument, in)
			if err != nil {
				t.Fatalf("Embed: %v", err)
			}
			embedtest.AssertUnitVectorsFor(t, got, in, 4)
			if len(srv.requests) != 2 || !slices.Equal(rec.Waits, []time.Duration{tc.want}) {
				t.Errorf("%d requests, waits %v; want 2 requests and one %s wait", len(srv.requests), rec.Waits, tc.want)
			}
		})
	}
}

func TestPersistentRateLimitGivesUp(t *testing.T) {
	srv, ts := newServer(t)
	srv.reply = func(_ int, w http.ResponseWriter, _ batchRequest) bool {
		writeError(w, 429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota).")
		return true
	}
	e, rec := newEmbedder(t, Config{APIKey: testKey, BaseURL: ts.URL, MaxAttempts: 3, Backoff: time.Millisecond})
	got, err := e.Embed(context.Background(), memory.PurposeDocument, []string{"a"})
	if !errors.Is(err, ErrUnavailable) || got != nil {
		t.Fatalf("got %v, %v; want no vectors and ErrUnavailable", got, err)
	}
	if !strings.Contains(err.Error(), "RESOURCE_EXHAUSTED") || !strings.Contains(err.Error(), "gave up after 3 attempts") {
		t.Errorf("error %q should name the status and the attempts", err)
	}
	if len(srv.requests) != 3 || len(rec.Waits) != 2 {
		t.Errorf("%d requests and %d waits, want 3 and 2", len(srv.requests), len(rec.Waits))
	}
}

func TestServerErrorsBackOffThenSucceed(t *testing.T) {
	srv, ts := newServer(t)
	srv.reply = func(n int, w http.ResponseWriter, _ batchRequest) bool {
		switch n {
		case 1:
			writeError(w, 503, "UNAVAILABLE", "The model is overloaded. Please try again later.")
		case 2:
			w.WriteHeader(http.StatusBadGateway)
			fmt.Fprint(w, "<html>bad gateway</html>")
		default:
			return false
		}
		return true
	}
	e, rec := newEmbedder(t, Config{APIKey: testKey, BaseURL: ts.URL, Dim: 4, Backoff: 10 * time.Millisecond})
	if _, err := e.Embed(context.Background(), memory.PurposeDocument, []string{"a"}); err != nil {
		t.Fatalf("Embed: %v", err)
	}
	if want := []time.Duration{10 * time.Millisecond, 20 * time.Millisecond}; !slices.Equal(rec.Waits, want) {
		t.Errorf("waits = %v, want exponential %v", rec.Waits, want)
	}
}

func TestSlowServerTimesOut(t *testing.T) {
	srv, ts := newServer(t)
	srv.reply = func(int, http.ResponseWriter, batchRequest) bool {
		time.Sleep(500 * time.Millisecond)
		return false
	}
	e, _ := newEmbedder(t, Config{APIKey: testKey, BaseURL: ts.URL, Timeout: 20 * time.Millisecond})
	got, err := e.Embed(context.Background(), memory.PurposeDocument, []string{"a"})
	if !errors.Is(err, ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) || got != nil {
		t.Fatalf("got %v, %v; want no vectors, ErrUnavailable and DeadlineExceeded", got, err)
	}
	if !strings.Contains(err.Error(), "no answer within 20ms") {
		t.Errorf("error %q should say how long it waited", err)
	}
}

func TestCancelledContextStopsEmbedding(t *testing.T) {
	_, ts := newServer(t)
	e, _ := newEmbedder(t, Config{APIKey: testKey, BaseURL: ts.URL})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := e.Embed(ctx, memory.PurposeDocument, []string{"a"})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestUnreachableAPI(t *testing.T) {
	ts := httptest.NewServer(http.NotFoundHandler())
	ts.Close()
	e, _ := newEmbedder(t, Config{APIKey: testKey, BaseURL: ts.URL})
	_, err := e.Embed(context.Background(), memory.PurposeDocument, []string{"a"})
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "cannot reach") {
		t.Errorf("err = %v, want ErrUnavailable saying it cannot reach the API", err)
	}
}

func TestBadAnswersAreRejectedWhole(t *testing.T) {
	for name, answer := range map[string]func(w http.ResponseWriter, req batchRequest){
		"malformed JSON":  func(w http.ResponseWriter, _ batchRequest) { fmt.Fprint(w, `{"embeddings":[{"values":[0.1,`) },
		"too few vectors": func(w http.ResponseWriter, req batchRequest) { writeVectors(w, req.texts()[:1], 4) },
		"wrong dimension": func(w http.ResponseWriter, req batchRequest) { writeVectors(w, req.texts(), 3) },
		"no embeddings":   func(w http.ResponseWriter, _ batchRequest) { fmt.Fprint(w, `{}`) },
	} {
		t.Run(name, func(t *testing.T) {
			srv, ts := newServer(t)
			srv.reply = func(_ int, w http.ResponseWriter, req batchRequest) bool { answer(w, req); return true }
			e, _ := newEmbedder(t, Config{APIKey: testKey, BaseURL: ts.URL, Dim: 4})
			got, err := e.Embed(context.Background(), memory.PurposeDocument, []string{"a", "b"})
			if !errors.Is(err, ErrBadResponse) || got != nil {
				t.Errorf("got %v, %v; want no vectors and ErrBadResponse", got, err)
			}
		})
	}
}

func TestFailedLaterBatchReturnsNoVectors(t *testing.T) {
	srv, ts := newServer(t)
	srv.reply = func(n int, w http.ResponseWriter, _ batchRequest) bool {
		if n < 2 {
			return false
		}
		writeError(w, 400, "INVALID_ARGUMENT", "Request payload size exceeds the limit.")
		return true
	}
	e, _ := newEmbedder(t, Config{APIKey: testKey, BaseURL: ts.URL, Dim: 4})
	got, err := e.Embed(context.Background(), memory.PurposeDocument, embedtest.Texts(150))
	if err == nil || got != nil || !strings.Contains(err.Error(), "payload size exceeds") {
		t.Errorf("got %d vectors, %v; want none and the API's complaint", len(got), err)
	}
	if errors.Is(err, ErrKeyRejected) || errors.Is(err, ErrUnavailable) {
		t.Errorf("err = %v: a plain 400 is neither a key problem nor an outage", err)
	}
	if len(srv.requests) != 2 {
		t.Errorf("%d requests, want 2 (a 400 is not retried)", len(srv.requests))
	}
}

func TestEmbedNothing(t *testing.T) {
	srv, ts := newServer(t)
	e, _ := newEmbedder(t, Config{APIKey: testKey, BaseURL: ts.URL})
	got, err := e.Embed(context.Background(), memory.PurposeDocument, nil)
	if err != nil || len(got) != 0 || len(srv.requests) != 0 {
		t.Errorf("got %v, %v after %d requests; want nothing and no request", got, err, len(srv.requests))
	}
}

// BenchmarkEmbed measures the client's own cost of one full batch of
// 768-dimensional vectors through the SDK: encoding, decoding, checking and
// normalising.
func BenchmarkEmbed(b *testing.B) {
	in := embedtest.Texts(MaxBatch)
	rec := httptest.NewRecorder()
	writeVectors(rec, in, DefaultDim)
	answer := rec.Body.Bytes()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Write(answer)
	}))
	defer ts.Close()
	e, err := New(context.Background(), Config{APIKey: testKey, BaseURL: ts.URL})
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
