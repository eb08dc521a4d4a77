package format

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/memory"
)

func TestMerge(t *testing.T) {
	a := stored("01A", "fact a", t0)
	b := stored("01B", "fact b", t0)
	c := stored("01C", "fact c", t0)
	later := t0.Add(time.Minute)
	tests := []struct {
		name               string
		base, ours, theirs []memory.Memory
		want               []memory.Memory
		reportContains     string
	}{
		{"both add", []memory.Memory{a}, []memory.Memory{a, b}, []memory.Memory{a, c}, []memory.Memory{a, b, c}, ""},
		{"no base file", nil, []memory.Memory{b}, []memory.Memory{c}, []memory.Memory{b, c}, ""},
		{"one side edits", []memory.Memory{a}, []memory.Memory{edited(a, "fact a2", later)}, []memory.Memory{a}, []memory.Memory{edited(a, "fact a2", later)}, ""},
		{"theirs edits", []memory.Memory{a}, []memory.Memory{a}, []memory.Memory{edited(a, "fact a2", later)}, []memory.Memory{edited(a, "fact a2", later)}, ""},
		{"one side deletes", []memory.Memory{a, b}, []memory.Memory{a}, []memory.Memory{a, b}, []memory.Memory{a}, ""},
		{"both delete", []memory.Memory{a, b}, []memory.Memory{a}, []memory.Memory{a}, []memory.Memory{a}, ""},
		{"same edit both sides", []memory.Memory{a}, []memory.Memory{edited(a, "x y", later)}, []memory.Memory{edited(a, "x y", later)}, []memory.Memory{edited(a, "x y", later)}, ""},
		{"both edit, later wins", []memory.Memory{a}, []memory.Memory{edited(a, "ours", later.Add(time.Second))}, []memory.Memory{edited(a, "theirs", later)},
			[]memory.Memory{edited(a, "ours", later.Add(time.Second))}, "01A: edited on both sides; kept our version"},
		{"both edit, tie takes larger content", []memory.Memory{a}, []memory.Memory{edited(a, "apple", later)}, []memory.Memory{edited(a, "banana", later)},
			[]memory.Memory{edited(a, "banana", later)}, "kept their version"},
		{"edit beats delete (ours)", []memory.Memory{a}, []memory.Memory{edited(a, "kept", later)}, nil,
			[]memory.Memory{edited(a, "kept", later)}, "deleted on their side but edited on ours; kept our edit"},
		{"edit beats delete (theirs)", []memory.Memory{a}, nil, []memory.Memory{edited(a, "kept", later)},
			[]memory.Memory{edited(a, "kept", later)}, "deleted on our side but edited on theirs; kept their edit"},
	}
	encodeOrEmpty := func(mems []memory.Memory) []byte {
		if mems == nil {
			return nil
		}
		return Encode(mems)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, report, err := Merge(encodeOrEmpty(tt.base), Encode(tt.ours), Encode(tt.theirs))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(Encode(tt.want)) {
				t.Errorf("merged:\n%s\nwant:\n%s", got, Encode(tt.want))
			}
			joined := strings.Join(report, "\n")
			if tt.reportContains == "" && joined != "" || !strings.Contains(joined, tt.reportContains) {
				t.Errorf("report %q, want %q", joined, tt.reportContains)
			}
			// Both merge directions must agree, or two people merging the
			// same branches would commit different files.
			swapped, _, err := Merge(encodeOrEmpty(tt.base), Encode(tt.theirs), Encode(tt.ours))
			if err != nil || string(swapped) != string(got) {
				t.Errorf("merge is not symmetric:\n%s\nvs\n%s", got, swapped)
			}
		})
	}
}

func TestMergeRefusesConflictMarkers(t *testing.T) {
	ours := string(Encode([]memory.Memory{stored("01A", "fact a", t0)}))
	conflicted := ours + "<<<<<<< HEAD\n=======\n>>>>>>> b\n"
	_, _, err := Merge(nil, []byte(conflicted), []byte(ours))
	if !errors.Is(err, ErrConflictMarkers) {
		t.Fatalf("err = %v", err)
	}
}

// TestMergeFilesRefusesAnOversizedSide: a side over MaxFileBytes fails the
// merge at once (git then merges by union, see MergeDriverCommand) and
// leaves ours untouched.
func TestMergeFilesRefusesAnOversizedSide(t *testing.T) {
	dir := t.TempDir()
	small := Encode([]memory.Memory{stored("01A", "fact a", t0)})
	paths := map[string]string{}
	for _, name := range []string{"base", "ours", "theirs"} {
		paths[name] = filepath.Join(dir, name)
		if err := os.WriteFile(paths[name], small, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Truncate(paths["theirs"], MaxFileBytes+1); err != nil { // sparse
		t.Fatal(err)
	}
	_, err := MergeFiles(paths["base"], paths["ours"], paths["theirs"])
	if err == nil || !strings.Contains(err.Error(), "256 MiB") {
		t.Fatalf("MergeFiles = %v; want a refusal naming the limit", err)
	}
	if got, _ := os.ReadFile(paths["ours"]); !bytes.Equal(got, small) {
		t.Fatal("ours was changed")
	}
}
