package git

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os/exec"
	"path"
	"path/filepath"
	"strings"

	"github.com/acolyte-dev/acolyte/gitsync/derive"
	"github.com/acolyte-dev/acolyte/internal/subpath"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// maxLinkHops bounds symlink chains in the index, as the kernel bounds them
// in the worktree.
const maxLinkHops = 40

// Entry is one stage-0 entry of the git index.
type Entry struct {
	Mode, Blob string
}

// gitIndex reads files as they are staged (git's index; "the index" alone,
// in this package, is the local search store): what the commit being made will
// contain. It honours GIT_INDEX_FILE, which git sets for `commit <path>` and
// `commit -a`, by asking the git command rather than parsing the file.
type Index struct {
	ctx     context.Context
	Repo    *Repo
	Entries map[string]Entry
	// ignores caches the patterns of each staged .gitignore by folder.
	ignores map[string][]gitignore.Pattern
	batch   *catFile
}

// DeriveIndex derives from the staged instruction files and seeds.json, for
// the pre-commit hook: a commit then never holds memories derived from edits
// it does not contain. Staged symlinks are resolved inside the index, and one
// that leads out of the repository is skipped like in the worktree.
func DeriveIndex(ctx context.Context, r *Repo) (derive.Derivation, error) {
	ix, err := ReadIndex(ctx, r)
	if err != nil {
		return derive.Derivation{}, err
	}
	defer ix.Close()
	return derive.From(ix)
}

// ReadIndex reads the stage-0 entries of git's index (the one
// GIT_INDEX_FILE names, when set) through `git ls-files`.
func ReadIndex(ctx context.Context, r *Repo) (*Index, error) {
	out, err := r.GitOutput(ctx, nil, "ls-files", "--stage", "-z")
	if err != nil {
		return nil, err
	}
	ix := &Index{ctx: ctx, Repo: r, Entries: make(map[string]Entry), ignores: make(map[string][]gitignore.Pattern)}
	for _, rec := range strings.Split(string(out), "\x00") {
		// <mode> SP <blob> SP <stage> TAB <path>
		meta, p, ok := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 3 || f[2] != "0" {
			continue
		}
		ix.Entries[p] = Entry{Mode: f[0], Blob: f[1]}
	}
	return ix, nil
}

// InstructionFiles applies the worktree walk's rules to the staged paths:
// the same names, never under node_modules or vendor, and not ignored by a
// staged .gitignore, so the hook and `acolyte check` agree on the set.
func (ix *Index) InstructionFiles() ([]string, error) {
	var files []string
	for p, e := range ix.Entries {
		if !derive.IsInstructionPath(p) || e.Mode == "160000" {
			continue
		}
		ignored, err := ix.ignored(p)
		if err != nil {
			return nil, err
		}
		if !ignored {
			files = append(files, p)
		}
	}
	derive.SortInstructionFiles(files)
	return files, nil
}

func (ix *Index) ignored(p string) (bool, error) {
	parts := strings.Split(p, "/")
	var patterns []gitignore.Pattern
	for i := range parts {
		dir := parts[:i]
		if i > 0 && derive.SkippedDirs[parts[i-1]] {
			return true, nil
		}
		if i > 0 && gitignore.NewMatcher(patterns).Match(dir, true) {
			return true, nil
		}
		ps, err := ix.ignoreFile(dir)
		if err != nil {
			return false, err
		}
		patterns = append(patterns, ps...)
	}
	return gitignore.NewMatcher(patterns).Match(parts, false), nil
}

// ignoreFile returns the patterns of the staged .gitignore in dir. A linked
// .gitignore is not followed, as reading it could leave the repository.
func (ix *Index) ignoreFile(dir []string) ([]gitignore.Pattern, error) {
	key := strings.Join(dir, "/")
	if ps, ok := ix.ignores[key]; ok {
		return ps, nil
	}
	var ps []gitignore.Pattern
	if e, ok := ix.Entries[path.Join(key, ".gitignore")]; ok && e.Mode != "120000" {
		data, err := ix.Cat(e.Blob)
		if err != nil {
			return nil, err
		}
		ps = derive.ParseIgnore(data, dir)
	}
	ix.ignores[key] = ps
	return ps, nil
}

