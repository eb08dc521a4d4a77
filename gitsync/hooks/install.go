package hooks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/acolyte-dev/acolyte/gitsync"
	"github.com/acolyte-dev/acolyte/internal/subpath"
)

// shimMarker identifies a hook file written by acolyte.
const shimMarker = "# acolyte hook shim"

// chainSuffix is appended to a hook that was there before acolyte; the shim
// runs it first, so installing never clobbers a team's hooks.
const chainSuffix = ".pre-acolyte"

// shim is deliberately thin and fail-open: the real work happens in
// `acolyte hook NAME`, and nothing acolyte does may block a git command
// except a deliberate refusal (gitsync.ExitRefuse). A chained hook keeps its own exit
// status, so an existing pre-commit check still blocks commits exactly as
// before. The binary's absolute path is recorded at install time because
// GUI git clients run hooks without the user's PATH; PATH is the fallback
// for a binary that has moved since. The hook's name is written in, not
// taken from $0: a manager that moves the shim aside and runs it under
// another name (the pre-commit framework's pre-commit.legacy) still gets
// the pre-commit hook's work.
func shim(exe, name string) string {
	return `#!/bin/sh
` + shimMarker + ` (installed by acolyte hooks install; remove with acolyte hooks uninstall)
hook=` + name + `
chained=$(dirname "$0")/$hook` + chainSuffix + `
if [ -x "$chained" ]; then
	"$chained" "$@" || exit $?
fi
recorded=` + shellQuote(exe) + `
acolyte=$recorded
if [ ! -x "$acolyte" ]; then
	acolyte=$(command -v acolyte 2>/dev/null) || acolyte=
fi
if [ -z "$acolyte" ]; then
	echo "acolyte: not found at $recorded or on PATH; skipped the $hook hook" >&2
	exit 0
fi
"$acolyte" hook "$hook" "$@" </dev/null
status=$?
if [ "$status" -eq ` + fmt.Sprint(gitsync.ExitRefuse) + ` ]; then
	exit 1
fi
if [ "$status" -ne 0 ]; then
	echo "acolyte: the $hook hook failed; run acolyte sync to bring memory up to date" >&2
fi
exit 0
`
}

// shellQuote quotes s for sh, whatever it contains.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// HookLine is the line to add to a hook file that a team's hook manager
// (husky, lefthook, the pre-commit framework, a tracked .githooks folder)
// owns. It is fail-open like the shim: a failure lets git go on, and only a
// deliberate refusal fails the hook. It names acolyte by PATH, since the
// file is shared and a path on one machine means nothing on another, and
// it does nothing at all, silently, where acolyte is not on PATH: the file
// is every teammate's, and one who does not use acolyte should not see
// "acolyte: not found" on every commit and checkout (issue 36).
func Line(name string) string {
	args := ""
	if name != "pre-commit" {
		args = ` "$@"`
	}
	return guarded(name, args)
}

// guarded runs `acolyte hook NAME ARGS` only when acolyte is on PATH; the
// refusal status alone fails it, also under `sh -e` (husky's), where the
// last command of the || list decides.
func guarded(name, args string) string {
	return fmt.Sprintf("if command -v acolyte >/dev/null 2>&1; then acolyte hook %s%s || [ $? -ne %d ]; fi", name, args, gitsync.ExitRefuse)
}

