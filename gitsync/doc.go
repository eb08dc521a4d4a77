// Package gitsync knows how project memories live in a git repository: the
// workspace that keeps the index in step with .acolyte/memories.jsonl (whose
// encoding, decoding and merge are package gitsync/format), the rules and
// seeds derived from AGENTS.md and .acolyte/seeds.json, the hooks and the
// merge driver's registration with git, and the checks a hook or CI runs
// without a database.
//
// The SQLite store is only an index of the file. Derivation is pure file
// work so that every clone derives byte-identical results.
package gitsync
