package gitsync

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/memory"
)

// Hooks are the git hooks acolyte installs, and what each does.
var Hooks = []string{"post-checkout", "post-merge", "post-rewrite", "pre-commit"}

// shimMarker identifies a hook file written by acolyte.
const shimMarker = "# acolyte hook shim"

// chainSuffix is appended to a hook that was there before acolyte; the shim
// runs it first, so installing never clobbers a team's hooks.
const chainSuffix = ".pre-acolyte"

// ExitRefuse is the exit status of `acolyte hook pre-commit` when the commit
// would stage a secret or a memory derived from an invalid rule. It is the
// one status the shims pass on to git, so the hook stays fail-open for
// crashes, I/O errors and a missing binary, and blocks only on purpose.
const ExitRefuse = 3

// shim is deliberately thin and fail-open: the real work happens in
// `acolyte hook NAME`, and nothing acolyte does may block a git command
// except a deliberate refusal (ExitRefuse). A chained hook keeps its own exit
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
if [ "$status" -eq ` + fmt.Sprint(ExitRefuse) + ` ]; then
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
func HookLine(name string) string {
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
	return fmt.Sprintf("if command -v acolyte >/dev/null 2>&1; then acolyte hook %s%s || [ $? -ne %d ]; fi", name, args, ExitRefuse)
}

// HooksDir is the directory git runs hooks from: core.hooksPath when set
// (relative to the working tree, as git reads it), else the hooks folder of
// the common git directory, which linked worktrees share.
func (r *Repo) HooksDir() (string, error) {
	p, err := r.localConfig("core.hooksPath")
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
}

// HooksStatus reports each hook and whether the merge driver is registered.
func (r *Repo) HooksStatus(ctx context.Context) ([]HookState, bool, error) {
	s, err := r.detectSetup(ctx)
	if err != nil {
		return nil, false, err
	}
	defer s.close()
	its, err := r.integrations(s)
	if err != nil {
		return nil, false, err
	}
	var out []HookState
	for _, name := range Hooks {
		out = append(out, r.hookState(s, name, its))
	}
	attrs, _ := os.ReadFile(r.infoAttributes())
	routed := slices.Contains(strings.Split(string(attrs), "\n"), mergeAttribute)
	// A driver registered before the union fallback existed conflicts
	// where acolyte is not on git's PATH; it counts as missing, so that
	// `hooks status` sends the user to `hooks install` to replace it.
	return out, routed && strings.Contains(r.mergeDriver(), unionFallback), nil
}

func (r *Repo) mergeDriver() string {
	driver, _ := r.localConfig("merge." + MergeDriverName + ".driver")
	return driver
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
func (r *Repo) InstallHooks(ctx context.Context, exe string, write bool) (Installed, error) {
	s, err := r.detectSetup(ctx)
	if err != nil {
		return Installed{}, err
	}
	defer s.close()
	out := Installed{Dir: s.gitDir, Manager: s.manager, Managed: s.manager != ""}
	if !out.Managed {
		if err := writeShims(s.files, s.gitDir, exe); err != nil {
			return out, err
		}
	} else if out.Integrations, err = r.integrate(s, write); err != nil {
		return out, err
	}
	if out.Managed {
		out.Lines = make(map[string]string, len(Hooks))
		for _, name := range Hooks {
			out.Lines[name] = HookLine(name)
		}
	}
	if err := r.InstallMergeDriver(ctx, MergeDriverCommand(exe)); err != nil {
		return out, err
	}
	return out, EnsureAttributes(r.Root)
}

// integrate lists, and with write makes, the manager's edits; then it
// removes shims an earlier acolyte left where the manager works, once
// they are no longer the only thing running acolyte (husky's at once:
// there a shim stops the team's own hooks).
func (r *Repo) integrate(s hookSetup, write bool) ([]Integration, error) {
	its, err := r.integrations(s)
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
		if err := removeOwnShims(s.files, s.gitDir); err != nil {
			return its, err
		}
	}
	return its, nil
}

