package gitsync

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/acolyte-dev/acolyte/memory"
)

// Derive returns the memories that the worktree's instruction files and
// .acolyte/seeds.json produce right now. Derived memories carry no
// timestamps, commit or paths: they are a pure function of those files, so
// every clone derives byte-identical entries and `acolyte check` gives the
// same answer everywhere.
func Derive(root string) ([]memory.Memory, error) {
	rules, err := Rules(root)
	if err != nil {
		return nil, err
	}
	seeds, err := readSeeds(filepath.Join(root, Dir, SeedsFile))
	if err != nil {
		return nil, err
	}
	derived := append(rules, seeds...)
	slices.SortFunc(derived, func(a, b memory.Memory) int { return strings.Compare(a.ID, b.ID) })
	return derived, nil
}

func readSeeds(path string) ([]memory.Memory, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading seeds: %w", err)
	}
	seeds, err := ParseSeeds(SeedsFile, data)
	if err != nil {
		return nil, fmt.Errorf("%s/%w", Dir, err)
	}
	return seeds, nil
}

// IsDerived reports whether m is owned by Derive: every rule, and the seeds
// that came from .acolyte/seeds.json. Seeds imported once from another file
// (`acolyte seed FILE`) are kept like stored memories.
func IsDerived(m memory.Memory) bool {
	return m.Kind == memory.KindRule || m.Kind == memory.KindSeed && m.Source == SeedsFile
}

// Refresh replaces every derived memory in existing with derived, keeping
// stored memories, observations and imported seeds. A derived memory whose id
// was already there keeps the timestamps it had, so an unchanged rule never
// churns the file. The result is sorted by id.
func Refresh(existing, derived []memory.Memory) []memory.Memory {
	byID := make(map[string]memory.Memory, len(existing))
	for _, m := range existing {
		byID[m.ID] = m
	}
	out := make([]memory.Memory, 0, len(existing)+len(derived))
	taken := make(map[string]bool, len(derived))
	for _, d := range derived {
		if old, ok := byID[d.ID]; ok {
			d.CreatedAt, d.UpdatedAt = old.CreatedAt, old.UpdatedAt
		}
		taken[d.ID] = true
		out = append(out, d)
	}
	for _, m := range existing {
		if !IsDerived(m) && !taken[m.ID] {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b memory.Memory) int { return strings.Compare(a.ID, b.ID) })
	return out
}
