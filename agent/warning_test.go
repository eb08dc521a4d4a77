package agent_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/agent"
	"github.com/acolyte-dev/acolyte/agent/internal/agenttest"
	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/sqlite"
)

// downEmbedder is an embedder whose server does not answer.
type downEmbedder struct{ agenttest.WordHash }

func (downEmbedder) Embed(context.Context, memory.Purpose, []string) ([][]float32, error) {
	return nil, errors.New("dial tcp 127.0.0.1:11434: connection refused")
}

// TestToolWarningReachesTheUser: a memory_add the store keeps without a
// vector (the embedder is down) tells the model in its result and the user
// in a warning event, not only the model.
func TestToolWarningReachesTheUser(t *testing.T) {
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "acolyte.db"), downEmbedder{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tk := memory.Scoped{Store: s, Visibility: agenttest.Visibility}
	var warnings []string
	m := &scriptedModel{steps: [][]agent.ToolCall{{call("memory_add", map[string]any{"content": "The build runs make all.", "scope": "user"})}}, final: "Saved."}
	sess, err := agent.NewSession(agent.Config{Model: m, Toolkit: tk, OnEvent: func(e agent.Event) {
		if e.Type == agent.EventWarning {
			warnings = append(warnings, e.Text)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sess.Turn(context.Background(), "remember the build"); err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 1 || !strings.HasPrefix(warnings[0], "memory_add: ") {
		t.Fatalf("warnings %q", warnings)
	}
}
