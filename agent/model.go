// Package agent runs a tool-calling loop over a language model. The model
// is reached through the provider-neutral Model interface (see agent/gemini
// and agent/openai); the tools come from agent/toolbox. Memory is never put
// in the prompt: the model searches it with memory_search.
package agent

import (
	"context"
	"encoding/json"
	"strings"
)

// Role says who wrote a message.
type Role string

const (
	// RoleUser messages carry the task and the results of tool calls.
	RoleUser Role = "user"
	// RoleModel messages carry the model's text and tool calls.
	RoleModel Role = "model"
)

// Message is one turn of the conversation.
type Message struct {
	Role  Role   `json:"role"`
	Parts []Part `json:"parts"`
}

// Part is one piece of a message: text, a tool call or a tool result.
// Exactly one of Text, Call and Result is set.
type Part struct {
	Text   string        `json:"text,omitempty"`
	Call   *ToolCall     `json:"call,omitempty"`
	Result *ToolResponse `json:"result,omitempty"`
	// Signature is an opaque token some providers attach to a part (Gemini's
	// thought signature) and require back unchanged in later requests.
	Signature []byte `json:"signature,omitempty"`
}

// ToolCall is the model asking to run a tool.
type ToolCall struct {
	// ID pairs a call with its result; providers that do not use ids leave it empty.
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
	// Malformed says why the provider could not read the arguments the
	// model sent (e.g. broken JSON); Args is then {} and the call is not
	// run: the model is told what was wrong instead.
	Malformed string `json:"malformed,omitempty"`
}

// ToolResponse is the outcome of a tool call, always a JSON object: the
// tool's result, or {"error":{"code":…,"message":…}}.
type ToolResponse struct {
	ID       string          `json:"id,omitempty"`
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
	IsError  bool            `json:"is_error,omitempty"`
}

// Text joins the message's text parts.
func (m Message) Text() string {
	var b strings.Builder
	for _, p := range m.Parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// Calls returns the message's tool calls in order.
func (m Message) Calls() []ToolCall {
	var calls []ToolCall
	for _, p := range m.Parts {
		if p.Call != nil {
			calls = append(calls, *p.Call)
		}
	}
	return calls
}

// ToolDecl declares a tool to the model.
type ToolDecl struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"parameters"`
}

// Request is everything one model call sees.
type Request struct {
	System   string
	Messages []Message
	Tools    []ToolDecl
	// ForceTool, when set, names the one tool the model must call: distill
	// needs a memory_observe call, not prose.
	ForceTool string
}

// Usage counts the tokens of one model call.
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// Add sums usage over calls.
func (u *Usage) Add(v Usage) {
	u.InputTokens += v.InputTokens
	u.OutputTokens += v.OutputTokens
}

// Response is the model's reply to one Request.
type Response struct {
	Message Message
	Usage   Usage
	// Stop is why the model stopped; the zero value is a natural end.
	Stop StopReason
	// StopDetail is the provider's own words about an unusual stop, if any.
	StopDetail string
}

// StopReason is why the model stopped generating.
type StopReason string

const (
	// StopEnd is a natural end: an answer or tool calls.
	StopEnd StopReason = ""
	// StopLength means the output limit cut the reply off (OpenAI
	// finish_reason "length", Gemini MAX_TOKENS): it is not a whole answer.
	StopLength StopReason = "length"
	// StopMalformedCall means the model tried to call a tool and the
	// provider could not parse the call (Gemini MALFORMED_FUNCTION_CALL).
	StopMalformedCall StopReason = "malformed_call"
)

// Model is a language model that can call tools.
type Model interface {
	// Name identifies the provider and model, e.g. "gemini/gemini-2.5-flash".
	Name() string
	// Generate returns the model's whole reply.
	Generate(ctx context.Context, req Request) (Response, error)
	// Stream is Generate that also hands each piece of text to onText as it arrives.
	Stream(ctx context.Context, req Request, onText func(string)) (Response, error)
}

// RequestSizer is implemented by models that can say how many bytes a
// request takes in their wire format; the context budget is then checked
// against what is really sent, not just the provider-neutral history.
type RequestSizer interface {
	RequestBytes(req Request) int
}

// TokenCounter is implemented by models whose API counts tokens exactly.
type TokenCounter interface {
	CountTokens(ctx context.Context, text string) (int, error)
}
