// Package gemini implements agent.Model over the Gemini API with the
// google.golang.org/genai SDK.
package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"google.golang.org/genai"

	"github.com/acolyte-dev/acolyte/agent"
)

// DefaultModel is a current fast model with function calling.
const DefaultModel = "gemini-2.5-flash"

// ErrNoAPIKey is returned when no API key is configured.
var ErrNoAPIKey = errors.New("no Gemini API key: set GEMINI_API_KEY or GOOGLE_API_KEY (or use --provider openai for a local model)")

// Config configures a Model.
type Config struct {
	APIKey string
	// Model is the Gemini model id (default DefaultModel).
	Model string
	// BaseURL replaces the API endpoint, for tests and proxies.
	BaseURL    string
	HTTPClient *http.Client
	// RetryAttempts counts every try of a request that failed with 408, 429
	// or 5xx (default 5); RetryDelaySeconds is the first backoff (default 1),
	// doubled after each try.
	RetryAttempts     int
	RetryDelaySeconds float64
	// MaxRetryWait is the longest wait a server may ask for (RetryInfo)
	// before the request fails instead (default 2 minutes).
	MaxRetryWait time.Duration
	// OnWait is told about each wait before a retry, so a user is not left
	// staring at a silent terminal.
	OnWait func(agent.Wait)
}

// Model is a Gemini model.
type Model struct {
	client *genai.Client
	model  string
	retry  agent.Retry
}

// New connects to the Gemini API. It makes no request.
func New(ctx context.Context, cfg Config) (*Model, error) {
	if strings.TrimSpace(cfg.APIKey) == "" {
		return nil, ErrNoAPIKey
	}
	if cfg.Model == "" {
		cfg.Model = DefaultModel
	}
	retry := agent.Retry{Attempts: 5, Delay: time.Second, MaxDelay: 30 * time.Second, MaxWait: cfg.MaxRetryWait, OnWait: cfg.OnWait, What: "gemini " + cfg.Model}
	if cfg.RetryAttempts > 0 {
		retry.Attempts = cfg.RetryAttempts
	}
	if cfg.RetryDelaySeconds > 0 {
		retry.Delay = time.Duration(cfg.RetryDelaySeconds * float64(time.Second))
	}
	// Retries are ours, not the SDK's: only ours read the server's
	// RetryInfo and say on stderr what is being waited for.
	opts := genai.HTTPOptions{BaseURL: cfg.BaseURL}
	client, err := genai.NewClient(ctx, &genai.ClientConfig{
		APIKey:      cfg.APIKey,
		Backend:     genai.BackendGeminiAPI,
		HTTPClient:  hintingClient(cfg.HTTPClient),
		HTTPOptions: opts,
	})
	if err != nil {
		return nil, fmt.Errorf("gemini: %w", err)
	}
	return &Model{client: client, model: cfg.Model, retry: retry}, nil
}

// Name implements agent.Model.
func (m *Model) Name() string { return "gemini/" + m.model }

// Generate implements agent.Model.
func (m *Model) Generate(ctx context.Context, req agent.Request) (agent.Response, error) {
	contents, config, err := toGenai(req)
	if err != nil {
		return agent.Response{}, err
	}
	var resp *genai.GenerateContentResponse
	err = m.retry.Do(ctx, func() (time.Duration, bool, error) {
		tctx, hint := withHint(ctx)
		var err error
		resp, err = m.client.Models.GenerateContent(tctx, m.model, contents, config)
		after, again := retryDelay(err, hint)
		return after, again, err
	})
	if err != nil {
		return agent.Response{}, m.wrap(err)
	}
	var acc accumulator
	if err := acc.add(resp); err != nil {
		return agent.Response{}, err
	}
	return acc.response()
}

