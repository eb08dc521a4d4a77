package gitsync

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/gitsync/internal/acolytedir"
	"github.com/acolyte-dev/acolyte/gitsync/internal/project"
)

// MergeDriverCommand is the merge.acolyte.driver git runs for the memories
// file. It must never leave a conflict, nor only our side, because
// whoever resolves it by hand would likely drop their side's memories: git
// runs it from GUI clients and from shells whose PATH lacks acolyte, so it
// tries exe (the acolyte that installed it), then acolyte on PATH, and
// when neither can merge, falls back to git's own union merge, which keeps
// every line of both sides; format.Decode reads that result and `acolyte sync`
// makes it canonical.
func MergeDriverCommand(exe string) string {
	q := "'" + strings.ReplaceAll(exe, "'", `'\''`) + "'"
	return "{ if [ -x " + q + " ]; then " + q + " merge-driver %O %A %B; " +
		"elif command -v acolyte >/dev/null 2>&1; then acolyte merge-driver %O %A %B; " +
		"else echo 'acolyte: not found by the merge driver' >&2; false; fi; } || " +
		"{ echo 'acolyte: merged " + format.Dir + "/" + format.MemoriesFile + " line by line (union) instead; run `" + FixCommand + "` after the merge' >&2; " +
		unionFallback + " -q %A %O %B; }"
}

// unionFallback is the command MergeDriverCommand falls back to.
const unionFallback = "git merge-file --union"

// InstalledExecutable is the absolute path of the running acolyte, for
// MergeDriverCommand; empty (which never passes [ -x ]) when unknown. The
// path it was started by is preferred when it is the same file: a package
// manager's symlink (/usr/local/bin/acolyte) outlives the versioned path it
// resolves to, which the next upgrade removes.
func InstalledExecutable() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	invoked := os.Args[0]
	if !strings.ContainsRune(invoked, filepath.Separator) {
		invoked, _ = exec.LookPath(invoked)
	}
	if invoked != "" {
		if abs, err := filepath.Abs(invoked); err == nil {
			a, errA := os.Stat(abs)
			b, errB := os.Stat(exe)
			if errA == nil && errB == nil && os.SameFile(a, b) {
				return abs
			}
		}
	}
	if abs, err := filepath.Abs(exe); err == nil {
		return abs
	}
	return exe
}

// MergeDriver is the merge driver command registered in git config, or "".
func (r *Repo) MergeDriver() string {
	driver, _ := r.Config("merge." + MergeDriverName + ".driver")
	return driver
}

// InstallMergeDriver registers command as the merge driver of the memories
// file for this repository: git config plus $GIT_DIR/info/attributes.
func (r *Repo) InstallMergeDriver(ctx context.Context, command string) error {
	if err := r.Git(ctx, "config", "merge."+MergeDriverName+".name", "acolyte project memories (merge by id)"); err != nil {
		return err
	}
	if err := r.Git(ctx, "config", "merge."+MergeDriverName+".driver", command); err != nil {
		return err
	}
	return acolytedir.EnsureLines(r.InfoAttributes(), acolytedir.MergeAttribute, project.ShardsMergeAttribute)
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
		return acolytedir.WriteAtomic(path, []byte(out))
	}
	return nil
}

// UninstallMergeDriver takes the merge driver's lines out of
// $GIT_DIR/info/attributes and its section out of git config.
func (r *Repo) UninstallMergeDriver(ctx context.Context) error {
	for _, line := range []string{acolytedir.MergeAttribute, project.ShardsMergeAttribute} {
		if err := removeLine(r.InfoAttributes(), line); err != nil {
			return err
		}
	}
	if r.MergeDriver() != "" {
		return r.Git(ctx, "config", "--remove-section", "merge."+MergeDriverName)
	}
	return nil
}

// MergeDriverInstalled reports whether git routes the memories file to
// acolyte's merge driver, registered with the union fallback. A driver
// registered before the fallback existed conflicts where acolyte is not on
// git's PATH, so it counts as missing: `hooks status` then sends the user
// to `hooks install` to replace it.
func (r *Repo) MergeDriverInstalled() bool {
	attrs, _ := os.ReadFile(r.InfoAttributes())
	routed := slices.Contains(strings.Split(string(attrs), "\n"), acolytedir.MergeAttribute)
	return routed && strings.Contains(r.MergeDriver(), unionFallback)
}
