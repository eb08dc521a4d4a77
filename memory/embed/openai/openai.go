// Package openai embeds text through any server that speaks the OpenAI
// embeddings API, POST {base}/embeddings: Ollama, LM Studio, vLLM,
// llama.cpp's server and OpenAI itself. It uses plain net/http.
//
// The default base URL is a local Ollama (http://localhost:11434/v1) with
// the nomic-embed-text model, so `ollama pull nomic-embed-text` is all an
// offline user needs.
//
// # Dimension
//
// Servers do not announce a model's dimension, so unless Config.Dim is set
// the Embedder learns it from the first successful response and holds every
// later response to it. Until then Dim returns 0. Model names the
// dimension only when it was configured: a learned one must not rename the
// space, or a new process, which has learned nothing yet, would look for
// vectors under another name than the ones it stored.
// A set Dim is also sent as the request's "dimensions" field, which OpenAI's
// text-embedding-3 models, Ollama and vLLM's Matryoshka models honour.
package openai

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/embed/internal/retry"
)

// Defaults for a zero Config.
const (
	DefaultBaseURL   = "http://localhost:11434/v1"
	DefaultModel     = "nomic-embed-text"
	DefaultBatchSize = 100
	// DefaultTimeout is generous because a local server may first have to
	// load the model from disk.
	DefaultTimeout = 60 * time.Second
)

// maxResponseBytes bounds what one response may make us read: 100 vectors
// of a few thousand floats fit many times over.
const maxResponseBytes = 64 << 20

// Errors callers can test for with errors.Is.
var (
	// ErrKeyRejected means the server refused the credentials (401 or 403).
	ErrKeyRejected = errors.New("openai: the API rejected the key")
	// ErrUnavailable means the server could not answer now: unreachable,
	// too slow, rate limited or failing even after retries. Trying later may work.
	ErrUnavailable = errors.New("openai: embedding server unavailable")
	// ErrBadResponse means the server answered with something that is not
	// one vector per input text of the expected dimension.
	ErrBadResponse = errors.New("openai: unexpected embedding response")
)

// Config configures an Embedder. Only zero values take defaults.
type Config struct {
	// BaseURL is the API root, with or without /v1: http://localhost:11434,
	// http://localhost:1234/v1 and https://api.openai.com/v1 all work. A URL
	// with a path other than /v1 (a proxy, another vendor's compatibility
	// layer) is used as given, and one ending in /embeddings is the endpoint itself.
	BaseURL string
	Model   string
	// APIKey is sent as a Bearer token when set; local servers need none.
	APIKey string
	// Dim is the vector dimension to request and expect; 0 learns it.
	Dim int
	// BatchSize caps how many texts go into one request.
	BatchSize  int
	HTTPClient *http.Client
	// Timeout bounds each HTTP attempt; a retry gets a fresh one.
	Timeout time.Duration
	// MaxAttempts is the number of tries per request for rate limits and
	// server errors, including the first; 1 disables retries.
	MaxAttempts int
	// Backoff is the wait before the first retry; it doubles after each.
	Backoff time.Duration
}

var _ memory.Embedder = (*Embedder)(nil)

// Embedder embeds text with one model on one server. It is safe for
// concurrent use.
type Embedder struct {
	endpoint  string
	host      string
	model     string
	apiKey    string
	requested int // the configured Dim, sent as "dimensions"; 0 sends none
	dim       atomic.Int64
	batchSize int
	client    *http.Client
	timeout   time.Duration
	policy    retry.Policy
}

// New checks cfg and returns an Embedder. It does not contact the server.
func New(cfg Config) (*Embedder, error) {
	base := cmp.Or(cfg.BaseURL, DefaultBaseURL)
	endpoint, host, err := endpointFor(base)
	if err != nil {
		return nil, err
	}
	if cfg.Dim < 0 {
		return nil, fmt.Errorf("openai: dimension %d is negative: set a positive dimension, or 0 to use the model's own", cfg.Dim)
	}
	e := &Embedder{
		endpoint:  endpoint,
		host:      host,
		model:     cmp.Or(cfg.Model, DefaultModel),
		apiKey:    cfg.APIKey,
		requested: cfg.Dim,
		batchSize: cmp.Or(max(cfg.BatchSize, 0), DefaultBatchSize),
		client:    cmp.Or(cfg.HTTPClient, http.DefaultClient),
		timeout:   cmp.Or(max(cfg.Timeout, 0), DefaultTimeout),
		policy:    retry.Policy{Attempts: cfg.MaxAttempts, Base: cfg.Backoff},
	}
	e.dim.Store(int64(cfg.Dim))
	return e, nil
}

func endpointFor(base string) (endpoint, host string, err error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", "", fmt.Errorf("openai: base URL %q is not an http(s) URL: use one like %s", base, DefaultBaseURL)
	}
	path := strings.TrimRight(u.Path, "/")
	switch {
	case path == "":
		path = "/v1/embeddings"
	case !strings.HasSuffix(path, "/embeddings"):
		path += "/embeddings"
	}
	u.Path, u.RawPath = path, ""
	return u.String(), strings.ToLower(u.Host), nil
}

// Model names the vector space: server host and model, because two
// servers may serve different weights under one model name, and the
// requested dimension when one was configured, because a Matryoshka
// model's shorter vectors are another space.
func (e *Embedder) Model() string {
	id := "openai:" + e.host + "/" + e.model
	if e.requested > 0 {
		id += "/" + strconv.Itoa(e.requested)
	}
	return id
}

