package gitsync

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/acolyte-dev/acolyte/gitsync/format"
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
