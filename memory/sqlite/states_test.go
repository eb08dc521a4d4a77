package sqlite_test

import (
	"fmt"
	"maps"
	"path/filepath"
	"testing"
)

// Values written in a batch read back in a batch, past one query's worth
// of keys, and an update replaces a value; a key never written is left
// out, not read as "".
func TestStatesReadBackWhatABatchWrote(t *testing.T) {
	s := openStore(t, filepath.Join(t.TempDir(), "acolyte.db"), nil)
	want := map[string]string{}
	var keys []string
	for i := range 1200 {
		k := fmt.Sprintf("blob:%04d", i)
		want[k], keys = fmt.Sprint(i), append(keys, k)
	}
	if err := s.SetStates(t.Context(), want); err != nil {
		t.Fatal(err)
	}
	want["blob:0007"] = "seven"
	if err := s.SetStates(t.Context(), map[string]string{"blob:0007": "seven"}); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetStates(t.Context(), append(keys, "never written"))
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(got, want) {
		t.Errorf("read back %d values, want %d; blob:0007 = %q", len(got), len(want), got["blob:0007"])
	}
	if v, err := s.GetState(t.Context(), "blob:0007"); err != nil || v != "seven" {
		t.Errorf("GetState after SetStates: %q, %v", v, err)
	}
}
