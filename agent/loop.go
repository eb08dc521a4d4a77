package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/acolyte-dev/acolyte/agent/toolbox"
	"github.com/acolyte-dev/acolyte/memory"
)

// DefaultMaxSteps bounds one turn: enough for a real task, few enough that a
// model stuck calling tools stops before it burns much.
const DefaultMaxSteps = 24

// EventType names an event of a running turn.
type EventType string

// The events a turn emits, in the order they can occur.
const (
	EventText       EventType = "text"
	EventToolCall   EventType = "tool_call"
	EventToolResult EventType = "tool_result"
	EventUsage      EventType = "usage"
	EventFinal      EventType = "final"
	EventError      EventType = "error"
	// EventDistilling says the distill step started: one more model request.
	EventDistilling EventType = "distilling"
	// EventDistill reports what the distill step stored after the task.
	EventDistill EventType = "distill"
	// EventCompact says old tool results were compacted to keep the
	// request under the context budget.
	EventCompact EventType = "compact"
	// EventWarning is a problem that does not change how the task ended,
	// e.g. a failed distill.
	EventWarning EventType = "warning"
	// EventRetry says a model request failed and is tried again after a wait.
	EventRetry EventType = "retry"
	// EventSession names the session a run's session memories go to, so
	// it can be resumed with --session.
	EventSession EventType = "session"
)

