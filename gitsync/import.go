package gitsync

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/acolyte-dev/acolyte/gitsync/derive"
	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/internal/subpath"
	"github.com/acolyte-dev/acolyte/memory"
)

// SeedImport says what ImportSeeds did.
type SeedImport struct {
	// Added of Total valid seeds were new to the memories file.
	Added int `json:"added"`
	Total int `json:"total"`
	// Refused are seeds not imported: secrets and invalid seeds, by index
	// and line, never by text.
	Refused []derive.Refusal `json:"refused,omitempty"`
}

// ImportSeeds adds the seeds of file to the memories of the repository at
// root, once: `acolyte seed FILE`. They are labelled ImportedSource, so sync
// keeps them like stored memories. A seed that holds a secret or is invalid
// is refused alone. A file inside the repository is read through the
// repository's os.Root, so a symlink there cannot pull in an outside file;
// a file outside it was named by the user and is read as given.
func ImportSeeds(ctx context.Context, root, file string) (SeedImport, error) {
	data, rel, err := readUserFile(root, file)
	if err != nil {
		return SeedImport{}, err
	}
	if rel == format.Dir+"/"+derive.SeedsFile {
		return SeedImport{}, fmt.Errorf("%s is read by every sync; run `acolyte sync` instead of importing it", rel)
	}
	seeds, refused := derive.ParseSeedsFile(rel, data)
	out := SeedImport{Total: len(seeds), Refused: refused}
	if len(seeds) == 0 {
		return out, nil
	}
	err = Update(ctx, root, func(mems []memory.Memory) ([]memory.Memory, error) {
		// A fact the user already owns (imported before, or stored) is not
		// added twice; one that only seeds.json or AGENTS.md holds is, so it
		// outlives its removal from there.
		have := make(map[string]bool, len(mems))
		for _, m := range mems {
			if !derive.IsDerived(m) {
				have[memory.Normalize(m.Content)] = true
			}
		}
		for _, s := range seeds {
			if norm := memory.Normalize(s.Content); !have[norm] {
				mems = append(mems, s)
				have[norm] = true
				out.Added++
			}
		}
		return mems, nil
	})
	return out, err
}

// readUserFile reads a file a user named on the command line. rel is how
// messages name it: relative to the repository when inside it.
func readUserFile(root, file string) (data []byte, rel string, err error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, "", err
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(abs))
	if err != nil {
		return nil, "", fmt.Errorf("read %s: %w", file, err)
	}
	inside, ok := subpath.Rel(root, filepath.Join(dir, filepath.Base(abs)))
	if !ok {
		data, err = os.ReadFile(abs)
		return data, file, err
	}
	rel = filepath.ToSlash(inside)
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, "", err
	}
	defer r.Close()
	data, err = derive.ReadWorktree(root, r, rel)
	if errors.Is(err, derive.ErrOutside) {
		return nil, "", fmt.Errorf("%s: %w and acolyte never copies outside files into %s/; name the file it points to if you mean to import it", rel, err, format.Dir)
	}
	return data, rel, err
}
