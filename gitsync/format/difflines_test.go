package format

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/memory"
)

// DiffLines of two canonical files, applied to the old set, gives the new
// one, and names only what differs.
func TestDiffLinesGivesTheNewFile(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for round := range 200 {
		var old []memory.Memory
		for i := range r.IntN(30) {
			old = append(old, memory.Memory{ID: fmt.Sprintf("01J%05d", i*2), Kind: memory.KindStored, Content: fmt.Sprintf("fact %d", i), CreatedAt: base, UpdatedAt: base})
		}
		next := slices.Clone(old)
		changed := 0
		for i := range next {
			if r.IntN(5) == 0 {
				next[i].Content += " edited"
				changed++
			}
		}
		removedWant := 0
		next = slices.DeleteFunc(next, func(memory.Memory) bool {
			if r.IntN(6) == 0 {
				removedWant++
				return true
			}
			return false
		})
		for i := range r.IntN(4) {
			next = append(next, memory.Memory{ID: fmt.Sprintf("01J%05d", r.IntN(80)*2+1), Kind: memory.KindStored, Content: fmt.Sprintf("new %d", i), CreatedAt: base, UpdatedAt: base})
		}
		next = dedupeByID(next)
		changes, removed, same, err := DiffLines(Encode(old), Encode(next), 1000)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		got := map[string]memory.Memory{}
		for _, m := range old {
			got[m.ID] = m
		}
		for _, id := range removed {
			delete(got, id)
		}
		for _, c := range changes {
			m, err := DecodeLine(c.New)
			if err != nil {
				t.Fatal(err)
			}
			got[m.ID] = m
		}
		if len(got) != len(next) || same+len(changes) != len(next) {
			t.Fatalf("round %d: %d memories after the diff (%d same, %d changes), want %d", round, len(got), same, len(changes), len(next))
		}
		for _, m := range next {
			if g, ok := got[m.ID]; !ok || g.Content != m.Content {
				t.Fatalf("round %d: %s is %q after the diff, want %q", round, m.ID, g.Content, m.Content)
			}
		}
	}
	if _, _, _, err := DiffLines(Encode(nil), []byte("{\"acolyte\":\"memories\",\"version\":1}\n{\"id\":\"b\"}\n{\"id\":\"a\"}\n"), 10); err == nil {
		t.Fatal("a file out of id order was diffed; it must be read whole")
	}
}

func dedupeByID(ms []memory.Memory) []memory.Memory {
	seen := map[string]bool{}
	return slices.DeleteFunc(ms, func(m memory.Memory) bool {
		if seen[m.ID] {
			return true
		}
		seen[m.ID] = true
		return false
	})
}
