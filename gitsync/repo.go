package gitsync

import "github.com/acolyte-dev/acolyte/gitsync/internal/git"

// Repo is one git working tree (git.Repo, whose methods it has) with what
// gitsync knows of the project in it: its memories' staleness, the merge
// driver, the conflicts a merge left.
type Repo struct{ git.Repo }

// ErrNotRepo means the directory is not inside a git working tree.
var ErrNotRepo = git.ErrNotRepo

// Discover finds the working tree that contains dir, from any subfolder and
// in linked worktrees (git.Discover).
func Discover(dir string) (*Repo, error) {
	r, err := git.Discover(dir)
	if err != nil {
		return nil, err
	}
	return &Repo{*r}, nil
}