// retryable says whether err is worth another try (408, 429, 5xx) and how
// long the server asked to wait, from google.rpc.RetryInfo.
func retryable(err error) (time.Duration, bool) {
	var apiErr genai.APIError
	if !errors.As(err, &apiErr) {
		return 0, false
	}
	if apiErr.Code != http.StatusRequestTimeout && apiErr.Code != http.StatusTooManyRequests && apiErr.Code < 500 {
		return 0, false
	}
	for _, d := range apiErr.Details {
		if t, _ := d["@type"].(string); strings.HasSuffix(t, "google.rpc.RetryInfo") {
			if s, ok := d["retryDelay"].(string); ok {
				if after, err := time.ParseDuration(s); err == nil {
					return after, true
				}
			}
		}
	}
	return 0, true
}

// Stream implements agent.Model.
func (m *Model) Stream(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
	contents, config, err := toGenai(req)
	if err != nil {
		return agent.Response{}, err
	}
	var acc accumulator
	err = m.retry.Do(ctx, func() (time.Duration, bool, error) {
		acc = accumulator{onText: onText}
		started := false
		tctx, hint := withHint(ctx)
		for chunk, err := range m.client.Models.GenerateContentStream(tctx, m.model, contents, config) {
			if err != nil {
				after, ok := retryDelay(err, hint)
				// Text already shown cannot be taken back: retry only a
				// stream that failed before its first chunk.
				return after, ok && !started, err
			}
			started = true
			if err := acc.add(chunk); err != nil {
				return 0, false, err
			}
		}
		return 0, false, nil
	})
	if err != nil {
		var apiErr genai.APIError
		if errors.As(err, &apiErr) {
			return agent.Response{}, m.wrap(err)
		}
		return agent.Response{}, err
	}
	return acc.response()
}

// CountTokens implements agent.TokenCounter with the API's own tokenizer.
func (m *Model) CountTokens(ctx context.Context, text string) (int, error) {
	resp, err := m.client.Models.CountTokens(ctx, m.model, []*genai.Content{genai.NewContentFromText(text, genai.RoleUser)}, nil)
	if err != nil {
		return 0, m.wrap(err)
	}
	return int(resp.TotalTokens), nil
}

// CountRequestTokens implements agent.RequestCounter with the API's
// countTokens. The Gemini API counts contents only (the SDK refuses a
// system instruction or tools there), so the system prompt and the tool
// declarations, as JSON, are counted as text parts leading the first turn:
// near enough, and the conversation, which is what grows, is counted as it
// is sent.
func (m *Model) CountRequestTokens(ctx context.Context, req agent.Request) (int, error) {
	contents, config, err := toGenai(req)
	if err != nil {
		return 0, err
	}
	var lead []*genai.Part
	if config.SystemInstruction != nil {
		lead = append(lead, config.SystemInstruction.Parts...)
	}
	if len(config.Tools) > 0 {
		b, err := json.Marshal(config.Tools)
		if err != nil {
			return 0, fmt.Errorf("gemini: encode tools: %w", err)
		}
		lead = append(lead, genai.NewPartFromText(string(b)))
	}
	if len(lead) > 0 {
		// Prepended to the first user turn, not as a turn of its own, so
		// the roles still alternate.
		if len(contents) > 0 && contents[0].Role == genai.RoleUser {
			first := *contents[0]
			first.Parts = append(lead, first.Parts...)
			contents = append([]*genai.Content{&first}, contents[1:]...)
		} else {
			contents = append([]*genai.Content{{Role: genai.RoleUser, Parts: lead}}, contents...)
		}
	}
	resp, err := m.client.Models.CountTokens(ctx, m.model, contents, nil)
	if err != nil {
		return 0, m.wrap(err)
	}
	return int(resp.TotalTokens), nil
}