// Dim is the configured or learned dimension, 0 before it is known.
func (e *Embedder) Dim() int { return int(e.dim.Load()) }

// Embed returns one unit-length vector per text, in order, or an error and
// no vectors at all. Purpose is ignored: OpenAI-style models are symmetric.
func (e *Embedder) Embed(ctx context.Context, _ memory.Purpose, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for batch := range slices.Chunk(texts, e.batchSize) {
		vecs, err := e.embedBatch(ctx, batch)
		if err != nil {
			return nil, err
		}
		out = append(out, vecs...)
	}
	for _, v := range out {
		memory.Normalize32(v)
	}
	return out, nil
}

type request struct {
	Model      string   `json:"model"`
	Input      []string `json:"input"`
	Dimensions int      `json:"dimensions,omitempty"`
}

type response struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

func (e *Embedder) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := json.Marshal(request{Model: e.model, Input: texts, Dimensions: e.requested})
	if err != nil {
		return nil, fmt.Errorf("openai: encoding request: %w", err)
	}
	var raw []byte
	err = e.policy.Do(ctx, func(ctx context.Context) error {
		var postErr error
		raw, postErr = e.post(ctx, body)
		return postErr
	})
	if err != nil {
		return nil, err
	}
	return e.decode(raw, len(texts))
}

// post sends one request and returns the body of a 2xx answer. Errors worth
// retrying come back as *retry.Later.
func (e *Embedder) post(ctx context.Context, body []byte) ([]byte, error) {
	attemptCtx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(attemptCtx, http.MethodPost, e.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("openai: building request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if e.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+e.apiKey)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return nil, e.transportError(ctx, attemptCtx, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return nil, e.transportError(ctx, attemptCtx, err)
	}
	if resp.StatusCode/100 == 2 {
		return raw, nil
	}
	msg := errorMessage(raw)
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		hint := "check the API key"
		if e.apiKey == "" {
			hint = "this server needs an API key and none is configured"
		}
		return nil, fmt.Errorf("%w (%s from %s): %s; %s", ErrKeyRejected, resp.Status, e.host, msg, hint)
	case retry.Retryable(resp.StatusCode):
		return nil, &retry.Later{
			Err:   fmt.Errorf("%w: %s from %s: %s", ErrUnavailable, resp.Status, e.host, msg),
			After: retry.ParseAfter(resp.Header.Get("Retry-After"), time.Now()),
		}
	default:
		return nil, fmt.Errorf("openai: %s refused the request (%s): %s; check the model name %q and the base URL", e.host, resp.Status, msg, e.model)
	}
}

func (e *Embedder) transportError(ctx, attemptCtx context.Context, err error) error {
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("%w: embedding stopped: %w", ErrUnavailable, ctx.Err())
	case attemptCtx.Err() != nil:
		return fmt.Errorf("%w: %s did not answer within %s: %w", ErrUnavailable, e.host, e.timeout, attemptCtx.Err())
	default:
		return fmt.Errorf("%w: cannot reach %s (is the server running?): %w", ErrUnavailable, e.endpoint, err)
	}
}

// errorMessage digs the human-readable part out of an error body: OpenAI
// sends {"error":{"message":…}}, some servers {"error":"…"}, proxies HTML.
func errorMessage(raw []byte) string {
	var nested struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(raw, &nested) == nil && nested.Error.Message != "" {
		return nested.Error.Message
	}
	var flat struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(raw, &flat) == nil && flat.Error != "" {
		return flat.Error
	}
	s := strings.TrimSpace(string(raw))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return cmp.Or(s, "no details")
}

// decode checks that raw holds exactly one vector per input, each index
// once, all of the Embedder's dimension, and returns them in input order.
func (e *Embedder) decode(raw []byte, n int) ([][]float32, error) {
	var resp response
	if err := json.Unmarshal(raw, &resp); err != nil {
		return nil, fmt.Errorf("%w: %s did not send JSON: %w", ErrBadResponse, e.host, err)
	}
	if len(resp.Data) != n {
		return nil, fmt.Errorf("%w: %d vectors for %d texts", ErrBadResponse, len(resp.Data), n)
	}
	vecs := make([][]float32, n)
	for _, d := range resp.Data {
		if d.Index < 0 || d.Index >= n || vecs[d.Index] != nil {
			return nil, fmt.Errorf("%w: index %d is out of range or repeated", ErrBadResponse, d.Index)
		}
		if len(d.Embedding) == 0 {
			return nil, fmt.Errorf("%w: empty vector at index %d", ErrBadResponse, d.Index)
		}
		vecs[d.Index] = d.Embedding
	}
	for i, v := range vecs {
		if len(v) != len(vecs[0]) {
			return nil, fmt.Errorf("%w: vectors of %d and %d dimensions in one answer (indexes 0 and %d)", ErrBadResponse, len(vecs[0]), len(v), i)
		}
	}
	if err := e.checkDim(len(vecs[0])); err != nil {
		return nil, err
	}
	return vecs, nil
}

// checkDim holds a response's dimension to the known one, or makes it the
// known one if none is known yet.
func (e *Embedder) checkDim(got int) error {
	if e.dim.CompareAndSwap(0, int64(got)) {
		return nil
	}
	if want := e.Dim(); got != want {
		return fmt.Errorf("%w: a %d-dimensional vector where %d were expected; if the model changed, set the dimension to match", ErrBadResponse, got, want)
	}
	return nil
}
