package sqlite

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/internal/atomicfile"
	"github.com/acolyte-dev/acolyte/memory"
)

func sampleCatalog() *catalog {
	return &catalog{
		generation: "0f3a:7",
		model:      "test:model/3",
		dim:        3,
		scopes:     []memory.Scope{memory.ScopeUser, memory.ScopeProject},
		keys:       []string{"", "/src/app"},
		// Five memories: 17 bytes each leaves the scales needing padding.
		seqs:   []int64{2, 5, 9, 11, 1 << 40},
		groups: []uint32{0, 1, 1, 0, 0},
		kinds:  []uint8{1, 3, 4, 2, 2},
		vecAt:  []int32{0, -1, 1, -1, 2},
		scales: []float32{0.5, 0.25, 1e-3},
		vecs:   []int8{1, -2, 127, -127, 0, 3, 9, 8, 7},
	}
}

func sameCatalog(t *testing.T, got, want *catalog) {
	t.Helper()
	got.unmap, want.unmap = nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("catalog changed on the way through the file:\n got %+v\nwant %+v", got, want)
	}
}

// The file is read in place where the machine allows and copied where it
// does not (a misaligned buffer stands in for a big-endian machine here);
// both must give back what was written.
func TestCatalogFileRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalog")
	want := sampleCatalog()
	if err := writeCatalog(path, want); err != nil {
		t.Fatal(err)
	}
	mapped, err := readCatalog(path, want.model)
	if err != nil {
		t.Fatal(err)
	}
	defer mapped.unmap()
	sameCatalog(t, mapped, sampleCatalog())

	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	shifted := make([]byte, len(b)+1)[1:]
	copy(shifted, b)
	copied, err := decodeCatalog(shifted, want.model)
	if err != nil {
		t.Fatal(err)
	}
	sameCatalog(t, copied, sampleCatalog())

	if _, err := decodeCatalog(b, "test:another/3"); err == nil {
		t.Fatal("a catalog of another model was accepted")
	}
}

// A damaged catalog is rebuilt, never trusted, and never crashes a search.
func TestCatalogRejectsDamage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalog")
	if err := writeCatalog(path, sampleCatalog()); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for cut := range len(good) {
		if _, err := decodeCatalog(good[:cut], "test:model/3"); err == nil {
			t.Fatalf("a catalog cut to %d of %d bytes was accepted", cut, len(good))
		}
	}
	if _, err := decodeCatalog(append(good, 0), "test:model/3"); err == nil {
		t.Fatal("a catalog with a trailing byte was accepted")
	}
	// Seqs out of order would break the binary search over them.
	c := sampleCatalog()
	c.seqs[4] = 1
	if err := writeCatalog(path, c); err != nil {
		t.Fatal(err)
	}
	if _, err := readCatalog(path, c.model); err == nil {
		t.Fatal("a catalog with unordered seqs was accepted")
	}
	c = sampleCatalog()
	c.vecAt[0] = 3
	if err := writeCatalog(path, c); err != nil {
		t.Fatal(err)
	}
	if _, err := readCatalog(path, c.model); err == nil {
		t.Fatal("a catalog pointing past its vectors was accepted")
	}
}

// Recall times are kept to the minute: a search repeated within it writes
// nothing, and one after it records the new time.
func TestRecallTimesKeptToTheMinute(t *testing.T) {
	ctx := t.Context()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "acolyte.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clock := start
	s.now = func() time.Time { return clock }
	added, err := s.Add(ctx, memory.Visibility{}, memory.Draft{Content: "the cache evicts large uploads"})
	if err != nil {
		t.Fatal(err)
	}
	recalled := func() time.Time {
		t.Helper()
		if _, err := s.Search(ctx, memory.Visibility{}, memory.Query{Text: "cache uploads"}); err != nil {
			t.Fatal(err)
		}
		m, err := s.Get(ctx, memory.Visibility{}, added.Memory.ID)
		if err != nil {
			t.Fatal(err)
		}
		return m.RecalledAt
	}
	if got := recalled(); !got.Equal(start) {
		t.Fatalf("first recall recorded %v, want %v", got, start)
	}
	clock = start.Add(30 * time.Second)
	if got := recalled(); !got.Equal(start) {
		t.Fatalf("a recall within the minute rewrote the time: %v", got)
	}
	clock = start.Add(2 * time.Minute)
	if got := recalled(); !got.Equal(clock) {
		t.Fatalf("a recall after the minute recorded %v, want %v", got, clock)
	}
}

