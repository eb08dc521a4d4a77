package gemini_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/agent"
)

// budgetSession reads a large file twice under a context budget the
// offline estimate stays under; count answers the API's countTokens.
func budgetSession(t *testing.T, budget int, count func(req wireRequest, body []byte) (int, int)) (*harness, []agent.Event) {
	t.Helper()
	read := func(t *testing.T, req wireRequest) reply {
		return calls(fcall("read_file", map[string]any{"path": "big.go"}))
	}
	h, cfg := setup(t, read, read, func(t *testing.T, req wireRequest) reply { return text("Read it twice.") })
	h.fake.count = count
	code := strings.Repeat("func f() { return \"value\" } // a line of code\n", 160) // ~7.5 KB
	if err := os.WriteFile(filepath.Join(h.ws.Root, "big.go"), []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.ContextBudget = budget
	s, err := agent.NewSession(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Turn(context.Background(), "read big.go twice"); err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h, append([]agent.Event(nil), h.events...)
}

func compactions(events []agent.Event) []*agent.Compaction {
	var out []*agent.Compaction
	for _, e := range events {
		if e.Type == agent.EventCompact {
			out = append(out, e.Context)
		}
	}
	return out
}

// The offline estimate puts the third request at about 5,000 tokens, under
// the budget of 7,000 but past half of it, so the API is asked; its
// tokenizer finds twice as many, and the loop compacts before sending.
const countBudget = 7000

func TestBudgetUsesTheAPIsTokenCount(t *testing.T) {
	tokenizer := func(req wireRequest, body []byte) (int, int) { return len(body) / 2, 0 }
	h, events := budgetSession(t, countBudget, tokenizer)
	got := compactions(events)
	if len(got) != 1 || got[0].Before <= countBudget || got[0].After > countBudget {
		t.Fatalf("compactions %+v, want one from over the budget %d (by the API's count) to under it", got, countBudget)
	}
	// The counts covered what the request carries, the system prompt, the
	// tool declarations and the conversation, each part once: a message
	// counted before is not uploaded again.
	h.fake.mu.Lock()
	counted := append([]wireRequest(nil), h.fake.counted...)
	h.fake.mu.Unlock()
	if len(counted) == 0 {
		t.Fatal("countTokens was never called")
	}
	var lead strings.Builder
	results := 0
	for _, req := range counted {
		for _, c := range req.Contents {
			for _, p := range c.Parts {
				lead.WriteString(p.Text)
				if p.FunctionResponse != nil && p.FunctionResponse.Name == "read_file" {
					results++
				}
			}
		}
	}
	if !strings.Contains(lead.String(), "I am acolyte") || !strings.Contains(lead.String(), `"name":"memory_search"`) || strings.Count(lead.String(), "I am acolyte") != 1 {
		t.Fatalf("the system prompt and tools were not counted once: %.300q", lead.String())
	}
	// Both reads of big.go got the same result, one message counted once.
	if results != 1 {
		t.Fatalf("the read_file results were counted %d times, want once", results)
	}
	// The request that followed carried the first result as a stub.
	third := h.fake.seen()[2]
	stubbed := false
	for _, c := range third.Contents {
		for _, p := range c.Parts {
			if p.FunctionResponse != nil {
				if _, ok := p.FunctionResponse.Response["compacted"]; ok {
					stubbed = true
				}
			}
		}
	}
	if !stubbed {
		t.Fatal("the request after the count was sent whole")
	}
}

func TestBudgetFallsBackToTheEstimateWhenCountingFails(t *testing.T) {
	h, events := budgetSession(t, countBudget, func(wireRequest, []byte) (int, int) { return 0, http.StatusInternalServerError })
	if got := compactions(events); len(got) != 0 {
		t.Fatalf("compacted %+v although the estimate is under the budget", got)
	}
	h.fake.mu.Lock()
	defer h.fake.mu.Unlock()
	if len(h.fake.counted) == 0 {
		t.Fatal("countTokens was never tried")
	}
}

func TestBudgetFarAwayCostsNoCount(t *testing.T) {
	h, _ := budgetSession(t, agent.DefaultContextBudget, func(wireRequest, []byte) (int, int) { return 1 << 20, 0 })
	h.fake.mu.Lock()
	defer h.fake.mu.Unlock()
	if len(h.fake.counted) != 0 {
		t.Fatalf("%d countTokens calls with the request far under the budget", len(h.fake.counted))
	}
}

// TestBudgetCountIsBoundedByTheTimeout: a countTokens that never answers
// costs at most the request timeout per step, and the estimate decides.
func TestBudgetCountIsBoundedByTheTimeout(t *testing.T) {
	read := func(t *testing.T, req wireRequest) reply {
		return calls(fcall("read_file", map[string]any{"path": "big.go"}))
	}
	h, cfg := setup(t, read, read, func(t *testing.T, req wireRequest) reply { return text("Read it twice.") })
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	h.fake.count = func(wireRequest, []byte) (int, int) {
		select {
		case <-release:
		case <-time.After(10 * time.Second):
		}
		return 0, http.StatusInternalServerError
	}
	code := strings.Repeat("func f() { return \"value\" } // a line of code\n", 160)
	if err := os.WriteFile(filepath.Join(h.ws.Root, "big.go"), []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.ContextBudget, cfg.RequestTimeout = countBudget, 300*time.Millisecond
	s, err := agent.NewSession(cfg)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := s.Turn(context.Background(), "read big.go twice"); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("the turn took %s with countTokens hanging and --timeout 300ms", took)
	}
}
