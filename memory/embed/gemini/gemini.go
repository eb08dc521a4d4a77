// Package gemini embeds text with Google's Gemini embedding models through
// the Gemini API, using the official SDK (google.golang.org/genai).
//
// Memories are embedded with the RETRIEVAL_DOCUMENT task type and searches
// with RETRIEVAL_QUERY, which places a question near the facts that answer
// it rather than near other questions. Rate limits and server errors are
// retried with exponential backoff, waiting at least as long as the API asks
// (RetryInfo in the error body, or a Retry-After header).
package gemini

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/genai"

	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/embed/internal/retry"
)

// Defaults for a zero Config.
const (
	DefaultModel = "gemini-embedding-001"
	// DefaultDim keeps a quarter of gemini-embedding-001's native 3072
	// dimensions, which Google reports costs little retrieval quality.
	DefaultDim     = 768
	DefaultTimeout = 30 * time.Second
)

// MaxBatch is the API's limit on texts in one batchEmbedContents request.
const MaxBatch = 100

// The environment variables that may hold the API key, named once here for
// KeyFromEnv and for the error that explains how to set one.
const (
	EnvGoogleAPIKey = "GOOGLE_API_KEY"
	EnvGeminiAPIKey = "GEMINI_API_KEY"
)

// Errors callers can test for with errors.Is.
var (
	// ErrNoKey means no API key was configured.
	ErrNoKey = errors.New("gemini: no API key")
	// ErrKeyRejected means the API refused the key.
	ErrKeyRejected = errors.New("gemini: the API rejected the key")
	// ErrUnavailable means the API could not answer now: unreachable, too
	// slow, rate limited or failing even after retries. Trying later may work.
	ErrUnavailable = errors.New("gemini: embedding API unavailable")
	// ErrBadResponse means the API answered with something that is not one
	// vector per input text of the requested dimension.
	ErrBadResponse = errors.New("gemini: unexpected embedding response")
)

// KeyFromEnv returns the API key from the environment. GOOGLE_API_KEY wins
// over GEMINI_API_KEY, as it does in the SDK, so that the embedder and the
// agent never use two different keys.
func KeyFromEnv(getenv func(string) string) string {
	return cmp.Or(getenv(EnvGoogleAPIKey), getenv(EnvGeminiAPIKey))
}

