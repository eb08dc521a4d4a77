// Package sqlite is the local memory store: one SQLite database per
// ACOLYTE_HOME holding user and session memories and the index of each
// repository's project memories (the truth for those is the repository's
// .acolyte/memories.jsonl, kept in step by gitsync).
//
// One memories table holds every kind and scope, an FTS5 table is kept in
// step inside each write transaction, and an embeddings table keeps
// int8-quantised vectors tagged with the model that made them. Search
// (search.go) scores the query words FTS5 finds by IDF, credits words a
// memory only implies through its vector, and fuses that with z-scored
// cosine similarity, by the formulas package memory defines for every
// engine. The catalog (catalog.go) is a packed, column-aligned copy of what
// search needs about every memory, in a file beside the database that a
// search maps and reads in place; dot_amd64.s is the AVX2 kernel for its
// cosines.
package sqlite

import "github.com/acolyte-dev/acolyte/memory"

var _ memory.LocalEngine = (*Store)(nil)
