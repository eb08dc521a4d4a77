package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/acolyte-dev/acolyte/memory"
)

// migrations are applied in order; the database's user_version counts how
// many have run. Append only: an edited migration would leave existing
// databases on a schema no code knows.
var migrations = []string{
	// 1: one table for every kind and scope, its lexical index and its vectors.
	`
CREATE TABLE memories (
	seq          INTEGER PRIMARY KEY,
	id           TEXT NOT NULL,
	scope        TEXT NOT NULL CHECK (scope IN ('project', 'user', 'session')),
	scope_key    TEXT NOT NULL DEFAULT '',
	kind         TEXT NOT NULL CHECK (kind IN ('stored', 'observation', 'rule', 'seed')),
	content      TEXT NOT NULL,
	topic        TEXT NOT NULL DEFAULT '',
	source       TEXT NOT NULL DEFAULT '',
	content_hash TEXT NOT NULL,
	created_at   INTEGER NOT NULL,
	updated_at   INTEGER NOT NULL,
	recalled_at  INTEGER NOT NULL DEFAULT 0,
	tokens       INTEGER NOT NULL,
	commit_hash  TEXT NOT NULL DEFAULT '',
	paths        TEXT NOT NULL DEFAULT '',
	-- Every checkout of a repository indexes the same file, so an id is
	-- unique only within its scope and key.
	UNIQUE (scope, scope_key, id)
);
CREATE INDEX memories_by_scope ON memories (scope, scope_key, content_hash);

-- rowid is memories.seq. The indexed text is the content plus its identifiers
-- split into words, so "run tool" finds runTool.
CREATE VIRTUAL TABLE memories_fts USING fts5 (body, tokenize = 'porter unicode61 remove_diacritics 2');

-- One vector per memory, tagged with the model that made it: vectors of
-- different models are never compared.
CREATE TABLE embeddings (
	seq          INTEGER PRIMARY KEY REFERENCES memories (seq) ON DELETE CASCADE,
	model        TEXT NOT NULL,
	dim          INTEGER NOT NULL,
	content_hash TEXT NOT NULL,
	vec          BLOB NOT NULL
);
CREATE INDEX embeddings_by_model ON embeddings (model);

-- Small bookkeeping, such as the hash of the .acolyte/ files last imported.
CREATE TABLE state (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
);
-- Tells this database apart from one created later at the same path.
INSERT INTO state (key, value) VALUES ('database_id', lower(hex(randomblob(16))));
`,
	// 2: a second lexical column, forms, holds each word's derivational
	// base; reindexFTS fills it for the memories already stored.
	`
DROP TABLE memories_fts;
CREATE VIRTUAL TABLE memories_fts USING fts5 (body, forms, tokenize = 'porter unicode61 remove_diacritics 2');
`,
	// 3: the files a memory applies to (memory.Memory.Globs), as a JSON
	// array, '' for none. A path-scoped search reads the few memories
	// that have any through the partial index.
	`
ALTER TABLE memories ADD COLUMN globs TEXT NOT NULL DEFAULT '';
CREATE INDEX memories_with_globs ON memories (seq) WHERE globs != '';
`,
	// 4: memories by kind, so that listing a project's rules and seeds
	// (a split project's sync after a commit, list --kind rule) reads
	// those rows, not the 100k stored beside them.
	`
CREATE INDEX memories_by_kind ON memories (kind, scope, scope_key);
`,
	// 5: a memory holds a vector of each model that placed it: the
	// instant embedder's, made as it is written, and the model's, made
	// when there is time (memory.Layered).
	`
CREATE TABLE embeddings_by_space (
	seq          INTEGER NOT NULL REFERENCES memories (seq) ON DELETE CASCADE,
	model        TEXT NOT NULL,
	dim          INTEGER NOT NULL,
	content_hash TEXT NOT NULL,
	vec          BLOB NOT NULL,
	PRIMARY KEY (seq, model)
);
INSERT INTO embeddings_by_space (seq, model, dim, content_hash, vec) SELECT seq, model, dim, content_hash, vec FROM embeddings;
DROP TABLE embeddings;
ALTER TABLE embeddings_by_space RENAME TO embeddings;
CREATE INDEX embeddings_by_model ON embeddings (model);
`,
}

// SchemaVersion is the schema this build of acolyte writes.
var SchemaVersion = len(migrations)

// migrate brings the schema up to date inside one immediate transaction, so
// that two processes opening a new database at once cannot both apply it.
func migrate(ctx context.Context, db *sql.DB, path string) error {
	version, err := userVersion(ctx, db)
	if err != nil {
		return err
	}
	if version > SchemaVersion {
		return fmt.Errorf("%w: %s has schema version %d, this acolyte knows %d; upgrade acolyte", memory.ErrSchemaTooNew, path, version, SchemaVersion)
	}
	if version == SchemaVersion {
		return nil
	}
	// WAL lets a hook and an agent write while others read. The mode is
	// stored in the database file, so it is set when the schema is created
	// or upgraded rather than on every open, where it cost a search about a
	// millisecond. It cannot change inside a transaction.
	if _, err := db.ExecContext(ctx, `PRAGMA journal_mode = WAL`); err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := tx.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version); err != nil {
		return err
	}
	for i := version; i < SchemaVersion; i++ {
		if _, err := tx.ExecContext(ctx, migrations[i]); err != nil {
			return fmt.Errorf("migrate %s to schema %d: %w", path, i+1, err)
		}
	}
	if version > 0 && version < ftsVersion {
		if err := reindexFTS(ctx, tx); err != nil {
			return fmt.Errorf("migrate %s to schema %d: re-index: %w", path, SchemaVersion, err)
		}
	}
	// PRAGMA takes no bound parameters; the value is our own integer.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, SchemaVersion)); err != nil {
		return err
	}
	return tx.Commit()
}

func userVersion(ctx context.Context, db *sql.DB) (int, error) {
	var v int
	err := db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v)
	return v, err
}

// ftsVersion is the last migration that changed what the lexical index
// holds for a memory; a database older than it is re-indexed.
const ftsVersion = 2

// reindexFTS derives the lexical index of every stored memory afresh.
func reindexFTS(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT seq, content, topic FROM memories`)
	if err != nil {
		return err
	}
	type row struct {
		seq int64
		m   memory.Memory
	}
	var all []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.seq, &r.m.Content, &r.m.Topic); err != nil {
			rows.Close()
			return err
		}
		all = append(all, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, r := range all {
		if _, err := tx.ExecContext(ctx, `INSERT INTO memories_fts (rowid, body, forms) VALUES (?, ?, ?)`, r.seq, memory.LexicalText(&r.m), memory.LexicalForms(&r.m)); err != nil {
			return err
		}
	}
	return nil
}