func (m *Model) wrap(err error) error {
	var apiErr genai.APIError
	if errors.As(err, &apiErr) {
		plain := apiError{apiErr}
		switch apiErr.Code {
		case http.StatusUnauthorized, http.StatusForbidden:
			return fmt.Errorf("gemini %s: %s (check GEMINI_API_KEY): %w", m.model, apiErr.Message, plain)
		case http.StatusNotFound:
			return fmt.Errorf("gemini: model %q not found (set --model or ACOLYTE_MODEL): %w", m.model, plain)
		}
		return fmt.Errorf("gemini %s: %w", m.model, plain)
	}
	return fmt.Errorf("gemini %s: %w", m.model, err)
}

// apiError says what the API answered in words: the SDK's own Error
// prints the details as Go maps.
type apiError struct{ err genai.APIError }

func (e apiError) Error() string {
	msg := fmt.Sprintf("the API answered %d", e.err.Code)
	if e.err.Status != "" {
		msg += " " + e.err.Status
	}
	if e.err.Message != "" {
		msg += ": " + e.err.Message
	}
	return msg
}

func (e apiError) Unwrap() error { return e.err }

func toGenai(req agent.Request) ([]*genai.Content, *genai.GenerateContentConfig, error) {
	contents := make([]*genai.Content, 0, len(req.Messages))
	for _, msg := range req.Messages {
		c := &genai.Content{Role: string(msg.Role)}
		for _, p := range msg.Parts {
			gp := &genai.Part{ThoughtSignature: p.Signature}
			switch {
			case p.Call != nil:
				args := map[string]any{}
				if len(p.Call.Args) > 0 {
					if err := json.Unmarshal(p.Call.Args, &args); err != nil {
						return nil, nil, fmt.Errorf("gemini: arguments of %s are not a JSON object: %w", p.Call.Name, err)
					}
				}
				gp.FunctionCall = &genai.FunctionCall{ID: p.Call.ID, Name: p.Call.Name, Args: args}
			case p.Result != nil:
				resp := map[string]any{}
				if err := json.Unmarshal(p.Result.Response, &resp); err != nil {
					return nil, nil, fmt.Errorf("gemini: result of %s is not a JSON object: %w", p.Result.Name, err)
				}
				gp.FunctionResponse = &genai.FunctionResponse{ID: p.Result.ID, Name: p.Result.Name, Response: resp}
			default:
				gp.Text = p.Text
			}
			c.Parts = append(c.Parts, gp)
		}
		contents = append(contents, c)
	}
	config := &genai.GenerateContentConfig{}
	if req.System != "" {
		config.SystemInstruction = genai.NewContentFromText(req.System, genai.RoleUser)
	}
	if len(req.Tools) > 0 {
		decls := make([]*genai.FunctionDeclaration, 0, len(req.Tools))
		for _, t := range req.Tools {
			var schema map[string]any
			if err := json.Unmarshal(t.Schema, &schema); err != nil {
				return nil, nil, fmt.Errorf("gemini: schema of tool %s: %w", t.Name, err)
			}
			decls = append(decls, &genai.FunctionDeclaration{Name: t.Name, Description: t.Description, ParametersJsonSchema: schema})
		}
		config.Tools = []*genai.Tool{{FunctionDeclarations: decls}}
		if req.ForceTool != "" {
			config.ToolConfig = &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{
				Mode: genai.FunctionCallingConfigModeAny, AllowedFunctionNames: []string{req.ForceTool}}}
		}
	}
	return contents, config, nil
}

// accumulator builds one agent.Response from a whole response or from the
// chunks of a stream, merging adjacent text so the history stays compact.
type accumulator struct {
	onText  func(string)
	parts   []agent.Part
	usage   agent.Usage
	finish  genai.FinishReason
	message string
	blocked string
}

