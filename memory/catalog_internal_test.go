package memory

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func sampleCatalog() *catalog {
	return &catalog{
		generation: "0f3a:7",
		model:      "test:model/3",
		dim:        3,
		scopes:     []Scope{ScopeUser, ScopeProject},
		keys:       []string{"", "/src/app"},
		seqs:       []int64{2, 5, 9, 1 << 40},
		groups:     []uint32{0, 1, 1, 0},
		kinds:      []uint8{1, 3, 4, 2},
		vecAt:      []int32{0, -1, 1, 2},
		scales:     []float32{0.5, 0.25, 1e-3},
		vecs:       []int8{1, -2, 127, -127, 0, 3, 9, 8, 7},
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
	// The last seq (1<<40) sits 8 bytes before the groups column; making
	// it smaller than its predecessor breaks the order search relies on.
	c := sampleCatalog()
	c.seqs[3] = 1
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
	added, err := s.Add(ctx, Visibility{}, Draft{Content: "the cache evicts large uploads"})
	if err != nil {
		t.Fatal(err)
	}
	recalled := func() time.Time {
		t.Helper()
		if _, err := s.Search(ctx, Visibility{}, Query{Text: "cache uploads"}); err != nil {
			t.Fatal(err)
		}
		m, err := s.Get(ctx, Visibility{}, added.Memory.ID)
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
