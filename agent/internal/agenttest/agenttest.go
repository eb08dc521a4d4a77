// Package agenttest opens real memory stores for the agent packages' tests.
package agenttest

import (
	"context"
	"hash/fnv"
	"path/filepath"
	"testing"

	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/sqlite"
)

// WordHash is a small real embedder: each word lands in one of 64 buckets,
// so texts that share words are close. It needs no network and no model.
type WordHash struct{}

func (WordHash) Model() string { return "test:wordhash/64" }
func (WordHash) Dim() int      { return 64 }
func (WordHash) Embed(_ context.Context, _ memory.Purpose, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, 64)
		for _, w := range memory.Words(t) {
			h := fnv.New32a()
			h.Write([]byte(w))
			v[h.Sum32()%64]++
		}
		memory.Normalize32(v)
		out[i] = v
	}
	return out, nil
}

// Visibility is where the tests' toolkits stand.
var Visibility = memory.Visibility{ProjectKey: "/src/demo", SessionKey: "test-session"}

// Open opens a real SQLite store in a temp dir and returns a toolkit over it
// along with the store, so a test can reopen or inspect it.
func Open(t testing.TB) (memory.Scoped, *sqlite.Store) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "acolyte.db")
	s, err := sqlite.Open(context.Background(), path, WordHash{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return memory.Scoped{Store: s, Visibility: Visibility}, s
}

// Add stores a memory or fails the test.
func Add(t testing.TB, tk memory.Toolkit, scope memory.Scope, kind memory.Kind, content string) memory.Memory {
	t.Helper()
	a, err := tk.Add(context.Background(), memory.Draft{Content: content, Scope: scope, Kind: kind, Source: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return a.Memory
}
