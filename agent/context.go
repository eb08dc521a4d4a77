package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/acolyte-dev/acolyte/memory"
)

// DefaultContextBudget is the most tokens a request carries by default. It
// fits a 128k-token model with room left for the tokenizer's disagreement
// with the 4-bytes-per-token estimate and for a long answer.
const DefaultContextBudget = 100_000

// DefaultMaxResultBytes caps one tool result in the history: 32 KiB is
// about 8k tokens, enough for a whole source file of ordinary size, and
// twelve of them still fit the default budget.
const DefaultMaxResultBytes = 32 << 10

// argsCompactBytes is the size above which the arguments of an old call
// (write_file's content, say) are compacted too once results are not enough.
const argsCompactBytes = 1 << 10

// Compaction reports that old tool results were replaced by stubs so a
// request fits the context budget. Tokens are offline estimates.
type Compaction struct {
	Before    int `json:"tokens_before"`
	After     int `json:"tokens_after"`
	Budget    int `json:"budget"`
	Compacted int `json:"compacted"`
}

// RequestTokens estimates what req costs, counting the system prompt, the
// tool declarations and every message as the JSON text they travel as.
func RequestTokens(req Request) int {
	n := memory.EstimateTokens(req.System)
	b, _ := json.Marshal(req.Tools) // RawMessage schemas are valid JSON
	n += memory.EstimateTokens(string(b))
	for _, m := range req.Messages {
		n += messageTokens(m)
	}
	return n
}

func messageTokens(m Message) int {
	b, _ := json.Marshal(m) // parts hold strings and valid JSON only
	return memory.EstimateTokens(string(b))
}

// RequestCounter is implemented by models whose API counts the tokens of a
// whole request with the model's own tokenizer.
type RequestCounter interface {
	CountRequestTokens(ctx context.Context, req Request) (int, error)
}

// countTimeout bounds one token count: it is a cheap call, and the budget
// can fall back on the estimate rather than hold the turn up.
const countTimeout = 15 * time.Second

// compactTarget is the share of the budget compaction brings a request
// down to: compacting well below the limit, in one go, means it happens
// every several steps rather than at each one, and each compaction changes
// the start of the conversation (and so defeats a provider's prompt cache).
const compactTarget = 0.85

// fitBudget compacts the history, oldest first, until the next request is
// under the context budget: first tool results (the call stays, so the
// model knows what it did and can do it again), then large call arguments.
// The task itself and the model's words are never removed.
func (s *Session) fitBudget(ctx context.Context, step int) {
	req := Request{System: s.system, Messages: s.history, Tools: s.tools.Declarations()}
	est := RequestTokens(req)
	// The wire format carries more than the history (escaped JSON in
	// strings, per-part wrappers); scale the estimate to what is sent.
	scale := 1.0
	if sz, ok := s.cfg.Model.(RequestSizer); ok && est > 0 {
		if wire := sz.RequestBytes(req) / bytesPerToken; wire > est {
			scale = float64(wire) / float64(est)
		}
	}
	before := int(float64(est) * scale)
	// Near the budget the estimate's error matters (code runs nearer 3
	// bytes a token than 4), so ask the provider's own tokenizer where it
	// offers one; far from it, a round trip per step buys nothing. A count
	// that fails leaves the estimate in charge.
	if rc, ok := s.cfg.Model.(RequestCounter); ok && est > 0 && before >= s.cfg.ContextBudget/2 {
		cctx, cancel := context.WithTimeout(ctx, countTimeout)
		n, err := rc.CountRequestTokens(cctx, req)
		cancel()
		if err == nil && n > 0 {
			scale, before = float64(n)/float64(est), n
		}
	}
	if before <= s.cfg.ContextBudget {
		return
	}
	target := int(float64(s.cfg.ContextBudget) * compactTarget / scale)
	now, n := est, 0
	for pass := 0; pass < 2 && now > target; pass++ {
		for i := range s.history {
			if now <= target {
				break
			}
			m := &s.history[i]
			was := messageTokens(*m)
			changed := false
			parts := append([]Part(nil), m.Parts...)
			for j, p := range parts {
				switch {
				case pass == 0 && p.Result != nil && !isStub(p.Result.Response):
					r := *p.Result
					r.Response = resultStub(r.Name, len(p.Result.Response))
					parts[j].Result, changed = &r, true
					n++
				case pass == 1 && p.Call != nil && len(p.Call.Args) > argsCompactBytes:
					c := *p.Call
					c.Args = argsStub(c.Name, len(p.Call.Args))
					parts[j].Call, changed = &c, true
					n++
				}
			}
			if changed {
				m.Parts = parts
				now += messageTokens(*m) - was
			}
		}
	}
	if n > 0 {
		after := int(float64(now) * scale)
		s.emit(Event{Type: EventCompact, Step: step,
			Text:    fmt.Sprintf("compacted %d old tool results: about %d → %d tokens (budget %d)", n, before, after, s.cfg.ContextBudget),
			Context: &Compaction{Before: before, After: after, Budget: s.cfg.ContextBudget, Compacted: n}})
	}
}

// bytesPerToken is memory.EstimateTokens's rule, for byte counts.
const bytesPerToken = 4

const stubKey = "compacted"

func isStub(raw json.RawMessage) bool {
	var v map[string]json.RawMessage
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	_, ok := v[stubKey]
	return ok
}

func resultStub(tool string, size int) json.RawMessage {
	b, _ := json.Marshal(map[string]string{stubKey: fmt.Sprintf("This %s result (%d bytes) was removed to keep the conversation small. Call %s again with the same arguments if you still need it.", tool, size, tool)})
	return b
}

func argsStub(tool string, size int) json.RawMessage {
	b, _ := json.Marshal(map[string]string{stubKey: fmt.Sprintf("These %s arguments (%d bytes) were removed to keep the conversation small; the call itself was made.", tool, size)})
	return b
}

// capResult keeps a tool result under max bytes before it enters the
// history, whatever the tool's own limits: a result over the cap becomes
// {"truncated": true, "original_bytes": n, "head": "…"} where head is the
// start of the JSON text, cut at a UTF-8 boundary.
func capResult(raw json.RawMessage, max int) json.RawMessage {
	if !utf8.Valid(raw) {
		// Invalid bytes can only sit inside JSON strings; providers reject
		// them, so they become U+FFFD like json.Marshal would make them.
		raw = json.RawMessage(strings.ToValidUTF8(string(raw), "\uFFFD"))
	}
	if max <= 0 || len(raw) <= max {
		return raw
	}
	// Leave room for the wrapper and for escaping quotes in head.
	keep := max / 2
	for keep > 0 && !utf8.RuneStart(raw[keep]) {
		keep--
	}
	b, _ := json.Marshal(map[string]any{
		"truncated":      true,
		"original_bytes": len(raw),
		"note":           fmt.Sprintf("The result was %d bytes, over the %d-byte limit; this is its start. Ask for less: a line range, a narrower search, a shorter command output.", len(raw), max),
		"head":           string(raw[:keep]),
	})
	for len(b) > max && keep > 0 {
		// Escapes made it longer than planned (a JSON-heavy head): halve.
		keep /= 2
		for keep > 0 && !utf8.RuneStart(raw[keep]) {
			keep--
		}
		b, _ = json.Marshal(map[string]any{"truncated": true, "original_bytes": len(raw), "head": string(raw[:keep])})
	}
	return b
}
