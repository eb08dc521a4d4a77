package gitsync

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/gitsync/secrets/secretstest"
	"github.com/acolyte-dev/acolyte/memory"
)

// TestEveryRoadRefusesEveryCredential sends the whole credential table, and
// the whole look-alike table, down every road into .acolyte/ that does not
// need a running git command: remember (the CLI, the MCP server, the agent
// and distill all add through Workspace.Add), an AGENTS.md rule, a
// seeds.json seed, `acolyte seed FILE` and the merge driver. The pre-commit
// hook and sync share derive with the AGENTS.md and seeds.json roads; the
// scripts secrets_sync.txtar and hooks_shared.txtar drive those through git.
func TestEveryRoadRefusesEveryCredential(t *testing.T) {
	roads := []struct {
		name    string
		refuses func(t *testing.T, content string) bool
	}{
		{"remember", func(t *testing.T, content string) bool {
			w := workspaceIn(t)
			_, err := w.Add(t.Context(), memory.Draft{Scope: memory.ScopeProject, Content: content})
			if err != nil && !errors.Is(err, memory.ErrSecret) {
				t.Fatalf("remember %.30q: %v", content, err)
			}
			return errors.Is(err, memory.ErrSecret)
		}},
		{"AGENTS.md", func(t *testing.T, content string) bool {
			root := t.TempDir()
			// A bullet is what the rules parser always turns into a rule; a
			// credential must be refused, not merely left underived.
			agents := "# Rules\n\n- Deploys go through the staging pipeline first.\n- " + content + "\n"
			if err := os.WriteFile(filepath.Join(root, "AGENTS.md"), []byte(agents), 0o644); err != nil {
				t.Fatal(err)
			}
			d, err := DeriveWorktree(root)
			if err != nil {
				t.Fatal(err)
			}
			keptOther(t, d.Memories, content)
			// A lone word is not a rule, so only longer text must be derived.
			if len(d.Refused) == 0 && len(d.Memories) != 2 && len(strings.Fields(content)) > 1 {
				t.Fatalf("AGENTS.md with %.30q: neither refused nor derived: %+v", content, d.Memories)
			}
			return len(d.Refused) > 0
		}},
		{"seeds.json", func(t *testing.T, content string) bool {
			root := t.TempDir()
			writeSeeds(t, filepath.Join(root, format.Dir, SeedsFile), content)
			d, err := DeriveWorktree(root)
			if err != nil {
				t.Fatal(err)
			}
			keptOther(t, d.Memories, content)
			return len(d.Refused) > 0
		}},
		{"seed FILE", func(t *testing.T, content string) bool {
			root, elsewhere := t.TempDir(), filepath.Join(t.TempDir(), "team-seeds.json")
			writeSeeds(t, elsewhere, content)
			res, err := ImportSeeds(t.Context(), root, elsewhere)
			if err != nil {
				t.Fatal(err)
			}
			return len(res.Refused) > 0
		}},
		{"merge driver", func(t *testing.T, content string) bool {
			added := stored("01B", content, t0)
			if added.Validate() != nil && memory.ValidateContent(content) != nil {
				t.Fatalf("%.30q is not storable at all", content)
			}
			merged, _, err := format.Merge(nil, format.Encode([]memory.Memory{added}), format.Encode(nil))
			if err != nil {
				t.Fatal(err)
			}
			return !strings.Contains(string(merged), `"01B"`)
		}},
	}
	for _, road := range roads {
		t.Run(road.name, func(t *testing.T) {
			missed, refused := 0, 0
			for _, c := range secretstest.Credentials {
				if !road.refuses(t, c.Content) {
					missed++
					t.Errorf("%s let through %s (%.24q…)", road.name, c.Kind, c.Content)
				}
			}
			for _, h := range secretstest.Lookalikes {
				if road.refuses(t, h) {
					refused++
					t.Errorf("%s refused the harmless %q", road.name, h)
				}
			}
			t.Logf("%s: %d of %d credentials refused, %d of %d look-alikes refused",
				road.name, len(secretstest.Credentials)-missed, len(secretstest.Credentials), refused, len(secretstest.Lookalikes))
		})
	}
}

// keptOther fails unless the harmless neighbour of content was derived: a
// refusal costs only the one rule or seed.
func keptOther(t *testing.T, mems []memory.Memory, content string) {
	t.Helper()
	for _, m := range mems {
		if strings.Contains(m.Content, "staging pipeline") {
			return
		}
	}
	t.Fatalf("with %.30q beside it, the harmless rule or seed was not kept", content)
}

// writeSeeds writes a seeds file holding a harmless seed and content.
func writeSeeds(t *testing.T, path, content string) {
	t.Helper()
	data, err := json.Marshal([]string{"Deploys go through the staging pipeline first.", content})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