func (a *accumulator) add(r *genai.GenerateContentResponse) error {
	if r == nil {
		return nil
	}
	if u := r.UsageMetadata; u != nil {
		// Streams repeat running totals; the last chunk's are final.
		a.usage = agent.Usage{InputTokens: int(u.PromptTokenCount), OutputTokens: int(u.CandidatesTokenCount + u.ThoughtsTokenCount)}
	}
	if r.PromptFeedback != nil && r.PromptFeedback.BlockReason != "" {
		a.blocked = string(r.PromptFeedback.BlockReason)
	}
	if len(r.Candidates) == 0 {
		return nil
	}
	cand := r.Candidates[0]
	if cand.FinishReason != "" {
		a.finish = cand.FinishReason
		a.message = cand.FinishMessage
	}
	if cand.Content == nil {
		return nil
	}
	for _, p := range cand.Content.Parts {
		if p == nil || p.Thought {
			continue
		}
		switch {
		case p.FunctionCall != nil:
			args, err := marshalArgs(p.FunctionCall.Args)
			if err != nil {
				return fmt.Errorf("gemini: arguments of %s: %w", p.FunctionCall.Name, err)
			}
			if p.FunctionCall.Args == nil {
				args = json.RawMessage("{}")
			}
			a.parts = append(a.parts, agent.Part{Call: &agent.ToolCall{ID: p.FunctionCall.ID, Name: p.FunctionCall.Name, Args: args}, Signature: p.ThoughtSignature})
		case p.Text != "" || len(p.ThoughtSignature) > 0:
			if a.onText != nil && p.Text != "" {
				a.onText(p.Text)
			}
			if n := len(a.parts); n > 0 && a.parts[n-1].Call == nil && len(p.ThoughtSignature) == 0 {
				a.parts[n-1].Text += p.Text
				continue
			}
			a.parts = append(a.parts, agent.Part{Text: p.Text, Signature: p.ThoughtSignature})
		}
	}
	return nil
}

func (a *accumulator) response() (agent.Response, error) {
	resp := agent.Response{Message: agent.Message{Role: agent.RoleModel, Parts: a.parts}, Usage: a.usage, StopDetail: a.message}
	switch a.finish {
	case genai.FinishReasonMaxTokens:
		resp.Stop = agent.StopLength
		return resp, nil
	case genai.FinishReasonMalformedFunctionCall, genai.FinishReasonUnexpectedToolCall:
		// The model meant to call a tool and got it wrong: the loop tells
		// it so, as it does for a broken OpenAI argument string.
		resp.Stop = agent.StopMalformedCall
		if resp.StopDetail == "" {
			resp.StopDetail = string(a.finish)
		}
		return resp, nil
	}
	if len(a.parts) == 0 {
		switch {
		case a.blocked != "":
			return agent.Response{}, fmt.Errorf("gemini: the prompt was blocked (%s)", a.blocked)
		case a.finish != "" && a.finish != genai.FinishReasonStop:
			return agent.Response{}, fmt.Errorf("gemini: the model stopped without answering (finish reason %s)", a.finish)
		}
	}
	return resp, nil
}

// marshalArgs encodes a call's arguments as the model wrote them: without
// escaping <, > and & as \u003c, \u003e and \u0026, which json.Marshal does
// for HTML and which then shows in every tool-call line.
func marshalArgs(args map[string]any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(args); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// RequestBytes implements agent.RequestSizer: about the size of the JSON
// body the SDK sends (contents, system instruction and tools), 0 when the
// request cannot be encoded (Generate reports why).
func (m *Model) RequestBytes(req agent.Request) int { return RequestBytes(req) }

// RequestBytes is the size of the JSON body of a request, the SDK's empty
// generationConfig included, without a client; 0 when req cannot be encoded.
func RequestBytes(req agent.Request) int {
	contents, config, err := toGenai(req)
	if err != nil {
		return 0
	}
	body := map[string]any{"contents": contents, "systemInstruction": config.SystemInstruction, "tools": config.Tools, "generationConfig": struct{}{}}
	if config.ToolConfig != nil {
		body["toolConfig"] = config.ToolConfig
	}
	b, _ := json.Marshal(body)
	return len(b)
}
