package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/acolyte-dev/acolyte/agent/toolbox"
)

// DefaultContextBudget is the most tokens a request carries by default. It
// fits a 128k-token model with room left for a long answer, counted by the
// conservative estimate (or the provider's own count) below.
const DefaultContextBudget = 100_000

// DefaultMaxResultBytes caps one tool result in the history. It is set by
// what the tools promise, never below it: read_file returns up to 64 KiB
// of a file, and its JSON escaping (quotes, backslashes) may add half again
// on code-heavy text. A result over the cap is cut by its tool's own rule
// (toolbox.Tool.Shrink), so a cut file read still says where to read on.
const DefaultMaxResultBytes = 96 << 10

// BytesPerToken is the conservative estimate of the budget: one token per
// three bytes of the request as sent. Checked against OpenAI's BPE
// tokenizers (agent/internal/tokencheck): the first request runs at 4.4,
// this repository's Markdown as read_file results at 3.6 and its Go source
// at 3.1 bytes a token; only text made to tokenize badly (a quote every 19
// bytes) runs under 3, at 2.9, and a request of it at the default budget
// still fits a 128k window. Gemini's tokenizer is not available offline:
// there, near the budget, the API's countTokens counts instead. The word
// piece tokenizer of memory/embed/static is an embedding model's, not a
// chat model's, so it says nothing about what a provider bills.
const BytesPerToken = 3

// EstimateTokens is the budget's estimate for n bytes of a request.
func EstimateTokens(n int) int { return (n + BytesPerToken - 1) / BytesPerToken }

// compactLowWater is the share of the budget compaction brings a request
// down to once it is over: compacting well below the limit, in one go,
// means it happens rarely, and every compaction changes the conversation
// from its first stubbed result on, which a provider's prompt cache must
// then read again.
const compactLowWater = 0.5

// smallResultBytes is the size under which a tool result is never stubbed:
// a memory_search with nothing to say, an edit's confirmation. Stubbing it
// saves nothing and loses what the model knew.
const smallResultBytes = 1 << 10

// argsCompactBytes is the size above which the arguments of an old call
// (write_file's content, say) are compacted too.
const argsCompactBytes = 1 << 10

// Compaction reports that old tool results were replaced by stubs, or the
// last step's results shrunk, so a request fits the context budget.
type Compaction struct {
	Before    int `json:"tokens_before"`
	After     int `json:"tokens_after"`
	Budget    int `json:"budget"`
	Compacted int `json:"compacted"`
	// Shrunk counts results of the most recent step cut to a head with
	// where to read on, because they alone did not fit.
	Shrunk int `json:"shrunk,omitempty"`
}

// ErrBudget is a context budget the conversation cannot be fitted into.
var ErrBudget = errors.New("context budget too small")

// RequestCounter is implemented by models whose API counts the tokens of a
// request with the model's own tokenizer.
type RequestCounter interface {
	CountRequestTokens(ctx context.Context, req Request) (int, error)
}

// countTimeout bounds one token count when no --timeout is shorter: it is a
// cheap call, and the budget falls back on the estimate rather than hold
// the turn up.
const countTimeout = 15 * time.Second

// ledger is what a session knows about the size of its requests: the
// provider's counts of the parts it has counted, so each message is
// counted once, when it is new, not with the whole conversation each step.
type ledger struct {
	fixed  int             // counted tokens of the system prompt and tools, 0 until counted
	counts map[uint64]int  // counted tokens of messages, by hash of their JSON
	failed map[uint64]bool // messages whose count failed: not asked again
}

func hashOf(b []byte) uint64 {
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64()
}

// sizes is one measurement of a request, in tokens.
type sizes struct {
	fixed int     // the system prompt and the tool declarations
	msgs  []int   // each message
	bytes []int   // each message's JSON bytes, provider-neutral
	scale float64 // wire bytes per neutral byte
}