// HooksDir is the directory git runs hooks from: core.hooksPath when set
// (relative to the working tree, as git reads it), else the hooks folder of
// the common git directory, which linked worktrees share.
func Dir(r *gitsync.Repo) (string, error) {
	p, err := r.Config("core.hooksPath")
	if err != nil {
		return "", fmt.Errorf("read git config: %w", err)
	}
	if p != "" {
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

// State describes one hook for `acolyte hooks status`.
type State struct {
	Name string `json:"name"`
	// Path is the file git runs for the hook.
	Path string `json:"path"`
	// Installed is true when git running the hook runs acolyte's work:
	// through acolyte's shim, or through the hook manager's own entry point
	// and the team's hook file or the manager's config.
	Installed bool `json:"installed"`
	// Chained is true when a hook that was there before acolyte runs first.
	Chained bool `json:"chained"`
	// Foreign is true when a hook acolyte did not write is in the way.
	Foreign bool `json:"foreign"`
	// Managed is true when a hook manager or a shared hooks folder owns the
	// hooks (see InstallHooks); Manager names it.
	Managed bool   `json:"managed,omitempty"`
	Manager string `json:"manager,omitempty"`
	// Problem says why acolyte's work does not run, or will stop running,
	// and Fix what to run or add.
	Problem string `json:"problem,omitempty"`
	Fix     string `json:"fix,omitempty"`
	// Upgrade is true when the hook runs acolyte through a line an earlier
	// acolyte wrote, which does not check that acolyte is on PATH; Problem
	// and Fix say where and how to update it.
	Upgrade bool `json:"upgrade,omitempty"`
}

// HooksStatus reports each hook and whether the merge driver is registered.
func Status(ctx context.Context, r *gitsync.Repo) ([]State, bool, error) {
	s, err := detectSetup(ctx, r)
	if err != nil {
		return nil, false, err
	}
	defer s.close()
	its, err := integrations(r, s)
	if err != nil {
		return nil, false, err
	}
	var out []State
	for _, name := range gitsync.Hooks {
		out = append(out, hookState(r, s, name, its))
	}
	return out, r.MergeDriverInstalled(), nil
}

// Installed says what InstallHooks did.
type Installed struct {
	// Dir is the hooks directory git runs hooks from.
	Dir string `json:"dir"`
	// Managed is true when a hook manager (Manager) or a folder the
	// repository shares owns the hooks: acolyte wrote no shim, and
	// Integrations are the edits that make the manager run acolyte.
	Managed bool   `json:"managed"`
	Manager string `json:"manager,omitempty"`
	// Lines maps each hook name to its HookLine, when Managed.
	Lines map[string]string `json:"lines,omitempty"`
	// Integrations are the edits still needed (or, with write, made).
	Integrations []Integration `json:"integrations,omitempty"`
	// Shims are the hooks acolyte's shims run although a manager owns
	// the hooks: those it does not install here (hookSetup.shimmedHooks).
	Shims []string `json:"shims,omitempty"`
}

// InstallHooks makes git run acolyte's hooks and registers the merge driver
// for .acolyte/memories.jsonl. It is idempotent. exe is the acolyte binary
// the shims run first.
//
// Without a hook manager it writes shims, chaining any hook already there.
// With one (detectSetup) it writes no shim: a shim in a shared folder would
// be committed and depend on a binary nobody else has, and every manager
// replaces hooks it did not write on its next install (husky wipes .husky/_,
// lefthook renames them *.old, simple-git-hooks deletes them). It lists the
// edit to the team's hook file or the manager's config instead, and with
// write makes the edits it can make by adding text.
func Install(ctx context.Context, r *gitsync.Repo, exe string, write bool) (Installed, error) {
	s, err := detectSetup(ctx, r)
	if err != nil {
		return Installed{}, err
	}
	defer s.close()
	out := Installed{Dir: s.gitDir, Manager: s.manager, Managed: s.manager != ""}
	if !out.Managed {
		if err := writeShims(s.files, s.gitDir, exe, gitsync.Hooks); err != nil {
			return out, err
		}
	} else if out.Integrations, err = integrate(r, s, write); err != nil {
		return out, err
	}
	if out.Shims, err = s.shimmedHooks(); err != nil {
		return out, err
	}
	if err := writeShims(s.files, s.gitDir, exe, out.Shims); err != nil {
		return out, err
	}
	if out.Managed {
		out.Lines = make(map[string]string, len(gitsync.Hooks))
		for _, name := range gitsync.Hooks {
			out.Lines[name] = Line(name)
		}
	}
	if err := r.InstallMergeDriver(ctx, gitsync.MergeDriverCommand(exe)); err != nil {
		return out, err
	}
	return out, gitsync.EnsureAttributes(r.Root)
}

// integrate lists, and with write makes, the manager's edits; then it
// removes shims an earlier acolyte left where the manager works, once
// they are no longer the only thing running acolyte (husky's at once:
// there a shim stops the team's own hooks).
func integrate(r *gitsync.Repo, s hookSetup, write bool) ([]Integration, error) {
	its, err := integrations(r, s)
	if err != nil {
		return nil, err
	}
	done := true
	for i := range its {
		if !write || its[i].Manual != "" {
			done = false
			continue
		}
		err := writeIntegration(s.files, r.Root, its[i])
		switch {
		case errors.Is(err, errManual):
			its[i].Manual, done = err.Error(), false
		case err != nil:
			return its, err
		default:
			its[i].Written = true
		}
	}
	if done || s.manager == ManagerHusky {
		keep, err := s.shimmedHooks()
		if err != nil {
			return its, err
		}
		if err := removeOwnShims(s.files, s.gitDir, slices.DeleteFunc(slices.Clone(gitsync.Hooks), func(h string) bool { return slices.Contains(keep, h) })); err != nil {
			return its, err
		}
	}
	return its, nil
}

// removeOwnShims deletes acolyte's shims for the hooks names from dir,
// under any name a manager moved them to, and puts back the hooks they
// chained.
func removeOwnShims(files *hookFiles, dir string, names []string) error {
	for _, name := range names {
		path := filepath.Join(dir, name)
		if files.isShim(path) {
			if err := files.remove(path); err != nil {
				return fmt.Errorf("remove acolyte's old %s shim: %w", name, err)
			}
			if _, err := files.stat(path + chainSuffix); err == nil {
				if err := files.rename(path+chainSuffix, path); err != nil {
					return fmt.Errorf("restore the %s hook acolyte chained: %w", name, err)
				}
			}
		}
		for _, moved := range movedSuffixes {
			if files.isShim(path + moved) {
				if err := files.remove(path + moved); err != nil {
					return fmt.Errorf("remove acolyte's old %s shim: %w", name, err)
				}
			}
		}
	}
	return nil
}

// movedSuffixes are where managers move a hook they replace: lefthook's
// *.old and the pre-commit framework's migration mode *.legacy.
var movedSuffixes = []string{".old", ".legacy"}

// sharedHooksDir reports whether dir is inside the worktree and either holds
// tracked files or is not ignored: then whatever acolyte wrote there would
// end up in a commit (git commit -a, git add .) or edit a team's hook.
func sharedHooksDir(ctx context.Context, r *gitsync.Repo, dir string) (bool, error) {
	// The folder may not exist yet; its parent decides where it is.
	resolved := dir
	if p, err := filepath.EvalSymlinks(dir); err == nil {
		resolved = p
	} else if p, err := filepath.EvalSymlinks(filepath.Dir(dir)); err == nil {
		resolved = filepath.Join(p, filepath.Base(dir))
	}
	rel, inside := subpath.Rel(r.Root, resolved)
	if !inside {
		return false, nil
	}
	if gitDir, err := filepath.EvalSymlinks(r.CommonDir()); err == nil {
		if _, inGit := subpath.Rel(gitDir, resolved); inGit {
			return false, nil
		}
	}
	tracked, err := r.GitOutput(ctx, nil, "ls-files", "--", rel)
	if err != nil {
		return false, err
	}
	if len(tracked) > 0 {
		return true, nil
	}
	cmd := exec.CommandContext(ctx, "git", "check-ignore", "-q", "--", rel+"/")
	cmd.Dir = r.Root
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return false, nil // ignored: a private folder, safe to write
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		return true, nil
	}
	return false, fmt.Errorf("git check-ignore %s: %w", rel, err)
}

// writeShims writes acolyte's shim for each hook of names into dir,
// through files (a hooks folder inside the worktree is the clone's).
func writeShims(files *hookFiles, dir, exe string, names []string) error {
	for _, name := range names {
		path := filepath.Join(dir, name)
		b, err := files.readOptional(path)
		switch {
		case err != nil:
			return err
		case b == nil:
		case !strings.Contains(string(b), shimMarker):
			if _, err := files.stat(path + chainSuffix); err == nil {
				return fmt.Errorf("both %s and %s exist; merge them by hand, then rerun acolyte hooks install", path, path+chainSuffix)
			}
			if err := files.rename(path, path+chainSuffix); err != nil {
				return fmt.Errorf("keep existing %s hook: %w", name, err)
			}
		}
		if err := files.write(path, []byte(shim(exe, name)), 0o755); err != nil {
			return err
		}
		if err := upgradeChained(files, path+chainSuffix); err != nil {
			return err
		}
	}
	return nil
}

// upgradeChained puts the lines an earlier acolyte's README had people add
// to a hook, which run acolyte without checking that it is on PATH, inside
// that check, in the hook the shim at chained's place runs first.
func upgradeChained(files *hookFiles, chained string) error {
	b, err := files.readOptional(chained)
	if err != nil || b == nil {
		return err
	}
	upgraded, hooks := upgradeLegacy(string(b))
	if len(hooks) == 0 {
		return nil
	}
	mode := os.FileMode(0o755)
	if fi, err := files.stat(chained); err == nil {
		mode = fi.Mode().Perm()
	}
	return files.write(chained, []byte(upgraded), mode)
}

// UninstallHooks removes the shims, puts chained hooks back and unregisters
// the merge driver. Hooks acolyte did not write are left alone.
func Uninstall(ctx context.Context, r *gitsync.Repo) error {
	dir, err := Dir(r)
	if err != nil {
		return err
	}
	files, err := openHookFiles(r)
	if err != nil {
		return err
	}
	defer files.Close()
	for _, name := range gitsync.Hooks {
		path := filepath.Join(dir, name)
		if !files.isShim(path) {
			continue
		}
		if err := files.remove(path); err != nil {
			return err
		}
		if _, err := files.stat(path + chainSuffix); err == nil {
			if err := files.rename(path+chainSuffix, path); err != nil {
				return fmt.Errorf("restore the earlier %s hook: %w", name, err)
			}
		}
	}
	return r.UninstallMergeDriver(ctx)
}