// removeOwnShims deletes acolyte's shims from dir, under any name a manager
// moved them to, and puts back the hooks they chained.
func removeOwnShims(files *hookFiles, dir string) error {
	for _, name := range Hooks {
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
func (r *Repo) sharedHooksDir(ctx context.Context, dir string) (bool, error) {
	// The folder may not exist yet; its parent decides where it is.
	resolved := dir
	if p, err := filepath.EvalSymlinks(dir); err == nil {
		resolved = p
	} else if p, err := filepath.EvalSymlinks(filepath.Dir(dir)); err == nil {
		resolved = filepath.Join(p, filepath.Base(dir))
	}
	rel, inside := within(r.Root, resolved)
	if !inside {
		return false, nil
	}
	if gitDir, err := filepath.EvalSymlinks(r.CommonDir()); err == nil {
		if _, inGit := within(gitDir, resolved); inGit {
			return false, nil
		}
	}
	tracked, err := r.gitOutput(ctx, nil, "ls-files", "--", rel)
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

// writeShims writes acolyte's shim for each hook into dir, through files
// (a hooks folder inside the worktree is the clone's).
func writeShims(files *hookFiles, dir, exe string) error {
	for _, name := range Hooks {
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
	}
	return nil
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
	return ensureLines(r.infoAttributes(), mergeAttribute, shardsMergeAttribute)
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
	files, err := r.openHookFiles()
	if err != nil {
		return err
	}
	defer files.Close()
	for _, name := range Hooks {
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
	for _, line := range []string{mergeAttribute, shardsMergeAttribute} {
		if err := removeLine(r.infoAttributes(), line); err != nil {
			return err
		}
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
	// Warnings are files that were not read (symlinks out of the repository).
	Warnings []Refusal `json:"warnings,omitempty"`
	// Refused is why the pre-commit hook blocks the commit (ErrRefused).
	Refused []Refusal `json:"refused,omitempty"`
}

// stageHelpers stages .acolyte/.gitattributes and .gitignore beside the
// memories file when the index has not got them: without the first, a
// clone without acolyte's driver conflicts on every concurrent add, and the
// first commit is the one that forgets them (issue 21).
func (w *Workspace) stageHelpers(ctx context.Context, ix *index) error {
	if err := EnsureAttributes(w.Repo.Root); err != nil {
		return err
	}
	for _, name := range []string{attributesFile, ignoreFile} {
		rel := format.Dir + "/" + name
		if _, ok := ix.entries[rel]; ok {
			continue
		}
		if _, err := w.Repo.gitOutput(ctx, nil, "add", "--", rel); err != nil {
			return err
		}
	}
	return nil
}

// ErrRefused means the pre-commit hook blocks the commit: it would stage a
// secret, or AGENTS.md or seeds.json hold a rule or seed that cannot be
// written, so the commit would fail acolyte check.
var ErrRefused = errors.New("the commit would stage a secret or an invalid rule")

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
		return w.importHook(ctx)
	case "post-merge", "post-rewrite":
		return w.importHook(ctx)
	case "pre-commit":
		return w.preCommit(ctx)
	}
	return HookResult{}, fmt.Errorf("unknown hook %q: acolyte handles %s", name, strings.Join(Hooks, ", "))
}

// importHook brings the index up to date after git changed the worktree,
// and copies the import state it leaves, so that the next such hook with
// nothing to import is answered without the index (QuickHook).
func (w *Workspace) importHook(ctx context.Context) (HookResult, error) {
	imp, err := w.Refresh(ctx)
	if err == nil {
		if state, err := w.store.GetState(ctx, w.stateKey()); err == nil && state != "" {
			w.copyImportState(state)
		}
	}
	return HookResult{Import: imp}, err
}

// preCommit makes the commit carry the memories that its own content
// derives, and nothing else. It derives from the index, not the worktree:
// with AGENTS.md edited but not staged, `git add -p`, `git commit <path>` or
// `git commit -a` (git points GIT_INDEX_FILE at the index being committed
// and re-reads it after the hook), the worktree holds rules the commit does
// not, and a commit carrying them would fail acolyte check on a clean
// checkout. Deriving from the index was chosen over blocking such commits
// because partial staging is ordinary work and needs no fix from the user.
// The staged memories file is the base, so memories remembered but not
// staged stay out of the commit too; the worktree file is then synced as
// `acolyte sync` would, ready for the next commit.
func (w *Workspace) preCommit(ctx context.Context) (HookResult, error) {
	ix, err := readIndex(ctx, w.Repo)
	if err != nil {
		return HookResult{}, err
	}
	defer ix.close()
	d, err := derive(ix)
	if err != nil {
		return HookResult{}, err
	}
	res := HookResult{Warnings: d.Skipped, Refused: d.Refused}
	if len(d.Refused) > 0 {
		return res, ErrRefused
	}
	return stagedLayoutOf(ix).preCommit(ctx, w, ix, d, res)
}

// preCommit commits the one staged file: through the fast path that
// splices the derived memories into a verified blob, else whole.
func (oneFile) preCommit(ctx context.Context, w *Workspace, ix *index, d Derivation, res HookResult) (HookResult, error) {
	if fast, ok, err := w.preCommitFast(ctx, ix, d, res); ok || err != nil {
		return fast, err
	}
	return w.preCommitFull(ctx, ix, d, res)
}

// preCommitFull is preCommit over the whole staged file: decoded, refreshed,
// encoded and scanned for secrets. The blob it leaves staged is recorded as
// verified, for the next commit to start from (precommit.go).
func (w *Workspace) preCommitFull(ctx context.Context, ix *index, d Derivation, res HookResult) (HookResult, error) {
	rel := memoriesRel
	var err error
	var staged []byte
	if e, ok := ix.entries[rel]; ok {
		if staged, err = ix.cat(e.blob); err != nil {
			return res, err
		}
	}
	decoded, err := format.DecodeAll(rel, staged)
	if err != nil {
		return res, fmt.Errorf("the staged %w; fix it, git add it, and commit again", err)
	}
	// The commit's own tombstones say what it forgot; a memory line they
	// cover (brought back by a merge without the driver) leaves the commit.
	ts, err := ix.stagedTombstones()
	if err != nil {
		return res, err
	}
	stagedForgotten := ts.data
	// A line that is not a valid memory blocks no commit: it is kept as it
	// is, after the memories, as every write keeps it (check still fails
	// on it, and the sync below warns about it).
	current, _ := format.Forget(decoded.Memories, ts.list)
	// A hand edit is stamped in the commit as in the worktree, at the same
	// time, so the two agree: one a command imported before this commit,
	// and, while the staged file is not what was last imported, one the
	// index still tells apart.
	edits, err := w.handEditsToStamp(ctx, current, withForgotten(sha256Hex(staged), stagedForgotten))
	if err != nil {
		return res, err
	}
	now := w.clock()
	current = stampHandEdits(current, edits, now)
	next := Refresh(current, d.Memories)
	if splitsOnCommit(next) {
		return shards{root: w.Repo.Root}.preCommit(ctx, w, ix, d, res)
	}
	encoded := format.EncodeKeeping(next, decoded.InvalidLines)
	lines := lineNumbers(encoded)
	for _, m := range next {
		if f, found := secretRefusal(rel, lines[m.ID], m); found {
			sec, _ := format.FindSecret(m)
			f.Line = lines[m.ID]
			f.Message = fmt.Sprintf("%s %s; delete that line, rotate the credential and git add %s", sec.Name(m, fmt.Sprintf("on line %d", f.Line)), sec.Phrase(), rel)
			res.Refused = append(res.Refused, f)
		}
	}
	if len(res.Refused) > 0 {
		return res, ErrRefused
	}
	blob := ix.entries[rel].blob
	if (len(staged) > 0 || len(next) > 0) && !bytes.Equal(staged, encoded) {
		if blob, err = w.stage(ctx, encoded); err != nil {
			return res, err
		}
		res.Changes, res.Staged = Diff(current, next), true
		if err := w.stageHelpers(ctx, ix); err != nil {
			return res, err
		}
	}
	if blob != "" && len(decoded.InvalidLines) == 0 && !slices.ContainsFunc(next, func(m memory.Memory) bool { return covered(ts.list, m) }) {
		w.saveVerified(verifiedBlob{Memories: blob, Forgotten: ix.entries[forgottenRel].blob, SHA256: sha256Hex(encoded), Derived: derivedIDs(next)})
	}
	// The worktree may hold more (unstaged edits); it follows its own files.
	synced, err := w.sync(ctx, edits, now)
	res.Import = synced.Import
	res.Warnings = append(res.Warnings, synced.Refused...)
	return res, err
}