func (z sizes) total() int {
	n := z.fixed
	for _, m := range z.msgs {
		n += m
	}
	return n
}

// resize re-estimates message i after it changed, keeping the ratio of
// tokens to bytes it had.
func (z *sizes) resize(i int, m Message) {
	b := msgBytes(m)
	if z.bytes[i] > 0 {
		z.msgs[i] = int(float64(z.msgs[i]) * float64(b) / float64(z.bytes[i]))
	} else {
		z.msgs[i] = EstimateTokens(int(float64(b) * z.scale))
	}
	z.bytes[i] = b
}

func msgBytes(m Message) int {
	b, _ := json.Marshal(m) // parts hold strings and valid JSON only
	return len(b)
}

// RequestTokens estimates what req costs as sent, without a model to ask:
// the system prompt, the tool declarations and every message as JSON.
func RequestTokens(req Request) int {
	b, _ := json.Marshal(req.Tools) // RawMessage schemas are valid JSON
	n := len(req.System) + len(b)
	for _, m := range req.Messages {
		n += msgBytes(m)
	}
	return EstimateTokens(n)
}

// measure sizes req: by the estimate, scaled to the provider's wire format
// when the model says what that takes, and, near the budget, by the
// provider's own count of each part not counted before.
func (s *Session) measure(ctx context.Context, req Request) sizes {
	tools, _ := json.Marshal(req.Tools)
	fixedBytes := len(req.System) + len(tools)
	z := sizes{scale: 1, msgs: make([]int, len(req.Messages)), bytes: make([]int, len(req.Messages))}
	neutral := fixedBytes
	for i, m := range req.Messages {
		z.bytes[i] = msgBytes(m)
		neutral += z.bytes[i]
	}
	if sz, ok := s.cfg.Model.(RequestSizer); ok && neutral > 0 {
		if wire := sz.RequestBytes(req); wire > neutral {
			z.scale = float64(wire) / float64(neutral)
		}
	}
	z.fixed = EstimateTokens(int(float64(fixedBytes) * z.scale))
	for i := range req.Messages {
		z.msgs[i] = EstimateTokens(int(float64(z.bytes[i]) * z.scale))
	}
	rc, ok := s.cfg.Model.(RequestCounter)
	if !ok || z.total() < s.cfg.ContextBudget/2 {
		return z
	}
	// Near the budget the estimate's error matters, so the provider's
	// tokenizer counts what it has not counted yet: the fixed part once,
	// then each new message once. A failed count leaves the estimate.
	timeout := countTimeout
	if s.cfg.RequestTimeout > 0 && s.cfg.RequestTimeout < timeout {
		timeout = s.cfg.RequestTimeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if s.ledger.fixed == 0 && cctx.Err() == nil {
		if n, err := rc.CountRequestTokens(cctx, Request{System: req.System, Tools: req.Tools}); err == nil && n > 0 {
			s.ledger.fixed = n
		}
	}
	if s.ledger.fixed > 0 {
		z.fixed = s.ledger.fixed
	}
	for i, m := range req.Messages {
		b, _ := json.Marshal(m)
		key := hashOf(b)
		if n, ok := s.ledger.counts[key]; ok {
			z.msgs[i] = n
			continue
		}
		if s.ledger.failed[key] || cctx.Err() != nil {
			continue
		}
		n, err := rc.CountRequestTokens(cctx, Request{Messages: []Message{m}})
		if err != nil || n <= 0 {
			s.ledger.failed[key] = true
			continue
		}
		s.ledger.counts[key] = n
		z.msgs[i] = n
	}
	return z
}

// candidate is one part compaction may stub, in the order it goes.
type candidate struct {
	msg, part int
	class     int
}

// Classes of what compaction stubs, cheapest loss first.
const (
	classBulk     = iota // file reads, searches, listings, shell output
	classArgs            // large arguments of old calls (write_file's content)
	classOther           // any other large result
	classRetained        // loaded schemas and memory_search results: only when nothing else is left
)

// fitBudget makes the next request fit the context budget. Once over it,
// it stubs old tool results until the request is well under it
// (compactLowWater): large old file reads and command output first, then
// large call arguments, then other results, oldest first within each, and
// only when nothing else is left the loaded tool schemas and memory_search
// results. Small results stay. The most recent step's results are never
// stubbed: if they alone exceed the budget, each is cut to a share of it by
// its tool's rule, which says where to read on. The task and the model's
// words are never removed. It fails when even that does not fit.
func (s *Session) fitBudget(ctx context.Context, step int) error {
	req := s.request()
	z := s.measure(ctx, req)
	before := z.total()
	// A hundredth of the budget is kept spare for what the size of the wire
	// format misses (an SDK's own fields).
	limit := s.cfg.ContextBudget - s.cfg.ContextBudget/100
	if before <= limit {
		return nil
	}
	last := len(s.history) - 1
	target := int(float64(s.cfg.ContextBudget) * compactLowWater)
	var cands []candidate
	for i := range s.history[:max(last, 0)] {
		for j, p := range s.history[i].Parts {
			if c, ok := classify(p); ok {
				cands = append(cands, candidate{msg: i, part: j, class: c})
			}
		}
	}
	sort.SliceStable(cands, func(a, b int) bool {
		if cands[a].class != cands[b].class {
			return cands[a].class < cands[b].class
		}
		return cands[a].msg < cands[b].msg
	})
	n := 0
	for _, c := range cands {
		now := z.total()
		if now <= target || c.class == classRetained && now <= limit {
			break
		}
		m := &s.history[c.msg]
		parts := append([]Part(nil), m.Parts...)
		p := parts[c.part]
		if p.Result != nil {
			r := *p.Result
			r.Response = resultStub(r.Name, p.Result.Response)
			parts[c.part].Result = &r
		} else {
			cl := *p.Call
			cl.Args = argsStub(p.Call.Args)
			parts[c.part].Call = &cl
		}
		m.Parts = parts
		z.resize(c.msg, *m)
		n++
	}
	shrunk := 0
	if z.total() > limit && last >= 0 {
		shrunk = s.shrinkLast(&z, last)
	}
	after := z.total()
	if n > 0 || shrunk > 0 {
		text := fmt.Sprintf("compacted %d old tool results: about %d → %d tokens (budget %d)", n, before, after, s.cfg.ContextBudget)
		if shrunk > 0 {
			text += fmt.Sprintf("; the last step's results alone did not fit, so %d of them were cut to a head that says where to read on", shrunk)
		}
		s.emit(Event{Type: EventCompact, Step: step, Text: text,
			Context: &Compaction{Before: before, After: after, Budget: s.cfg.ContextBudget, Compacted: n, Shrunk: shrunk}})
	}
	if after > limit && len(s.history) == 1 {
		return fmt.Errorf("%w: the first request (system prompt, tool declarations and the task) takes about %d tokens, over --context-budget %d; raise it", ErrBudget, after, s.cfg.ContextBudget)
	}
	if after > limit {
		return fmt.Errorf("%w: the next request needs about %d tokens with every old tool result compacted, over --context-budget %d; raise it, or start a new session", ErrBudget, after, s.cfg.ContextBudget)
	}
	return nil
}

// shrinkLast cuts the results of message last, the most recent step, so
// they share what the budget leaves after everything else, each by its
// tool's rule. It returns how many it cut.
func (s *Session) shrinkLast(z *sizes, last int) int {
	m := &s.history[last]
	var idx []int
	for j, p := range m.Parts {
		if p.Result != nil {
			idx = append(idx, j)
		}
	}
	if len(idx) == 0 {
		return 0
	}
	// Room in tokens for the results, with a tenth of the budget spare for
	// the estimate of the cut text; in bytes of the neutral history.
	room := int(float64(s.cfg.ContextBudget)*0.9) - (z.total() - z.msgs[last])
	perBytes := int(float64(room) / float64(len(idx)) * BytesPerToken / z.scale)
	perBytes = max(perBytes, 1024)
	parts := append([]Part(nil), m.Parts...)
	shrunk := 0
	for _, j := range idx {
		r := *parts[j].Result
		if len(r.Response) <= perBytes {
			continue
		}
		r.Response = s.toolFor(r.Name, last).Shrink(r.Response, perBytes)
		parts[j].Result = &r
		shrunk++
	}
	m.Parts = parts
	z.resize(last, *m)
	return shrunk
}

// toolFor is the tool whose rule cuts a result: call_tool's results are
// the tool it ran, named in the call before.
func (s *Session) toolFor(name string, resultMsg int) toolbox.Tool {
	if name == CallToolName && resultMsg > 0 {
		for _, p := range s.history[resultMsg-1].Parts {
			if p.Call != nil && p.Call.Name == CallToolName {
				if inner, _, ok := s.tools.Unwrap(p.Call.Args); ok {
					name = inner
				}
			}
		}
	}
	t, _ := s.tools.Tool(name)
	return t
}

// classify says whether part p may be stubbed, and in which class.
func classify(p Part) (int, bool) {
	switch {
	case p.Result != nil:
		if isStub(p.Result.Response) || len(p.Result.Response) <= smallResultBytes {
			return 0, false
		}
		switch p.Result.Name {
		case LoadToolsName, "memory_search":
			return classRetained, true
		case "read_file", "search_code", "list_files", CallToolName:
			return classBulk, true
		}
		return classOther, true
	case p.Call != nil && len(p.Call.Args) > argsCompactBytes:
		return classArgs, true
	}
	return 0, false
}

const stubKey = "compacted"

func isStub(raw json.RawMessage) bool {
	var v map[string]json.RawMessage
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	_, ok := v[stubKey]
	return ok
}

// keptFieldBytes is the size up to which a field of a stubbed result or
// arguments is kept: paths, line numbers, exit codes, ids.
const keptFieldBytes = 160

// resultStub replaces a result, keeping its small fields (which file, which
// lines, which exit code), so the model knows what it had.
func resultStub(tool string, raw json.RawMessage) json.RawMessage {
	kept := map[string]json.RawMessage{}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) == nil {
		for k, v := range obj {
			if len(v) <= keptFieldBytes && k != "note" && k != toolbox.ShrunkKey {
				kept[k] = v
			}
		}
	}
	kept[stubKey], _ = json.Marshal(fmt.Sprintf("This %s result (%d bytes) was removed to keep the conversation small. Call %s again with the same arguments if you still need it.", tool, len(raw), tool))
	b, _ := json.Marshal(kept) // every value is valid JSON
	return b
}

// argsStub keeps the small arguments of a call (write_file's path) and
// replaces the large ones with their size.
func argsStub(raw json.RawMessage) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		b, _ := json.Marshal(map[string]string{stubKey: fmt.Sprintf("%d bytes of arguments, removed to keep the conversation small; the call was made", len(raw))})
		return b
	}
	for k, v := range obj {
		if len(v) > keptFieldBytes {
			obj[k], _ = json.Marshal(fmt.Sprintf("(%d bytes, removed to keep the conversation small; the call was made with them)", len(v)))
		}
	}
	b, _ := json.Marshal(obj)
	return b
}

// capResult keeps a tool result under max bytes before it enters the
// history, cut by its tool's rule, and valid UTF-8.
func capResult(t toolbox.Tool, raw json.RawMessage, max int) json.RawMessage {
	if !utf8.Valid(raw) {
		// Invalid bytes can only sit inside JSON strings; providers reject
		// them, so they become U+FFFD like json.Marshal would make them.
		raw = json.RawMessage(strings.ToValidUTF8(string(raw), "\uFFFD"))
	}
	if max <= 0 || len(raw) <= max {
		return raw
	}
	return t.Shrink(raw, max)
}
