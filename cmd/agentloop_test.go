package cmd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/cmd"
	"github.com/acolyte-dev/acolyte/memory"
)

// The scripted model speaks both wire formats from one script: Gemini's
// generateContent / streamGenerateContent (SSE) and OpenAI's
// /v1/chat/completions. A script sees each request, normalised, and says
// what the model answers.

// modelReq is one request as the script sees it, whatever the format.
type modelReq struct {
	N      int    // 1-based
	Body   string // the raw request body
	Tokens int    // memory.EstimateTokens of the body: what the wire carries
	// Results are the tool results of the request's last turn, as JSON text.
	Results []string
	// UserText is the text of the last user message.
	UserText string
	// Forced is true when the request forces a function call.
	Forced bool
	Tools  []string
}

type fakeCall struct {
	Name string
	Args string // raw JSON text as the model sends it, broken if need be
}

// modelReply is what the scripted model answers.
type modelReply struct {
	Text   string
	Calls  []fakeCall
	Finish string // "", "length" or "malformed"
	// Status, when not 0 or 200, fails the request; Wait is the delay the
	// server asks for (Retry-After, RetryInfo).
	Status int
	Wait   time.Duration
	// HeaderOnly says the wait with an HTTP Retry-After header on both
	// providers, not Gemini's RetryInfo.
	HeaderOnly bool
	// Hang holds the response until the client gives up.
	Hang bool
}

func say(s string) modelReply { return modelReply{Text: s} }

func call(name, args string) modelReply {
	return modelReply{Calls: []fakeCall{{Name: name, Args: args}}}
}

func observe(facts ...string) modelReply {
	return call("memory_observe", `{"facts":[`+strings.Join(facts, ",")+`]}`)
}

type fakeModel struct {
	t      *testing.T
	mu     sync.Mutex
	script func(r modelReq) modelReply
	reqs   []modelReq
	srv    *httptest.Server
}

// scripted serves replies in order; a request past the end fails the test.
func scripted(t *testing.T, replies ...modelReply) *fakeModel {
	return scriptedFunc(t, func(r modelReq) modelReply {
		if r.N > len(replies) {
			t.Errorf("unexpected request %d: the script has %d replies", r.N, len(replies))
			return modelReply{Status: http.StatusBadRequest}
		}
		return replies[r.N-1]
	})
}

func scriptedFunc(t *testing.T, script func(r modelReq) modelReply) *fakeModel {
	f := &fakeModel{t: t, script: script}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeModel) requests() []modelReq {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]modelReq(nil), f.reqs...)
}

func (f *fakeModel) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var (
		req    modelReq
		gemini bool
		stream bool
	)
	switch {
	case strings.HasSuffix(r.URL.Path, "/chat/completions"):
		req = parseOpenAI(f.t, body)
	case strings.HasSuffix(r.URL.Path, ":generateContent"), strings.HasSuffix(r.URL.Path, ":streamGenerateContent"):
		gemini, stream = true, strings.HasSuffix(r.URL.Path, ":streamGenerateContent")
		req = parseGemini(f.t, body)
	default:
		http.Error(w, "unexpected "+r.URL.Path, http.StatusNotFound)
		return
	}
	req.Body, req.Tokens = string(body), memory.EstimateTokens(string(body))
	f.mu.Lock()
	req.N = len(f.reqs) + 1
	f.reqs = append(f.reqs, req)
	f.mu.Unlock()
	rep := f.script(req)
	if rep.Hang {
		<-r.Context().Done()
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if rep.Status != 0 && rep.Status != http.StatusOK {
		if gemini {
			details := "[]"
			if rep.Wait > 0 && rep.HeaderOnly {
				w.Header().Set("Retry-After", fmt.Sprintf("%g", rep.Wait.Seconds()))
			} else if rep.Wait > 0 {
				details = fmt.Sprintf(`[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"%gs"}]`, rep.Wait.Seconds())
			}
			w.WriteHeader(rep.Status)
			fmt.Fprintf(w, `{"error":{"code":%d,"message":"scripted failure","status":"RESOURCE_EXHAUSTED","details":%s}}`, rep.Status, details)
			return
		}
		if rep.Wait > 0 {
			w.Header().Set("Retry-After", fmt.Sprintf("%g", rep.Wait.Seconds()))
		}
		w.WriteHeader(rep.Status)
		fmt.Fprint(w, `{"error":{"message":"scripted failure"}}`)
		return
	}
	if gemini {
		writeGemini(w, rep, stream)
		return
	}
	if strings.Contains(req.Body, `"stream":true`) {
		streamOpenAI(w, rep)
		return
	}
	writeOpenAI(w, rep)
}

