// Package openai implements agent.Model over an OpenAI-compatible
// /v1/chat/completions endpoint with function calling, so that local
// servers (Ollama, vLLM, llama.cpp) can drive the agent.
package openai

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/acolyte-dev/acolyte/agent"
)

// DefaultBaseURL is Ollama's OpenAI-compatible endpoint, the most common
// local server.
const DefaultBaseURL = "http://localhost:11434/v1"

// Config configures a Model.
type Config struct {
	// BaseURL is the API root that /chat/completions is appended to.
	BaseURL string
	// APIKey is sent as a bearer token when set; local servers need none.
	APIKey string
	// Model is required: local servers have no default.
	Model      string
	HTTPClient *http.Client
	// RetryAttempts counts every try of a request answered with 429 or 5xx
	// (default 4); RetryDelay is the first backoff, doubled each time.
	RetryAttempts int
	RetryDelay    time.Duration
	// MaxRetryWait is the longest Retry-After to honour before failing
	// instead (default agent.DefaultMaxRetryWait).
	MaxRetryWait time.Duration
	// OnWait is told about each wait before a retry.
	OnWait func(agent.Wait)
}

// Model is a chat model behind an OpenAI-compatible API.
type Model struct {
	cfg Config
}

// New checks cfg. It makes no request.
func New(cfg Config) (*Model, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, errors.New("openai: no model given: set --model or ACOLYTE_MODEL (e.g. qwen2.5-coder:7b for Ollama)")
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	if cfg.HTTPClient == nil {
		// No client timeout: a request is bounded by its context, which
		// the agent's --timeout sets.
		cfg.HTTPClient = &http.Client{}
	}
	if cfg.RetryAttempts <= 0 {
		cfg.RetryAttempts = 4
	}
	if cfg.RetryDelay <= 0 {
		cfg.RetryDelay = time.Second
	}
	return &Model{cfg: cfg}, nil
}

// Name implements agent.Model.
func (m *Model) Name() string { return "openai/" + m.cfg.Model }