// Event is one thing that happened in a turn. It marshals to the JSON line
// `acolyte run --json` prints.
type Event struct {
	Type    EventType       `json:"type"`
	Step    int             `json:"step"`
	Text    string          `json:"text,omitempty"`
	Tool    string          `json:"tool,omitempty"`
	Args    json.RawMessage `json:"args,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	IsError bool            `json:"is_error,omitempty"`
	Usage   *Usage          `json:"usage,omitempty"`
	Error   string          `json:"error,omitempty"`
	Distill *DistillReport  `json:"distill,omitempty"`
	Context *Compaction     `json:"context,omitempty"`
	Session string          `json:"session,omitempty"`
	Retry   *RetryWait      `json:"retry,omitempty"`
}

// Config sets up a Session.
type Config struct {
	Model   Model
	Toolkit memory.Toolkit
	// Sandbox gives the agent file and shell tools; nil leaves it with memory only.
	Sandbox *toolbox.Sandbox
	// Stale, when set, marks the memory_search results whose cited files
	// changed since they were written (toolbox.MemoryConfig.Stale).
	Stale memory.StaleFunc
	// MaxSteps bounds the model calls of one turn (default DefaultMaxSteps).
	MaxSteps int
	// ContextBudget is the most tokens a request may carry, by the
	// conservative estimate or, near the budget, the provider's own count
	// (see RequestCounter); older tool results are compacted to stay under
	// it (default DefaultContextBudget).
	ContextBudget int
	// MaxResultBytes caps one tool result before it enters the history; it
	// is never below DefaultMaxResultBytes, what the tools promise.
	MaxResultBytes int
	// RequestTimeout bounds one model request, retries included; 0 means none.
	RequestTimeout time.Duration
	// Stream asks the model for text as it is generated.
	Stream bool
	// OnEvent receives every event; nil discards them.
	OnEvent func(Event)
}

// Session is one conversation: its history and the tools loaded so far.
type Session struct {
	cfg     Config
	system  string
	tools   *Toolset
	history []Message
	usage   Usage
	ledger  ledger
	resumed int // messages restored by Resume, which distill has seen before
}

// TurnResult is how a turn ended.
type TurnResult struct {
	Text  string `json:"text"`
	Steps int    `json:"steps"`
	Usage Usage  `json:"usage"`
	// Incomplete is true when the step budget ran out before the model finished.
	Incomplete bool `json:"incomplete,omitempty"`
}

// Ways a turn can end without an answer. Turn wraps them with details.
var (
	ErrStepLimit     = errors.New("step limit reached")
	ErrTruncated     = errors.New("the reply was cut off by the model's output limit")
	ErrEmptyAnswer   = errors.New("the model ended its turn with an empty answer")
	ErrRepeatedCalls = errors.New("the model repeated a failing call")
)

// maxContinuations bounds how often a reply cut off by the output limit is
// continued: a model that needs more than three outputs for one answer is
// looping, not writing.
const maxContinuations = 3

// maxRepeatedFailures stops a model that sends the same failing call again
// and again: by the third identical failure it is not changing course.
const maxRepeatedFailures = 3

const continuePrompt = "Your reply was cut off by the output length limit. Continue exactly where it stopped, without repeating anything."

// coreTools are declared from the first request: the tools nearly every
// task needs (memory_remove is rare enough to be loaded). The rest cost one summary line in load_tools until loaded,
// and then run through call_tool.
var coreTools = map[string]bool{
	"memory_search": true, "memory_add": true,
	"read_file": true, "list_files": true, "search_code": true,
}

// DefaultTools splits the memory tools and, when ws is not nil, the
// workspace tools into core and deferred ones.
func DefaultTools(tk memory.Toolkit, ws *toolbox.Sandbox) (core, deferred []toolbox.Tool) {
	return defaultTools(toolbox.MemoryConfig{Toolkit: tk, Source: toolbox.SourceAgent}, ws)
}

func defaultTools(mc toolbox.MemoryConfig, ws *toolbox.Sandbox) (core, deferred []toolbox.Tool) {
	all := mc.AgentTools()
	if ws != nil {
		all = append(all, ws.Tools()...)
	}
	for _, t := range all {
		if coreTools[t.Name] {
			core = append(core, t)
		} else {
			deferred = append(deferred, t)
		}
	}
	return core, deferred
}

// NewSession starts a conversation.
func NewSession(cfg Config) (*Session, error) {
	if cfg.Model == nil {
		return nil, errors.New("agent: no model configured")
	}
	if cfg.Toolkit == nil {
		return nil, errors.New("agent: no memory toolkit configured")
	}
	if cfg.MaxSteps <= 0 {
		cfg.MaxSteps = DefaultMaxSteps
	}
	if cfg.ContextBudget <= 0 {
		cfg.ContextBudget = DefaultContextBudget
	}
	cfg.MaxResultBytes = max(cfg.MaxResultBytes, DefaultMaxResultBytes)
	core, deferred := defaultTools(toolbox.MemoryConfig{Toolkit: cfg.Toolkit, Source: toolbox.SourceAgent, Stale: cfg.Stale}, cfg.Sandbox)
	ts, err := NewToolset(core, deferred)
	if err != nil {
		return nil, err
	}
	s := &Session{cfg: cfg, system: SystemPrompt(), tools: ts,
		ledger: ledger{counts: map[uint64]int{}, failed: map[uint64]bool{}}}
	if n := RequestTokens(s.request()); n >= cfg.ContextBudget {
		return nil, fmt.Errorf("%w: the system prompt and tool declarations alone take about %d tokens, and --context-budget is %d; raise it well above that", ErrBudget, n, cfg.ContextBudget)
	}
	return s, nil
}

// request is the next request the model would see.
func (s *Session) request() Request {
	return Request{System: s.system, Messages: s.history, Tools: s.tools.Declarations()}
}

// History returns the conversation so far.
func (s *Session) History() []Message { return s.history }

// Usage returns the tokens used by every model call of the session.
func (s *Session) Usage() Usage { return s.usage }

func (s *Session) emit(e Event) {
	if s.cfg.OnEvent != nil {
		s.cfg.OnEvent(e)
	}
}

// Turn gives the model input and runs tool calls until the model answers
// without calling a tool, the step budget runs out or ctx is cancelled.
// Whatever tools did before a cancellation (memories written, files edited)
// stays done. A turn that ends without a whole, non-empty answer returns an
// error wrapping ErrStepLimit, ErrTruncated, ErrEmptyAnswer or
// ErrRepeatedCalls.
func (s *Session) Turn(ctx context.Context, input string) (TurnResult, error) {
	s.appendUser(Part{Text: input})
	var (
		res       TurnResult
		continued int    // continuations of a cut-off reply so far
		partial   string // text of the cut-off replies being continued
		failed    failures
	)
	fail := func(step int, err error) (TurnResult, error) {
		s.emit(Event{Type: EventError, Step: step, Error: err.Error()})
		return res, err
	}
	for step := 1; ; step++ {
		if step > s.cfg.MaxSteps {
			res.Incomplete = true
			res.Text = partial
			return fail(step-1, fmt.Errorf("%w: stopped after %d steps without finishing; ask to continue, or raise --max-steps", ErrStepLimit, s.cfg.MaxSteps))
		}
		res.Steps = step
		if err := s.fitBudget(ctx, step); err != nil {
			return fail(step, err)
		}
		req := s.request()
		resp, err := s.generate(ctx, req, step)
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				err = fmt.Errorf("stopped: %w", ctxErr)
			}
			return fail(step, err)
		}
		res.Usage.Add(resp.Usage)
		s.usage.Add(resp.Usage)
		u := resp.Usage
		s.emit(Event{Type: EventUsage, Step: step, Usage: &u})

		if resp.Stop == StopMalformedCall && len(resp.Message.Calls()) == 0 {
			// Nothing usable came back; tell the model and let it try again.
			failed.malformed++
			if failed.malformed >= maxRepeatedFailures {
				return fail(step, fmt.Errorf("%w: %d malformed function calls in a row (%s)", ErrRepeatedCalls, failed.malformed, resp.StopDetail))
			}
			s.emit(Event{Type: EventToolResult, Step: step, IsError: true, Result: errorJSON(&toolbox.Error{Code: toolbox.CodeInvalidArgs, Message: "malformed function call"})})
			if len(resp.Message.Parts) > 0 {
				resp.Message.Role = RoleModel
				s.history = append(s.history, resp.Message)
			}
			s.appendUser(Part{Text: malformedPrompt(resp.StopDetail)})
			continue
		}
		resp.Message.Role = RoleModel
		if len(resp.Message.Parts) > 0 {
			s.history = append(s.history, resp.Message)
		}

		calls := resp.Message.Calls()
		if len(calls) == 0 {
			text := resp.Message.Text()
			if resp.Stop == StopLength {
				partial += text
				if continued >= maxContinuations {
					res.Text = partial
					return fail(step, fmt.Errorf("%w, still after %d continuations; raise the model's output limit or ask for a shorter answer", ErrTruncated, continued))
				}
				continued++
				s.appendUser(Part{Text: continuePrompt})
				continue
			}
			res.Text = partial + text
			if strings.TrimSpace(res.Text) == "" {
				return fail(step, fmt.Errorf("%w (step %d); ask again, or try another model", ErrEmptyAnswer, step))
			}
			s.emit(Event{Type: EventFinal, Step: step, Text: res.Text})
			return res, nil
		}
		results, repeated := s.runCalls(ctx, step, calls, &failed)
		s.history = append(s.history, Message{Role: RoleUser, Parts: results})
		if resp.Stop == StopLength {
			// The calls were whole enough to parse; the cut-off text part
			// is not worth a continuation, the next step goes on anyway.
			partial = ""
		}
		if err := ctx.Err(); err != nil {
			return fail(step, fmt.Errorf("stopped: %w", err))
		}
		if repeated != nil {
			return fail(step, fmt.Errorf("%w: %s failed %d times in a row with the same arguments: %s", ErrRepeatedCalls, repeated.Name, failed.repeats, clipText(string(repeated.Response), 300)))
		}
		if failed.malformed >= maxRepeatedFailures {
			return fail(step, fmt.Errorf("%w: %d malformed function calls in a row", ErrRepeatedCalls, failed.malformed))
		}
	}
}

// failures are the failures in a row that end a turn when they reach
// maxRepeatedFailures.
type failures struct {
	key       string // the last failing call, name and arguments
	repeats   int    // how many times in a row key failed
	malformed int    // steps in a row that brought only malformed calls
}

// runCalls runs a step's calls in order, counting their failures in
// failed, and returns their results, and the result of a call that has
// now failed maxRepeatedFailures times in a row with the same arguments.
func (s *Session) runCalls(ctx context.Context, step int, calls []ToolCall, failed *failures) (results []Part, repeated *ToolResponse) {
	results = make([]Part, 0, len(calls))
	allMalformed := true
	for _, call := range calls {
		r := s.call(ctx, step, call)
		results = append(results, Part{Result: r})
		if call.Malformed == "" {
			allMalformed = false
		}
		if !r.IsError {
			failed.key, failed.repeats = "", 0
			continue
		}
		if key := call.Name + "\x00" + compactJSON(call.Args) + "\x00" + call.Malformed; key == failed.key {
			failed.repeats++
		} else {
			failed.key, failed.repeats = key, 1
		}
		if failed.repeats >= maxRepeatedFailures {
			repeated = r
		}
	}
	if allMalformed {
		failed.malformed++
	} else {
		failed.malformed = 0
	}
	return results, repeated
}

func malformedPrompt(detail string) string {
	msg := "Your last function call could not be parsed"
	if detail != "" {
		msg += " (" + clipText(detail, 300) + ")"
	}
	return msg + ". Call the tool again with arguments that are one valid JSON object matching its schema."
}

// compactJSON is raw without insignificant space, so two calls that differ
// only in formatting count as the same call.
func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

// appendUser adds input as a user message, merging it into a trailing user
// message (tool results left by a stopped turn) so roles keep alternating.
func (s *Session) appendUser(p Part) {
	if n := len(s.history); n > 0 && s.history[n-1].Role == RoleUser {
		s.history[n-1].Parts = append(s.history[n-1].Parts, p)
		return
	}
	s.history = append(s.history, Message{Role: RoleUser, Parts: []Part{p}})
}

func (s *Session) generate(ctx context.Context, req Request, step int) (Response, error) {
	if s.cfg.RequestTimeout <= 0 {
		return s.generateOnce(ctx, req, step)
	}
	tctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
	defer cancel()
	resp, err := s.generateOnce(tctx, req, step)
	if err != nil && ctx.Err() == nil && errors.Is(tctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("no answer from %s within %s; raise --timeout if the model is just slow: %w", s.cfg.Model.Name(), s.cfg.RequestTimeout, err)
	}
	return resp, err
}

func (s *Session) generateOnce(ctx context.Context, req Request, step int) (Response, error) {
	if !s.cfg.Stream {
		resp, err := s.cfg.Model.Generate(ctx, req)
		if err == nil {
			if text := resp.Message.Text(); text != "" {
				s.emit(Event{Type: EventText, Step: step, Text: text})
			}
		}
		return resp, err
	}
	return s.cfg.Model.Stream(ctx, req, func(text string) {
		s.emit(Event{Type: EventText, Step: step, Text: text})
	})
}

// call runs one tool call. Every failure, including an unknown tool, bad
// arguments, a panic or cancellation, becomes a response the model can read.
func (s *Session) call(ctx context.Context, step int, c ToolCall) *ToolResponse {
	args := c.Args
	if len(bytes.TrimSpace(args)) == 0 || !json.Valid(args) {
		args = json.RawMessage("{}")
	}
	// A call_tool call is shown and run as the tool it names; the history
	// keeps it as the model sent it.
	name := c.Name
	if name == CallToolName && c.Malformed == "" {
		if inner, innerArgs, ok := s.tools.Unwrap(args); ok {
			name, args = inner, innerArgs
		}
	}
	s.emit(Event{Type: EventToolCall, Step: step, Tool: name, Args: args})
	var (
		out   json.RawMessage
		isErr bool
	)
	if c.Malformed != "" {
		out, isErr = errorJSON(&toolbox.Error{Code: toolbox.CodeInvalidArgs, Message: "the arguments were not read, so the tool did not run: " + c.Malformed + "; send them again as one valid JSON object matching the tool's schema"}), true
	} else {
		out, isErr = s.invoke(ctx, name, args)
	}
	tool, _ := s.tools.Tool(name)
	out = capResult(tool, out, s.cfg.MaxResultBytes)
	s.emit(Event{Type: EventToolResult, Step: step, Tool: name, Result: out, IsError: isErr})
	if w := resultWarning(out); w != "" && !isErr {
		// The model reads it in the result; the user would not, e.g. a
		// memory stored without a vector because the embedder is down.
		s.emit(Event{Type: EventWarning, Step: step, Tool: name, Text: name + ": " + w})
	}
	return &ToolResponse{ID: c.ID, Name: c.Name, Response: out, IsError: isErr}
}

func (s *Session) invoke(ctx context.Context, name string, args json.RawMessage) (out json.RawMessage, isErr bool) {
	if err := ctx.Err(); err != nil {
		return errorJSON(&toolbox.Error{Code: "cancelled", Message: "the run was stopped before this call"}), true
	}
	tool, ok := s.tools.Tool(name)
	if !ok {
		return errorJSON(&toolbox.Error{Code: toolbox.CodeUnknownTool, Message: fmt.Sprintf("there is no tool %q", name)}), true
	}
	defer func() {
		if r := recover(); r != nil {
			out, isErr = errorJSON(&toolbox.Error{Code: "tool_failed", Message: fmt.Sprintf("%s crashed: %v", name, r)}), true
		}
	}()
	v, err := tool.Call(ctx, args)
	if err != nil {
		return errorJSON(toolbox.AsError(err)), true
	}
	return resultJSON(v), false
}

// resultWarning is the warning field of a tool result, if it has one.
func resultWarning(out json.RawMessage) string {
	var r struct {
		Warning string `json:"warning"`
	}
	if json.Unmarshal(out, &r) != nil {
		return ""
	}
	return r.Warning
}

// resultJSON marshals a tool result as a JSON object, which is what function
// responses must be; other values are wrapped as {"result": v}.
func resultJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return errorJSON(&toolbox.Error{Code: "tool_failed", Message: "result could not be encoded: " + err.Error()})
	}
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '{' {
		return b
	}
	b, _ = json.Marshal(map[string]json.RawMessage{"result": b})
	return b
}

func errorJSON(e *toolbox.Error) json.RawMessage {
	b, _ := json.Marshal(e) // Error marshals to {"error":{…}}; two strings never fail
	return b
}
