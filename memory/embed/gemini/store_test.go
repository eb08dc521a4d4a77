package gemini

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/sqlite"
)

// A memory written while the Gemini API refuses (rate limited past every
// retry, or the key rejected) is still stored, found lexically, and gets
// its vector from reindex once the API answers again.
func TestStoreKeepsMemoriesTheAPIRefused(t *testing.T) {
	for name, refuse := range map[string]func(w http.ResponseWriter){
		"429": func(w http.ResponseWriter) { writeError(w, 429, "RESOURCE_EXHAUSTED", "quota exceeded") },
		"401": func(w http.ResponseWriter) { writeError(w, 401, "UNAUTHENTICATED", "bad key") },
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			srv, ts := newServer(t)
			down := true
			srv.reply = func(_ int, w http.ResponseWriter, _ batchRequest) bool {
				if down {
					refuse(w)
				}
				return down
			}
			e, _ := newEmbedder(t, Config{APIKey: testKey, BaseURL: ts.URL, Dim: 8})
			s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "acolyte.db"), e)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			vis := memory.Visibility{}
			added, err := s.Add(ctx, vis, memory.Draft{Content: "The release train leaves on Thursdays", Scope: memory.ScopeUser})
			if err != nil {
				t.Fatalf("the write failed with the API down: %v", err)
			}
			if !strings.Contains(added.Warning, "acolyte reindex") {
				t.Errorf("warning %q should say to reindex", added.Warning)
			}
			got, err := s.Search(ctx, vis, memory.Query{Text: "when does the release train leave"})
			if err != nil || len(got) != 1 || got[0].ID != added.Memory.ID {
				t.Fatalf("search with the API down: %+v, %v", got, err)
			}
			down = false
			if n, err := s.Reindex(ctx, false, nil); n != 1 || err != nil {
				t.Fatalf("reindex = %d, %v", n, err)
			}
			if n, _ := s.Reindex(ctx, false, nil); n != 0 {
				t.Fatalf("the memory was not embedded by the first reindex")
			}
		})
	}
}
