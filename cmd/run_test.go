package cmd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/acolyte-dev/acolyte/cmd"
)

// geminiReplies answers generateContent, and streamGenerateContent as one
// SSE event, with one scripted reply per request in the Gemini REST format,
// and records the request bodies.
func geminiReplies(t *testing.T, replies ...string) (*httptest.Server, *[]string) {
	var mu sync.Mutex
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		stream := strings.HasSuffix(r.URL.Path, ":streamGenerateContent")
		if !stream && !strings.HasSuffix(r.URL.Path, ":generateContent") {
			http.Error(w, "unexpected "+r.URL.Path, http.StatusNotFound)
			return
		}
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		n := len(bodies)
		mu.Unlock()
		if n > len(replies) {
			t.Errorf("unexpected request %d", n)
			http.Error(w, "script ended", http.StatusInternalServerError)
			return
		}
		body := `{"candidates":[{"content":{"role":"model","parts":[` + replies[n-1] + `]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":40,"candidatesTokenCount":5,"totalTokenCount":45}}`
		if stream {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: "+body+"\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, &bodies
}

func acolyte(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := cmd.Run(context.Background(), append([]string{"acolyte"}, args...), strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestRunJSONStreamsEventsAndDistills(t *testing.T) {
	repo := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	t.Setenv("ACOLYTE_HOME", t.TempDir())
	t.Setenv("GEMINI_API_KEY", "test-key")
	t.Setenv("GOOGLE_API_KEY", "")
	srv, bodies := geminiReplies(t,
		`{"functionCall":{"name":"memory_add","args":{"content":"Integration tests need Docker running."}}}`,
		`{"text":"Saved."}`,
		`{"functionCall":{"name":"memory_observe","args":{"facts":[{"content":"The user runs integration tests locally before pushing.","scope":"project","topic":"testing"}]}}}`,
	)
	code, stdout, stderr := acolyte(t, "run", "--json", "--base-url", srv.URL, "--repo", repo, "remember that integration tests need Docker")
	if code != cmd.ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var types []string
	var distilled int
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var e struct {
			Type    string
			Text    string
			Distill *struct{ Added []json.RawMessage }
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("not a JSON line: %q", line)
		}
		types = append(types, e.Type)
		if e.Type == "final" && e.Text != "Saved." {
			t.Errorf("final text %q", e.Text)
		}
		if e.Distill != nil {
			distilled = len(e.Distill.Added)
		}
	}
	if got := strings.Join(types, ","); got != "session,usage,tool_call,tool_result,text,usage,final,distilling,distill" {
		t.Fatalf("event types %s", got)
	}
	if distilled != 1 || len(*bodies) != 3 {
		t.Fatalf("distilled %d facts in %d requests", distilled, len(*bodies))
	}

	// Both the stored fact and the observation are in the store afterwards.
	code, stdout, _ = acolyte(t, "list", "--repo", repo, "--json")
	if code != cmd.ExitOK || !strings.Contains(stdout, "Docker running") || !strings.Contains(stdout, `"kind": "observation"`) {
		t.Fatalf("list after run (exit %d): %s", code, stdout)
	}
}

func TestChatAsksBeforeRunningShell(t *testing.T) {
	repo := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	t.Setenv("ACOLYTE_HOME", t.TempDir())
	t.Setenv("GEMINI_API_KEY", "test-key")
	t.Setenv("GOOGLE_API_KEY", "")
	srv, bodies := geminiReplies(t,
		`{"functionCall":{"name":"run_shell","args":{"command":"touch ran.txt"}}}`,
		`{"text":"You declined, so I did not run it."}`,
		`{"functionCall":{"name":"memory_observe","args":{"facts":[]}}}`,
	)
	var out, errOut bytes.Buffer
	stdin := strings.NewReader("please run touch ran.txt\nn\n/exit\n")
	code := cmd.Run(context.Background(), []string{"acolyte", "chat", "--base-url", srv.URL, "--repo", repo}, stdin, &out, &errOut)
	if code != cmd.ExitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(errOut.String(), "run `touch ran.txt`? [y/N]") {
		t.Fatalf("no confirmation asked: %s", errOut.String())
	}
	if len(*bodies) < 2 || !strings.Contains((*bodies)[1], `"code":"denied"`) {
		t.Fatalf("the model was not told the command was denied: %v", *bodies)
	}
	if _, err := os.Stat(filepath.Join(repo, "ran.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a declined command ran")
	}
	if !strings.Contains(out.String(), "You declined") {
		t.Fatalf("stdout %q", out.String())
	}
}
