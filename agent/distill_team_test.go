package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/agent"
	"github.com/acolyte-dev/acolyte/agent/internal/agenttest"
	"github.com/acolyte-dev/acolyte/memory"
)

// observer answers every request with one memory_observe call.
type observer struct {
	facts string
	reqs  []agent.Request
}

func (o *observer) Name() string { return "test/observer" }
func (o *observer) Generate(_ context.Context, req agent.Request) (agent.Response, error) {
	o.reqs = append(o.reqs, req)
	return agent.Response{Message: agent.Message{Role: agent.RoleModel, Parts: []agent.Part{
		{Call: &agent.ToolCall{Name: "memory_observe", Args: json.RawMessage(o.facts)}},
	}}}, nil
}
func (o *observer) Stream(ctx context.Context, req agent.Request, _ func(string)) (agent.Response, error) {
	return o.Generate(ctx, req)
}

// TestDistillNeverWritesTeam: team memories are read by every member's
// agent at once, so only a person adds them; the observer is not offered
// the scope, and a team fact it names anyway is skipped, not stored.
func TestDistillNeverWritesTeam(t *testing.T) {
	tk, _ := agenttest.Open(t)
	m := &observer{facts: `{"facts":[
		{"content":"Staging is reached through bastion-2.","scope":"team"},
		{"content":"The user prefers short answers.","scope":"user"}]}`}
	history := []agent.Message{{Role: agent.RoleUser, Parts: []agent.Part{{Text: "how do I reach staging?"}}}}
	rep, err := agent.Distill(t.Context(), m, tk, history)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.reqs) != 1 || len(m.reqs[0].Tools) != 1 {
		t.Fatalf("the observer was asked %d times", len(m.reqs))
	}
	if schema := string(m.reqs[0].Tools[0].Schema); strings.Contains(schema, `"team"`) || !strings.Contains(schema, `"user"`) {
		t.Errorf("the observer's schema offers %s", schema)
	}
	if len(rep.Added) != 1 || rep.Added[0].Scope != memory.ScopeUser {
		t.Fatalf("distill added %+v, want only the user fact", rep.Added)
	}
	if len(rep.Skipped) != 1 || !strings.Contains(rep.Skipped[0].Reason, "never writes team") {
		t.Fatalf("skipped %+v, want the team fact with its reason", rep.Skipped)
	}
	all, err := tk.List(t.Context(), memory.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 {
		t.Fatalf("the store holds %d memories, want 1", len(all))
	}
}

// TestDistillNeverEchoesASecret: a fact that holds a secret is reported
// by kind only, whatever skipped it. A team fact or one of an unknown
// scope never reaches a store, so no store refuses it, and its text went
// into the report (and from there to the terminal and the event stream).
func TestDistillNeverEchoesASecret(t *testing.T) {
	const marker = "Zq8vR2mXk4Tn7Lp1Wc9Yb3"
	tk, _ := agenttest.Open(t)
	tk.Guard = func(m memory.Memory) error {
		for _, f := range m.Fields() {
			if strings.Contains(f.Text, marker) {
				return fmt.Errorf("%w: its %s contains a test secret", memory.ErrSecret, f.Name)
			}
		}
		return nil
	}
	m := &observer{facts: `{"facts":[
		{"content":"The staging token is ` + marker + `.","scope":"team"},
		{"content":"The deploy key is ` + marker + `.","scope":"prod-` + marker + `"},
		{"content":"Deploys need the release key.","scope":"user","topic":"` + marker + `"},
		{"content":"The user's key is ` + marker + `.","scope":"user"},
		{"content":"The user prefers short answers.","scope":"user"}]}`}
	history := []agent.Message{{Role: agent.RoleUser, Parts: []agent.Part{{Text: "how do I deploy?"}}}}
	rep, err := agent.Distill(t.Context(), m, tk, history)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Added) != 1 || len(rep.Skipped) != 4 {
		t.Fatalf("added %d and skipped %+v, want 1 added and 4 skipped", len(rep.Added), rep.Skipped)
	}
	out, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), marker) {
		t.Fatalf("the distill report repeats a refused secret: %s", out)
	}
}
