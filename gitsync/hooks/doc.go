// Package hooks installs the git hooks that keep acolyte's index in step
// with the repository: acolyte's own shims, chaining any hook already
// there, or, where a hook manager owns the hooks (husky, lefthook, the
// pre-commit framework, simple-git-hooks, a shared folder), the edits to
// the team's files that make the manager run acolyte. It also says which
// paths git would run or obey as configured (TrustedPaths), which the
// agent's file tools must not write.
//
// What the hooks do when git runs them is package gitsync's (RunHook).
package hooks