// entries describes a catalog by seq, independent of group numbering and
// vector order, so a patched catalog can be compared with a rebuilt one.
func entries(c *catalog) map[int64]string {
	out := map[int64]string{}
	for i, seq := range c.seqs {
		if c.kinds[i] == kindGone {
			continue // removed in place: no search sees it
		}
		vec := "none"
		if at := c.vecAt[i]; at >= 0 {
			vec = fmt.Sprint(c.scales[at], c.vector(at))
		}
		out[seq] = fmt.Sprintf("%s|%s|%d|%s", c.scopes[c.groups[i]], c.keys[c.groups[i]], c.kinds[i], vec)
	}
	return out
}

// wordVectors is a small deterministic embedder for these tests.
type wordVectors struct{}

func (wordVectors) Model() string { return "test:words/8" }
func (wordVectors) Dim() int      { return 8 }
func (wordVectors) Embed(_ context.Context, _ memory.Purpose, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, 8)
		for j, r := range t {
			v[(j+int(r))%8] += float32(r%7) - 3
		}
		out[i] = v
	}
	return out, nil
}

// Every kind of write keeps the saved catalog current without a rebuild,
// and the patched catalog holds exactly what a rebuild would read.
func TestWritesPatchTheCatalog(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "acolyte.db")
	s, err := Open(ctx, path, wordVectors{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var ms []memory.Memory
	for i := range 30 {
		ms = append(ms, memory.Memory{ID: fmt.Sprintf("p%02d", i), Kind: memory.KindRule, Content: fmt.Sprintf("project rule %d", i)})
	}
	if _, err := s.ReplaceScope(ctx, memory.ScopeProject, "/src/app", ms); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Search(ctx, memory.Visibility{}, memory.Query{Text: "rule"}); err != nil {
		t.Fatal(err) // saves the first catalog
	}
	user, err := s.Add(ctx, memory.Visibility{}, memory.Draft{Content: "a user fact about caches"})
	if err != nil {
		t.Fatal(err)
	}
	ms[3].Content = "project rule 3, reworded"
	ms = append(ms[:7], ms[8:]...)
	if _, err := s.ReplaceScope(ctx, memory.ScopeProject, "/src/app", ms); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(ctx, memory.Visibility{SessionKey: "s1"}, memory.Draft{Content: "a session note", Scope: memory.ScopeSession}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Delete(ctx, memory.Visibility{}, user.Memory.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(ctx, memory.Visibility{}, memory.Draft{Content: "project rule 5"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Reindex(ctx, true, nil); err != nil {
		t.Fatal(err)
	}

	gen, err := s.generation(ctx)
	if err != nil {
		t.Fatal(err)
	}
	saved, err := readCatalog(s.catalogPath(s.model()), s.model())
	if err != nil {
		t.Fatal(err)
	}
	defer saved.unmap()
	if saved.generation != gen {
		t.Fatalf("the saved catalog is at %s, the database at %s: a write left it stale", saved.generation, gen)
	}
	rebuilt, err := s.buildCatalog(ctx, s.model())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := entries(saved), entries(rebuilt); !reflect.DeepEqual(got, want) {
		t.Fatalf("patched catalog differs from a rebuild:\n got %v\nwant %v", got, want)
	}
	if len(rebuilt.seqs) != 30-1+1+1 {
		t.Fatalf("rebuilt catalog has %d memories", len(rebuilt.seqs))
	}
}

// A duplicate Add changes nothing, so it must not make the catalog stale.
func TestDuplicateAddKeepsTheGeneration(t *testing.T) {
	ctx := t.Context()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "acolyte.db"), wordVectors{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Add(ctx, memory.Visibility{}, memory.Draft{Content: "one fact"}); err != nil {
		t.Fatal(err)
	}
	before, _ := s.generation(ctx)
	again, err := s.Add(ctx, memory.Visibility{}, memory.Draft{Content: "one  fact"})
	if err != nil || !again.Existing {
		t.Fatalf("duplicate add: %+v, %v", again, err)
	}
	if after, _ := s.generation(ctx); after != before {
		t.Fatalf("a duplicate add moved the generation from %s to %s", before, after)
	}
}

// A catalog write removes the temporary files killed writers left behind,
// and only those: a recent one may belong to a writer still at work.
func TestCatalogWriteRemovesStaleTemporaryFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "catalog-test.bin")
	tmp := filepath.Join(dir, atomicfile.TempPrefix+"catalog-test.bin")
	old := time.Now().Add(-2 * time.Hour)
	files := map[string]time.Time{
		tmp + "-123": old,        // killed write: removed
		tmp + "-456": time.Now(), // may be in flight: kept
		filepath.Join(dir, atomicfile.TempPrefix+"other.bin-789"): old, // another file's: kept
		path + ".tmp-321": old,        // killed write of an older acolyte: removed
		path + ".tmp-654": time.Now(), // an older acolyte's, maybe in flight: kept
	}
	removed := map[string]bool{tmp + "-123": true, path + ".tmp-321": true}
	for p, mtime := range files {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	if err := writeCatalog(path, sampleCatalog()); err != nil {
		t.Fatal(err)
	}
	for p := range files {
		_, err := os.Stat(p)
		if gone := os.IsNotExist(err); gone != removed[p] {
			t.Errorf("%s: removed = %v", filepath.Base(p), gone)
		}
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("the catalog itself: %v", err)
	}
}

// inode identifies the file at path, so a test can tell an append in place
// from a rewrite by rename.
func inode(t *testing.T, path string) os.FileInfo {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// savedMatchesDatabase fails unless the catalog file is at the database's
// generation and holds what a rebuild from the tables would.
func savedMatchesDatabase(t *testing.T, s *Store) {
	t.Helper()
	ctx := t.Context()
	gen, err := s.generation(ctx)
	if err != nil {
		t.Fatal(err)
	}
	saved, err := readCatalog(s.catalogPath(s.model()), s.model())
	if err != nil {
		t.Fatalf("read the saved catalog: %v", err)
	}
	defer saved.unmap()
	if saved.generation != gen {
		t.Fatalf("the saved catalog is at %s, the database at %s", saved.generation, gen)
	}
	checkCatalogInvariants(t, saved)
	rebuilt, err := s.buildCatalog(ctx, s.model())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := entries(saved), entries(rebuilt); !reflect.DeepEqual(got, want) {
		t.Fatalf("saved catalog differs from a rebuild:\n got %v\nwant %v", got, want)
	}
}

// catalogStore is a store of 20 project rules whose catalog a search has
// saved.
func catalogStore(t *testing.T) *Store {
	t.Helper()
	ctx := t.Context()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "acolyte.db"), wordVectors{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	var ms []memory.Memory
	for i := range 20 {
		ms = append(ms, memory.Memory{ID: fmt.Sprintf("p%02d", i), Kind: memory.KindRule, Content: fmt.Sprintf("project rule %d", i)})
	}
	if _, err := s.ReplaceScope(ctx, memory.ScopeProject, "/src/app", ms); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Search(ctx, memory.Visibility{}, memory.Query{Text: "rule"}); err != nil {
		t.Fatal(err)
	}
	return s
}

// A remember appends its row to the catalog file in place, in an existing
// group or a new one, and the file then equals one rebuilt from the
// tables; a write that changes a row rewrites it, and appends go on after.
func TestAddsAppendToTheCatalogInPlace(t *testing.T) {
	ctx := t.Context()
	s := catalogStore(t)
	path := s.catalogPath(s.model())
	first := inode(t, path)
	var user memory.Memory
	for i := range 5 {
		r, err := s.Add(ctx, memory.Visibility{}, memory.Draft{Content: fmt.Sprintf("a user fact about caches, number %d", i)})
		if err != nil {
			t.Fatal(err)
		}
		user = r.Memory
	}
	if _, err := s.Add(ctx, memory.Visibility{SessionKey: "s1"}, memory.Draft{Content: "a session note", Scope: memory.ScopeSession}); err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(first, inode(t, path)) || first.Size() != inode(t, path).Size() {
		t.Fatal("adding memories rewrote the catalog instead of appending to it")
	}
	savedMatchesDatabase(t, s)

	if _, err := s.Delete(ctx, memory.Visibility{}, user.ID); err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(first, inode(t, path)) {
		t.Fatal("a delete rewrote the catalog instead of patching it")
	}
	savedMatchesDatabase(t, s)
	if _, err := s.Add(ctx, memory.Visibility{}, memory.Draft{Content: "one more user fact"}); err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(first, inode(t, path)) {
		t.Fatal("an add after a delete did not append")
	}
	savedMatchesDatabase(t, s)
	res, err := s.Search(ctx, memory.Visibility{}, memory.Query{Text: "one more user fact"})
	if err != nil || len(res) == 0 || res[0].Memory.Content != "one more user fact" {
		t.Fatalf("search after appends: %+v, %v", res, err)
	}
}

// A write that changes or removes memories patches the catalog file in
// place, as an add appends to it: the changed memory's new vector goes
// past the others, the removed one's row is marked, and the file then
// equals one rebuilt from the tables; a search finds the new text and
// not the removed memory.
func TestChangesAndRemovalsPatchTheCatalogInPlace(t *testing.T) {
	ctx := t.Context()
	s := catalogStore(t)
	path := s.catalogPath(s.model())
	first := inode(t, path)
	rules, err := s.List(ctx, memory.Visibility{ProjectKey: "/src/app"}, memory.Filter{Scope: memory.ScopeProject})
	if err != nil || len(rules) != 20 {
		t.Fatalf("list: %d, %v", len(rules), err)
	}
	changed := rules[3]
	changed.Content = "deploys go out on tuesdays"
	if _, err := s.Put(ctx, changed); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Delete(ctx, memory.Visibility{ProjectKey: "/src/app"}, rules[5].ID); err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(first, inode(t, path)) {
		t.Fatal("a change or a removal rewrote the catalog instead of patching it")
	}
	savedMatchesDatabase(t, s)
	saved, err := readCatalog(path, s.model())
	if err != nil {
		t.Fatal(err)
	}
	defer saved.unmap()
	if v := saved.view(memory.Visibility{ProjectKey: "/src/app"}, memory.Filter{}, nil); v.count != 19 || len(v.withVec) != 19 {
		t.Fatalf("the patched catalog shows %d memories, %d with vectors; want the 19 left", v.count, len(v.withVec))
	}
	res, err := s.Search(ctx, memory.Visibility{ProjectKey: "/src/app"}, memory.Query{Text: "deploys on tuesdays", Method: memory.MethodVector, Filter: memory.Filter{Limit: 20}})
	if err != nil || len(res) == 0 || res[0].ID != changed.ID {
		t.Fatalf("vector search for the changed text: %+v, %v", res, err)
	}
	for _, r := range res {
		if r.ID == rules[5].ID {
			t.Fatalf("the removed memory %s is still found", r.ID)
		}
	}
}

// Removed rows stay in the file, marked, until they pass an eighth of its
// rows; the removal that would pass that rewrites the file without them.
func TestRemovedRowsAreDroppedPastAnEighth(t *testing.T) {
	ctx := t.Context()
	s := catalogStore(t) // 20 rules: two removed rows fit, a third does not
	path := s.catalogPath(s.model())
	first := inode(t, path)
	rules, err := s.List(ctx, memory.Visibility{ProjectKey: "/src/app"}, memory.Filter{Scope: memory.ScopeProject})
	if err != nil {
		t.Fatal(err)
	}
	head := func() catalogHead {
		t.Helper()
		c, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		l, _, err := decodeLayout(c, int64(len(c)))
		if err != nil {
			t.Fatal(err)
		}
		h, err := decodeHead(c[catalogFixedSize : int64(catalogFixedSize)+l.headCap])
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	for i, m := range rules[:3] {
		if _, err := s.Delete(ctx, memory.Visibility{ProjectKey: "/src/app"}, m.ID); err != nil {
			t.Fatal(err)
		}
		savedMatchesDatabase(t, s)
		h := head()
		if i < 2 {
			if !os.SameFile(first, inode(t, path)) || h.gone != i+1 || h.n != 20 {
				t.Fatalf("after %d removals: rewritten %t, %d of %d rows marked removed; want the file patched, %d marked", i+1, !os.SameFile(first, inode(t, path)), h.gone, h.n, i+1)
			}
			continue
		}
		if os.SameFile(first, inode(t, path)) || h.gone != 0 || h.n != 17 {
			t.Fatalf("after 3 removals: rewritten %t, %d of %d rows marked removed; want a rewrite holding the 17 left", !os.SameFile(first, inode(t, path)), h.gone, h.n)
		}
	}
}

// A catalog mapped before a patch in place reads what it read before,
// all through: a search in another process keeps its view of the rows it
// counted while this one changes them.
func TestAMappedCatalogKeepsItsRowsThroughAPatch(t *testing.T) {
	ctx := t.Context()
	s := catalogStore(t)
	path := s.catalogPath(s.model())
	mapped, err := readCatalog(path, s.model())
	if err != nil {
		t.Fatal(err)
	}
	defer mapped.unmap()
	before := entries(mapped)
	rules, err := s.List(ctx, memory.Visibility{ProjectKey: "/src/app"}, memory.Filter{Scope: memory.ScopeProject})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range rules[:4] {
		m.Content += ", and then some"
		if _, err := s.Put(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Delete(ctx, memory.Visibility{ProjectKey: "/src/app"}, rules[10].ID, rules[11].ID); err != nil {
		t.Fatal(err)
	}
	savedMatchesDatabase(t, s)
	checkCatalogInvariants(t, mapped)
	if got := entries(mapped); !reflect.DeepEqual(got, before) {
		t.Fatalf("a patch changed a catalog mapped before it:\n got %v\nwant %v", got, before)
	}
}

// A crash part way through an append, simulated three ways, leaves a file
// no search trusts: the rows written but not the head (the head still
// names the generation before), a head half written (its checksum fails),
// and a file cut short. The next search rebuilds it.
func TestACrashMidAppendIsRebuilt(t *testing.T) {
	for _, damage := range []struct {
		name string
		do   func(t *testing.T, path string, before []byte)
	}{
		{"rows without head", func(t *testing.T, path string, before []byte) {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			copy(b[catalogFixedSize:], before[catalogFixedSize:catalogFixedSize+256])
			writeInPlace(t, path, b)
		}},
		{"torn head", func(t *testing.T, path string, _ []byte) {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			// The generation written, the counts that end the payload
			// not yet: without the checksum this head would be trusted.
			end := catalogFixedSize + 8 + int(binary.LittleEndian.Uint32(b[catalogFixedSize:]))
			b[end-2]--
			b[end-1]--
			writeInPlace(t, path, b)
		}},
		{"cut short", func(t *testing.T, path string, _ []byte) {
			info := inode(t, path)
			if err := os.Truncate(path, info.Size()-100); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(damage.name, func(t *testing.T) {
			ctx := t.Context()
			s := catalogStore(t)
			path := s.catalogPath(s.model())
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Add(ctx, memory.Visibility{}, memory.Draft{Content: "the appended fact about uploads"}); err != nil {
				t.Fatal(err)
			}
			damage.do(t, path, before)
			gen, _ := s.generation(ctx)
			if c, err := readCatalog(path, s.model()); err == nil {
				stale := c.generation != gen
				c.unmap()
				if !stale {
					t.Fatal("the damaged catalog still claims the database's generation")
				}
			}
			// A new Store, as the next process: nothing kept in memory.
			s2, err := Open(ctx, s.path, wordVectors{})
			if err != nil {
				t.Fatal(err)
			}
			defer s2.Close()
			res, err := s2.Search(ctx, memory.Visibility{}, memory.Query{Text: "appended fact about uploads"})
			if err != nil || len(res) == 0 || res[0].Memory.Content != "the appended fact about uploads" {
				t.Fatalf("search after the crash: %+v, %v", res, err)
			}
			savedMatchesDatabase(t, s2)
		})
	}
}

// writeInPlace overwrites the file at path without replacing it, as a
// writer killed mid-append would have left it.
func writeInPlace(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, 0); err != nil {
		t.Fatal(err)
	}
}

// A patch the file has no room for, of a row it does not hold or that
// moves a row to another group, leaves the file as it was, for
// publishCatalog to rewrite it.
func TestPatchWithoutRoomChangesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalog")
	c := sampleCatalog()
	if err := writeCatalog(path, c); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	row := func(seq int64) catalogRow {
		return catalogRow{seq: seq, scope: memory.ScopeUser, kind: 1, scale: 1, vec: []int8{1, 2, 3}}
	}
	var tooMany []catalogRow
	for i := range catalogRoom(len(c.seqs)) + 1 {
		tooMany = append(tooMany, row(1<<41+int64(i)))
	}
	for name, p := range map[string]*catalogPatch{
		"more rows than room":  {model: c.model, before: c.generation, gen: "0f3a:8", fresh: tooMany},
		"a row the file lacks": {model: c.model, before: c.generation, gen: "0f3a:8", fresh: []catalogRow{row(10)}},
		"a row in another group": {model: c.model, before: c.generation, gen: "0f3a:8",
			fresh: []catalogRow{{seq: 5, scope: memory.ScopeUser, kind: 1, scale: 1, vec: []int8{1, 2, 3}}}},
		"another generation": {model: c.model, before: "0f3a:6", gen: "0f3a:7", fresh: []catalogRow{row(1 << 41)}},
		"another model":      {model: "test:other/3", before: c.generation, gen: "0f3a:8", fresh: []catalogRow{row(1 << 41)}},
	} {
		if err := patchCatalog(path, p); err == nil {
			t.Errorf("%s: patched", name)
		}
		if got, _ := os.ReadFile(path); !bytes.Equal(got, want) {
			t.Fatalf("%s: a refused patch changed the file", name)
		}
	}
	// And one that fits: the sample plus the row, as a rewrite would hold.
	p := &catalogPatch{model: c.model, before: c.generation, gen: "0f3a:8", fresh: []catalogRow{row(1 << 41)}}
	if err := patchCatalog(path, p); err != nil {
		t.Fatal(err)
	}
	got, err := readCatalog(path, c.model)
	if err != nil {
		t.Fatal(err)
	}
	defer got.unmap()
	wantC := sampleCatalog()
	wantC.generation = "0f3a:8"
	wantC.seqs = append(wantC.seqs, 1<<41)
	wantC.groups = append(wantC.groups, 0)
	wantC.kinds = append(wantC.kinds, 1)
	wantC.vecAt = append(wantC.vecAt, 3)
	wantC.scales = append(wantC.scales, 1)
	wantC.vecs = append(wantC.vecs, 1, 2, 3)
	sameCatalog(t, got, wantC)
}

// Two processes taking turns to remember append to the same file, each
// after the other's append, and a search in either sees every memory.
func TestAppendsFromTwoProcessesInTurn(t *testing.T) {
	ctx := t.Context()
	a := catalogStore(t)
	b, err := Open(ctx, a.path, wordVectors{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	path := a.catalogPath(a.model())
	first := inode(t, path)
	for i := range 6 {
		s := []*Store{a, b}[i%2]
		if _, err := s.Add(ctx, memory.Visibility{}, memory.Draft{Content: fmt.Sprintf("fact %d from process %d about queues", i, i%2)}); err != nil {
			t.Fatal(err)
		}
		savedMatchesDatabase(t, s)
	}
	if !os.SameFile(first, inode(t, path)) {
		t.Fatal("adds in turn rewrote the catalog instead of appending")
	}
	for _, s := range []*Store{a, b} {
		res, err := s.Search(ctx, memory.Visibility{}, memory.Query{Text: "fact 5 from process 1 about queues"})
		if err != nil || len(res) == 0 || res[0].Memory.Content != "fact 5 from process 1 about queues" {
			t.Fatalf("search: %+v, %v", res, err)
		}
	}
}
