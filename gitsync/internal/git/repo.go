// Package git is gitsync's plumbing: the repository (its root, its git
// directories, HEAD and config read from the files), the git command run
// in it, the staged files read through git's index, and the stat stamps
// that let a caller trust a file without reading it. It knows git and
// nothing of memories.
package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/acolyte-dev/acolyte/internal/subpath"
)

// Repo is one git working tree: the main checkout or a linked worktree.
//
// It reads what every command needs (the worktree's root, HEAD) from the
// git directory's files itself and asks the git command for the rest, so
// that no command links a git implementation: go-git, which this used,
// brought its SSH and OpenPGP transports and their package initialisation
// into every process, the no-op hook's included.
type Repo struct {
	// Root is the working tree's top directory, with symlinks resolved; it
	// is also the project's scope key, so each checkout has its own index.
	Root string
}

// ErrNotRepo means the directory is not inside a git working tree.
var ErrNotRepo = errors.New("not inside a git repository")

// Discover finds the working tree that contains dir, from any subfolder and
// in linked worktrees: the nearest directory, dir or above it, holding a
// .git directory or a .git file that names one ("gitdir: ...").
func Discover(dir string) (*Repo, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("open git repository at %s: %w", abs, err)
	}
	for d := abs; ; {
		fi, err := os.Stat(filepath.Join(d, ".git"))
		switch {
		case err == nil && (fi.IsDir() || isGitFile(filepath.Join(d, ".git"))):
			root, err := filepath.EvalSymlinks(d)
			if err != nil {
				return nil, err
			}
			return &Repo{Root: root}, nil
		case err == nil:
			return nil, fmt.Errorf("open git repository at %s: %s is neither a directory nor a \"gitdir:\" file", abs, filepath.Join(d, ".git"))
		case !errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("open git repository at %s: %w", abs, err)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return nil, fmt.Errorf("%w: %s", ErrNotRepo, abs)
		}
		d = parent
	}
}

// isGitFile reports whether path is a linked worktree's or submodule's
// .git file.
func isGitFile(path string) bool {
	b, err := os.ReadFile(path)
	return err == nil && bytes.HasPrefix(b, []byte("gitdir: "))
}

// Head returns the commit HEAD points at, or "" in a repository with no
// commits yet. It follows symbolic refs through the worktree's git
// directory and the common one, loose refs before packed-refs, as git does.
func (r *Repo) Head() string {
	gitDir, common := r.GitDir(), r.CommonDir()
	ref := "HEAD"
	for range 5 {
		b, err := os.ReadFile(filepath.Join(refDir(gitDir, common, ref), filepath.FromSlash(ref)))
		if err != nil {
			return packedRef(common, ref)
		}
		v := strings.TrimSpace(string(b))
		target, symbolic := strings.CutPrefix(v, "ref: ")
		if !symbolic {
			if IsHash(v) {
				return v
			}
			return ""
		}
		ref = strings.TrimSpace(target)
	}
	return ""
}

// refDir is where a ref's loose file lives: HEAD and the worktree's own
// refs in its git directory, the shared ones in the common directory.
func refDir(gitDir, common, ref string) string {
	if ref == "HEAD" || strings.HasPrefix(ref, "refs/worktree/") || strings.HasPrefix(ref, "refs/bisect/") {
		return gitDir
	}
	return common
}

// packedRef looks ref up in packed-refs; "" when it is not there.
func packedRef(common, ref string) string {
	b, err := os.ReadFile(filepath.Join(common, "packed-refs"))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		hash, name, ok := strings.Cut(strings.TrimSpace(line), " ")
		if ok && name == ref && IsHash(hash) {
			return hash
		}
	}
	return ""
}

// IsHash says whether s is a full object id, SHA-1 or SHA-256, in the
// lower-case hex git writes.
func IsHash(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// configByGit is Config as the git command answers it.
func (r *Repo) configByGit(key string) (string, error) {
	cmd := exec.Command("git", "config", "--local", "--get", key)
	cmd.Dir = r.Root
	out, err := cmd.Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 1 {
		return "", nil // not set
	}
	if err != nil {
		return "", fmt.Errorf("git config --get %s: %w", key, err)
	}
	return strings.TrimRight(string(out), "\n"), nil
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

// Uncommitted lists the files under paths (relative to the root) that are
// new or changed against HEAD, worktree and index alike, ignored ones left
// out: what a user adopting acolyte still has to commit.
func (r *Repo) Uncommitted(ctx context.Context, paths ...string) ([]string, error) {
	out, err := r.GitOutput(ctx, nil, append([]string{"status", "--porcelain", "-z", "--untracked-files=all", "--"}, paths...)...)
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

// CommonDir is the git directory shared by every worktree of the repository.
func (r *Repo) CommonDir() string {
	gitDir := r.GitDir()
	b, err := os.ReadFile(filepath.Join(gitDir, "commondir"))
	if err != nil {
		return gitDir
	}
	p := strings.TrimSpace(string(b))
	if !filepath.IsAbs(p) {
		p = filepath.Join(gitDir, p)
	}
	return filepath.Clean(p)
}

// Git runs the git command in the working tree. Config writes go through git
// itself so a user's config file keeps its layout and comments.
func (r *Repo) Git(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = r.Root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

func (r *Repo) Rel(p string) string {
	if rel, ok := subpath.Rel(r.Root, p); ok {
		return filepath.ToSlash(rel)
	}
	return p
}

// InfoAttributes is the repository's own attributes file, which no commit
// carries: $GIT_COMMON_DIR/info/attributes.
func (r *Repo) InfoAttributes() string {
	return filepath.Join(r.CommonDir(), "info", "attributes")
}
