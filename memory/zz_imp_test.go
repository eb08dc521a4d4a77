package memory_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/embed/static"
)

func BenchmarkImport10k(b *testing.B) {
	ms := make([]memory.Memory, 10000)
	for i := range ms {
		ms[i] = memory.Memory{ID: fmt.Sprintf("m%06d", i), Kind: memory.KindStored,
			Content: fmt.Sprintf("fact %d: the %s layer %s %s for service %d", i, benchWords[i%37], benchWords[(i/37)%37], benchWords[(i/1369)%37], i%13)}
	}
	for b.Loop() {
		s, _ := memory.Open(ctx, filepath.Join(b.TempDir(), "a.db"), static.New())
		if _, err := s.ReplaceScope(ctx, memory.ScopeProject, "/p", ms); err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}
