package agent

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DefaultMaxRetryWait is the longest wait a server may ask for before a
// retry: beyond it (a daily quota, say) failing now with the reason is
// more use than a silent hang.
const DefaultMaxRetryWait = 2 * time.Minute

// Wait describes one pause before retrying a model request.
type Wait struct {
	What     string        // the model, e.g. "gemini gemini-2.5-flash"
	Attempt  int           // the try that just failed, from 1
	Attempts int           // how many tries there are in all
	Delay    time.Duration // how long the pause is
	// FromServer is true when the server named the delay (Retry-After,
	// RetryInfo) rather than our backoff.
	FromServer bool
	Reason     string // why the try failed, one line
}

func (w Wait) String() string {
	who := "backing off"
	if w.FromServer {
		who = "as the server asked"
	}
	return fmt.Sprintf("%s: %s; retrying in %s %s (try %d of %d)", w.What, w.Reason, w.Delay.Round(100*time.Millisecond), who, w.Attempt+1, w.Attempts)
}

// RetryWait is a Wait as the JSON of an EventRetry.
type RetryWait struct {
	Attempt    int     `json:"attempt"`
	Attempts   int     `json:"attempts"`
	Delay      float64 `json:"delay_seconds"`
	FromServer bool    `json:"from_server"`
	Reason     string  `json:"reason"`
}

// Event is the wait as an EventRetry.
func (w Wait) Event() Event {
	return Event{Type: EventRetry, Text: w.String(), Retry: &RetryWait{Attempt: w.Attempt, Attempts: w.Attempts, Delay: w.Delay.Seconds(), FromServer: w.FromServer, Reason: w.Reason}}
}

// Retry runs a request again after failures a later try may not have:
// rate limits and overloaded servers. Providers share it so both honour the
// server's own delay and both say what they wait for.
type Retry struct {
	Attempts int           // tries in all (at least 1)
	Delay    time.Duration // first backoff, doubled after each try
	MaxDelay time.Duration // cap on our own backoff (not on a server's delay)
	MaxWait  time.Duration // longest server-named delay to honour (default DefaultMaxRetryWait)
	What     string
	OnWait   func(Wait)
}

// Do calls try until it succeeds, says not to retry, or the tries run out.
// try returns the delay the server asked for (0 if none), whether the
// failure is worth retrying, and the error.
func (r Retry) Do(ctx context.Context, try func() (after time.Duration, retry bool, err error)) error {
	attempts := max(r.Attempts, 1)
	maxWait := r.MaxWait
	if maxWait <= 0 {
		maxWait = DefaultMaxRetryWait
	}
	delay := r.Delay
	for attempt := 1; ; attempt++ {
		after, again, err := try()
		if err == nil || !again || attempt >= attempts {
			return err
		}
		w := Wait{What: r.What, Attempt: attempt, Attempts: attempts, Delay: delay, Reason: clipText(oneLine(err.Error()), 200)}
		if after > 0 {
			if after > maxWait {
				return fmt.Errorf("the server asks to wait %s before the next try, longer than %s; try again later: %w", after, maxWait, err)
			}
			w.Delay, w.FromServer = after, true
		}
		if r.OnWait != nil {
			r.OnWait(w)
		}
		t := time.NewTimer(w.Delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		delay *= 2
		if r.MaxDelay > 0 && delay > r.MaxDelay {
			delay = r.MaxDelay
		}
	}
}

// RetryAfter reads an HTTP Retry-After header: seconds, or an HTTP date;
// 0 when there is none or it is in the past.
func RetryAfter(h string, now time.Time) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(h, 64); err == nil && secs >= 0 {
		return time.Duration(secs * float64(time.Second))
	}
	if t, err := http.ParseTime(h); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

func oneLine(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c == '\n' || c == '\r' || c == '\t' {
			b[i] = ' '
		}
	}
	return string(b)
}
