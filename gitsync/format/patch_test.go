package format

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/acolyte-dev/acolyte/memory"
)

// The patch helpers must produce exactly the canonical encoding that a full
// rewrite would, wherever the line goes.
func TestPatchLinesMatchTheCanonicalEncoding(t *testing.T) {
	var mems []memory.Memory
	for i := range 5 {
		mems = append(mems, stored(fmt.Sprintf("01B%d", 2*i), fmt.Sprintf("fact number %d", i), t0))
	}
	data := Encode(mems)
	for _, id := range []string{"01A0", "01B3", "01B9", "01C0"} {
		m := stored(id, "a new fact "+id, t0)
		parts, err := InsertLine(data, m)
		if err != nil {
			t.Fatalf("insert %s: %v", id, err)
		}
		if got, want := bytes.Join(parts, nil), Encode(append(slices.Clone(mems), m)); !bytes.Equal(got, want) {
			t.Errorf("insert %s:\n%s\nwant\n%s", id, got, want)
		}
	}
	for _, gone := range [][]string{{"01B0"}, {"01B8"}, {"01B2", "01B6"}, {"01B0", "01B2", "01B4", "01B6", "01B8"}} {
		parts, err := RemoveLines(data, setOf(gone...))
		if err != nil {
			t.Fatalf("remove %v: %v", gone, err)
		}
		kept := slices.DeleteFunc(slices.Clone(mems), func(m memory.Memory) bool { return slices.Contains(gone, m.ID) })
		if got, want := bytes.Join(parts, nil), Encode(kept); !bytes.Equal(got, want) {
			t.Errorf("remove %v:\n%s\nwant\n%s", gone, got, want)
		}
	}
	if _, err := RemoveLines(data, setOf("01B0", "nope")); !errors.Is(err, ErrNotPatchable) {
		t.Errorf("removing an id the file lacks: %v, want ErrNotPatchable", err)
	}
	if _, err := InsertLine(data, mems[2]); !errors.Is(err, ErrNotPatchable) {
		t.Errorf("inserting an id the file has: %v, want ErrNotPatchable", err)
	}
	if _, err := InsertLine(bytes.TrimSuffix(data, []byte("\n")), stored("01C", "x", t0)); !errors.Is(err, ErrNotPatchable) {
		t.Errorf("a file without its final newline: %v, want ErrNotPatchable", err)
	}
}

func setOf(ids ...string) map[string]bool {
	out := map[string]bool{}
	for _, id := range ids {
		out[id] = true
	}
	return out
}
