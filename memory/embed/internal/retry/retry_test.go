package retry

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// recorder is a Policy.Sleep that remembers the waits instead of sleeping.
type recorder struct{ waits []time.Duration }

func (r *recorder) sleep(_ context.Context, d time.Duration) error {
	r.waits = append(r.waits, d)
	return nil
}

var errBusy = errors.New("busy")

func TestDoBacksOffExponentiallyAndHonoursServerWait(t *testing.T) {
	rec := &recorder{}
	p := Policy{Attempts: 5, Base: 100 * time.Millisecond, MaxWait: time.Second, Sleep: rec.sleep}
	afters := []time.Duration{0, 700 * time.Millisecond, 0, 0}
	calls := 0
	err := p.Do(context.Background(), func(context.Context) error {
		calls++
		if calls <= len(afters) {
			return &Later{Err: errBusy, After: afters[calls-1]}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Do: %v", err)
	}
	// 100ms, then the server's 700ms beats 200ms, then 400ms, then 800ms.
	want := []time.Duration{100 * time.Millisecond, 700 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond}
	if !slices.Equal(rec.waits, want) {
		t.Errorf("waits = %v, want %v", rec.waits, want)
	}
}

func TestDoGivesUpAfterAttempts(t *testing.T) {
	rec := &recorder{}
	p := Policy{Attempts: 3, Base: time.Millisecond, Sleep: rec.sleep}
	calls := 0
	err := p.Do(context.Background(), func(context.Context) error {
		calls++
		return &Later{Err: errBusy}
	})
	if !errors.Is(err, errBusy) || !strings.Contains(err.Error(), "gave up after 3 attempts") {
		t.Errorf("err = %v, want errBusy and the attempt count", err)
	}
	if calls != 3 || len(rec.waits) != 2 {
		t.Errorf("calls = %d, waits = %d; want 3 calls and 2 waits", calls, len(rec.waits))
	}
}

func TestDoDoesNotRetryPermanentErrors(t *testing.T) {
	p := Policy{Sleep: (&recorder{}).sleep}
	calls := 0
	permanent := errors.New("bad key")
	err := p.Do(context.Background(), func(context.Context) error { calls++; return permanent })
	if err != permanent || calls != 1 {
		t.Errorf("err = %v after %d calls, want the permanent error after 1", err, calls)
	}
}

func TestDoRefusesWaitLongerThanMaxWait(t *testing.T) {
	rec := &recorder{}
	p := Policy{MaxWait: time.Second, Sleep: rec.sleep}
	err := p.Do(context.Background(), func(context.Context) error {
		return &Later{Err: errBusy, After: time.Minute}
	})
	if !errors.Is(err, errBusy) || !strings.Contains(err.Error(), "wait 1m0s") || len(rec.waits) != 0 {
		t.Errorf("err = %v, waits = %v; want an immediate error naming the 1m wait", err, rec.waits)
	}
}

func TestDoStopsWhenContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := Policy{Base: time.Hour, MaxWait: 2 * time.Hour}
	err := p.Do(ctx, func(context.Context) error { return &Later{Err: errBusy} })
	if !errors.Is(err, errBusy) || !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want errBusy and context.Canceled", err)
	}
}

func TestParseAfter(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	for header, want := range map[string]time.Duration{
		"":     0,
		"3":    3 * time.Second,
		" 10 ": 10 * time.Second,
		"-4":   0,
		"soon": 0,
		now.Add(90 * time.Second).Format(http.TimeFormat): 90 * time.Second,
		now.Add(-time.Hour).Format(http.TimeFormat):       0,
	} {
		if got := ParseAfter(header, now); got != want {
			t.Errorf("ParseAfter(%q) = %v, want %v", header, got, want)
		}
	}
}