// streamOpenAI answers as server-sent events: the text in two deltas, each
// call's arguments in two deltas after a first one with its id and name,
// the finish reason, the usage, then [DONE].
func streamOpenAI(w http.ResponseWriter, rep modelReply) {
	var buf bytes.Buffer
	writeOpenAI(&buf, rep)
	var whole struct {
		Choices []struct {
			Message struct {
				Content   *string `json:"content"`
				ToolCalls []struct {
					ID       string `json:"id"`
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
	}
	json.Unmarshal(buf.Bytes(), &whole)
	w.Header().Set("Content-Type", "text/event-stream")
	event := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		w.(http.Flusher).Flush()
	}
	delta := func(d map[string]any) {
		event(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": d}}})
	}
	ch := whole.Choices[0]
	if c := ch.Message.Content; c != nil {
		half := len(*c) / 2
		delta(map[string]any{"role": "assistant", "content": (*c)[:half]})
		delta(map[string]any{"content": (*c)[half:]})
	}
	for i, tc := range ch.Message.ToolCalls {
		half := len(tc.Function.Arguments) / 2
		delta(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": tc.ID, "type": "function", "function": map[string]string{"name": tc.Function.Name, "arguments": ""}}}})
		delta(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]string{"arguments": tc.Function.Arguments[:half]}}}})
		delta(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]string{"arguments": tc.Function.Arguments[half:]}}}})
	}
	event(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": ch.FinishReason}}})
	event(map[string]any{"choices": []any{}, "usage": map[string]int{"prompt_tokens": 100, "completion_tokens": 7}})
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func parseOpenAI(t *testing.T, body []byte) modelReq {
	var wire struct {
		Messages []struct {
			Role    string  `json:"role"`
			Content *string `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Function struct{ Name string } `json:"function"`
		} `json:"tools"`
		ToolChoice json.RawMessage `json:"tool_choice"`
	}
	if err := json.Unmarshal(body, &wire); err != nil {
		t.Errorf("openai request is not JSON: %v", err)
	}
	var req modelReq
	req.Forced = len(wire.ToolChoice) > 0 && string(wire.ToolChoice) != `"auto"` && string(wire.ToolChoice) != `"none"`
	for _, tl := range wire.Tools {
		req.Tools = append(req.Tools, tl.Function.Name)
	}
	// The last turn's tool results are the tool messages after the last
	// assistant message.
	for i := len(wire.Messages) - 1; i >= 0 && wire.Messages[i].Role != "assistant"; i-- {
		m := wire.Messages[i]
		switch {
		case m.Role == "tool" && m.Content != nil:
			req.Results = append([]string{*m.Content}, req.Results...)
		case m.Role == "user" && m.Content != nil && req.UserText == "":
			req.UserText = *m.Content
		}
	}
	return req
}

func parseGemini(t *testing.T, body []byte) modelReq {
	var wire struct {
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				Text             string `json:"text"`
				FunctionResponse *struct {
					Response json.RawMessage `json:"response"`
				} `json:"functionResponse"`
			} `json:"parts"`
		} `json:"contents"`
		Tools []struct {
			FunctionDeclarations []struct{ Name string } `json:"functionDeclarations"`
		} `json:"tools"`
		ToolConfig *struct {
			FunctionCallingConfig struct{ Mode string } `json:"functionCallingConfig"`
		} `json:"toolConfig"`
	}
	if err := json.Unmarshal(body, &wire); err != nil {
		t.Errorf("gemini request is not JSON: %v", err)
	}
	var req modelReq
	req.Forced = wire.ToolConfig != nil && wire.ToolConfig.FunctionCallingConfig.Mode == "ANY"
	for _, tl := range wire.Tools {
		for _, d := range tl.FunctionDeclarations {
			req.Tools = append(req.Tools, d.Name)
		}
	}
	if n := len(wire.Contents); n > 0 && wire.Contents[n-1].Role == "user" {
		for _, p := range wire.Contents[n-1].Parts {
			if p.FunctionResponse != nil {
				req.Results = append(req.Results, string(p.FunctionResponse.Response))
			}
			req.UserText += p.Text
		}
	}
	return req
}

func writeOpenAI(w io.Writer, rep modelReply) {
	msg := map[string]any{"role": "assistant", "content": nil}
	if rep.Text != "" {
		msg["content"] = rep.Text
	}
	var calls []any
	for i, c := range rep.Calls {
		calls = append(calls, map[string]any{"id": fmt.Sprintf("call_%d", i), "type": "function",
			"function": map[string]string{"name": c.Name, "arguments": c.Args}})
	}
	finish := "stop"
	switch {
	case rep.Finish == "length":
		finish = "length"
	case rep.Finish == "malformed":
		// OpenAI has no such stop: a malformed call arrives as broken
		// argument text.
		calls = []any{map[string]any{"id": "call_x", "type": "function",
			"function": map[string]string{"name": "read_file", "arguments": `{"path": "main.go`}}}
		finish = "tool_calls"
	case len(calls) > 0:
		finish = "tool_calls"
	}
	if calls != nil {
		msg["tool_calls"] = calls
	}
	json.NewEncoder(w).Encode(map[string]any{
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   map[string]int{"prompt_tokens": 100, "completion_tokens": 7},
	})
}

func writeGemini(w http.ResponseWriter, rep modelReply, stream bool) {
	var parts []any
	if rep.Text != "" {
		parts = append(parts, map[string]any{"text": rep.Text})
	}
	for _, c := range rep.Calls {
		parts = append(parts, map[string]any{"functionCall": map[string]any{"name": c.Name, "args": json.RawMessage(c.Args)}})
	}
	cand := map[string]any{"finishReason": "STOP"}
	switch rep.Finish {
	case "length":
		cand["finishReason"] = "MAX_TOKENS"
	case "malformed":
		cand["finishReason"] = "MALFORMED_FUNCTION_CALL"
		cand["finishMessage"] = "Malformed function call: read_file(path=main.go"
		parts = nil
	}
	if parts != nil {
		cand["content"] = map[string]any{"role": "model", "parts": parts}
	}
	b, _ := json.Marshal(map[string]any{
		"candidates":    []any{cand},
		"usageMetadata": map[string]int{"promptTokenCount": 100, "candidatesTokenCount": 7, "totalTokenCount": 107},
	})
	if stream {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\r\n\r\n", b)
		return
	}
	w.Write(b)
}

// providers are the two wire formats, as flags for acolyte.
var providers = []struct {
	name  string
	flags func(url string) []string
}{
	{"gemini", func(url string) []string { return []string{"--provider", "gemini", "--base-url", url} }},
	{"openai", func(url string) []string {
		return []string{"--provider", "openai", "--model", "test-model", "--base-url", url + "/v1"}
	}},
}

// agentRepo makes a git repository and an acolyte home for one test that
// runs acolyte in its own process (cmd.Run), which reads os.Getenv.
func agentRepo(t *testing.T) string {
	t.Helper()
	repo, env := agentRepoEnv(t)
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	return repo
}

// agentRepoEnv makes a git repository and an acolyte home for one test,
// and returns the variables an acolyte process there runs with, so that a
// test that starts acolyte as a subprocess needs no t.Setenv and can run
// in parallel.
func agentRepoEnv(t *testing.T) (string, []string) {
	t.Helper()
	repo := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	return repo, []string{"ACOLYTE_HOME=" + t.TempDir(), "GEMINI_API_KEY=test-key", "GOOGLE_API_KEY=", "OPENAI_API_KEY=", "ACOLYTE_SESSION="}
}

func runAgent(t *testing.T, f *fakeModel, provider int, repo string, args ...string) (int, string, string) {
	t.Helper()
	full := append([]string{"acolyte", args[0]}, providers[provider].flags(f.srv.URL)...)
	full = append(full, "--repo", repo)
	full = append(full, args[1:]...)
	var out, errOut bytes.Buffer
	code := cmd.Run(context.Background(), full, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

func eachProvider(t *testing.T, test func(t *testing.T, p int)) {
	for i, p := range providers {
		t.Run(p.name, func(t *testing.T) { test(t, i) })
	}
}

func TestRunBigFileKeepsEveryLaterRequestUnderBudget(t *testing.T) {
	const budget = 20000
	eachProvider(t, func(t *testing.T, p int) {
		repo := agentRepo(t)
		big := strings.Repeat("0123456789abcdef\"é", 3<<20/19) // one 3 MB line, quotes and UTF-8 included
		if err := os.WriteFile(filepath.Join(repo, "big.txt"), []byte(big), 0o644); err != nil {
			t.Fatal(err)
		}
		for i := range 4 {
			os.WriteFile(filepath.Join(repo, fmt.Sprintf("f%d.txt", i)), bytes.Repeat([]byte(fmt.Sprintf("line %d of a medium file\n", i)), 1200), 0o644)
		}
		f := scripted(t,
			call("read_file", `{"path":"big.txt"}`),
			call("read_file", `{"path":"f0.txt"}`),
			call("read_file", `{"path":"f1.txt"}`),
			call("read_file", `{"path":"f2.txt"}`),
			call("read_file", `{"path":"f3.txt"}`),
			call("read_file", `{"path":"big.txt"}`),
			say("Read them all."),
			observe(),
		)
		code, stdout, stderr := runAgent(t, f, p, repo, "run", "--json", "--context-budget", fmt.Sprint(budget), "read the files")
		if code != cmd.ExitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		reqs := f.requests()
		for _, r := range reqs[1:] {
			t.Logf("request %d: %d bytes, ~%d tokens at 3 bytes a token", r.N, len(r.Body), len(r.Body)/3)
			if len(r.Body)/3 > budget {
				t.Errorf("request %d carries ~%d tokens, over the budget of %d", r.N, len(r.Body)/3, budget)
			}
		}
		// The big result arrived cut to fit, saying where to read on, and
		// was compacted later, with the compaction said in --json and the
		// stub telling how to get it back.
		if first := reqs[1].Results; len(first) != 1 || !strings.Contains(first[0], `"next_offset":`) || !strings.Contains(first[0], "to read on") {
			t.Errorf("the 3 MB read reached the model as %.300s", strings.Join(first, ""))
		}
		if !strings.Contains(stdout, `"type":"compact"`) || !strings.Contains(stdout, `"tokens_before"`) {
			t.Errorf("no compact event in --json output")
		}
		if !strings.Contains(reqs[len(reqs)-2].Body, "Call read_file again with the same arguments") {
			t.Errorf("no compacted stub in the late requests")
		}
	})
}

func TestRunTruncatedReplyIsNotASuccess(t *testing.T) {
	eachProvider(t, func(t *testing.T, p int) {
		cut := modelReply{Text: "The answer is", Finish: "length"}
		t.Run("continued", func(t *testing.T) {
			repo := agentRepo(t)
			f := scripted(t, cut, say(" forty-two."), observe())
			code, stdout, stderr := runAgent(t, f, p, repo, "run", "--json", "what is it")
			if code != cmd.ExitOK || !strings.Contains(stdout, `"text":"The answer is forty-two."`) {
				t.Fatalf("exit %d: %s\n%s", code, stdout, stderr)
			}
			if !strings.Contains(f.requests()[1].UserText, "cut off by the output length limit") {
				t.Fatalf("the model was not asked to continue: %q", f.requests()[1].UserText)
			}
		})
		t.Run("gives up", func(t *testing.T) {
			repo := agentRepo(t)
			f := scripted(t, cut, cut, cut, cut, observe())
			code, stdout, stderr := runAgent(t, f, p, repo, "run", "what is it")
			if code != cmd.ExitFail || !strings.Contains(stderr, "cut off by the model's output limit") {
				t.Fatalf("exit %d, stderr %s", code, stderr)
			}
			if strings.Contains(stdout, "final") {
				t.Fatalf("stdout %q", stdout)
			}
		})
	})
}

func TestRunMalformedCallIsReportedAndTheLoopGoesOn(t *testing.T) {
	eachProvider(t, func(t *testing.T, p int) {
		repo := agentRepo(t)
		f := scripted(t, modelReply{Finish: "malformed"}, say("Done after all."), observe())
		code, stdout, stderr := runAgent(t, f, p, repo, "run", "--json", "read main.go")
		if code != cmd.ExitOK || !strings.Contains(stdout, "Done after all.") {
			t.Fatalf("exit %d: %s\n%s", code, stdout, stderr)
		}
		second := f.requests()[1]
		told := second.UserText + strings.Join(second.Results, "")
		if !strings.Contains(told, "could not be parsed") && !strings.Contains(told, "not valid JSON") {
			t.Fatalf("the model was not told its call was malformed: %s", second.Body)
		}
	})
}

// A model that sends nothing but malformed calls, step after step, is
// stopped, and told why, rather than left to spend the steps.
func TestRunStopsMalformedCallsInARow(t *testing.T) {
	eachProvider(t, func(t *testing.T, p int) {
		repo := agentRepo(t)
		bad := modelReply{Finish: "malformed"}
		f := scripted(t, bad, bad, bad, say("never reached"), observe())
		code, stdout, stderr := runAgent(t, f, p, repo, "run", "--max-steps", "20", "read main.go")
		// Gemini says a call was malformed (its stop reason) and sends no
		// call; OpenAI sends the call with broken arguments, which fails
		// like any call: the same one three times is a repeated failure.
		stopped := strings.Contains(stderr, "3 malformed function calls in a row") || strings.Contains(stderr, "read_file failed 3 times in a row")
		if code != cmd.ExitFail || !stopped || strings.Contains(stdout, "never reached") {
			t.Fatalf("exit %d: %s\n%s", code, stdout, stderr)
		}
	})
}

func TestRunStopsARepeatedFailingCall(t *testing.T) {
	eachProvider(t, func(t *testing.T, p int) {
		repo := agentRepo(t)
		again := call("read_file", `{"path":"missing.txt"}`)
		f := scripted(t, again, again, again, observe())
		code, _, stderr := runAgent(t, f, p, repo, "run", "--max-steps", "20", "read it")
		if code != cmd.ExitFail || !strings.Contains(stderr, "read_file failed 3 times in a row") {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if n := len(f.requests()); n != 4 {
			t.Fatalf("%d requests, want 3 steps and distill", n)
		}
	})
}

func TestRunStepLimitAndEmptyAnswerFailInTextMode(t *testing.T) {
	eachProvider(t, func(t *testing.T, p int) {
		repo := agentRepo(t)
		f := scripted(t, call("list_files", `{}`), call("list_files", `{"path":"."}`), observe())
		code, _, stderr := runAgent(t, f, p, repo, "run", "--max-steps", "2", "loop")
		if code != cmd.ExitFail || !strings.Contains(stderr, "stopped after 2 steps") {
			t.Fatalf("step limit: exit %d: %s", code, stderr)
		}
		f = scripted(t, say(""), observe())
		code, _, stderr = runAgent(t, f, p, repo, "run", "answer")
		if code != cmd.ExitFail || !strings.Contains(stderr, "empty answer") {
			t.Fatalf("empty answer: exit %d: %s", code, stderr)
		}
	})
}

func TestRunRefusedFactDoesNotCostTheOthers(t *testing.T) {
	const secret = "sk_live_4eC39HqLyjWDarjtT1zdp7dc"
	eachProvider(t, func(t *testing.T, p int) {
		repo := agentRepo(t)
		f := scripted(t,
			say("Done."),
			observe(
				`{"content":"The deploy key is `+secret+`.","scope":"project"}`,
				`{"content":"Release builds run make dist.","scope":"project","topic":"build"}`,
				`{"content":"This session is about the release.","scope":"session"}`,
				`{"content":42,"scope":"project"}`,
			),
		)
		code, _, stderr := runAgent(t, f, p, repo, "run", "release it")
		if code != cmd.ExitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if strings.Contains(stderr, secret) {
			t.Fatal("the secret was echoed on stderr")
		}
		if !strings.Contains(stderr, "not stored") || !strings.Contains(stderr, "remembered 2 observation(s)") {
			t.Fatalf("stderr: %s", stderr)
		}
		if !f.requests()[1].Forced {
			t.Errorf("distill did not force the memory_observe call: %s", f.requests()[1].Body)
		}
		// The session id is printed, and list shows the session's facts.
		_, id, ok := strings.Cut(stderr, "session ")
		id, _, _ = strings.Cut(id, " ")
		if !ok || !strings.HasPrefix(id, "session-") {
			t.Fatalf("no session id on stderr: %s", stderr)
		}
		code, out, _ := acolyte(t, "list", "--repo", repo, "--scope", "session")
		if code != cmd.ExitOK || !strings.Contains(out, "about the release") {
			t.Fatalf("list --scope session: %s", out)
		}
		code, out, _ = acolyte(t, "list", "--repo", repo, "--session", id, "--scope", "session")
		if code != cmd.ExitOK || !strings.Contains(out, "about the release") {
			t.Fatalf("list --session %s: %s", id, out)
		}
		code, out, _ = acolyte(t, "list", "--repo", repo)
		if code != cmd.ExitOK || !strings.Contains(out, "make dist") || strings.Contains(out, secret) {
			t.Fatalf("list: %s", out)
		}
	})
}

func TestRunDistillFailureIsAWarning(t *testing.T) {
	eachProvider(t, func(t *testing.T, p int) {
		repo := agentRepo(t)
		f := scripted(t, say("Done."), modelReply{Status: http.StatusBadRequest})
		code, stdout, stderr := runAgent(t, f, p, repo, "run", "--json", "do it")
		if code != cmd.ExitOK || !strings.Contains(stdout, `"type":"warning"`) {
			t.Fatalf("exit %d: %s\n%s", code, stdout, stderr)
		}
		f = scripted(t, say("Done."), say("I think nothing is worth keeping."))
		code, _, stderr = runAgent(t, f, p, repo, "run", "do it")
		if code != cmd.ExitOK || !strings.Contains(stderr, "without calling memory_observe") {
			t.Fatalf("prose distill: exit %d: %s", code, stderr)
		}
	})
}

func TestRunHonoursTheServersRetryDelayAndSaysSo(t *testing.T) {
	for _, headerOnly := range []bool{false, true} {
		t.Run(fmt.Sprintf("Retry-After header only %v", headerOnly), func(t *testing.T) {
			eachProvider(t, func(t *testing.T, p int) {
				repo := agentRepo(t)
				f := scripted(t, modelReply{Status: http.StatusTooManyRequests, Wait: 1300 * time.Millisecond, HeaderOnly: headerOnly}, say("Done."), observe())
				start := time.Now()
				code, _, stderr := runAgent(t, f, p, repo, "run", "do it")
				if code != cmd.ExitOK {
					t.Fatalf("exit %d: %s", code, stderr)
				}
				if !strings.Contains(stderr, "retrying in 1.3s as the server asked") {
					t.Fatalf("stderr: %s", stderr)
				}
				if waited := time.Since(start); waited < 1300*time.Millisecond {
					t.Fatalf("retried after %s, before the server's delay", waited)
				}
				f = scripted(t, modelReply{Status: http.StatusTooManyRequests, Wait: 100 * time.Millisecond, HeaderOnly: headerOnly}, say("Done."), observe())
				code, stdout, _ := runAgent(t, f, p, repo, "run", "--json", "do it")
				if code != cmd.ExitOK || !strings.Contains(stdout, `"type":"retry"`) || !strings.Contains(stdout, `"from_server":true`) {
					t.Fatalf("no retry event: exit %d: %s", code, stdout)
				}
			})
		})
	}
}

func TestRunTimeoutBoundsOneRequest(t *testing.T) {
	eachProvider(t, func(t *testing.T, p int) {
		repo := agentRepo(t)
		f := scripted(t, modelReply{Hang: true}, observe())
		code, _, stderr := runAgent(t, f, p, repo, "run", "--timeout", "200ms", "do it")
		// A model that does not answer in time is like a network failure:
		// the command could not run.
		if code != cmd.ExitUsage || !strings.Contains(stderr, "within 200ms") || !strings.Contains(stderr, "raise --timeout") {
			t.Fatalf("exit %d: %s", code, stderr)
		}
	})
}

// TestRunLongSessionStaysUnderBudget drives 60 steps of file reads and
// logs each request's size: the table in the commit and report comes from
// `go test -v -run TestRunLongSessionStaysUnderBudget ./cmd/`.
func TestRunLongSessionStaysUnderBudget(t *testing.T) {
	const steps = 60
	for _, budget := range []int{30000, agentDefaultBudget} {
		t.Run(fmt.Sprint(budget), func(t *testing.T) { longSession(t, steps, budget) })
	}
}

func longSession(t *testing.T, steps, budget int) {
	eachProvider(t, func(t *testing.T, p int) {
		repo := agentRepo(t)
		for i := range steps {
			line := fmt.Sprintf("func f%d() { return \"value %d\" } // ünïcode\n", i, i)
			os.WriteFile(filepath.Join(repo, fmt.Sprintf("f%02d.go", i)), bytes.Repeat([]byte(line), 400+i*20), 0o644)
		}
		f := scriptedFunc(t, func(r modelReq) modelReply {
			switch {
			case r.Forced:
				return observe()
			case r.N < steps:
				return modelReply{Text: fmt.Sprintf("Step %d.", r.N), Calls: []fakeCall{{Name: "read_file", Args: fmt.Sprintf(`{"path":"f%02d.go"}`, r.N)}}}
			default:
				return say("Read all sixty files.")
			}
		})
		code, stdout, stderr := runAgent(t, f, p, repo, "run", "--json", "--max-steps", "80", "--context-budget", fmt.Sprint(budget), "read every file")
		if code != cmd.ExitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		reqs := f.requests()
		if len(reqs) != steps+1 {
			t.Fatalf("%d requests", len(reqs))
		}
		var table strings.Builder
		fmt.Fprintf(&table, "\n%s, budget %d tokens\nstep | request bytes | ~tokens (3 B/token) | reused prefix (prompt order)\n", providers[p].name, budget)
		sent, reusedSum, cut, peak := 0, 0, 0, 0
		for i, r := range reqs[:steps] {
			reused := 0
			if i > 0 {
				prev := promptOrder(t, p, reqs[i-1].Body)
				reused = commonPrefix(prev, promptOrder(t, p, r.Body))
				sent, reusedSum = sent+len(r.Body), reusedSum+reused
				if reused < len(prev)*9/10 {
					cut++
				}
			}
			peak = max(peak, len(r.Body))
			fmt.Fprintf(&table, "%4d | %13d | %6d | %8d\n", r.N, len(r.Body), len(r.Body)/3, reused)
			if len(r.Body)/3 > budget {
				t.Errorf("step %d: ~%d tokens at 3 bytes a token, over the budget %d", r.N, len(r.Body)/3, budget)
			}
		}
		fmt.Fprintf(&table, "requests 2-%d: peak %d bytes, %d bytes sent, %d (%.0f%%) a reusable prefix; %d requests reused under 90%% of the one before; %d compactions\n",
			steps, peak, sent, reusedSum, 100*float64(reusedSum)/float64(sent), cut, strings.Count(stdout, `"type":"compact"`))
		t.Log(table.String())
	})
}

// syncBuffer is a bytes.Buffer safe to read while acolyte writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func chat(t *testing.T, f *fakeModel, provider int, repo string, stdin io.Reader, stdout, stderr io.Writer, args ...string) int {
	t.Helper()
	full := append([]string{"acolyte", "chat"}, providers[provider].flags(f.srv.URL)...)
	full = append(append(full, "--repo", repo), args...)
	return cmd.Run(context.Background(), full, stdin, stdout, stderr)
}

func TestChatModelErrorEndsTheTurnNotTheChat(t *testing.T) {
	eachProvider(t, func(t *testing.T, p int) {
		repo := agentRepo(t)
		f := scripted(t, modelReply{Status: http.StatusBadRequest}, say("Second answer."), observe())
		var out, errOut bytes.Buffer
		code := chat(t, f, p, repo, strings.NewReader("first\nsecond\n/exit\n"), &out, &errOut)
		if code != cmd.ExitOK || !strings.Contains(out.String(), "Second answer.") || !strings.Contains(errOut.String(), "400") {
			t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out.String(), errOut.String())
		}
		if reqs := f.requests(); len(reqs) != 3 || !reqs[2].Forced {
			t.Fatalf("distill did not run after the chat: %d requests", len(reqs))
		}
	})
}

func TestChatKeepsTextToolsAndPromptsOnLinesOfTheirOwn(t *testing.T) {
	eachProvider(t, func(t *testing.T, p int) {
		repo := agentRepo(t)
		f := scripted(t,
			modelReply{Text: "Let me look.", Calls: []fakeCall{{Name: "list_files", Args: `{}`}}},
			modelReply{Text: "I will run it.", Calls: []fakeCall{{Name: "load_tools", Args: `{"names":["run_shell"]}`}}},
			call("run_shell", `{"command":"echo hi"}`),
			say("Done."),
			observe())
		var both syncBuffer
		code := chat(t, f, p, repo, strings.NewReader("go\ny\n/exit\n"), &both, &both)
		got := both.String()
		if code != cmd.ExitOK {
			t.Fatalf("exit %d: %s", code, got)
		}
		for _, want := range []string{"Let me look.\n→ list_files", "I will run it.\n→ load_tools", "  │ hi\n  exit 0\n", "Done.\n"} {
			if !strings.Contains(got, want) {
				t.Errorf("output lacks %q:\n%s", want, got)
			}
		}
		// Both providers stream: OpenAI over server-sent events, the
		// fake splitting text and call arguments across events.
		if providers[p].name == "openai" && !strings.Contains(f.requests()[0].Body, `"stream":true`) {
			t.Errorf("the OpenAI request did not ask to stream: %s", f.requests()[0].Body)
		}
	})
}

func TestChatCtrlCStopsTheTurnAndAtThePromptLeaves(t *testing.T) {
	eachProvider(t, func(t *testing.T, p int) {
		repo := agentRepo(t)
		interrupt := func() {
			if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
				t.Error(err)
			}
		}
		f := scriptedFunc(t, func(r modelReq) modelReply {
			switch {
			case r.Forced:
				return observe(`{"content":"The chat was interrupted politely.","scope":"session"}`)
			case r.N == 1:
				go func() { time.Sleep(50 * time.Millisecond); interrupt() }()
				return modelReply{Hang: true}
			default:
				return say("Second reply.")
			}
		})
		stdinR, stdinW := io.Pipe()
		defer stdinW.Close()
		var out, errOut syncBuffer
		codec := make(chan int, 1)
		go func() { codec <- chat(t, f, p, repo, stdinR, &out, &errOut) }()
		io.WriteString(stdinW, "first\n")
		waitFor(t, &errOut, "stopped; memories and files already written are kept\n> ")
		io.WriteString(stdinW, "second\n")
		waitFor(t, &out, "Second reply.")
		waitFor(t, &errOut, "kept\n> ", "> ") // the prompt after the second reply
		interrupt()                           // at the idle prompt: leave
		var code int
		select {
		case code = <-codec:
		case <-time.After(10 * time.Second):
			t.Fatal("Ctrl-C at the prompt did not end the chat")
		}
		if code != cmd.ExitOK {
			t.Fatalf("exit %d: %s", code, errOut.String())
		}
		if !strings.Contains(errOut.String(), "stopping this reply") {
			t.Errorf("stderr: %s", errOut.String())
		}
		reqs := f.requests()
		if len(reqs) != 3 || !reqs[2].Forced {
			t.Fatalf("distill did not run on the way out: %d requests", len(reqs))
		}
	})
}

// waitFor waits until b holds want after the text after (if given).
func waitFor(t *testing.T, b *syncBuffer, want string, after ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		s := b.String()
		if len(after) > 0 {
			i := strings.Index(s, want)
			if i >= 0 && strings.Contains(s[i+len(want):], after[0]) {
				return
			}
		} else if strings.Contains(s, want) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("waited for %q %v in:\n%s", want, after, b.String())
}

func TestRunSessionResumesAndKeepsOneCopy(t *testing.T) {
	repo := agentRepo(t)
	fact := `{"content":"We are migrating the billing tables.","scope":"session"}`
	for i := range 2 {
		f := scripted(t, say("Done."), observe(fact))
		code, stdout, stderr := runAgent(t, f, 1, repo, "run", "--json", "--session", "session-billing", "go on")
		if code != cmd.ExitOK || !strings.Contains(stdout, `{"type":"session","step":0,"session":"session-billing"}`) {
			t.Fatalf("run %d: exit %d: %s\n%s", i, code, stdout, stderr)
		}
	}
	code, out, _ := acolyte(t, "list", "--repo", repo, "--session", "session-billing", "--scope", "session", "--json")
	if code != cmd.ExitOK || strings.Count(out, "billing tables") != 1 {
		t.Fatalf("list: %s", out)
	}
}

func TestRunContextBudgetFromConfig(t *testing.T) {
	repo := agentRepo(t)
	home := os.Getenv("ACOLYTE_HOME")
	os.MkdirAll(home, 0o755)
	os.WriteFile(filepath.Join(home, "config.json"), []byte(`{"context-budget": "4000"}`), 0o644)
	os.WriteFile(filepath.Join(repo, "a.txt"), bytes.Repeat([]byte("some text in a file\n"), 500), 0o644)
	f := scripted(t, call("read_file", `{"path":"a.txt"}`), call("read_file", `{"path":"a.txt"}`), say("Done."), observe())
	code, stdout, stderr := runAgent(t, f, 0, repo, "run", "--json", "read it twice")
	if code != cmd.ExitOK || !strings.Contains(stdout, `"budget":4000`) {
		t.Fatalf("exit %d: %s\n%s", code, stdout, stderr)
	}
}

func TestRunInterruptedStillDistillsAndFails(t *testing.T) {
	eachProvider(t, func(t *testing.T, p int) {
		repo := agentRepo(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		f := scriptedFunc(t, func(r modelReq) modelReply {
			if r.Forced {
				return observe(`{"content":"The interrupted task was about the parser.","scope":"session"}`)
			}
			cancel() // Ctrl-C while the model thinks
			return modelReply{Hang: true}
		})
		full := append(append([]string{"acolyte", "run"}, providers[p].flags(f.srv.URL)...), "--repo", repo, "look at the parser")
		var out, errOut bytes.Buffer
		code := cmd.Run(ctx, full, strings.NewReader(""), &out, &errOut)
		if code != cmd.ExitUsage || !strings.Contains(errOut.String(), "interrupted") {
			t.Fatalf("exit %d: %s", code, errOut.String())
		}
		if reqs := f.requests(); len(reqs) != 2 || !reqs[1].Forced || !strings.Contains(errOut.String(), "remembered 1 observation") {
			t.Fatalf("distill after the interrupt: %d requests; %s", len(reqs), errOut.String())
		}
	})
}

// fileReader is a scripted model that reads files the way a careful model
// does: it asks for each file at once, reads on from next_line or
// next_offset, and asks for a read again only when told to (a stub or a
// cut without a continuation). It records what arrived of each file.
type fileReader struct {
	t     *testing.T
	mu    sync.Mutex
	last  []fakeCall        // the calls of the previous reply, in order
	asked map[string]int    // how often each read (path and arguments) was asked
	got   map[string]string // what arrived of each file, in order
	at    map[string]int64  // where each file's next piece must start
}

func newFileReader(t *testing.T) *fileReader {
	return &fileReader{t: t, asked: map[string]int{}, got: map[string]string{}, at: map[string]int64{}}
}

func (fr *fileReader) read(path string, extra string) fakeCall {
	args := fmt.Sprintf(`{"path":%q%s}`, path, extra)
	fr.asked[args]++
	return fakeCall{Name: "read_file", Args: args}
}

// script answers the first request with reads of paths, then reads on.
func (fr *fileReader) script(paths ...string) func(r modelReq) modelReply {
	return func(r modelReq) modelReply {
		fr.mu.Lock()
		defer fr.mu.Unlock()
		if r.Forced {
			return observe()
		}
		if r.N == 1 {
			for _, p := range paths {
				fr.last = append(fr.last, fr.read(p, ""))
			}
			return modelReply{Calls: fr.last}
		}
		if len(r.Results) != len(fr.last) {
			fr.t.Errorf("request %d: %d results for %d calls", r.N, len(r.Results), len(fr.last))
			return say("Confused.")
		}
		var next []fakeCall
		for i, raw := range r.Results {
			var res struct {
				Path       string  `json:"path"`
				Content    *string `json:"content"`
				StartLine  int     `json:"start_line"`
				NextLine   int     `json:"next_line"`
				NextOffset int64   `json:"next_offset"`
				Offset     int64   `json:"offset"`
			}
			if err := json.Unmarshal([]byte(raw), &res); err != nil || res.Content == nil {
				// A stub or a cut result without content: all a model
				// can do is ask again.
				next = append(next, fakeCall{Name: "read_file", Args: fr.last[i].Args})
				fr.asked[fr.last[i].Args]++
				continue
			}
			if res.Offset != fr.at[res.Path] {
				fr.t.Errorf("%s: a piece starts at byte %d, the last ended at %d", res.Path, res.Offset, fr.at[res.Path])
			}
			fr.got[res.Path] += *res.Content
			fr.at[res.Path] = res.Offset + int64(len(*res.Content))
			switch {
			case res.NextLine > 0:
				next = append(next, fr.read(res.Path, fmt.Sprintf(`,"start_line":%d`, res.NextLine)))
			case res.NextOffset > 0:
				next = append(next, fr.read(res.Path, fmt.Sprintf(`,"offset":%d`, res.NextOffset)))
			}
		}
		fr.last = next
		if len(next) == 0 {
			return say("Read every file.")
		}
		return modelReply{Calls: next}
	}
}

// check fails the test unless each file arrived whole and exactly once,
// and no read was asked twice.
func (fr *fileReader) check(t *testing.T, repo string, paths ...string) {
	t.Helper()
	fr.mu.Lock()
	defer fr.mu.Unlock()
	for args, n := range fr.asked {
		if n > 1 {
			t.Errorf("read %s asked %d times", args, n)
		}
	}
	for _, p := range paths {
		want, _ := os.ReadFile(filepath.Join(repo, p))
		if got := fr.got[p]; got != string(want) {
			t.Errorf("%s: %d of %d bytes arrived (whole and in order: %v)", p, len(got), len(want), strings.HasPrefix(string(want), got))
		}
	}
}

// TestRunBatchOfReadsCompletesWithoutRepeating reads a batch of files in
// one step whose results alone exceed the budget: they are cut to a head
// that says where to read on, never stubbed, so the model reads on instead
// of asking again.
func TestRunBatchOfReadsCompletesWithoutRepeating(t *testing.T) {
	for _, tc := range []struct {
		files, budget int
	}{{14, agentDefaultBudget}, {4, 20000}} {
		t.Run(fmt.Sprintf("%d reads, budget %d", tc.files, tc.budget), func(t *testing.T) {
			eachProvider(t, func(t *testing.T, p int) {
				repo := agentRepo(t)
				var paths []string
				for i := range tc.files {
					name := fmt.Sprintf("src/f%02d.go", i)
					os.MkdirAll(filepath.Join(repo, "src"), 0o755)
					line := fmt.Sprintf("func f%d() string { return \"a line of file %d\" }\n", i, i)
					os.WriteFile(filepath.Join(repo, name), bytes.Repeat([]byte(line), 29<<10/len(line)), 0o644)
					paths = append(paths, name)
				}
				fr := newFileReader(t)
				f := scriptedFunc(t, fr.script(paths...))
				code, stdout, stderr := runAgent(t, f, p, repo, "run", "--json", "--max-steps", "40", "--context-budget", fmt.Sprint(tc.budget), "read the sources")
				if code != cmd.ExitOK {
					t.Fatalf("exit %d: %s\n%.2000s", code, stderr, stdout)
				}
				fr.check(t, repo, paths...)
				for _, r := range f.requests() {
					if n := len(r.Body) / 3; n > tc.budget {
						t.Errorf("request %d: %d bytes, about %d tokens at 3 bytes a token, over the budget %d", r.N, len(r.Body), n, tc.budget)
					}
				}
				t.Logf("%d requests", len(f.requests()))
			})
		})
	}
}

const agentDefaultBudget = 100000

// TestRunReadsA3MBLineWholeInParts reads a 3 MB one-line file by offset
// until its end: every byte arrives exactly once, none is skipped by a cap.
func TestRunReadsA3MBLineWholeInParts(t *testing.T) {
	eachProvider(t, func(t *testing.T, p int) {
		repo := agentRepo(t)
		big := strings.Repeat("0123456789abcdef\"é", 3<<20/19) // quotes and UTF-8 in one line
		if err := os.WriteFile(filepath.Join(repo, "big.txt"), []byte(big), 0o644); err != nil {
			t.Fatal(err)
		}
		fr := newFileReader(t)
		f := scriptedFunc(t, fr.script("big.txt"))
		code, _, stderr := runAgent(t, f, p, repo, "run", "--json", "--max-steps", "80", "read big.txt")
		if code != cmd.ExitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		fr.check(t, repo, "big.txt")
		// Each part is read_file's whole 64 KiB, not less: the cap is
		// above what the tool promises.
		if parts := len(f.requests()) - 2; parts > len(big)/(64<<10)+1 {
			t.Errorf("%d parts for %d bytes: some parts were cut below 64 KiB", parts, len(big))
		}
	})
}

// TestRunHangingDistillEndsWithinTheTimeout: a model that never answers the
// distill request costs --timeout, not a hang, and the task keeps its exit
// code; the distill step is said on stderr and in --json.
func TestRunHangingDistillEndsWithinTheTimeout(t *testing.T) {
	eachProvider(t, func(t *testing.T, p int) {
		repo := agentRepo(t)
		f := scripted(t, say("Done."), modelReply{Hang: true})
		start := time.Now()
		code, _, stderr := runAgent(t, f, p, repo, "run", "--timeout", "1s", "do it")
		if took := time.Since(start); took > 3*time.Second {
			t.Errorf("run took %s with --timeout 1s", took)
		}
		if code != cmd.ExitOK || !strings.Contains(stderr, "distilling what this session learnt") || !strings.Contains(stderr, "no answer from") {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		f = scripted(t, say("Done."), modelReply{Hang: true})
		code, stdout, _ := runAgent(t, f, p, repo, "run", "--json", "--timeout", "1s", "do it")
		if code != cmd.ExitOK || !strings.Contains(stdout, `{"type":"distilling","step":0}`) || !strings.Contains(stdout, `"type":"warning"`) {
			t.Fatalf("exit %d: %s", code, stdout)
		}
	})
}

// TestRunCtrlCStopsDistillAtOnce: Ctrl-C while distill waits for the model
// ends it at once, and the finished task still exits 0.
func TestRunCtrlCStopsDistillAtOnce(t *testing.T) {
	eachProvider(t, func(t *testing.T, p int) {
		repo := agentRepo(t)
		f := scriptedFunc(t, func(r modelReq) modelReply {
			if r.Forced {
				go func() { time.Sleep(100 * time.Millisecond); syscall.Kill(os.Getpid(), syscall.SIGINT) }()
				return modelReply{Hang: true}
			}
			return say("Done.")
		})
		start := time.Now()
		code, _, stderr := runAgent(t, f, p, repo, "run", "--timeout", "30s", "do it")
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("Ctrl-C stopped distill after %s", took)
		}
		if code != cmd.ExitOK || !strings.Contains(stderr, "distill stopped") {
			t.Fatalf("exit %d: %s", code, stderr)
		}
	})
}

// TestHelperAcolyteProcess is acolyte itself, as main runs it, when the
// test binary is started by a test that needs a process of its own to
// signal. Run alone, it does nothing.
func TestHelperAcolyteProcess(t *testing.T) {
	raw := os.Getenv("ACOLYTE_TEST_ARGS")
	if raw == "" {
		t.Skip("run by TestRunSIGTERMStopsTheShellsProcessGroup")
	}
	var args []string
	json.Unmarshal([]byte(raw), &args)
	ctx, stop := signal.NotifyContext(context.Background(), cmd.StopSignals...)
	code := cmd.Run(ctx, args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// TestRunSIGTERMStopsTheShellsProcessGroup sends each stop signal to acolyte
// while run_shell runs a command that starts children, one of which
// ignores SIGTERM: when acolyte has exited, none of them is left.
//
// Each case is an acolyte process of its own, which spends most of its
// time waiting for its children to stop, so the cases run in parallel.
func TestRunSIGTERMStopsTheShellsProcessGroup(t *testing.T) {
	t.Parallel()
	for _, command := range []string{"run", "chat"} {
		for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT} {
			if command == "chat" && sig == syscall.SIGINT {
				continue // Ctrl-C in chat stops the reply, not the chat: TestChatInATerminal
			}
			t.Run(command+" "+sig.String(), func(t *testing.T) {
				t.Parallel()
				stopSignal(t, command, sig)
			})
		}
	}
}

func stopSignal(t *testing.T, command string, sig syscall.Signal) {
	for p := range providers {
		t.Run(providers[p].name, func(t *testing.T) {
			t.Parallel()
			stopSignalOn(t, command, sig, p)
		})
	}
}

func stopSignalOn(t *testing.T, command string, sig syscall.Signal, p int) {
	repo, env := agentRepoEnv(t)
	pids := filepath.Join(t.TempDir(), "pids")
	script := fmt.Sprintf(`sleep 300 & echo $! >> %[1]s; (trap '' TERM; sleep 300) & echo $! >> %[1]s; echo started >> %[1]s.ok; wait`, pids)
	args, _ := json.Marshal(map[string]string{"command": script})
	f := scripted(t, call("run_shell", string(args)), say("Stopped."), observe())
	full := append(append([]string{"acolyte", command}, providers[p].flags(f.srv.URL)...), "--repo", repo, "--yes")
	if command == "run" {
		full = append(full, "run it")
	}
	argsJSON, _ := json.Marshal(full)
	c := exec.Command(os.Args[0], "-test.run=^TestHelperAcolyteProcess$")
	c.Env = append(append(os.Environ(), env...), "ACOLYTE_TEST_ARGS="+string(argsJSON))
	c.Stdin = strings.NewReader("run it\n")
	var errOut syncBuffer
	c.Stderr = &errOut
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(pids + ".ok"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			c.Process.Kill()
			t.Fatalf("the command never started: %s", errOut.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.Process.Signal(sig)
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		c.Process.Kill()
		t.Fatalf("acolyte did not exit after %s: %s", sig, errOut.String())
	}
	raw, _ := os.ReadFile(pids)
	for _, field := range strings.Fields(string(raw)) {
		var pid int
		fmt.Sscan(field, &pid)
		// A SIGKILL is acted on when its target next runs, which on a
		// loaded machine can be after acolyte has exited; a child that
		// was never killed sleeps for 300 s.
		for end := time.Now().Add(2 * time.Second); alive(pid) && time.Now().Before(end); {
			time.Sleep(20 * time.Millisecond)
		}
		if alive(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("child %d survived %s", pid, sig)
		}
	}
	if !strings.Contains(errOut.String(), "interrupted") && !strings.Contains(errOut.String(), "stopped") {
		t.Errorf("stderr: %s", errOut.String())
	}
}

// alive says whether process pid runs: it exists and is not a zombie
// waiting for its new parent to reap it.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	_, after, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(after, "Z")
}

// TestRunFirstRequestFitsIn800Tokens measures the first request as the
// server receives it, envelope included, on each provider: at most 800
// tokens by the rule of 4 bytes a token the goal is set in.
func TestRunFirstRequestFitsIn800Tokens(t *testing.T) {
	eachProvider(t, func(t *testing.T, p int) {
		repo := agentRepo(t)
		f := scripted(t, say("Done."))
		const task = "add a test for the parser"
		code, _, stderr := runAgent(t, f, p, repo, "run", "--no-distill", task)
		if code != cmd.ExitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		first := f.requests()[0]
		t.Logf("%s: first request %d bytes, %d tokens at 4 bytes a token", providers[p].name, len(first.Body), len(first.Body)/4)
		if len(first.Body)/4 > 800 {
			t.Errorf("the first request is %d bytes, %d tokens at 4 bytes a token, over 800", len(first.Body), len(first.Body)/4)
		}
		// prompt --stats says the same figure, less the task.
		code, out, _ := acolyte(t, append(append([]string{"prompt"}, providers[p].flags(f.srv.URL)...), "--repo", repo, "--stats", "--json")...)
		var stats struct {
			Wire struct {
				Bytes  int `json:"bytes"`
				Tokens int `json:"tokens"`
			} `json:"wire"`
		}
		if err := json.Unmarshal([]byte(out), &stats); code != cmd.ExitOK || err != nil {
			t.Fatalf("prompt --stats --json: exit %d, %v: %s", code, err, out)
		}
		if d := len(first.Body) - len(task) - stats.Wire.Bytes; d < 0 || d > 40 || stats.Wire.Tokens != stats.Wire.Bytes/4 {
			t.Errorf("prompt --stats says %d bytes (%d tokens) on the wire; the server received %d with a %d-byte task", stats.Wire.Bytes, stats.Wire.Tokens, len(first.Body), len(task))
		}
	})
}

// TestRunModelErrorsAreWords: a refused request says the status and the
// server's message, not the SDK's Go maps.
func TestRunModelErrorsAreWords(t *testing.T) {
	eachProvider(t, func(t *testing.T, p int) {
		repo := agentRepo(t)
		f := scripted(t, modelReply{Status: http.StatusTooManyRequests, Wait: 10 * time.Minute}, observe())
		code, _, stderr := runAgent(t, f, p, repo, "run", "--no-distill", "do it")
		if code == cmd.ExitOK || strings.Contains(stderr, "map[") || !strings.Contains(stderr, "scripted failure") || !strings.Contains(stderr, "429") {
			t.Fatalf("exit %d: %s", code, stderr)
		}
	})
}

// TestResumeRestoresTheConversationAndItsMemories: run --resume ID and
// chat --resume (the last session) continue the saved conversation, whose
// history the model sees again, compacted to the budget, with the
// session's memories.
func TestResumeRestoresTheConversationAndItsMemories(t *testing.T) {
	eachProvider(t, func(t *testing.T, p int) {
		repo := agentRepo(t)
		os.WriteFile(filepath.Join(repo, "notes.txt"), bytes.Repeat([]byte("the parser lives in parse.go\n"), 2000), 0o644)
		fact := `{"content":"The user is refactoring the parser this session.","scope":"session"}`
		f := scripted(t, call("read_file", `{"path":"notes.txt"}`), say("The parser is in parse.go."), observe(fact))
		code, _, stderr := runAgent(t, f, p, repo, "run", "where is the parser")
		if code != cmd.ExitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		_, id, _ := strings.Cut(stderr, "resume with --resume ")
		id, _, _ = strings.Cut(id, ")")

		// run --resume ID, under a budget the saved read does not fit: the
		// old result is compacted, the words stay, and so does the memory.
		f = scriptedFunc(t, func(r modelReq) modelReply {
			if r.Forced {
				return observe()
			}
			if r.N == 1 {
				return call("memory_search", `{"query":"parser refactoring"}`)
			}
			return say("Still parse.go.")
		})
		code, stdout, stderr := runAgent(t, f, p, repo, "run", "--json", "--resume", id, "--context-budget", "8000", "and now?")
		if code != cmd.ExitOK {
			t.Fatalf("resume: exit %d: %s\n%s", code, stderr, stdout)
		}
		first := f.requests()[0].Body
		for _, want := range []string{"where is the parser", "The parser is in parse.go.", "and now?", "Call read_file again"} {
			if !strings.Contains(first, want) {
				t.Errorf("the resumed request lacks %q", want)
			}
		}
		if len(first)/3 > 8000 || !strings.Contains(stdout, `"type":"compact"`) {
			t.Errorf("the resumed request is %d bytes under a budget of 8000 tokens; compacted: %v", len(first), strings.Contains(stdout, `"type":"compact"`))
		}
		if !strings.Contains(f.requests()[1].Body, "refactoring the parser this session") {
			t.Errorf("the session's memory did not come back: %s", f.requests()[1].Results)
		}

		// chat --resume, no id: the last session, which now has both tasks.
		f = scripted(t, say("Yes."), observe())
		var out, errOut bytes.Buffer
		code = chat(t, f, p, repo, strings.NewReader("one more\n/exit\n"), &out, &errOut, "--resume")
		if code != cmd.ExitOK || !strings.Contains(errOut.String(), "session "+id+": resumed") {
			t.Fatalf("chat --resume: exit %d: %s", code, errOut.String())
		}
		if body := f.requests()[0].Body; !strings.Contains(body, "where is the parser") || !strings.Contains(body, "Still parse.go.") {
			t.Errorf("chat --resume did not restore both tasks")
		}

		// chat --resume ID names it.
		f = scripted(t, say("Named."), observe())
		out.Reset()
		errOut.Reset()
		code = chat(t, f, p, repo, strings.NewReader("by name\n/exit\n"), &out, &errOut, "--resume", id)
		if code != cmd.ExitOK || !strings.Contains(f.requests()[0].Body, "one more") {
			t.Fatalf("chat --resume %s: exit %d: %s", id, code, errOut.String())
		}

		// What cannot be resumed says why.
		code, _, stderr = runAgent(t, f, p, repo, "run", "--resume", "session-none", "go")
		if code != cmd.ExitUsage || !strings.Contains(stderr, "no saved conversation for session session-none") {
			t.Errorf("unknown session: exit %d: %s", code, stderr)
		}
		code, _, stderr = runAgent(t, f, p, repo, "run", "--resume", "../../etc/passwd", "go")
		if code != cmd.ExitUsage || !strings.Contains(stderr, "cannot name a saved conversation") {
			t.Errorf("a path as the id: exit %d: %s", code, stderr)
		}
	})
}

// TestRunSmallThingsAUserSees collects what the terminal shows of odd
// cases: a wrong JSON type named in words, & shown as &, a long output
// line clipped and dropped output counted (a memory stored without a
// vector is TestToolWarningReachesTheUser in agent).
func TestRunSmallThingsAUserSees(t *testing.T) {
	eachProvider(t, func(t *testing.T, p int) {
		repo := agentRepo(t)
		f := scripted(t,
			call("list_files", `{"pattern":"a&b/*.go"}`),
			call("run_shell", `{"command":"seq 1 100000; head -c 16000 /dev/zero | tr '\\0' x; echo"}`),
			say("Done."),
			call("memory_observe", `{"facts":"not a list"}`))
		code, _, stderr := runAgent(t, f, p, repo, "run", "--yes", "do it")
		if code != cmd.ExitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		for _, want := range []string{
			`→ list_files {"pattern":"a&b/*.go"}`,
			"bytes the tool dropped from the middle of the output",
			"x… (7951 more bytes)", // the tool kept 8,191 bytes of the line, 240 are shown
			"facts is a JSON string where a list of JSON values was expected",
		} {
			if !strings.Contains(stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, stderr)
			}
		}
		if strings.Contains(stderr, `\u0026`) || strings.Contains(stderr, strings.Repeat("x", 1000)) {
			t.Errorf("an escaped & or a 16 KB line on stderr:\n%.3000s", stderr)
		}
	})
	code, out, _ := acolyte(t, "run", "--help")
	if code != cmd.ExitOK || strings.Contains(out, "(default: 0)") || strings.Contains(out, "(default: 0s)") {
		t.Errorf("run --help: %s", out)
	}
}

// TestChatCtrlCStopsDistillAtOnce: after /exit, Ctrl-C while distill waits
// for the model ends the chat at once, exit 0.
func TestChatCtrlCStopsDistillAtOnce(t *testing.T) {
	eachProvider(t, func(t *testing.T, p int) {
		repo := agentRepo(t)
		f := scriptedFunc(t, func(r modelReq) modelReply {
			if r.Forced {
				go func() { time.Sleep(100 * time.Millisecond); syscall.Kill(os.Getpid(), syscall.SIGINT) }()
				return modelReply{Hang: true}
			}
			return say("Hello.")
		})
		var out, errOut syncBuffer
		start := time.Now()
		code := chat(t, f, p, repo, strings.NewReader("hi\n/exit\n"), &out, &errOut, "--timeout", "30s")
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("Ctrl-C stopped distill after %s", took)
		}
		if code != cmd.ExitOK || !strings.Contains(errOut.String(), "distill stopped") {
			t.Fatalf("exit %d: %s", code, errOut.String())
		}
	})
}

// TestRunCompactionKeepsWhatTheModelNeeds: under a small budget, old file
// reads are stubbed first, keeping which file they read; the loaded tool
// schemas and a memory_search result stay whole; an old write_file's
// content goes but its path stays; and compaction runs rarely, each time
// well below the budget.
func TestRunCompactionKeepsWhatTheModelNeeds(t *testing.T) {
	const budget = 12000
	eachProvider(t, func(t *testing.T, p int) {
		repo := agentRepo(t)
		for i := range 8 {
			os.WriteFile(filepath.Join(repo, fmt.Sprintf("r%d.go", i)), bytes.Repeat([]byte(fmt.Sprintf("// line of file %d, long enough to matter\n", i)), 250), 0o644)
		}
		content, _ := json.Marshal(strings.Repeat("generated line\n", 400))
		replies := []modelReply{
			call("memory_search", `{"query":"how are files written here"}`),
			call("load_tools", `{"names":["write_file"]}`),
			call("call_tool", `{"name":"write_file","args":{"path":"out/gen.txt","content":`+string(content)+`}}`),
		}
		for i := range 8 {
			replies = append(replies, call("read_file", fmt.Sprintf(`{"path":"r%d.go"}`, i)))
		}
		replies = append(replies, say("Done."), observe())
		f := scripted(t, replies...)
		code, stdout, stderr := runAgent(t, f, p, repo, "run", "--json", "--max-steps", "20", "--context-budget", fmt.Sprint(budget), "write and read")
		if code != cmd.ExitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		reqs := f.requests()
		last := reqs[len(reqs)-2].Body
		for _, want := range []string{
			`write_file (write a whole file)`, // the load_tools list, in the declarations
			`out/gen.txt`,                     // the write's path, in its stubbed arguments
			`r0.go`,                           // the first read's path, in its stub
			`Call read_file again`,            // stubs say how to get a result back
		} {
			if !strings.Contains(last, want) {
				t.Errorf("the last request lacks %q", want)
			}
		}
		if strings.Contains(last, "generated line") {
			t.Errorf("the old write_file content is still sent")
		}
		// The load_tools result (write_file's schema) and the memory_search
		// result are whole: neither was stubbed.
		for _, tool := range []string{"load_tools", "memory_search"} {
			if strings.Contains(last, "This "+tool+" result") {
				t.Errorf("the %s result was compacted", tool)
			}
		}
		if !strings.Contains(last, "Prefer edit_file for changes to an existing file.") { // write_file's description, in load_tools's result
			t.Errorf("the loaded schema is gone")
		}
		compactions := strings.Count(stdout, `"type":"compact"`)
		if compactions == 0 || compactions > 3 {
			t.Errorf("%d compactions over 8 reads of 10 KB under %d tokens", compactions, budget)
		}
		for _, r := range reqs {
			if len(r.Body)/3 > budget {
				t.Errorf("request %d: %d bytes, over the budget", r.N, len(r.Body))
			}
		}
	})
}

// TestRunBudgetBelowTheFirstRequestFailsAtStart: a budget the first
// request cannot fit is an error before any request, not a silent excess.
func TestRunBudgetBelowTheFirstRequestFailsAtStart(t *testing.T) {
	eachProvider(t, func(t *testing.T, p int) {
		repo := agentRepo(t)
		f := scripted(t)
		code, _, stderr := runAgent(t, f, p, repo, "run", "--context-budget", "500", "do it")
		if code != cmd.ExitUsage || !strings.Contains(stderr, "--context-budget is 500") || len(f.requests()) != 0 {
			t.Fatalf("budget 500: exit %d, %d requests: %s", code, len(f.requests()), stderr)
		}
		task := strings.Repeat("a long task description ", 200)
		f = scripted(t, observe()) // only distill, which reads the task
		code, _, stderr = runAgent(t, f, p, repo, "run", "--context-budget", "1500", task)
		if code == cmd.ExitOK || !strings.Contains(stderr, "the first request (system prompt, tool declarations and the task)") || len(f.requests()) != 1 || !f.requests()[0].Forced {
			t.Fatalf("a task over the budget: exit %d, %d requests: %s", code, len(f.requests()), stderr)
		}
	})
}
