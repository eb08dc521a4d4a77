package toolbox

import (
	"context"
	"os"
	"path/filepath"
)

// guardTrusted refuses a write to a path git runs or obeys (w.Trust). The
// trusted path is resolved through the root like the written one, so a
// symlink on either way does not hide that they are the same place, and
// compared by name as a case-folding filesystem would, so .HUSKY/pre-commit
// is .husky/pre-commit where a teammate checks the tree out.
func (w *Sandbox) guardTrusted(ctx context.Context, root *os.Root, p string, comps []string) error {
	if w.Trust == nil {
		return nil
	}
	var trusted []Trusted
	for _, wt := range worktrees(root, comps) {
		ts, err := w.Trust(ctx, filepath.Join(w.Root, wt))
		if err != nil {
			return errorf(CodeDenied, "%s was not written: what git runs or obeys here could not be learnt (%v), and the file tools write nothing "+
				"until it can; ask the user to fix what the error names", shown(p), err)
		}
		trusted = append(trusted, ts...)
	}
	for _, t := range trusted {
		rel, ok := w.inside(t.Path)
		if !ok {
			continue
		}
		tc, err := w.follow(root, t.Path, rel)
		if err != nil {
			tc = splitPath(rel)
		}
		if !covers(tc, comps, t.Dir) {
			continue
		}
		at := filepath.ToSlash(filepath.Join(tc...))
		where := "is a file"
		switch {
		case t.Dir:
			where = "is in " + at + ", a folder"
		case at != filepath.ToSlash(filepath.Clean(p)):
			where = "is " + at + ", a file"
		}
		return errorf(CodeDenied, "%s %s git trusts: %s. The file tools may read it but not change it, "+
			"because git would run or obey what they wrote on the user's next git command (a hook, a config line) without the consent run_shell asks for. "+
			"Tell the user what to change instead", shown(p), where, t.Why)
	}
	return nil
}

// worktrees are the working trees whose git could run or obey what is
// written at comps: the root's, and that of every repository nested on the
// way (a submodule, a clone under vendor/), each with a config, hooks and
// includes of its own that git uses when the user works in it.
func worktrees(root *os.Root, comps []string) []string {
	out := []string{"."}
	for i := 1; i < len(comps); i++ {
		dir := filepath.Join(comps[:i]...)
		if _, err := root.Lstat(filepath.Join(dir, ".git")); err == nil {
			out = append(out, dir)
		}
	}
	return out
}

// covers says whether comps is the trusted path tc or, for a folder, lies in it.
func covers(tc, comps []string, dir bool) bool {
	if len(tc) == 0 {
		return dir
	}
	if len(comps) < len(tc) || !dir && len(comps) != len(tc) {
		return false
	}
	for i := range tc {
		if normalizeName(tc[i]) != normalizeName(comps[i]) {
			return false
		}
	}
	return true
}
