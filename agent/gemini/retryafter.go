package gemini

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/acolyte-dev/acolyte/agent"
)

// The SDK's APIError carries the RetryInfo of the body but not the HTTP
// headers, so a server (or a proxy in front of it) that says how long to
// wait with Retry-After only would be retried on our own backoff. The
// client's transport reads the header into the hint the request's context
// carries.

type hintKey struct{}

// retryHint is the Retry-After of the last failed response of one try.
type retryHint struct {
	mu    sync.Mutex
	after time.Duration
}

func (h *retryHint) get() time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.after
}

// withHint is ctx carrying a fresh hint for one try.
func withHint(ctx context.Context) (context.Context, *retryHint) {
	h := &retryHint{}
	return context.WithValue(ctx, hintKey{}, h), h
}

// hintTransport records the Retry-After of failed responses.
type hintTransport struct{ base http.RoundTripper }

func (t hintTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err == nil && resp.StatusCode >= 400 {
		if h, ok := r.Context().Value(hintKey{}).(*retryHint); ok {
			if after := agent.RetryAfter(resp.Header.Get("Retry-After"), time.Now()); after > 0 {
				h.mu.Lock()
				h.after = after
				h.mu.Unlock()
			}
		}
	}
	return resp, err
}

// hintingClient is c, or a default client, with its transport wrapped.
func hintingClient(c *http.Client) *http.Client {
	out := &http.Client{}
	if c != nil {
		*out = *c
	}
	base := out.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	out.Transport = hintTransport{base: base}
	return out
}

// retryDelay is the longer of the body's RetryInfo and the header's
// Retry-After, and whether err is worth another try.
func retryDelay(err error, h *retryHint) (time.Duration, bool) {
	after, ok := retryable(err)
	if hinted := h.get(); ok && hinted > after {
		after = hinted
	}
	return after, ok
}
