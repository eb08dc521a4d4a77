package gitsync

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ErrHomeInWorktree refuses a memory database inside a git working tree
// that git does not ignore.
var ErrHomeInWorktree = errors.New("the memory database is inside a git working tree")

// CheckHome refuses the memory database at db (in ACOLYTE_HOME) when it
// lies inside a git working tree and git does not ignore it: user and
// session memories, the index of every checkout and the search catalog
// would then be one `git add -A` from a commit. An ignored database is
// allowed, so that a home kept in a repository on purpose still works.
// Without a git to ask there is no commit to fear, and nothing is refused.
func CheckHome(ctx context.Context, db string) error {
	abs, err := filepath.Abs(db)
	if err != nil {
		return fmt.Errorf("checking where the memory database is: %w", err)
	}
	top := enclosingWorktree(filepath.Dir(abs))
	if top == "" {
		return nil
	}
	rel, err := filepath.Rel(top, abs)
	if err != nil {
		return fmt.Errorf("checking where the memory database is: %w", err)
	}
	cmd := exec.CommandContext(ctx, "git", "-C", top, "check-ignore", "-q", "--", rel)
	cmd.Env = withoutRepoEnv(os.Environ())
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return nil // ignored
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		return fmt.Errorf("%w: %s is in %s, where `git add -A` would commit every memory it holds; "+
			"set ACOLYTE_HOME to a directory outside the repository, or make git ignore it (add /%s/ to %s)",
			ErrHomeInWorktree, abs, top, filepath.ToSlash(filepath.Dir(rel)), filepath.Join(top, ".gitignore"))
	}
	return nil // no git, or git cannot read this tree: no commit to fear
}

// withoutRepoEnv drops the variables a git hook sets for its own
// repository, which would point check-ignore away from the home's.
func withoutRepoEnv(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, "GIT_DIR=") && !strings.HasPrefix(kv, "GIT_WORK_TREE=") &&
			!strings.HasPrefix(kv, "GIT_INDEX_FILE=") && !strings.HasPrefix(kv, "GIT_COMMON_DIR=") {
			out = append(out, kv)
		}
	}
	return out
}

// enclosingWorktree is the nearest directory at or above dir holding a
// .git entry (a repository, or a linked worktree's file), or "".
func enclosingWorktree(dir string) string {
	for {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}
