// Package gitsync keeps project memory in the repository: the canonical
// .acolyte/ file, the rules and seeds derived from AGENTS.md and seeds.json,
// the git hooks and merge driver that keep the index in step, and the CI
// freshness check. It is the only package that knows git.
package gitsync

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// Repo is one git working tree: the main checkout or a linked worktree.
type Repo struct {
	// Root is the working tree's top directory, with symlinks resolved; it
	// is also the project's scope key, so each checkout has its own index.
	Root string
	repo *git.Repository
}

// ErrNotRepo means the directory is not inside a git working tree.
var ErrNotRepo = errors.New("not inside a git repository")

// Discover finds the working tree that contains dir, from any subfolder and
// in linked worktrees.
func Discover(dir string) (*Repo, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	r, err := git.PlainOpenWithOptions(abs, &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
	if errors.Is(err, git.ErrRepositoryNotExists) {
		return nil, fmt.Errorf("%w: %s", ErrNotRepo, abs)
	}
	if err != nil {
		return nil, fmt.Errorf("open git repository at %s: %w", abs, err)
	}
	wt, err := r.Worktree()
	if err != nil {
		return nil, fmt.Errorf("%s is a bare repository; run acolyte in a working tree: %w", abs, err)
	}
	root, err := filepath.EvalSymlinks(wt.Filesystem.Root())
	if err != nil {
		return nil, err
	}
	return &Repo{Root: root, repo: r}, nil
}

// Head returns the commit HEAD points at, or "" in a repository with no
// commits yet.
func (r *Repo) Head() string {
	ref, err := r.repo.Head()
	if err != nil {
		return ""
	}
	return ref.Hash().String()
}

// Dir is the .acolyte directory of the working tree.
func (r *Repo) Dir() string { return filepath.Join(r.Root, ".acolyte") }

// GitDir is the repository's private directory for this worktree (.git, or
// .git/worktrees/NAME for a linked worktree).
func (r *Repo) GitDir() string {
	b, err := os.ReadFile(filepath.Join(r.Root, ".git"))
	if err == nil && len(b) > 8 && string(b[:8]) == "gitdir: " {
		p := string(b[8:])
		for len(p) > 0 && (p[len(p)-1] == '\n' || p[len(p)-1] == '\r') {
			p = p[:len(p)-1]
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(r.Root, p)
		}
		return p
	}
	return filepath.Join(r.Root, ".git")
}

// FileAt reads a file's content as committed at rev (a commit hash), for
// provenance checks. It returns os.ErrNotExist when the path is absent.
func (r *Repo) FileAt(rev, path string) ([]byte, error) {
	c, err := r.repo.CommitObject(plumbing.NewHash(rev))
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", rev, err)
	}
	f, err := c.File(filepath.ToSlash(path))
	if err != nil {
		return nil, os.ErrNotExist
	}
	s, err := f.Contents()
	return []byte(s), err
}

// Uncommitted lists the files under paths (relative to the root) that are
// new or changed against HEAD, worktree and index alike, ignored ones left
// out: what a user adopting acolyte still has to commit.
func (r *Repo) Uncommitted(ctx context.Context, paths ...string) ([]string, error) {
	out, err := r.gitOutput(ctx, nil, append([]string{"status", "--porcelain", "-z", "--untracked-files=all", "--"}, paths...)...)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, entry := range strings.Split(string(out), "\x00") {
		if len(entry) > 3 {
			files = append(files, entry[3:])
		}
	}
	return files, nil
}
