package format

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/memory"
)

func mem(id, content string, updated time.Time) memory.Memory {
	return memory.Memory{ID: id, Kind: memory.KindStored, Scope: memory.ScopeProject, Content: content, CreatedAt: updated, UpdatedAt: updated}
}

func ids(mems []memory.Memory) []string {
	var out []string
	for _, m := range mems {
		out = append(out, m.ID)
	}
	return out
}

// A tombstone hides the version it forgot and earlier ones, never a later
// edit: that is what makes a union merge agree with the merge driver, which
// keeps an edit over a deletion.
func TestTombstoneCoversTheForgottenVersionOnly(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC)
	b := mem("01B", "webhooks use HMAC", t0)
	edited := mem("01B", "webhooks use Ed25519", t0.Add(time.Second))
	ts := []Tombstone{TombstoneFor(b, t0.Add(time.Hour))}
	for _, c := range []struct {
		name string
		in   []memory.Memory
		want []string
	}{
		{"the forgotten version", []memory.Memory{mem("01A", "a", t0), b}, []string{"01A"}},
		{"a later edit", []memory.Memory{mem("01A", "a", t0), edited}, []string{"01A", "01B"}},
		{"an earlier version", []memory.Memory{mem("01B", "older", t0.Add(-time.Hour))}, nil},
	} {
		kept, _ := Forget(c.in, ts)
		if got := ids(kept); !slices.Equal(got, c.want) {
			t.Errorf("%s: kept %v, want %v", c.name, got, c.want)
		}
	}
}

// What a union merge of two branches' tombstone files leaves (both sides'
// lines, out of order, an id twice) decodes, and encodes canonically.
func TestForgottenFileReadsAUnionMerge(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ours := EncodeForgotten([]Tombstone{{ID: "01A", Updated: t0, Forgotten: t0.Add(2 * time.Hour)}})
	theirs := EncodeForgotten([]Tombstone{{ID: "01C", Updated: t0, Forgotten: t0.Add(time.Hour)},
		{ID: "01A", Updated: t0.Add(time.Minute), Forgotten: t0.Add(3 * time.Hour)}})
	union := append(append([]byte{}, ours...), theirs...)
	ts, invalid, err := DecodeForgotten(ForgottenFile, union)
	if err != nil || len(invalid) > 0 {
		t.Fatalf("decode: %v %v", invalid, err)
	}
	canon := EncodeForgotten(ts)
	want := `{"id":"01C","updated":"2026-01-02T03:04:05.000Z","forgotten":"2026-01-02T04:04:05.000Z"}` + "\n" +
		`{"id":"01A","updated":"2026-01-02T03:05:05.000Z","forgotten":"2026-01-02T06:04:05.000Z"}` + "\n"
	if string(canon) != want {
		t.Fatalf("canonical:\n%s\nwant\n%s", canon, want)
	}
	if again, _, _ := DecodeForgotten(ForgottenFile, canon); !bytes.Equal(EncodeForgotten(again), canon) {
		t.Fatal("canonical encoding does not round-trip")
	}
}

func TestForgottenFileRefusesWhatItCannotRead(t *testing.T) {
	_, invalid, err := DecodeForgotten(ForgottenFile, []byte("{\"id\":\"01A\",\"forgotten\":\"2026-01-02T03:04:05.000Z\"}\n{\"id\":\"01B\"}\n{\"id\":\"01C\",\"forgotten\":\"x\",\"extra\":1}\n"))
	if err != nil || len(invalid) != 2 || invalid[0].Line != 2 || invalid[1].Line != 3 {
		t.Fatalf("invalid %v, err %v; want lines 2 and 3", invalid, err)
	}
	if !strings.Contains(invalid[0].Error(), "no forgotten time") {
		t.Errorf("message %q does not say what is missing", invalid[0])
	}
	_, _, err = DecodeForgotten(ForgottenFile, []byte("<<<<<<< ours\n"))
	if !errors.Is(err, ErrConflictMarkers) {
		t.Errorf("conflict markers: %v", err)
	}
}

func TestCompactKeepsTombstonesStillHidingALine(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	old := now.Add(-TombstoneTTL - time.Hour)
	ts := []Tombstone{{ID: "01A", Forgotten: old}, {ID: "01B", Forgotten: old}, {ID: "01C", Forgotten: now.Add(-time.Hour)}}
	got := Compact(ts, map[string]bool{"01B": true}, now)
	var kept []string
	for _, t := range got {
		kept = append(kept, t.ID)
	}
	if want := []string{"01B", "01C"}; !slices.Equal(kept, want) {
		t.Fatalf("kept %v, want %v", kept, want)
	}
}
