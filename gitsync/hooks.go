package gitsync

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Hooks are the git hooks acolyte installs, and what each does.
var Hooks = []string{"post-checkout", "post-merge", "post-rewrite", "pre-commit"}

// shimMarker identifies a hook file written by acolyte.
const shimMarker = "# acolyte hook shim"

// chainSuffix is appended to a hook that was there before acolyte; the shim
// runs it first, so installing never clobbers a team's hooks.
const chainSuffix = ".pre-acolyte"

// shim is deliberately thin and fail-open: the real work happens in
// `acolyte hook NAME`, and nothing acolyte does may block a git command.
// A chained hook keeps its own exit status, so an existing pre-commit check
// still blocks commits exactly as before.
const shim = `#!/bin/sh
` + shimMarker + ` (installed by acolyte hooks install; remove with acolyte hooks uninstall)
hook=$(basename "$0")
if [ -x "$0` + chainSuffix + `" ]; then
	"$0` + chainSuffix + `" "$@" || exit $?
fi
if command -v acolyte >/dev/null 2>&1; then
	acolyte hook "$hook" "$@" </dev/null || echo "acolyte: the $hook hook failed; run acolyte sync to bring memory up to date" >&2
else
	echo "acolyte: not on PATH; skipped the $hook hook" >&2
fi
exit 0
`

// HooksDir is the directory git runs hooks from: core.hooksPath when set
// (relative to the working tree, as git reads it), else the hooks folder of
// the common git directory, which linked worktrees share.
func (r *Repo) HooksDir() (string, error) {
	cfg, err := r.repo.Config()
	if err != nil {
		return "", fmt.Errorf("read git config: %w", err)
	}
	if p := cfg.Raw.Section("core").Option("hooksPath"); p != "" {
		if strings.HasPrefix(p, "~/") {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", err
			}
			p = filepath.Join(home, p[2:])
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(r.Root, p)
		}
		return p, nil
	}
	return filepath.Join(r.CommonDir(), "hooks"), nil
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

// HookState describes one hook for `acolyte hooks status`.
type HookState struct {
	Name      string `json:"name"`
	Path      string `json:"path"`
	Installed bool   `json:"installed"`
	// Chained is true when a hook that was there before acolyte runs first.
	Chained bool `json:"chained"`
	// Foreign is true when a hook acolyte did not write is in the way.
	Foreign bool `json:"foreign"`
}

// HooksStatus reports each hook and whether the merge driver is registered.
func (r *Repo) HooksStatus() ([]HookState, bool, error) {
	dir, err := r.HooksDir()
	if err != nil {
		return nil, false, err
	}
	var out []HookState
	for _, name := range Hooks {
		st := HookState{Name: name, Path: filepath.Join(dir, name)}
		if b, err := os.ReadFile(st.Path); err == nil {
			st.Installed = strings.Contains(string(b), shimMarker)
			st.Foreign = !st.Installed
		}
		if _, err := os.Stat(st.Path + chainSuffix); err == nil {
			st.Chained = true
		}
		out = append(out, st)
	}
	attrs, _ := os.ReadFile(r.infoAttributes())
	routed := slices.Contains(strings.Split(string(attrs), "\n"), mergeAttribute)
	return out, routed && r.mergeDriver() != "", nil
}

func (r *Repo) mergeDriver() string {
	cfg, err := r.repo.Config()
	if err != nil {
		return ""
	}
	return cfg.Raw.Section("merge").Subsection(MergeDriverName).Option("driver")
}

// InstallHooks writes the hook shims, chaining any hook already there, and
// registers the merge driver for .acolyte/memories.jsonl. It is idempotent.
func (r *Repo) InstallHooks(ctx context.Context) error {
	dir, err := r.HooksDir()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create hooks directory: %w", err)
	}
	for _, name := range Hooks {
		path := filepath.Join(dir, name)
		b, err := os.ReadFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return fmt.Errorf("read %s: %w", path, err)
		case !strings.Contains(string(b), shimMarker):
			if _, err := os.Stat(path + chainSuffix); err == nil {
				return fmt.Errorf("both %s and %s exist; merge them by hand, then rerun acolyte hooks install", path, path+chainSuffix)
			}
			if err := os.Rename(path, path+chainSuffix); err != nil {
				return fmt.Errorf("keep existing %s hook: %w", name, err)
			}
		}
		if err := writeAtomic(path, []byte(shim)); err != nil {
			return err
		}
		if err := os.Chmod(path, 0o755); err != nil {
			return err
		}
	}
	if err := r.InstallMergeDriver(ctx, MergeDriverCommand(installedExecutable())); err != nil {
		return err
	}
	return EnsureAttributes(r.Root)
}

