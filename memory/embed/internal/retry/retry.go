// Package retry runs a remote call again when the server says "not now"
// (rate limits, server errors), backing off exponentially and deferring to
// the server's own Retry-After. The remote embedders share it so that both
// follow one retry policy.
package retry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Defaults for a zero Policy. They keep a rate-limited CLI command waiting
// a few seconds at most before it gives up and leaves the work for later.
const (
	DefaultAttempts = 4
	DefaultBase     = 500 * time.Millisecond
	DefaultMaxWait  = 20 * time.Second
)

// Policy says how often and how patiently to retry.
type Policy struct {
	// Attempts is the total number of tries, including the first; 1 disables retries.
	Attempts int
	// Base is the wait before the first retry; each later wait doubles it.
	Base time.Duration
	// MaxWait caps a single wait. A server asking for a longer pause is not
	// waited for: the call fails at once, saying how long the server wants.
	MaxWait time.Duration
	// Sleep waits for d or until ctx ends; nil uses a timer. Tests replace it
	// to record the waits instead of sleeping through them.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Later marks an error that another attempt may cure.
type Later struct {
	Err error
	// After is the pause the server asked for, or zero if it named none.
	After time.Duration
}

func (e *Later) Error() string { return e.Err.Error() }
func (e *Later) Unwrap() error { return e.Err }

// Do calls try until it succeeds, fails with an error that is not a *Later,
// or runs out of attempts. The returned error wraps the last attempt's error.
func (p Policy) Do(ctx context.Context, try func(ctx context.Context) error) error {
	p = p.withDefaults()
	backoff := p.Base
	for attempt := 1; ; attempt++ {
		err := try(ctx)
		var later *Later
		if err == nil || !errors.As(err, &later) {
			return err
		}
		if attempt >= p.Attempts {
			return fmt.Errorf("%w (gave up after %d attempts)", later.Err, attempt)
		}
		if later.After > p.MaxWait {
			return fmt.Errorf("%w (the server asks to wait %s before retrying)", later.Err, later.After)
		}
		wait := min(max(backoff, later.After), p.MaxWait)
		if err := p.Sleep(ctx, wait); err != nil {
			return fmt.Errorf("%w (stopped waiting to retry: %w)", later.Err, err)
		}
		if backoff < p.MaxWait {
			backoff *= 2
		}
	}
}

func (p Policy) withDefaults() Policy {
	if p.Attempts <= 0 {
		p.Attempts = DefaultAttempts
	}
	if p.Base <= 0 {
		p.Base = DefaultBase
	}
	if p.MaxWait <= 0 {
		p.MaxWait = DefaultMaxWait
	}
	if p.Sleep == nil {
		p.Sleep = sleep
	}
	return p
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Retryable reports whether an HTTP status is worth another attempt: the
// server is rate limiting (429) or failing (5xx), not rejecting the request.
func Retryable(status int) bool {
	return status == http.StatusTooManyRequests || status >= 500
}

// ParseAfter reads a Retry-After header, which is either a number of seconds
// or an HTTP date. It returns zero when the header is absent or unreadable.
func ParseAfter(header string, now time.Time) time.Duration {
	header = strings.TrimSpace(header)
	if header == "" {
		return 0
	}
	if secs, err := strconv.Atoi(header); err == nil {
		return max(time.Duration(secs)*time.Second, 0)
	}
	if at, err := http.ParseTime(header); err == nil {
		return max(at.Sub(now), 0)
	}
	return 0
}
