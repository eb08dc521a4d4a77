// Package gitsync knows how project memories live in a git repository:
//
//   - the Checkout, a checkout's memory toolkit, which keeps the index in
//     step with the files in .acolyte/ (workspace.go);
//   - the two layouts those files take, one file or shards, behind one
//     interface (layout.go), and the caches that let a command skip reading
//     them (stamps, fingerprints, shadows, split state);
//   - the rules and seeds derived from AGENTS.md and .acolyte/seeds.json
//     (derive.go, rules.go, seeds.go);
//   - the hooks git runs (RunHook, QuickHook) and the merge driver's
//     registration; installing hooks and editing hook managers' files is
//     package gitsync/hooks;
//   - the checks a hook or CI runs without a database (check.go).
//
// The file format itself is package gitsync/format. The SQLite store is
// only an index of the files. Derivation is pure file work so that every
// clone derives byte-identical results.
package gitsync
