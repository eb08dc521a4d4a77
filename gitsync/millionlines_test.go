package gitsync

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/memory"
)

// millionLines is a file of project memory as an attacker commits it: the
// header and a million short lines, 2 MB, far under every byte limit.
func millionLines() []byte {
	return append([]byte(`{"acolyte":"memories","version":1}`+"\n"), bytes.Repeat([]byte("x\n"), 1_000_000)...)
}

// A memories file, a shard or forgotten.jsonl of more lines than
// MaxIndexedMemories is
// refused by its line count on every road that reads it, before a line
// is decoded: check (which took 20 s and 900 MB to report a million invalid
// lines), an import, a write and the merge driver, each naming the file,
// the limit and the fix.
func TestAMillionLineFileIsRefusedOnEveryRoad(t *testing.T) {
	t.Parallel() // its own repositories and indexes
	wantRefusal := func(t *testing.T, road, rel string, err error) {
		t.Helper()
		if !errors.Is(err, ErrTooLarge) {
			t.Fatalf("%s: %v, want ErrTooLarge", road, err)
		}
		for _, want := range []string{rel, fmt.Sprint(MaxIndexedMemories), "git log --stat"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %q does not say %q", road, err, want)
			}
		}
	}
	wantWarning := func(t *testing.T, w *Checkout, rel string) {
		t.Helper()
		var warnings []string
		w.Warn = func(m string) { warnings = append(warnings, m) }
		if _, err := w.List(t.Context(), memory.Filter{Scope: memory.ScopeProject}); err != nil {
			t.Fatalf("list: %v", err)
		}
		if !strings.Contains(strings.Join(warnings, "\n"), rel+": "+ErrTooLarge.Error()) {
			t.Errorf("an import warns %q, want the refusal of %s", warnings, rel)
		}
	}
	draft := memory.Draft{Content: "one more", Scope: memory.ScopeProject, Kind: memory.KindStored}

	t.Run("one file", func(t *testing.T) {
		t.Parallel()
		w := workspaceIn(t)
		rel := format.Dir + "/" + format.MemoriesFile
		if err := os.MkdirAll(filepath.Join(w.Repo.Root, format.Dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(format.MemoriesPath(w.Repo.Root), millionLines(), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Check(w.Repo.Root)
		wantRefusal(t, "check", rel, err)
		wantWarning(t, w, rel)
		_, err = w.Add(t.Context(), draft)
		wantRefusal(t, "remember", rel, err)
	})

	t.Run("a shard", func(t *testing.T) {
		t.Parallel()
		w, mems := splitWorkspace(t, format.SplitAt+50)
		rel := format.Dir + "/" + format.ShardFile(format.ShardOf(mems[0].ID))
		if err := os.WriteFile(filepath.Join(w.Repo.Root, filepath.FromSlash(rel)), millionLines(), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Check(w.Repo.Root)
		wantRefusal(t, "check", rel, err)
		fresh := workspaceAt(t, w.Repo.Root) // a clone's first command
		wantWarning(t, fresh, rel)
		_, err = fresh.Add(t.Context(), draft)
		wantRefusal(t, "remember", rel, err)
	})

	t.Run("forgotten.jsonl", func(t *testing.T) {
		t.Parallel()
		w := workspaceIn(t)
		rel := format.Dir + "/" + format.ForgottenFile
		if _, err := w.Add(t.Context(), draft); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(format.ForgottenPath(w.Repo.Root), bytes.Repeat([]byte("x\n"), 1_000_000), 0o644); err != nil {
			t.Fatal(err)
		}
		report, err := Check(w.Repo.Root)
		if err != nil || report.OK || len(report.Problems) != 1 {
			t.Fatalf("check: %d problems, %v; want the one refusal", len(report.Problems), err)
		}
		wantRefusal(t, "check", rel, fmt.Errorf("%w: %s", ErrTooLarge, report.Problems[0].Message))
		wantWarning(t, workspaceAt(t, w.Repo.Root), rel)
		_, err = w.Add(t.Context(), memory.Draft{Content: "and one more", Scope: memory.ScopeProject, Kind: memory.KindStored})
		wantRefusal(t, "remember", rel, err)
	})

	t.Run("the merge driver", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		base, ours, theirs := filepath.Join(dir, "base"), filepath.Join(dir, "ours"), filepath.Join(dir, "theirs")
		header := []byte(`{"acolyte":"memories","version":1}` + "\n")
		for _, f := range []struct {
			path string
			data []byte
		}{{base, header}, {ours, header}, {theirs, millionLines()}} {
			if err := os.WriteFile(f.path, f.data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_, err := format.MergeFiles(base, ours, theirs)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprint(format.MaxFileMemories)) || !strings.Contains(err.Error(), theirs) {
			t.Fatalf("merge driver: %v, want a refusal naming %s and the limit", err, theirs)
		}
	})
}

// BenchmarkCheckMillionLines is `acolyte check` on the two files of a
// million lines an attacker can commit under the byte limits: a million
// valid memories (222 MB) and a million invalid lines (2 MB). Check either
// reports or refuses; the benchmark measures how long it takes to.
func BenchmarkCheckMillionLines(b *testing.B) {
	for _, tc := range []struct {
		name string
		data func() []byte
	}{
		{"valid", func() []byte { return format.Encode(largeMemories(1_000_000)) }},
		{"invalid", millionLines},
	} {
		b.Run(tc.name, func(b *testing.B) {
			root := b.TempDir()
			if err := os.MkdirAll(filepath.Join(root, format.Dir), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(format.MemoriesPath(root), tc.data(), 0o644); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := Check(root); err != nil && !errors.Is(err, ErrTooLarge) {
					b.Fatal(err)
				}
			}
		})
	}
}
