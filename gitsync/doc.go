// Package gitsync knows how project memories live in a git repository.
// It holds:
//
//   - the Checkout, a checkout's memory toolkit, which keeps the index in
//     step with the files in .acolyte/ (workspace.go), and Repo, one
//     repository (repo.go);
//   - the hooks git runs (RunHook, QuickHook) and the merge driver's
//     registration.
//
// The jobs under it are packages of their own, each building only on
// those after it: gitsync/internal/precommit (the pre-commit hook's work
// on the project as staged), gitsync/internal/project (the two layouts of the
// .acolyte/ files behind one interface, and the import, writes, sync,
// repair and check that go through them), gitsync/internal/acolytedir (the
// files on disk and the caches that let a command skip reading them),
// gitsync/internal/git (the repository and the git command),
// gitsync/derive (the rules and seeds derived from AGENTS.md and
// .acolyte/seeds.json) and gitsync/format (the file format). Installing
// hooks and editing hook managers' files is package gitsync/hooks.
//
// The SQLite store is only an index of the files. Derivation is pure file
// work so that every clone derives byte-identical results.
package gitsync