// InstallMergeDriver registers command as the merge driver of the memories
// file for this repository: git config plus $GIT_DIR/info/attributes.
func (r *Repo) InstallMergeDriver(ctx context.Context, command string) error {
	if err := r.git(ctx, "config", "merge."+MergeDriverName+".name", "acolyte project memories (merge by id)"); err != nil {
		return err
	}
	if err := r.git(ctx, "config", "merge."+MergeDriverName+".driver", command); err != nil {
		return err
	}
	return ensureLines(r.infoAttributes(), mergeAttribute)
}

func (r *Repo) infoAttributes() string {
	return filepath.Join(r.CommonDir(), "info", "attributes")
}

// UninstallHooks removes the shims, puts chained hooks back and unregisters
// the merge driver. Hooks acolyte did not write are left alone.
func (r *Repo) UninstallHooks(ctx context.Context) error {
	dir, err := r.HooksDir()
	if err != nil {
		return err
	}
	for _, name := range Hooks {
		path := filepath.Join(dir, name)
		b, err := os.ReadFile(path)
		if err != nil || !strings.Contains(string(b), shimMarker) {
			continue
		}
		if err := os.Remove(path); err != nil {
			return err
		}
		if _, err := os.Stat(path + chainSuffix); err == nil {
			if err := os.Rename(path+chainSuffix, path); err != nil {
				return fmt.Errorf("restore the earlier %s hook: %w", name, err)
			}
		}
	}
	if err := removeLine(r.infoAttributes(), mergeAttribute); err != nil {
		return err
	}
	if r.mergeDriver() != "" {
		return r.git(ctx, "config", "--remove-section", "merge."+MergeDriverName)
	}
	return nil
}

// removeLine deletes one exact line from a file, if the file has it.
func removeLine(path, line string) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var kept []string
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if strings.TrimSpace(l) != line && l != "" {
			kept = append(kept, l)
		}
	}
	if out := strings.Join(kept, ""); out != string(b) {
		return writeAtomic(path, []byte(out))
	}
	return nil
}

// git runs the git command in the working tree. Config writes go through git
// itself so a user's config file keeps its layout and comments.
func (r *Repo) git(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = r.Root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// HookResult says what a hook run did, for its one line of output.
type HookResult struct {
	Skipped string   `json:"skipped,omitempty"`
	Import  Imported `json:"import"`
	Changes []Change `json:"changes,omitempty"`
	Staged  bool     `json:"staged,omitempty"`
}

// RunHook does the work of one git hook. args are the hook's own arguments.
func (w *Workspace) RunHook(ctx context.Context, name string, args []string) (HookResult, error) {
	if name != "post-rewrite" && w.inRebase() {
		return HookResult{Skipped: "rebase in progress; post-rewrite re-indexes when it finishes"}, nil
	}
	switch name {
	case "post-checkout":
		// The third argument is 1 for a branch checkout, 0 for checking out files.
		if len(args) >= 3 && args[2] != "1" {
			return HookResult{Skipped: "file checkout"}, nil
		}
		imp, err := w.Refresh(ctx)
		return HookResult{Import: imp}, err
	case "post-merge", "post-rewrite":
		imp, err := w.Refresh(ctx)
		return HookResult{Import: imp}, err
	case "pre-commit":
		synced, err := w.Sync(ctx)
		if err != nil {
			return HookResult{}, err
		}
		res := HookResult{Import: synced.Import, Changes: synced.Changes}
		if len(synced.Changes) > 0 {
			if err := w.Repo.git(ctx, "add", "--", filepath.Join(Dir, MemoriesFile)); err != nil {
				return res, err
			}
			res.Staged = true
		}
		return res, nil
	}
	return HookResult{}, fmt.Errorf("unknown hook %q: acolyte handles %s", name, strings.Join(Hooks, ", "))
}