func (ix *Index) Read(rel string) ([]byte, error) {
	e, err := ix.resolve(rel)
	if err != nil {
		return nil, err
	}
	return ix.Cat(e.Blob)
}

// resolve follows staged symlinks, in rel and in its parent folders, to a
// staged regular file. A link whose target leaves the repository is
// ErrOutside; it is never followed on disk.
func (ix *Index) resolve(rel string) (Entry, error) {
	cur := rel
	for hops := 0; hops <= maxLinkHops; hops++ {
		parts := strings.Split(cur, "/")
		next := ""
		for i := 1; i <= len(parts); i++ {
			prefix := strings.Join(parts[:i], "/")
			e, ok := ix.Entries[prefix]
			if !ok {
				continue
			}
			switch {
			case e.Mode == "120000":
				target, err := ix.Cat(e.Blob)
				if err != nil {
					return Entry{}, err
				}
				resolved, ok := ix.linkTarget(prefix, string(target))
				if !ok {
					return Entry{}, derive.ErrOutside
				}
				next = path.Join(append([]string{resolved}, parts[i:]...)...)
			case i == len(parts) && e.Mode != "160000":
				return e, nil
			default:
				return Entry{}, fs.ErrNotExist
			}
			break
		}
		if next == "" {
			return Entry{}, fs.ErrNotExist
		}
		cur = next
	}
	return Entry{}, fmt.Errorf("%s: too many levels of symbolic links", rel)
}

// linkTarget resolves a staged link at link with the given target to a path
// relative to the repository root, and reports false when it leaves it.
func (ix *Index) linkTarget(link, target string) (string, bool) {
	if filepath.IsAbs(target) {
		rel, ok := subpath.Rel(ix.Repo.Root, filepath.Clean(target))
		return filepath.ToSlash(rel), ok && rel != "."
	}
	p := path.Join(path.Dir(link), target)
	if p == "." || p == ".." || strings.HasPrefix(p, "../") || path.IsAbs(p) {
		return "", false
	}
	return p, true
}

// Cat reads one blob. One `git cat-file --batch` serves every read of a
// hook run: a process per file cost a commit more than the rest of the hook.
func (ix *Index) Cat(blob string) ([]byte, error) {
	if ix.batch == nil {
		cmd := exec.CommandContext(ix.ctx, "git", "cat-file", "--batch")
		cmd.Dir = ix.Repo.Root
		in, err := cmd.StdinPipe()
		if err != nil {
			return nil, err
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, fmt.Errorf("git cat-file --batch: %w", err)
		}
		ix.batch = &catFile{cmd: cmd, in: in, out: bufio.NewReader(out)}
	}
	return ix.batch.read(blob)
}

// Close ends the cat-file process, if one was started.
func (ix *Index) Close() {
	if ix.batch != nil {
		ix.batch.in.Close()
		_ = ix.batch.cmd.Wait()
		ix.batch = nil
	}
}

// catFile is a running `git cat-file --batch`.
type catFile struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func (c *catFile) read(blob string) ([]byte, error) {
	if _, err := io.WriteString(c.in, blob+"\n"); err != nil {
		return nil, fmt.Errorf("git cat-file: %w", err)
	}
	// "<oid> <type> <size>\n<content>\n", or "<oid> missing\n".
	header, err := c.out.ReadString('\n')
	if err != nil {
		return nil, fmt.Errorf("git cat-file: %w", err)
	}
	var oid, kind string
	var size int
	if n, _ := fmt.Sscanf(header, "%s %s %d", &oid, &kind, &size); n != 3 || kind != "blob" {
		return nil, fmt.Errorf("git cat-file %s: %s", blob, strings.TrimSpace(header))
	}
	data := make([]byte, size+1)
	if _, err := io.ReadFull(c.out, data); err != nil {
		return nil, fmt.Errorf("git cat-file %s: %w", blob, err)
	}
	return data[:size], nil
}

// GitOutput runs the git command in the working tree and returns its stdout.
func (r *Repo) GitOutput(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	var in io.Reader
	if stdin != nil {
		in = bytes.NewReader(stdin)
	}
	return r.GitOutputFrom(ctx, in, args...)
}

// GitOutputFrom is GitOutput reading stdin from a reader: a large file
// written in parts need not be joined first.
func (r *Repo) GitOutputFrom(ctx context.Context, stdin io.Reader, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = r.Root
	cmd.Stdin = stdin
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
