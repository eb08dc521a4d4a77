package format

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
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

// Splice must give exactly what Encode gives for the memories changed so,
// and CanonicalLine must accept each line Encode writes and nothing else.
func TestSpliceMatchesTheCanonicalEncoding(t *testing.T) {
	var mems []memory.Memory
	for i := range 5 {
		mems = append(mems, stored(fmt.Sprintf("01B%d", 2*i), fmt.Sprintf("fact number %d", i), t0))
	}
	data := Encode(mems)
	cases := []struct {
		remove []string
		insert []string
	}{
		{nil, []string{"01A0"}},
		{nil, []string{"01C0", "01C1"}},
		{[]string{"01B4"}, []string{"01B4"}},
		{[]string{"01B0", "01B8"}, []string{"01B1", "01B9"}},
		{[]string{"01B0", "01B2", "01B4", "01B6", "01B8"}, nil},
		{[]string{"01B2"}, []string{"01A", "01B2", "01B3", "01Z"}},
	}
	for _, c := range cases {
		var ins []memory.Memory
		for _, id := range c.insert {
			ins = append(ins, stored(id, "new fact "+id, t0))
		}
		parts, err := Splice(data, setOf(c.remove...), ins)
		if err != nil {
			t.Fatalf("splice %v %v: %v", c.remove, c.insert, err)
		}
		want := slices.DeleteFunc(slices.Clone(mems), func(m memory.Memory) bool { return slices.Contains(c.remove, m.ID) })
		if got, want := bytes.Join(parts, nil), Encode(append(want, ins...)); !bytes.Equal(got, want) {
			t.Errorf("splice %v %v:\n%s\nwant\n%s", c.remove, c.insert, got, want)
		}
	}
	if _, err := Splice(data, nil, []memory.Memory{stored("01B2", "again", t0)}); !errors.Is(err, ErrNotPatchable) {
		t.Errorf("inserting an id a kept line has: %v, want ErrNotPatchable", err)
	}
	if _, err := Splice(data, setOf("nope"), nil); !errors.Is(err, ErrNotPatchable) {
		t.Errorf("removing an id the file lacks: %v, want ErrNotPatchable", err)
	}
	lines, err := LinesByID(data, setOf("01B2", "01B8", "nope"))
	if err != nil || len(lines) != 2 {
		t.Fatalf("LinesByID: %d lines, %v", len(lines), err)
	}
	if m, ok := CanonicalLine(lines["01B2"]); !ok || m.ID != "01B2" {
		t.Errorf("CanonicalLine refused a line Encode wrote: %q", lines["01B2"])
	}
	for _, l := range []string{
		strings.Replace(string(lines["01B2"]), "\n", "\r\n", 1),
		strings.Replace(string(lines["01B2"]), `,"kind"`, `, "kind"`, 1),
		`{"id":"01B2"}` + "\n",
	} {
		if _, ok := CanonicalLine([]byte(l)); ok {
			t.Errorf("CanonicalLine accepted %q", l)
		}
	}
}

// spliceFound, which finds lines by binary search, must give what Splice
// gives, line for line, for a file in id order; in a file out of order it
// may miss a line, and then says so, but never removes another.
func TestSpliceFoundMatchesSplice(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for round := range 400 {
		var mems []memory.Memory
		for i := range r.IntN(300) {
			mems = append(mems, stored(fmt.Sprintf("01K%05d", 3*i+r.IntN(3)), fmt.Sprintf("fact %d", i), t0))
		}
		data := Encode(mems)
		if round%4 == 3 && len(mems) > 1 {
			// The same lines out of order: hand-edited, or merged badly.
			lines := bytes.SplitAfter(data, []byte("\n"))
			body := lines[1 : len(lines)-1]
			r.Shuffle(len(body), func(i, j int) { body[i], body[j] = body[j], body[i] })
			data = bytes.Join(lines, nil)
		}
		remove := map[string]bool{}
		for range 1 + r.IntN(4) {
			if len(mems) > 0 && r.IntN(5) > 0 {
				remove[mems[r.IntN(len(mems))].ID] = true
			} else {
				remove[fmt.Sprintf("01K%05d", r.IntN(1000))] = true // maybe none has it
			}
		}
		want, wantErr := Splice(data, remove, nil)
		if got, ok := spliceFound(data, remove, nil); ok && (wantErr != nil || !bytes.Equal(bytes.Join(got, nil), bytes.Join(want, nil))) {
			t.Fatalf("round %d: removing %v, spliceFound gave\n%s\nSplice (%v)\n%s", round, remove, bytes.Join(got, nil), wantErr, bytes.Join(want, nil))
		} else if !ok && wantErr == nil && round%4 != 3 {
			t.Fatalf("round %d: spliceFound missed a line of %v in a file in order", round, remove)
		}
		got, gotErr := RemoveLines(data, remove)
		if (gotErr == nil) != (wantErr == nil) || !bytes.Equal(bytes.Join(got, nil), bytes.Join(want, nil)) {
			t.Fatalf("round %d: RemoveLines(%v) = %v, Splice %v", round, remove, gotErr, wantErr)
		}
		if len(mems) > 0 {
			m := mems[r.IntN(len(mems))]
			m.Content = "revised"
			got, gotErr := ReplaceLine(data, m)
			want, wantErr := Splice(data, map[string]bool{m.ID: true}, []memory.Memory{m})
			if round%4 != 3 && ((gotErr == nil) != (wantErr == nil) || !bytes.Equal(bytes.Join(got, nil), bytes.Join(want, nil))) {
				t.Fatalf("round %d: ReplaceLine(%s) = %v, Splice %v", round, m.ID, gotErr, wantErr)
			}
		}
	}
}
