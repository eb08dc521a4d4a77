package gitsync

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/acolyte-dev/acolyte/gitsync/internal/odb"
)

// committedBlobs answers, for each "<commit>:<path>", the id of the blob
// there, or "" when there is none (nothing at that path then, or a folder
// or a submodule): what `git cat-file --batch-check` answers. The objects
// are read in-process, which costs tens of microseconds where starting
// git costs milliseconds, the whole of a search's staleness budget; what
// odb cannot be sure to read as git would is asked of git, in one process.
func (r *Repo) committedBlobs(ctx context.Context, specs []string) ([]string, error) {
	blobs := make([]string, len(specs))
	var askGit []int
	db, err := odb.Open(r.CommonDir())
	if err != nil {
		if !errors.Is(err, odb.ErrUnsupported) {
			return nil, err
		}
		for i := range specs {
			askGit = append(askGit, i)
		}
	} else {
		defer db.Close()
		for i, spec := range specs {
			commit, path, _ := strings.Cut(spec, ":")
			e, found, err := db.At(commit, path)
			switch {
			case errors.Is(err, odb.ErrUnsupported):
				askGit = append(askGit, i)
			case err != nil:
				return nil, err
			case found && e.Blob:
				blobs[i] = e.ID
			}
		}
	}
	if len(askGit) == 0 {
		return blobs, nil
	}
	var in strings.Builder
	for _, i := range askGit {
		in.WriteString(specs[i] + "\n")
	}
	answer, err := r.GitOutput(ctx, []byte(in.String()), "cat-file", "--batch-check")
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSuffix(string(answer), "\n"), "\n")
	if len(lines) != len(askGit) {
		return nil, fmt.Errorf("git cat-file --batch-check answered %d lines for %d paths", len(lines), len(askGit))
	}
	for k, i := range askGit {
		// Not a blob: not committed then, or not a file then.
		if oid, kind, _ := strings.Cut(lines[k], " "); strings.HasPrefix(kind, "blob ") {
			blobs[i] = oid
		}
	}
	return blobs, nil
}
