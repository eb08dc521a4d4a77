package gemini_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// The fake speaks the Gemini REST API (v1beta generateContent and
// streamGenerateContent?alt=sse) closely enough for the genai SDK: the
// request and response shapes below are the wire format, not the SDK's.

type wireRequest struct {
	Contents          []wireContent `json:"contents"`
	SystemInstruction *wireContent  `json:"systemInstruction"`
	Tools             []struct {
		FunctionDeclarations []struct {
			Name                 string          `json:"name"`
			Description          string          `json:"description"`
			ParametersJsonSchema json.RawMessage `json:"parametersJsonSchema"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	// stream and apiKey are filled in by the fake, not sent as JSON.
	stream bool
	apiKey string
	path   string
}

type wireContent struct {
	Role  string     `json:"role,omitempty"`
	Parts []wirePart `json:"parts"`
}

type wirePart struct {
	Text             string            `json:"text,omitempty"`
	FunctionCall     *wireCall         `json:"functionCall,omitempty"`
	FunctionResponse *wireFuncResponse `json:"functionResponse,omitempty"`
	ThoughtSignature string            `json:"thoughtSignature,omitempty"`
}

type wireCall struct {
	Name string         `json:"name"`
	Args map[string]any `json:"args"`
}

type wireFuncResponse struct {
	Name     string         `json:"name"`
	Response map[string]any `json:"response"`
}

// declared lists the function names a request declared.
func (r wireRequest) declared() []string {
	var names []string
	for _, t := range r.Tools {
		for _, d := range t.FunctionDeclarations {
			names = append(names, d.Name)
		}
	}
	return names
}

func (r wireRequest) system() string {
	if r.SystemInstruction == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range r.SystemInstruction.Parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// lastResponses returns the function responses in the last content.
func (r wireRequest) lastResponses() []wireFuncResponse {
	var out []wireFuncResponse
	if len(r.Contents) == 0 {
		return nil
	}
	for _, p := range r.Contents[len(r.Contents)-1].Parts {
		if p.FunctionResponse != nil {
			out = append(out, *p.FunctionResponse)
		}
	}
	return out
}

// reply is what the fake answers to one request.
type reply struct {
	status int // 0 means 200
	parts  []wirePart
	// block, when set, holds the response until the client gives up.
	block bool
}

func text(s string) reply { return reply{parts: []wirePart{{Text: s}}} }

func calls(cs ...wireCall) reply {
	r := reply{}
	for _, c := range cs {
		r.parts = append(r.parts, wirePart{FunctionCall: &wireCall{Name: c.Name, Args: c.Args}})
	}
	return r
}

func fcall(name string, args map[string]any) wireCall { return wireCall{Name: name, Args: args} }

// script is one step of a conversation: it sees the request and replies.
type script func(t *testing.T, req wireRequest) reply

type fakeGemini struct {
	t        *testing.T
	mu       sync.Mutex
	steps    []script
	requests []wireRequest
	srv      *httptest.Server
	// count answers countTokens with a total or, when status is not 0, an
	// error; nil counts words. counted holds the countTokens requests.
	count   func(req wireRequest, body []byte) (total, status int)
	counted []wireRequest
}

func newFake(t *testing.T, steps ...script) *fakeGemini {
	f := &fakeGemini{t: t, steps: steps}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeGemini) serve(w http.ResponseWriter, r *http.Request) {
	model, method, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/v1beta/models/"), ":")
	if r.Method != http.MethodPost || !ok || model == "" {
		http.Error(w, `{"error":{"code":404,"message":"no such method","status":"NOT_FOUND"}}`, http.StatusNotFound)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req wireRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, `{"error":{"code":400,"message":"bad json","status":"INVALID_ARGUMENT"}}`, http.StatusBadRequest)
		return
	}
	req.apiKey = r.Header.Get("x-goog-api-key")
	req.path = r.URL.Path
	switch method {
	case "generateContent":
	case "streamGenerateContent":
		if r.URL.Query().Get("alt") != "sse" {
			http.Error(w, "want alt=sse", http.StatusBadRequest)
			return
		}
		req.stream = true
	case "countTokens":
		f.mu.Lock()
		f.counted = append(f.counted, req)
		count := f.count
		f.mu.Unlock()
		if count != nil {
			n, status := count(req, body)
			if status != 0 {
				w.WriteHeader(status)
				fmt.Fprintf(w, `{"error":{"code":%d,"message":"scripted failure","status":"INTERNAL"}}`, status)
				return
			}
			fmt.Fprintf(w, `{"totalTokens": %d, "promptTokensDetails": [{"modality": "TEXT", "tokenCount": %d}]}`, n, n)
			return
		}
		var n int
		for _, c := range req.Contents {
			for _, p := range c.Parts {
				n += len(strings.Fields(p.Text))
			}
		}
		fmt.Fprintf(w, `{"totalTokens": %d}`, n)
		return
	default:
		http.Error(w, "unknown method "+method, http.StatusNotFound)
		return
	}

	f.mu.Lock()
	f.requests = append(f.requests, req)
	if len(f.steps) == 0 {
		f.mu.Unlock()
		f.t.Errorf("unexpected request %d: the script has ended", len(f.requests))
		http.Error(w, `{"error":{"code":500,"message":"script ended","status":"INTERNAL"}}`, http.StatusInternalServerError)
		return
	}
	step := f.steps[0]
	f.steps = f.steps[1:]
	f.mu.Unlock()

	rep := step(f.t, req)
	if rep.block {
		<-r.Context().Done()
		return
	}
	if rep.status != 0 && rep.status != http.StatusOK {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rep.status)
		fmt.Fprintf(w, `{"error":{"code":%d,"message":"scripted failure","status":"UNAVAILABLE"}}`, rep.status)
		return
	}
	usage := map[string]any{"promptTokenCount": 100 + len(f.requests), "candidatesTokenCount": 7, "totalTokenCount": 107 + len(f.requests)}
	if !req.stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"candidates":    []any{map[string]any{"content": wireContent{Role: "model", Parts: rep.parts}, "finishReason": "STOP"}},
			"usageMetadata": usage,
		})
		return
	}
	// A stream sends each part in its own event, splitting text in two, and
	// the usage with the last event, as the API does.
	w.Header().Set("Content-Type", "text/event-stream")
	var chunks [][]wirePart
	for _, p := range rep.parts {
		if p.Text != "" && len(p.Text) > 1 {
			half := len(p.Text) / 2
			chunks = append(chunks, []wirePart{{Text: p.Text[:half]}}, []wirePart{{Text: p.Text[half:]}})
			continue
		}
		chunks = append(chunks, []wirePart{p})
	}
	for i, c := range chunks {
		ev := map[string]any{"candidates": []any{map[string]any{"content": wireContent{Role: "model", Parts: c}}}}
		if i == len(chunks)-1 {
			ev["candidates"] = []any{map[string]any{"content": wireContent{Role: "model", Parts: c}, "finishReason": "STOP"}}
			ev["usageMetadata"] = usage
		}
		b, _ := json.Marshal(ev)
		fmt.Fprintf(w, "data: %s\r\n\r\n", b)
		w.(http.Flusher).Flush()
	}
}

func (f *fakeGemini) seen() []wireRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]wireRequest(nil), f.requests...)
}
