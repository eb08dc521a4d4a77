package enginetest_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/internal/enginetest"
	"github.com/acolyte-dev/acolyte/memory/sqlite"
)

// TestSQLite holds the local store to the suite, in user scope against a
// project-and-session caller, and in project scope against another project.
func TestSQLite(t *testing.T) {
	base := t.TempDir()
	open := func(t *testing.T, e memory.Embedder) memory.Engine {
		path := filepath.Join(base, strings.NewReplacer("/", "_").Replace(t.Name())+".db")
		s, err := sqlite.Open(t.Context(), path, e)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	t.Run("project", func(t *testing.T) {
		enginetest.Run(t, enginetest.Harness{
			Scope: memory.ScopeProject,
			Vis:   memory.Visibility{ProjectKey: "/src/a"},
			Other: memory.Visibility{ProjectKey: "/src/b"},
			Open:  open,
		})
	})
	t.Run("session", func(t *testing.T) {
		enginetest.Run(t, enginetest.Harness{
			Scope: memory.ScopeSession,
			Vis:   memory.Visibility{SessionKey: "s1"},
			Other: memory.Visibility{SessionKey: "s2"},
			Open:  open,
		})
	})
}
