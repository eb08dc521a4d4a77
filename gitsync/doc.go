// Package gitsync knows how project memories live in a git repository: the
// canonical .acolyte/memories.jsonl file that is the source of truth, the
// rules and seeds derived from AGENTS.md and .acolyte/seeds.json, the merge
// driver that lets two branches both add memories, and the checks a hook or
// CI runs without a database.
//
// The SQLite store is only an index of the file. Everything here is pure
// file work so that every clone derives byte-identical results.
package gitsync
