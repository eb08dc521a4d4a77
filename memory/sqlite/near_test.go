package sqlite_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/embed/static"
	"github.com/acolyte-dev/acolyte/memory/sqlite"
)

// nearIDs are the ids a Near search for text returns, as memory_add asks
// for them: four, the fact itself among them.
func nearIDs(t *testing.T, s *sqlite.Store, text string) []string {
	t.Helper()
	rs, err := s.Search(ctx, nowhere, memory.Query{Text: text, Near: true, Filter: memory.Filter{Limit: 4}})
	if err != nil {
		t.Fatal(err)
	}
	return ids(rs)
}

// TestNearFindsADuplicateByItsRareWords: every word a new fact shares
// with its duplicate but two is one that more than a thousand memories
// hold, which a Near search leaves out; the two rare words and the vector
// still put the duplicate first.
func TestNearFindsADuplicateByItsRareWords(t *testing.T) {
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "acolyte.db"), static.New())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ms := make([]memory.Memory, 1500)
	for i := range ms {
		// Every memory holds "deploy", "pipeline" and "config"; each
		// thing it names is shared by a hundred.
		ms[i] = memory.Memory{ID: fmt.Sprintf("c%05d", i), Kind: memory.KindStored, CreatedAt: time.Unix(0, 0),
			Content: fmt.Sprintf("The deploy pipeline reads its config from %s before step %d", benchWords[i%len(benchWords)], i)}
	}
	duplicate := memory.Memory{ID: "duplicate", Kind: memory.KindStored, CreatedAt: time.Unix(0, 0),
		Content: "Quixley's zorblat files are kept nine days"}
	ms = append(ms, duplicate)
	if _, err := s.ReplaceScope(ctx, memory.ScopeUser, "", ms); err != nil {
		t.Fatal(err)
	}
	fact := "The deploy pipeline config keeps zorblat files for quixley nine days"
	added := add(t, s, nowhere, memory.ScopeUser, fact)
	got := nearIDs(t, s, fact)
	others := slices.DeleteFunc(slices.Clone(got), func(id string) bool { return id == added.ID })
	if len(others) == 0 || others[0] != duplicate.ID {
		t.Fatalf("Near search for %q: %v, want %q first after the fact itself", fact, got, duplicate.ID)
	}
}

// TestNearFindsDuplicatesAmong50k: at 50k memories of agent/mcp's
// benchmark shape every word of a fact but its runbook number is held by
// 2,000 memories or more. A fact restated with its number finds its
// original; one restated without it, all of whose words are common,
// finds the memories that say the same, which only its common words tell
// from those that share all but one of them.
func TestNearFindsDuplicatesAmong50k(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a store of 50k memories")
	}
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "acolyte.db"), static.New())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ms := runbookMemories(50_000)
	if _, err := s.ReplaceScope(ctx, memory.ScopeUser, "", ms); err != nil {
		t.Fatal(err)
	}
	byContent := map[string]string{}
	for _, m := range ms {
		byContent[m.Content] = m.ID
	}
	all, err := s.List(ctx, nowhere, memory.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	idOf := map[string]string{} // the stored id of each test id
	for _, m := range all {
		idOf[byContent[m.Content]] = m.ID
	}
	for _, i := range []int{7, 4_321, 12_345, 29_999, 49_998} {
		var service, action, number string
		if _, err := fmt.Sscanf(ms[i].Content, "The %s service", &service); err != nil {
			t.Fatal(err)
		}
		rest := ms[i].Content[len("The "+service+" service "):]
		rest, number = rest[:len(rest)-len(fmt.Sprintf(" (runbook %d)", i))], fmt.Sprint(i)
		action = rest
		restated := fmt.Sprintf("Runbook %s says: %s %s", number, service, action)
		if got := nearIDs(t, s, restated); len(got) == 0 || got[0] != idOf[ms[i].ID] {
			t.Errorf("Near search for %q: %v, want %s (%q) first", restated, got, idOf[ms[i].ID], ms[i].Content)
		}
		// The same service, action and moment recur every 10k memories.
		unnumbered := fmt.Sprintf("the %s service %s", service, action)
		var want []string
		for j := i % 10_000; j < len(ms); j += 10_000 {
			want = append(want, idOf[ms[j].ID])
		}
		// Five say it; the search returns four.
		got := nearIDs(t, s, unnumbered)
		if len(got) != 4 || slices.ContainsFunc(got, func(id string) bool { return !slices.Contains(want, id) }) {
			t.Errorf("Near search for %q: %v, want four of %v", unnumbered, got, want)
		}
	}
	// A fact whose common words outweigh its rare ones is ranked as a
	// ranked search ranks it, though the Near search read the rare words'
	// postings first and does not read them again.
	for _, text := range []string{
		"Benchmark fact 7: the nightly job 7 writes its report to reports/7.csv",
		"runbook 4321 and runbook 12345 say the billing service batches writes after a deploy",
	} {
		near, err := s.Search(ctx, nowhere, memory.Query{Text: text, Near: true, Filter: memory.Filter{Limit: 8}})
		if err != nil {
			t.Fatal(err)
		}
		ranked, err := s.Search(ctx, nowhere, memory.Query{Text: text, Filter: memory.Filter{Limit: 8}})
		if err != nil {
			t.Fatal(err)
		}
		if len(near) == 0 || !slices.EqualFunc(near, ranked, func(a, b memory.Result) bool { return a.ID == b.ID && a.Score == b.Score }) {
			t.Errorf("Near search for %q, which falls back to ranking:\n%v\nwant the ranked search's\n%v", text, scored(near), scored(ranked))
		}
	}
}

// scored lists results as id and score, for a failure message.
func scored(rs []memory.Result) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = fmt.Sprintf("%s %.4f", r.ID, r.Score)
	}
	return out
}
