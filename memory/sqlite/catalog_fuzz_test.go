package sqlite

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/acolyte-dev/acolyte/memory"
)

// encodedCatalog returns the bytes writeCatalog puts in the file for c.
func encodedCatalog(tb testing.TB, c *catalog) []byte {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "catalog")
	if err := writeCatalog(path, c); err != nil {
		tb.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// checkCatalogInvariants fails unless c is a catalog search can index
// without going out of bounds: every column as long as the memories, every
// group and vector index in range, seqs strictly ascending (index searches
// them) and exactly dim bytes per vector.
func checkCatalogInvariants(t *testing.T, c *catalog) {
	t.Helper()
	n := len(c.seqs)
	if len(c.groups) != n || len(c.kinds) != n || len(c.vecAt) != n {
		t.Fatalf("columns of unequal length: %d seqs, %d groups, %d kinds, %d vecAt", n, len(c.groups), len(c.kinds), len(c.vecAt))
	}
	if len(c.scopes) != len(c.keys) {
		t.Fatalf("%d scopes but %d keys", len(c.scopes), len(c.keys))
	}
	if c.dim < 0 || len(c.vecs) != len(c.scales)*c.dim {
		t.Fatalf("%d vector bytes for %d vectors of dimension %d", len(c.vecs), len(c.scales), c.dim)
	}
	for i := range n {
		if int(c.groups[i]) >= len(c.scopes) {
			t.Fatalf("memory %d is in group %d of %d", i, c.groups[i], len(c.scopes))
		}
		if at := c.vecAt[i]; at < -1 || int(at) >= len(c.scales) {
			t.Fatalf("memory %d points at vector %d of %d", i, at, len(c.scales))
		}
		if i > 0 && c.seqs[i] <= c.seqs[i-1] {
			t.Fatalf("seqs out of order at %d: %d after %d", i, c.seqs[i], c.seqs[i-1])
		}
	}
}

// FuzzCatalogDecode feeds decodeCatalog arbitrary file contents: a file
// beside the database can be truncated, damaged or written by another
// version, and a search must then rebuild rather than crash or trust
// garbage. Whatever decodes must satisfy the invariants search indexes by,
// survive the walks a search makes over it, and come back unchanged through
// writeCatalog.
func FuzzCatalogDecode(f *testing.F) {
	const model = "test:model/3"
	sample := encodedCatalog(f, sampleCatalog())
	f.Add(sample)
	f.Add(encodedCatalog(f, &catalog{model: model, generation: "0:0"}))
	noVectors := sampleCatalog()
	noVectors.dim, noVectors.scales, noVectors.vecs = 0, nil, nil
	noVectors.vecAt = []int32{-1, -1, -1, -1, -1}
	f.Add(encodedCatalog(f, noVectors))
	f.Add(sample[:len(sample)-1])
	f.Add([]byte(catalogMagic))
	f.Add([]byte{})

	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := decodeCatalog(b, model)
		if err != nil {
			if c != nil {
				t.Fatalf("decodeCatalog returned a catalog alongside %v", err)
			}
			if !errors.Is(err, errBadCatalog) {
				t.Fatalf("decodeCatalog failed with %v, want errBadCatalog", err)
			}
			return
		}
		if c == nil {
			t.Fatal("decodeCatalog returned neither a catalog nor an error")
		}
		if c.model != model {
			t.Fatalf("catalog of model %q accepted for %q", c.model, model)
		}
		checkCatalogInvariants(t, c)

		// The walks a search makes.
		for i, seq := range c.seqs {
			if got := c.index(seq); got != i {
				t.Fatalf("index(%d) = %d, want %d", seq, got, i)
			}
			if at := c.vecAt[i]; at >= 0 {
				if v := c.vector(at); len(v) != c.dim {
					t.Fatalf("vector %d has %d bytes, want %d", at, len(v), c.dim)
				}
			}
		}
		v := c.view(memory.Visibility{SessionKey: "s"}, memory.Filter{}, nil)
		for _, i := range v.withVec {
			if !v.visible[i] || c.vecAt[i] < 0 {
				t.Fatalf("view lists position %d as having a visible vector", i)
			}
		}
		if c.dim > 0 {
			query := make([]float32, c.dim)
			if got := cosines(query, c, v.withVec); len(got) != len(v.withVec) {
				t.Fatalf("%d cosines for %d vectors", len(got), len(v.withVec))
			}
		}

		// Accepted input means the catalog it names, not merely bytes
		// that slipped through: writing it again and reading that back
		// gives the same catalog. Bytes are compared rather than fields so
		// that a NaN scale equals itself.
		first := encodedCatalog(t, c)
		again, err := decodeCatalog(first, model)
		if err != nil {
			t.Fatalf("a decoded catalog did not survive writing it again: %v", err)
		}
		if second := encodedCatalog(t, again); !bytes.Equal(first, second) {
			t.Fatalf("catalog changed on rewriting:\n got %+v\nwant %+v", again, c)
		}
	})
}
