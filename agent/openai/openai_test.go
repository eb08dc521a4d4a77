package openai_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/agent"
	"github.com/acolyte-dev/acolyte/agent/internal/agenttest"
	"github.com/acolyte-dev/acolyte/agent/openai"
	"github.com/acolyte-dev/acolyte/memory"
)

type wireMessage struct {
	Role       string `json:"role"`
	Content    *string
	ToolCallID string `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Function struct{ Name, Arguments string }
	} `json:"tool_calls"`
}

type wireRequest struct {
	Model    string        `json:"model"`
	Messages []wireMessage `json:"messages"`
	Tools    []struct {
		Type     string `json:"type"`
		Function struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
}

// fakeServer answers /v1/chat/completions with scripted replies (raw JSON
// bodies, or a status code to fail with).
func fakeServer(t *testing.T, replies ...func(wireRequest) (int, string)) (*httptest.Server, *[]wireRequest) {
	var mu sync.Mutex
	var seen []wireRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer sk-test" {
			http.Error(w, "bad path or key", http.StatusNotFound)
			return
		}
		var req wireRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		seen = append(seen, req)
		n := len(seen)
		mu.Unlock()
		if n > len(replies) {
			t.Errorf("unexpected request %d", n)
			http.Error(w, "script ended", http.StatusInternalServerError)
			return
		}
		status, body := replies[n-1](req)
		w.WriteHeader(status)
		w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv, &seen
}

func TestToolCallingConversation(t *testing.T) {
	tk, _ := agenttest.Open(t)
	agenttest.Add(t, tk, memory.ScopeProject, memory.KindStored, "Benchmarks run with go test -bench . ./memory")
	srv, seen := fakeServer(t,
		func(wireRequest) (int, string) { return http.StatusTooManyRequests, `{"error":"slow down"}` },
		func(req wireRequest) (int, string) {
			if req.Model != "qwen-test" || req.Messages[0].Role != "system" || len(req.Tools) == 0 || req.Tools[0].Type != "function" {
				t.Errorf("first request: %+v", req)
			}
			return 200, `{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_9","type":"function","function":{"name":"memory_search","arguments":"{\"query\":\"benchmarks\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":50,"completion_tokens":5}}`
		},
		func(req wireRequest) (int, string) {
			last := req.Messages[len(req.Messages)-1]
			if last.Role != "tool" || last.ToolCallID != "call_9" || last.Content == nil || !strings.Contains(*last.Content, "go test -bench") {
				t.Errorf("tool message: %+v", last)
			}
			if prev := req.Messages[len(req.Messages)-2]; prev.Role != "assistant" || len(prev.ToolCalls) != 1 || prev.ToolCalls[0].ID != "call_9" {
				t.Errorf("assistant message: %+v", prev)
			}
			return 200, `{"choices":[{"message":{"role":"assistant","content":"Use go test -bench . ./memory"},"finish_reason":"stop"}],"usage":{"prompt_tokens":80,"completion_tokens":9}}`
		},
	)
	m, err := openai.New(openai.Config{BaseURL: srv.URL + "/v1/", APIKey: "sk-test", Model: "qwen-test", RetryDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	s, err := agent.NewSession(agent.Config{Model: m, Toolkit: tk})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Turn(context.Background(), "how do I run the benchmarks?")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "Use go test -bench . ./memory" || res.Usage != (agent.Usage{InputTokens: 130, OutputTokens: 14}) {
		t.Fatalf("result %+v", res)
	}
	if len(*seen) != 3 {
		t.Fatalf("%d requests, want 3 (one retried 429)", len(*seen))
	}
}

func TestNeedsAModel(t *testing.T) {
	if _, err := openai.New(openai.Config{}); err == nil || !strings.Contains(err.Error(), "--model") {
		t.Fatalf("got %v", err)
	}
}
