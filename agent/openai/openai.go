// Package openai implements agent.Model over an OpenAI-compatible
// /v1/chat/completions endpoint with function calling, so that local
// servers (Ollama, vLLM, llama.cpp) can drive the agent.
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

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
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Minute}
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
	Model    string        `json:"model"`
	Messages []chatMessage `json:"messages"`
	Tools    []chatTool    `json:"tools,omitempty"`
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
	var cr chatResponse
	if err := json.Unmarshal(raw, &cr); err != nil {
		return agent.Response{}, fmt.Errorf("openai: malformed response: %w", err)
	}
	if len(cr.Choices) == 0 {
		return agent.Response{}, errors.New("openai: the response has no choices")
	}
	msg := cr.Choices[0].Message
	out := agent.Message{Role: agent.RoleModel}
	if msg.Content != nil && *msg.Content != "" {
		out.Parts = append(out.Parts, agent.Part{Text: *msg.Content})
	}
	for i, tc := range msg.ToolCalls {
		args := json.RawMessage(tc.Function.Arguments)
		if strings.TrimSpace(tc.Function.Arguments) == "" {
			args = json.RawMessage("{}")
		} else if !json.Valid(args) {
			// Small local models sometimes emit broken JSON; the tool then
			// reports invalid arguments and the model can try again.
			args, _ = json.Marshal(map[string]string{"_unparsed_arguments": tc.Function.Arguments})
		}
		id := tc.ID
		if id == "" {
			id = fmt.Sprintf("call_%d", i)
		}
		out.Parts = append(out.Parts, agent.Part{Call: &agent.ToolCall{ID: id, Name: tc.Function.Name, Args: args}})
	}
	return agent.Response{Message: out, Usage: agent.Usage{InputTokens: cr.Usage.PromptTokens, OutputTokens: cr.Usage.CompletionTokens}}, nil
}

// Stream implements agent.Model. It does not stream: the whole text is
// handed to onText once, which local servers answer about as fast.
func (m *Model) Stream(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
	resp, err := m.Generate(ctx, req)
	if err == nil && onText != nil {
		if text := resp.Message.Text(); text != "" {
			onText(text)
		}
	}
	return resp, err
}

func (m *Model) post(ctx context.Context, body []byte) ([]byte, error) {
	url := m.cfg.BaseURL + "/chat/completions"
	delay := m.cfg.RetryDelay
	for attempt := 1; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return nil, fmt.Errorf("openai: %w", err)
		}
		req.Header.Set("Content-Type", "application/json")
		if m.cfg.APIKey != "" {
			req.Header.Set("Authorization", "Bearer "+m.cfg.APIKey)
		}
		resp, err := m.cfg.HTTPClient.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("openai: %s unreachable (is the server running?): %w", m.cfg.BaseURL, err)
		}
		raw, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("openai: read response: %w", err)
		}
		if resp.StatusCode == http.StatusOK {
			return raw, nil
		}
		retryable := resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500
		if !retryable || attempt >= m.cfg.RetryAttempts {
			return nil, fmt.Errorf("openai: %s answered %d: %s", url, resp.StatusCode, strings.TrimSpace(string(raw[:min(len(raw), 500)])))
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(delay):
		}
		delay *= 2
	}
}