type chatMessage struct {
	Role       string     `json:"role"`
	Content    *string    `json:"content"`
	ToolCalls  []toolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

type toolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type chatTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

type chatRequest struct {
	Model         string         `json:"model"`
	Messages      []chatMessage  `json:"messages"`
	Tools         []chatTool     `json:"tools,omitempty"`
	ToolChoice    any            `json:"tool_choice,omitempty"`
	Stream        bool           `json:"stream,omitempty"`
	StreamOptions *streamOptions `json:"stream_options,omitempty"`
}

type chatResponse struct {
	Choices []struct {
		Message      chatMessage `json:"message"`
		FinishReason string      `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

func ptr(s string) *string { return &s }

func toChat(model string, req agent.Request) chatRequest {
	out := chatRequest{Model: model}
	if req.System != "" {
		out.Messages = append(out.Messages, chatMessage{Role: "system", Content: ptr(req.System)})
	}
	for _, msg := range req.Messages {
		if msg.Role == agent.RoleModel {
			cm := chatMessage{Role: "assistant"}
			if text := msg.Text(); text != "" {
				cm.Content = ptr(text)
			}
			for _, c := range msg.Calls() {
				tc := toolCall{ID: c.ID, Type: "function"}
				tc.Function.Name, tc.Function.Arguments = c.Name, string(c.Args)
				cm.ToolCalls = append(cm.ToolCalls, tc)
			}
			out.Messages = append(out.Messages, cm)
			continue
		}
		// A user turn holds tool results and text; the chat format wants one
		// "tool" message per result, then the text as a user message.
		var text strings.Builder
		for _, p := range msg.Parts {
			if p.Result != nil {
				out.Messages = append(out.Messages, chatMessage{Role: "tool", ToolCallID: p.Result.ID, Content: ptr(string(p.Result.Response))})
			} else {
				text.WriteString(p.Text)
			}
		}
		if text.Len() > 0 {
			out.Messages = append(out.Messages, chatMessage{Role: "user", Content: ptr(text.String())})
		}
	}
	for _, t := range req.Tools {
		ct := chatTool{Type: "function"}
		ct.Function.Name, ct.Function.Description, ct.Function.Parameters = t.Name, t.Description, t.Schema
		out.Tools = append(out.Tools, ct)
	}
	if req.ForceTool != "" {
		out.ToolChoice = map[string]any{"type": "function", "function": map[string]string{"name": req.ForceTool}}
	}
	return out
}

// Generate implements agent.Model.
func (m *Model) Generate(ctx context.Context, req agent.Request) (agent.Response, error) {
	body, err := json.Marshal(toChat(m.cfg.Model, req))
	if err != nil {
		return agent.Response{}, fmt.Errorf("openai: encode request: %w", err)
	}
	raw, err := m.post(ctx, body)
	if err != nil {
		return agent.Response{}, err
	}
	return decodeChat(raw)
}

func decodeChat(raw []byte) (agent.Response, error) {
	var cr chatResponse
	if err := json.Unmarshal(raw, &cr); err != nil {
		return agent.Response{}, fmt.Errorf("openai: malformed response: %w", err)
	}
	if len(cr.Choices) == 0 {
		return agent.Response{}, errors.New("openai: the response has no choices")
	}
	msg := cr.Choices[0].Message
	var text string
	if msg.Content != nil {
		text = *msg.Content
	}
	return buildResponse(text, msg.ToolCalls, cr.Choices[0].FinishReason, cr.Usage.PromptTokens, cr.Usage.CompletionTokens), nil
}

func buildResponse(text string, calls []toolCall, finish string, in, out int) agent.Response {
	msg := agent.Message{Role: agent.RoleModel}
	if text != "" {
		msg.Parts = append(msg.Parts, agent.Part{Text: text})
	}
	for i, tc := range calls {
		id := tc.ID
		if id == "" {
			id = fmt.Sprintf("call_%d", i)
		}
		msg.Parts = append(msg.Parts, agent.Part{Call: parseCall(id, tc.Function.Name, tc.Function.Arguments)})
	}
	stop := agent.StopEnd
	if finish == "length" {
		stop = agent.StopLength
	}
	return agent.Response{Message: msg, Stop: stop, Usage: agent.Usage{InputTokens: in, OutputTokens: out}}
}

// Stream implements agent.Model with server-sent events. A server that
// refuses the stream options (a 400 that names them) or answers with plain
// JSON is served as by Generate, so older local servers keep working.
func (m *Model) Stream(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
	cr := toChat(m.cfg.Model, req)
	cr.Stream = true
	cr.StreamOptions = &streamOptions{IncludeUsage: true}
	body, err := json.Marshal(cr)
	if err != nil {
		return agent.Response{}, fmt.Errorf("openai: encode request: %w", err)
	}
	resp, err := m.open(ctx, body)
	var se *statusError
	if errors.As(err, &se) && se.code == http.StatusBadRequest && strings.Contains(strings.ToLower(se.msg), "stream") {
		return m.generateAsStream(ctx, req, onText)
	}
	if err != nil {
		return agent.Response{}, err
	}
	defer resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		raw, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
		if err != nil {
			return agent.Response{}, fmt.Errorf("openai: read response: %w", err)
		}
		r, err := decodeChat(raw)
		if err == nil && onText != nil && r.Message.Text() != "" {
			onText(r.Message.Text())
		}
		return r, err
	}
	return readStream(resp.Body, onText)
}

func (m *Model) generateAsStream(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
	resp, err := m.Generate(ctx, req)
	if err == nil && onText != nil {
		if text := resp.Message.Text(); text != "" {
			onText(text)
		}
	}
	return resp, err
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// streamChunk is one event of a streamed chat completion.
type streamChunk struct {
	Choices []struct {
		Delta struct {
			Content   *string `json:"content"`
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

// readStream assembles a reply from "data:" events until [DONE]: text
// deltas are handed to onText as they come, tool-call deltas are joined by
// their index.
func readStream(r io.Reader, onText func(string)) (agent.Response, error) {
	var (
		text     strings.Builder
		calls    []toolCall
		finish   string
		in, out  int
		finished bool
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		data, ok := strings.CutPrefix(line, "data:")
		if !ok {
			continue
		}
		data = strings.TrimSpace(data)
		if data == "[DONE]" {
			finished = true
			break
		}
		var ch streamChunk
		if err := json.Unmarshal([]byte(data), &ch); err != nil {
			return agent.Response{}, fmt.Errorf("openai: malformed stream event: %w", err)
		}
		if ch.Usage != nil {
			in, out = ch.Usage.PromptTokens, ch.Usage.CompletionTokens
		}
		for _, c := range ch.Choices {
			if c.Delta.Content != nil && *c.Delta.Content != "" {
				text.WriteString(*c.Delta.Content)
				if onText != nil {
					onText(*c.Delta.Content)
				}
			}
			for _, d := range c.Delta.ToolCalls {
				for len(calls) <= d.Index {
					calls = append(calls, toolCall{Type: "function"})
				}
				tc := &calls[d.Index]
				if d.ID != "" {
					tc.ID = d.ID
				}
				tc.Function.Name += d.Function.Name
				tc.Function.Arguments += d.Function.Arguments
			}
			if c.FinishReason != nil && *c.FinishReason != "" {
				finish = *c.FinishReason
			}
		}
	}
	if err := sc.Err(); err != nil {
		return agent.Response{}, fmt.Errorf("openai: read stream: %w", err)
	}
	if !finished && finish == "" {
		return agent.Response{}, errors.New("openai: the stream ended before the reply did; try again")
	}
	return buildResponse(text.String(), calls, finish, in, out), nil
}

// parseCall reads a call's argument string. Small local models, and any
// model cut off by the output limit, sometimes send broken JSON: the call
// is then marked malformed, so the loop tells the model instead of running
// the tool with nothing.
func parseCall(id, name, arguments string) *agent.ToolCall {
	c := &agent.ToolCall{ID: id, Name: name, Args: json.RawMessage(arguments)}
	trimmed := strings.TrimSpace(arguments)
	switch {
	case trimmed == "":
		c.Args = json.RawMessage("{}")
	case !json.Valid([]byte(trimmed)):
		c.Args = json.RawMessage("{}")
		c.Malformed = "the arguments are not valid JSON (they begin " + strconvQuote(trimmed, 80) + ")"
	case trimmed[0] != '{':
		c.Args = json.RawMessage("{}")
		c.Malformed = "the arguments must be a JSON object, not " + strconvQuote(trimmed, 80)
	}
	return c
}

func strconvQuote(s string, n int) string {
	if len(s) > n {
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n] + "…"
	}
	b, _ := json.Marshal(s)
	return string(b)
}

func (m *Model) post(ctx context.Context, body []byte) ([]byte, error) {
	resp, err := m.open(ctx, body)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return nil, fmt.Errorf("openai: read response: %w", err)
	}
	return raw, nil
}

// statusError is an answer other than 200.
type statusError struct {
	code int
	msg  string
}

func (e *statusError) Error() string { return e.msg }

// open sends body, retrying 429 and 5xx answers, and returns the open 200
// response.
func (m *Model) open(ctx context.Context, body []byte) (*http.Response, error) {
	url := m.cfg.BaseURL + "/chat/completions"
	retry := agent.Retry{Attempts: m.cfg.RetryAttempts, Delay: m.cfg.RetryDelay, MaxDelay: 30 * time.Second, MaxWait: m.cfg.MaxRetryWait, OnWait: m.cfg.OnWait, What: "openai " + m.cfg.Model}
	var out *http.Response
	err := retry.Do(ctx, func() (time.Duration, bool, error) {
		var (
			after time.Duration
			again bool
			err   error
		)
		out, after, again, err = m.openOnce(ctx, url, body)
		return after, again, err
	})
	if err != nil && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return out, err
}

// openOnce makes one try; on failure it returns the Retry-After the server
// asked for and whether another try may help.
func (m *Model) openOnce(ctx context.Context, url string, body []byte) (*http.Response, time.Duration, bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, 0, false, fmt.Errorf("openai: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if m.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+m.cfg.APIKey)
	}
	resp, err := m.cfg.HTTPClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, 0, false, ctx.Err()
		}
		return nil, 0, false, fmt.Errorf("openai: %s unreachable (is the server running?): %w", m.cfg.BaseURL, err)
	}
	if resp.StatusCode == http.StatusOK {
		return resp, 0, false, nil
	}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	resp.Body.Close()
	retryable := resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500
	return nil, agent.RetryAfter(resp.Header.Get("Retry-After"), time.Now()), retryable,
		&statusError{resp.StatusCode, fmt.Sprintf("openai: %s answered %d: %s", url, resp.StatusCode, strings.TrimSpace(string(raw[:min(len(raw), 500)])))}
}

// RequestBytes implements agent.RequestSizer: the size of the JSON body
// Generate would send.
func (m *Model) RequestBytes(req agent.Request) int { return RequestBytes(m.cfg.Model, req, false) }

// RequestBytes is the size of the JSON body of a request to model, streamed
// or not, without a client.
func RequestBytes(model string, req agent.Request, stream bool) int {
	cr := toChat(model, req) // encodes as Generate and Stream do
	if stream {
		cr.Stream, cr.StreamOptions = true, &streamOptions{IncludeUsage: true}
	}
	b, _ := json.Marshal(cr)
	return len(b)
}
