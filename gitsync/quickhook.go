package gitsync

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/gitsync/internal/acolytedir"
	"github.com/acolyte-dev/acolyte/gitsync/internal/git"
	"github.com/acolyte-dev/acolyte/gitsync/internal/project"
	"github.com/acolyte-dev/acolyte/internal/atomicfile"
)

// A checkout that changes no memory still runs the post-checkout hook, and
// the hook's answer, nothing to import, needs only the import state and two
// stats. Opening SQLite to read that state was about 2 ms of a 10 ms hook
// at 100k memories: the first statement reads the schema and opens the
// WAL's files. So each hook that runs copies the import state it leaves to
// <gitdir>/acolyte/import-state, with the identity of the index it is
// recorded in, and QuickHook answers the next hook from the copy while it
// still describes both the index and the files, as git's index answers for
// a file whose stat has not moved. Only hooks write the copy: a remember or
// an MCP memory_add does not pay for it, and leaves it naming the file as
// it was before, which no longer matches.
//
// The copy is trusted to skip an import, never to do one. Missing, torn,
// older than the index's own state or written for another index, it fails
// to match and the hook opens the index as before; a hook that skipped
// wrongly leaves nothing behind either, since every command imports what
// changed before it reads (Refresh).

// importStateCopy is the first line of the copy, naming its format.
const importStateCopy = "acolyte import-state 1"

func importStateCopyPath(r *Repo) string {
	return filepath.Join(project.CacheDir(&r.Repo), "import-state")
}

// IndexIdentity names the index database at path for the copy: its
// absolute path and its file's identity (device and inode), so that a
// database removed and made again, or restored, is another index. Should
// the system give the new file the old inode, the copy names a database
// that never imported the file; the hook then skips an import that the
// next command does. It is empty, and no copy is kept, where the system
// gives no file identity.
func IndexIdentity(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return ""
	}
	id := git.FileIdentity(fi)
	if id == "" {
		return ""
	}
	return abs + "\t" + id
}

// copyImportState writes the copy when it does not already say state;
// best effort, like the shadow, since a missing copy costs the next hook
// 2 ms and nothing else.
func (w *Checkout) copyImportState(state string) {
	path := importStateCopyPath(w.Repo)
	if w.IndexID == "" {
		os.Remove(path)
		return
	}
	data := importStateCopy + "\n" + w.IndexID + "\n" + w.ws.StateKey() + "\n" + state
	if old, err := os.ReadFile(path); err == nil && string(old) == data {
		return
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return
	}
	if atomicfile.Write(path, atomicfile.Options{Perm: 0o644}, atomicfile.Bytes([]byte(data))) != nil {
		os.Remove(path)
	}
}

// QuickHook answers a post-checkout, post-merge or post-rewrite hook from
// the files alone, without opening the index, when the copy of the import
// state says the index named indexID holds the memories file as it is now:
// then the answer is what RunHook's would be, an import skipped, with the
// warnings the last import recorded. ok is false when the hook must run.
func QuickHook(repo *Repo, indexID, name string, args []string) (imp Imported, ok bool) {
	w := &Checkout{Repo: repo, IndexID: indexID, ws: &project.Workspace{Repo: &repo.Repo}}
	switch {
	case indexID == "":
		return Imported{}, false
	case name == "post-checkout" && len(args) >= 3 && args[2] == "1", name == "post-merge":
		if w.inRebase() {
			return Imported{}, false // RunHook says why it skips
		}
	case name == "post-rewrite":
	default:
		return Imported{}, false
	}
	data, err := os.ReadFile(importStateCopyPath(repo))
	if err != nil {
		return Imported{}, false
	}
	f := strings.SplitN(string(data), "\n", 4)
	if len(f) != 4 || f[0] != importStateCopy || f[1] != indexID || f[2] != w.ws.StateKey() {
		return Imported{}, false
	}
	state := f[3]
	if GuardDir(repo.Root) != nil {
		return Imported{}, false
	}
	// With no memories file Refresh derives from the instruction files.
	before, err := os.Stat(format.MemoriesPath(repo.Root))
	if err != nil {
		return Imported{}, false
	}
	if l, err := project.LayoutOf(repo.Root); err != nil || !l.Holds(w.ws, state, before) {
		return Imported{}, false
	}
	RemoveStaleTemps(repo.Root) // as derive.Refresh does on every command
	_, _, warnings := acolytedir.ParseImportState(state)
	return Imported{Skipped: true, Warnings: warnings}, true
}
