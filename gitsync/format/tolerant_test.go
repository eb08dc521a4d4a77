package format

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/memory"
)

// A merge without acolyte's driver leaves lines out of order and the same id
// twice; Decode reads it, keeping the version Merge would keep whichever
// order the lines are in, and DecodeAll names the dropped line.
func TestDecodeResolvesDuplicateIDsAsMergeDoes(t *testing.T) {
	a := stored("01A", "fact a", t0)
	older := edited(a, "fact a, edited on main", t0.Add(time.Minute))
	newer := edited(a, "fact a, edited on feature", t0.Add(2*time.Minute))
	b := stored("01B", "fact b", t0)
	merged, _, err := Merge([]byte(fileHead+line(a)+line(b)), []byte(fileHead+line(older)+line(b)), []byte(fileHead+line(newer)+line(b)))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{
		"newer last":  fileHead + line(b) + line(older) + line(newer),
		"newer first": fileHead + line(newer) + line(b) + line(older),
	} {
		t.Run(name, func(t *testing.T) {
			mems, err := Decode("memories.jsonl", []byte(data))
			if err != nil {
				t.Fatalf("Decode refused a union-merged file: %v", err)
			}
			if got := string(Encode(mems)); got != string(Encode([]memory.Memory{newer, b})) || got != string(merged) {
				t.Fatalf("Decode kept:\n%s\nMerge kept:\n%s", got, merged)
			}
			d, err := DecodeAll("memories.jsonl", []byte(data))
			if err != nil || len(d.Duplicates) != 1 || len(d.Invalid) != 0 {
				t.Fatalf("DecodeAll = %+v, %v", d, err)
			}
			msg := d.Duplicates[0].Error()
			droppedLine := strings.Index(data[len(fileHead):], line(older))
			want := 2 + strings.Count(data[len(fileHead):][:droppedLine], "\n")
			if d.Duplicates[0].Line != want || !strings.Contains(msg, "fact a, edited on main") || !strings.Contains(msg, "acolyte sync") {
				t.Errorf("duplicate report %q: want line %d, the dropped text and the fix", msg, want)
			}
		})
	}
	// The same line twice (a rebase replaying an addition) loses nothing.
	d, err := DecodeAll("m", []byte(fileHead+line(b)+line(b)))
	if err != nil || len(d.Memories) != 1 || len(d.Duplicates) != 0 {
		t.Fatalf("identical duplicate: %+v, %v", d, err)
	}
	// Equal times: the larger content wins, in both orders.
	x, y := edited(a, "apple", t0), edited(a, "banana", t0)
	for _, data := range []string{fileHead + line(x) + line(y), fileHead + line(y) + line(x)} {
		mems, err := Decode("m", []byte(data))
		if err != nil || len(mems) != 1 || mems[0].Content != "banana" {
			t.Fatalf("tie: %+v, %v", mems, err)
		}
	}
}

// The dropped side of a duplicate is never echoed when it holds a secret.
func TestDuplicateReportWithholdsSecrets(t *testing.T) {
	a := stored("01A", "fact a", t0.Add(time.Hour))
	secret := edited(a, "deploy key AKIAQX7NR3JTMB2W5KPL", t0)
	d, err := DecodeAll("m", []byte(fileHead+line(a)+line(secret)))
	if err != nil || len(d.Duplicates) != 1 {
		t.Fatalf("%+v, %v", d, err)
	}
	if msg := d.Duplicates[0].Error(); strings.Contains(msg, "AKIA") || !strings.Contains(msg, "withheld") {
		t.Fatalf("report %q echoes the secret or hides that it withheld it", msg)
	}
}

// A poisoned line (here a topic with NUL, as an older acolyte wrote from
// "## Build\0ing") is skipped by readers and named, and refused by writers.
func TestPoisonedLineIsSkippedByReadersAndRefusedByWriters(t *testing.T) {
	poisoned := `{"id":"r-1","kind":"rule","content":"Run make.","topic":"build\u0000ing","source":"AGENTS.md#Build"}` + "\n"
	data := fileHead + line(stored("01A", "fact a", t0)) + poisoned + line(stored("01B", "fact b", t0))
	d, err := DecodeAll(".acolyte/memories.jsonl", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Memories) != 2 || len(d.Invalid) != 1 || d.Invalid[0].Line != 3 {
		t.Fatalf("DecodeAll = %d memories, invalid %v", len(d.Memories), d.Invalid)
	}
	_, err = Decode(".acolyte/memories.jsonl", []byte(data))
	var le *LineError
	if !errors.As(err, &le) || le.Line != 3 || !strings.Contains(err.Error(), ".acolyte/memories.jsonl:3:") || !strings.Contains(err.Error(), "acolyte sync") {
		t.Fatalf("Decode error %v: want file:line and the fix", err)
	}
}

func TestWriteFileRefusesAMemoryDecodeWouldReject(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memories.jsonl")
	good := stored("01A", "fact a", t0)
	if err := WriteFile(path, []memory.Memory{good}); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	bad := stored("01B", "fact b", t0)
	bad.Topic = "build\x00ing"
	badSource := stored("01C", "fact c", t0)
	badSource.Source = "cli\xff"
	err := WriteFile(path, []memory.Memory{good, bad, badSource})
	if err == nil || !strings.Contains(err.Error(), "01B") || !strings.Contains(err.Error(), "01C") {
		t.Fatalf("WriteFile = %v; want a refusal naming 01B and 01C", err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Fatal("a refused write changed the file")
	}
}

func TestMergeLeavesOutSecretsAndSaysWhich(t *testing.T) {
	a := stored("01A", "fact a", t0)
	leak := stored("01S", "the token is ghp_abcdefghijklmnopqrstuvwxyz0123456789", t0)
	merged, report, err := Merge([]byte(fileHead+line(a)), []byte(fileHead+line(a)+line(leak)), []byte(fileHead+line(a)))
	if err != nil {
		t.Fatal(err)
	}
	if string(merged) != string(Encode([]memory.Memory{a})) {
		t.Fatalf("merged:\n%s", merged)
	}
	joined := strings.Join(report, "\n")
	if !strings.Contains(joined, "01S") || strings.Contains(joined, "ghp_") {
		t.Fatalf("report %q: want the id and never the secret", joined)
	}
}

// TestDecodeFindsADuplicateAfterAscendingLines: DecodeAll indexes ids only
// from the first one out of order, from the lines before it, blank and
// invalid ones among them; a duplicate of any earlier line is still found
// and placed at its line.
func TestDecodeFindsADuplicateAfterAscendingLines(t *testing.T) {
	a, b, c := stored("01A", "fact a", t0), stored("01B", "fact b", t0), stored("01C", "fact c", t0)
	newerA := edited(a, "fact a, edited", t0.Add(time.Minute))
	data := fileHead + line(a) + "\n" + `{"id":"01AB","kind":"nope","content":"x"}` + "\n" + line(b) + line(c) + line(newerA) + line(b)
	d, err := DecodeAll("m", []byte(data))
	if err != nil || len(d.Invalid) != 1 || d.Invalid[0].Line != 4 {
		t.Fatalf("DecodeAll = %+v, %v", d, err)
	}
	if got := string(Encode(d.Memories)); got != string(Encode([]memory.Memory{newerA, b, c})) {
		t.Fatalf("kept:\n%s", got)
	}
	if len(d.Duplicates) != 1 || d.Duplicates[0].Line != 2 || !strings.Contains(d.Duplicates[0].Error(), "also on line 7") {
		t.Fatalf("duplicates: %v", d.Duplicates)
	}
}