// Config configures an Embedder. Only zero values take defaults.
type Config struct {
	APIKey string
	Model  string
	// Dim is the output dimensionality requested from the model.
	Dim int
	// BaseURL replaces the API's address, for a proxy or a test server.
	BaseURL    string
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

// Embedder embeds text with one Gemini model at one dimension. It is safe
// for concurrent use.
type Embedder struct {
	client  *genai.Client
	model   string
	dim     int
	timeout time.Duration
	policy  retry.Policy
}

// New checks cfg and returns an Embedder. It does not contact the API.
func New(ctx context.Context, cfg Config) (*Embedder, error) {
	if cfg.APIKey == "" {
		return nil, fmt.Errorf("%w: set %s (or %s) to a key from https://aistudio.google.com/apikey",
			ErrNoKey, EnvGeminiAPIKey, EnvGoogleAPIKey)
	}
	if cfg.Dim < 0 {
		return nil, fmt.Errorf("gemini: dimension %d is negative: use a positive one such as %d", cfg.Dim, DefaultDim)
	}
	httpClient := *cmp.Or(cfg.HTTPClient, http.DefaultClient)
	httpClient.Transport = retryAfterTransport{next: cmp.Or(httpClient.Transport, http.DefaultTransport)}
	client, err := genai.NewClient(ctx, &genai.ClientConfig{
		APIKey:      cfg.APIKey,
		Backend:     genai.BackendGeminiAPI,
		HTTPClient:  &httpClient,
		HTTPOptions: genai.HTTPOptions{BaseURL: cfg.BaseURL},
	})
	if err != nil {
		return nil, fmt.Errorf("gemini: creating client: %w", err)
	}
	return &Embedder{
		client: client,
		// The API accepts both spellings; one keeps Model stable.
		model:   strings.TrimPrefix(cmp.Or(cfg.Model, DefaultModel), "models/"),
		dim:     cmp.Or(cfg.Dim, DefaultDim),
		timeout: cmp.Or(max(cfg.Timeout, 0), DefaultTimeout),
		policy:  retry.Policy{Attempts: cfg.MaxAttempts, Base: cfg.Backoff},
	}, nil
}

// Model names the vector space, e.g. "gemini:gemini-embedding-001/768".
func (e *Embedder) Model() string { return "gemini:" + e.model + "/" + strconv.Itoa(e.dim) }

// Dim is the dimension of every vector Embed returns.
func (e *Embedder) Dim() int { return e.dim }

// Embed returns one unit-length vector per text, in order, or an error and
// no vectors at all.
func (e *Embedder) Embed(ctx context.Context, purpose memory.Purpose, texts []string) ([][]float32, error) {
	config := &genai.EmbedContentConfig{
		TaskType:             taskType(purpose),
		OutputDimensionality: genai.Ptr(int32(e.dim)),
	}
	out := make([][]float32, 0, len(texts))
	for batch := range slices.Chunk(texts, MaxBatch) {
		vecs, err := e.embedBatch(ctx, config, batch)
		if err != nil {
			return nil, err
		}
		out = append(out, vecs...)
	}
	// Only the native 3072 dimensions come back normalised; truncated ones
	// must be rescaled before a dot product is a cosine.
	for _, v := range out {
		memory.Normalize32(v)
	}
	return out, nil
}

func taskType(p memory.Purpose) string {
	if p == memory.PurposeQuery {
		return "RETRIEVAL_QUERY"
	}
	return "RETRIEVAL_DOCUMENT"
}

func (e *Embedder) embedBatch(ctx context.Context, config *genai.EmbedContentConfig, texts []string) ([][]float32, error) {
	contents := make([]*genai.Content, len(texts))
	for i, t := range texts {
		contents[i] = &genai.Content{Parts: []*genai.Part{{Text: t}}}
	}
	var resp *genai.EmbedContentResponse
	err := e.policy.Do(ctx, func(ctx context.Context) error {
		attemptCtx, cancel := context.WithTimeout(ctx, e.timeout)
		defer cancel()
		var after time.Duration
		r, err := e.client.Models.EmbedContent(context.WithValue(attemptCtx, retryAfterKey{}, &after), e.model, contents, config)
		if err != nil {
			return e.classify(ctx, attemptCtx, err, after)
		}
		resp = r
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(resp.Embeddings) != len(texts) {
		return nil, fmt.Errorf("%w: %d vectors for %d texts", ErrBadResponse, len(resp.Embeddings), len(texts))
	}
	vecs := make([][]float32, len(texts))
	for i, emb := range resp.Embeddings {
		if emb == nil || len(emb.Values) != e.dim {
			got := 0
			if emb != nil {
				got = len(emb.Values)
			}
			return nil, fmt.Errorf("%w: vector %d has %d dimensions, %d were requested; check that model %q supports that dimension",
				ErrBadResponse, i, got, e.dim, e.model)
		}
		vecs[i] = emb.Values
	}
	return vecs, nil
}

// classify turns an SDK error into one of the package's errors; those worth
// another attempt come back as *retry.Later.
func (e *Embedder) classify(ctx, attemptCtx context.Context, err error, after time.Duration) error {
	var apiErr genai.APIError
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("%w: embedding stopped: %w", ErrUnavailable, ctx.Err())
	case attemptCtx.Err() != nil:
		return fmt.Errorf("%w: no answer within %s: %w", ErrUnavailable, e.timeout, attemptCtx.Err())
	case errors.As(err, &apiErr):
		return e.apiError(apiErr, after)
	case errors.As(err, new(*url.Error)):
		return fmt.Errorf("%w: cannot reach the API: %w", ErrUnavailable, err)
	default:
		// The SDK got an answer it could not decode.
		return fmt.Errorf("%w: %w", ErrBadResponse, err)
	}
}

func (e *Embedder) apiError(apiErr genai.APIError, after time.Duration) error {
	detail := describe(apiErr)
	switch {
	// An invalid key is a 400 INVALID_ARGUMENT whose ErrorInfo reason says so.
	case apiErr.Code == http.StatusUnauthorized || apiErr.Code == http.StatusForbidden || hasReason(apiErr, "API_KEY_INVALID"):
		return fmt.Errorf("%w (%s); check %s or %s", ErrKeyRejected, detail, EnvGeminiAPIKey, EnvGoogleAPIKey)
	case retry.Retryable(apiErr.Code):
		return &retry.Later{
			Err:   fmt.Errorf("%w: %s", ErrUnavailable, detail),
			After: max(after, retryDelay(apiErr)),
		}
	default:
		return fmt.Errorf("gemini: the API refused the request (%s); check the model %q and dimension %d", detail, e.model, e.dim)
	}
}

func describe(apiErr genai.APIError) string {
	code := strconv.Itoa(apiErr.Code)
	status := apiErr.Status // "RESOURCE_EXHAUSTED", or the HTTP status line for a non-JSON body
	if !strings.HasPrefix(status, code) {
		status = strings.TrimSpace(code + " " + status)
	}
	msg := strings.TrimSpace(apiErr.Message)
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	return status + ": " + cmp.Or(msg, "no details")
}

// retryDelay reads google.rpc.RetryInfo from the error details: the way the
// Gemini API says how long a rate-limited client should wait.
func retryDelay(apiErr genai.APIError) time.Duration {
	for _, d := range apiErr.Details {
		if d["@type"] != "type.googleapis.com/google.rpc.RetryInfo" {
			continue
		}
		if s, ok := d["retryDelay"].(string); ok {
			if delay, err := time.ParseDuration(s); err == nil {
				return delay
			}
		}
	}
	return 0
}

func hasReason(apiErr genai.APIError, reason string) bool {
	for _, d := range apiErr.Details {
		if d["@type"] == "type.googleapis.com/google.rpc.ErrorInfo" && d["reason"] == reason {
			return true
		}
	}
	return false
}

// retryAfterKey carries a *time.Duration through the SDK to
// retryAfterTransport, because the SDK's APIError keeps the response body
// but drops its headers.
type retryAfterKey struct{}

type retryAfterTransport struct{ next http.RoundTripper }

func (t retryAfterTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if after, ok := req.Context().Value(retryAfterKey{}).(*time.Duration); ok && resp != nil {
		*after = retry.ParseAfter(resp.Header.Get("Retry-After"), time.Now())
	}
	return resp, err
}
