package gitsync

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/memory"
)

// shardDamages are the ways a shard is damaged beyond decoding as a whole.
var shardDamages = []struct {
	name  string
	bytes func(good []byte) []byte
}{
	{"conflict markers", func(good []byte) []byte {
		return append(append([]byte("<<<<<<< HEAD\n"), good...), "=======\n>>>>>>> side\n"...)
	}},
	{"a byte order mark", func(good []byte) []byte { return append([]byte("\xef\xbb\xbf"), good...) }},
	{"no header line", func(good []byte) []byte { _, rest, _ := strings.Cut(string(good), "\n"); return []byte(rest) }},
	{"binary garbage", func([]byte) []byte { return []byte("\x00\x01\x02\xff\xfe garbage\x00\n") }},
	{"emptied", func([]byte) []byte { return []byte{} }},
}

// An import of a damaged shard keeps the shard's shadow as it last was
// good, the copy sync repairs it from.
func TestADamagedShardKeepsItsLastGoodShadow(t *testing.T) {
	t.Parallel() // its own repositories and index, hundreds of ms to seconds of git and SQLite
	for _, damage := range shardDamages {
		t.Run(damage.name, func(t *testing.T) {
			w, mems := splitWorkspace(t, format.SplitAt+50)
			shard := format.ShardOf(mems[0].ID)
			path := filepath.Join(w.Repo.Root, format.Dir, format.ShardFile(shard))
			good, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, damage.bytes(good), 0o644); err != nil {
				t.Fatal(err)
			}
			w.Warn = func(string) {}
			if _, err := w.List(t.Context(), memory.Filter{Scope: memory.ScopeProject}); err != nil {
				t.Fatal(err)
			}
			shadow, err := os.ReadFile(filepath.Join(shards{}.shardShadowDir(w), shard+".jsonl"))
			if err != nil || string(shadow) != string(good) {
				t.Fatalf("the shadow after importing the damaged shard: %d bytes (%v), want the %d good ones", len(shadow), err, len(good))
			}
		})
	}
}
