package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/acolyte-dev/acolyte/memory"
)

// BusyTimeout is how long a write waits for another process (a git hook, a
// second agent) to finish its transaction before giving up.
const BusyTimeout = 10 * time.Second

// recallWriteWait bounds how long a search waits to record its recall
// times. Readers never wait for a writer in WAL mode, and the search
// itself must not either: recall times are bookkeeping, kept best effort.
const recallWriteWait = 100 * time.Millisecond

// Store is the SQLite index of every memory, with the lexical index and
// the vectors kept in step inside each write transaction.
type Store struct {
	db       *sql.DB
	path     string
	embedder memory.Embedder
	// instant is the layered embedder's stand-in (memory.Layered), nil
	// when the embedder is not layered.
	instant memory.Embedder
	now     func() time.Time
	// leftPending says a write or search met memories without the
	// model's vectors (LeftPending).
	leftPending atomic.Bool

	// damaged is what marked the database damaged (damage.go); verified
	// says that this Store found it sound before its first write, and
	// trusted is the main file's stamp then (or after its own checkpoint
	// since), so that a later write checks it again only if it moved.
	damagedMu sync.Mutex
	damaged   string
	verified  bool
	trusted   string

	// readOnly says why this process cannot write the database
	// (readonly.go), "" when it can.
	readOnly string

	catalogMu sync.Mutex
	// kept holds the catalog of the last search in each vector space,
	// reused while the database's generation stays the same (a long-lived
	// MCP server or agent).
	kept map[string]*catalog

	// globs keeps memories' globs compiled across searches.
	globs memory.GlobCache
}

// Open opens (creating if needed) the store at path. The embedder places new
// memories and queries in vector space; memories embedded by another model
// are found only lexically until Reindex.
func Open(ctx context.Context, path string, e memory.Embedder) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("%w: create the data directory for %s: %w; set ACOLYTE_HOME to a writable directory", memory.ErrIO, path, err)
	}
	if reason := readOnlyReason(path); reason != "" {
		return openReadOnly(ctx, path, e, reason)
	}
	dsn := "file:" + path + "?_txlock=immediate" +
		fmt.Sprintf("&_pragma=busy_timeout(%d)", BusyTimeout.Milliseconds()) +
		"&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(ON)&_pragma=temp_store(MEMORY)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	s := &Store{db: db, path: path, embedder: e, now: time.Now}
	if l, ok := e.(memory.Layered); ok {
		s.instant = l.Instant()
	}
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		// A new database: a marker left beside a file removed since is
		// not about this one.
		os.Remove(path + damagedSuffix)
	}
	s.loadDamaged()
	// Switching a new database to WAL needs a moment of exclusive access,
	// and SQLite reports a busy database then without waiting; processes
	// that open a new database together take turns here instead.
	deadline := time.Now().Add(BusyTimeout)
	for {
		err = s.explain(migrate(ctx, db, path))
		if err == nil {
			return s, nil
		}
		if !errors.Is(err, memory.ErrDatabaseLocked) || time.Now().After(deadline) {
			db.Close()
			return nil, err
		}
		select {
		case <-ctx.Done():
			db.Close()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Close releases the database.
func (s *Store) Close() error {
	s.catalogMu.Lock()
	for model, c := range s.kept {
		s.releaseLocked(c)
		delete(s.kept, model)
	}
	s.catalogMu.Unlock()
	// The last connection to close checkpoints the WAL into the file.
	return s.followCheckpoint(s.db.Close)
}

// WaitWritable waits at most wait for the database's write lock, and
// reports memory.ErrDatabaseLocked if another process keeps it longer. A
// command that only reads calls it before bringing the index up to date,
// so that a stuck writer elsewhere delays its answer by wait rather than by
// BusyTimeout: the index as it stands can be searched meanwhile (WAL lets
// readers past a writer).
func (s *Store) WaitWritable(ctx context.Context, wait time.Duration) error {
	if s.readOnly != "" {
		return s.errReadOnly()
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	tx, err := s.db.BeginTx(wctx, nil)
	if err != nil {
		if ctx.Err() == nil && wctx.Err() != nil {
			return fmt.Errorf("%w: %s is held by another process's write", memory.ErrDatabaseLocked, s.path)
		}
		return s.explain(err)
	}
	return tx.Rollback()
}

// Path is the database file.
func (s *Store) Path() string { return s.path }

// Embedder is the embedder new vectors come from.
func (s *Store) Embedder() memory.Embedder { return s.embedder }

// Instant is a layered embedder's instant embedder, nil when the embedder
// is not layered.
func (s *Store) Instant() memory.Embedder { return s.instant }

// explain turns SQLite's result codes into errors that say what to do.
func (s *Store) explain(err error) error {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return err
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return fmt.Errorf("%w: %s is held by another process for more than %s; retry, or find the stuck acolyte process: %v", memory.ErrDatabaseLocked, s.path, BusyTimeout, err)
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		s.markDamaged(err.Error())
		return s.errDamaged(err.Error())
	case sqlite3.SQLITE_IOERR, sqlite3.SQLITE_FULL, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM:
		return fmt.Errorf("%w: %s: %s (sqlite: %v)", memory.ErrIO, s.path, ioCause(filepath.Dir(s.path)), err)
	}
	return err
}

// ioCause finds out why SQLite's I/O failed. SQLite reports only its own
// code ("disk I/O error (4874)") and modernc.org/sqlite does not expose the
// errno behind it, so the cause is asked of the operating system again: a
// test write of a few database pages in the same directory fails the same
// way a full disk, an exceeded `ulimit -f` or a read-only mount failed
// SQLite's write, and says which.
func ioCause(dir string) string {
	f, err := os.CreateTemp(dir, ".acolyte-write-test-*")
	if err != nil {
		return fmt.Sprintf("cannot write in %s: %v; check its permissions and free space", dir, err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	page := make([]byte, 64<<10)
	for range 16 {
		if _, err = f.Write(page); err != nil {
			break
		}
	}
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		if cause := errors.Unwrap(err); cause != nil {
			err = cause // the errno; the probe file's own name says nothing
		}
		return fmt.Sprintf("writing in %s fails: %v; free space there (or raise the file size limit), then retry", dir, err)
	}
	return fmt.Sprintf("the operating system reported an I/O error, though a test write in %s succeeded; check the disk and retry", dir)
}

const memoryColumns = `m.seq, m.id, m.scope, m.scope_key, m.kind, m.content, m.topic, m.source,
	m.created_at, m.updated_at, m.recalled_at, m.tokens, m.commit_hash, m.paths, m.globs`

type scanner interface{ Scan(...any) error }

func scanMemory(row scanner) (int64, memory.Memory, error) {
	var (
		m                         memory.Memory
		seq                       int64
		created, updated, recalld int64
		paths, globs              string
	)
	err := row.Scan(&seq, &m.ID, &m.Scope, &m.ScopeKey, &m.Kind, &m.Content, &m.Topic, &m.Source,
		&created, &updated, &recalld, &m.Tokens, &m.Commit, &paths, &globs)
	if err != nil {
		return 0, m, err
	}
	m.CreatedAt = time.UnixMilli(created).UTC()
	m.UpdatedAt = time.UnixMilli(updated).UTC()
	if recalld != 0 {
		m.RecalledAt = time.UnixMilli(recalld).UTC()
	}
	if paths != "" {
		_ = json.Unmarshal([]byte(paths), &m.Paths) // written by us as a JSON array
	}
	if globs != "" {
		_ = json.Unmarshal([]byte(globs), &m.Globs) // as paths
	}
	return seq, m, nil
}

// Get returns the memory with this id that is visible from vis.
func (s *Store) Get(ctx context.Context, vis memory.Visibility, id string) (memory.Memory, error) {
	where, args := visible(vis, memory.Filter{})
	row := s.db.QueryRowContext(ctx, `SELECT `+memoryColumns+` FROM memories m WHERE m.id = ? AND `+where,
		append([]any{id}, args...)...)
	_, m, err := scanMemory(row)
	if errors.Is(err, sql.ErrNoRows) {
		return memory.Memory{}, fmt.Errorf("%w: %s", memory.ErrNotFound, id)
	}
	return m, s.explain(err)
}

// Add stores a new memory seen from vis, unless the same content already
// exists in that scope, in which case it returns the existing one. The check
// and the insert share one transaction, so concurrent writers cannot both add.
func (s *Store) Add(ctx context.Context, vis memory.Visibility, d memory.Draft) (memory.Added, error) {
	m, err := s.Prepare(vis, d)
	if err != nil {
		return memory.Added{}, err
	}
	vecs, warning := s.embed(ctx, []memory.Memory{m})
	var out memory.Added
	err = s.inTx(ctx, func(tx *txn) error {
		_, existing, err := scanMemory(tx.queryRow(`SELECT `+memoryColumns+` FROM memories m
			WHERE m.scope = ? AND m.scope_key = ? AND m.content_hash = ? LIMIT 1`,
			m.Scope, m.ScopeKey, memory.ContentHash(m.Content)))
		if err == nil {
			out = memory.Added{Memory: existing, Existing: true}
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		ms := []memory.Memory{m}
		if err := s.upsert(tx, ms, vecs, func(string) bool { return false }); err != nil {
			return err
		}
		m = ms[0]
		return nil
	})
	if err != nil {
		return memory.Added{}, s.explain(err)
	}
	if out.Existing {
		return out, nil
	}
	return memory.Added{Memory: m, Warning: warning}, nil
}

// FindContent returns the memory of one scope and key whose normalised
// content equals content, the same test Add deduplicates by. Project writes
// use it to deduplicate against the index instead of decoding the whole
// memories file.
func (s *Store) FindContent(ctx context.Context, scope memory.Scope, key, content string) (memory.Memory, bool, error) {
	_, m, err := scanMemory(s.db.QueryRowContext(ctx, `SELECT `+memoryColumns+` FROM memories m
		WHERE m.scope = ? AND m.scope_key = ? AND m.content_hash = ? LIMIT 1`,
		scope, key, memory.ContentHash(content)))
	if errors.Is(err, sql.ErrNoRows) {
		return memory.Memory{}, false, nil
	}
	if err != nil {
		return memory.Memory{}, false, s.explain(err)
	}
	return m, true, nil
}

// Prepare turns a draft into a complete, validated memory with a new id,
// without storing it. Callers that must write a file first (project memory)
// use it so the file and the index agree on every field.
func (s *Store) Prepare(vis memory.Visibility, d memory.Draft) (memory.Memory, error) {
	if d.Kind == "" {
		d.Kind = memory.KindStored
	}
	if d.Scope == "" {
		d.Scope = memory.ScopeUser
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	m := memory.Memory{
		ID:        memory.NewID(now),
		Scope:     d.Scope,
		Kind:      d.Kind,
		Content:   strings.TrimSpace(d.Content),
		Topic:     strings.TrimSpace(d.Topic),
		Source:    d.Source,
		Globs:     memory.NormalizeGlobs(d.Globs),
		CreatedAt: now,
		UpdatedAt: now,
	}
	// Counted here too, not only when a row is written: a project memory
	// is returned from its file write, before the index holds it.
	m.Tokens = memory.EstimateTokens(m.Content)
	switch d.Scope {
	case memory.ScopeProject:
		m.ScopeKey = vis.ProjectKey
	case memory.ScopeSession:
		m.ScopeKey = vis.SessionKey
	case memory.ScopeTeam:
		// Team memories are shared; a copy in one machine's local store
		// would be seen by nobody else and go stale.
		return memory.Memory{}, fmt.Errorf("%w: team memories live in the team database; configure it with --team-db URL and --team NAME (or ACOLYTE_TEAM_DB and ACOLYTE_TEAM)", memory.ErrNoTeam)
	}
	if err := memory.ValidateContent(d.Content); err != nil {
		return memory.Memory{}, err
	}
	if err := m.Validate(); err != nil {
		if errors.Is(err, memory.ErrNoScopeKey) {
			switch d.Scope {
			case memory.ScopeProject:
				return memory.Memory{}, fmt.Errorf("%w: project memories need a git repository; run inside one, or store it in user scope (--scope user, or scope \"user\" in a tool call)", memory.ErrNoScopeKey)
			case memory.ScopeSession:
				return memory.Memory{}, fmt.Errorf("%w: session memories need a session id; pass --session or set ACOLYTE_SESSION", memory.ErrNoScopeKey)
			}
		}
		return memory.Memory{}, err
	}
	return m, nil
}

// Revise applies r to m and moves its updated time past the one it had,
// so that when two copies of the memory meet in a merge, the later edit
// wins (see gitsync/format.Merge). It validates the new content as Add does.
func (s *Store) Revise(m memory.Memory, r memory.Revision) (memory.Memory, error) {
	return r.Apply(m, s.now())
}

// Put stores m under its id, replacing any memory with that id. The vector
// is recomputed only when the content changed.
func (s *Store) Put(ctx context.Context, m memory.Memory) (memory.Added, error) {
	if m.ID == "" {
		return memory.Added{}, errors.New("put: memory has no id")
	}
	if err := m.Validate(); err != nil {
		return memory.Added{}, err
	}
	st, err := s.replace(ctx, []memory.Memory{m}, nil)
	return memory.Added{Memory: m, Warning: st.Warning}, err
}

// ReplaceScope makes the memories of one scope and key exactly ms: new ids
// are added, changed ones updated, missing ones removed, and unchanged ones
// left alone, vectors included. It is how a .acolyte/ file is imported.
func (s *Store) ReplaceScope(ctx context.Context, scope memory.Scope, key string, ms []memory.Memory) (memory.ReplaceStats, error) {
	for i := range ms {
		ms[i].Scope, ms[i].ScopeKey = scope, key
		if err := ms[i].Validate(); err != nil {
			return memory.ReplaceStats{}, fmt.Errorf("memory %s: %w", ms[i].ID, err)
		}
	}
	return s.replace(ctx, ms, &scopeRef{scope, key})
}

type scopeRef struct {
	scope memory.Scope
	key   string
}

// replace upserts ms in one transaction. When within is set, memories of
// that scope and key that are not in ms are removed in the same transaction.
func (s *Store) replace(ctx context.Context, ms []memory.Memory, within *scopeRef) (memory.ReplaceStats, error) {
	type existing struct {
		seq                                                int64
		content, topic, source, kind, commit, paths, globs string
		created, updated                                   int64
	}
	have := map[string]existing{}
	var st memory.ReplaceStats
	if within != nil {
		rows, err := s.db.QueryContext(ctx, `SELECT seq, id, content, topic, source, kind, commit_hash, paths, globs, created_at, updated_at
			FROM memories WHERE scope = ? AND scope_key = ?`, within.scope, within.key)
		if err != nil {
			return st, s.explain(err)
		}
		for rows.Next() {
			var id string
			var e existing
			if err := rows.Scan(&e.seq, &id, &e.content, &e.topic, &e.source, &e.kind, &e.commit, &e.paths, &e.globs, &e.created, &e.updated); err != nil {
				rows.Close()
				return st, s.explain(err)
			}
			have[id] = e
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return st, s.explain(err)
		}
	}
	// Only memories that are new or whose content changed need a vector.
	var changed []memory.Memory
	for _, m := range ms {
		e, ok := have[m.ID]
		// The text itself is compared, not ContentHash: a hand edit of
		// case or spacing alone changes what search shows.
		if ok && e.content == m.Content && e.topic == m.Topic && e.source == m.Source &&
			e.kind == string(m.Kind) && e.commit == m.Commit && e.paths == encodePaths(m.Paths) && e.globs == encodePaths(m.Globs) &&
			sameTime(e.created, m.CreatedAt) && sameTime(e.updated, m.UpdatedAt) {
			st.Unchanged++
			continue
		}
		if ok {
			st.Updated++
			if sameTime(e.updated, m.UpdatedAt) && (e.content != m.Content || e.topic != m.Topic) {
				st.Revised = append(st.Revised, m.ID)
			}
		} else {
			st.Added++
		}
		st.Written = append(st.Written, m.ID)
		changed = append(changed, m)
	}
	keep := make(map[string]bool, len(ms))
	for _, m := range ms {
		keep[m.ID] = true
	}
	var remove []int64
	for id, e := range have {
		if !keep[id] {
			remove = append(remove, e.seq)
		}
	}
	st.Removed = len(remove)
	if len(changed) == 0 && len(remove) == 0 {
		return st, nil
	}
	if within != nil && len(have) == 0 && len(changed) >= bulkMin {
		warning, err := s.bulkAdd(ctx, changed)
		if !errors.Is(err, errNoBulkSeqs) {
			st.Warning = warning
			return st, s.explain(err)
		}
	}
	vecs, warning := s.embed(ctx, changed)
	st.Warning = warning
	err := s.inTx(ctx, func(tx *txn) error {
		existed := func(id string) bool {
			if within == nil {
				return true // a Put may replace a memory of any scope
			}
			_, ok := have[id]
			return ok
		}
		if err := s.upsert(tx, changed, vecs, existed); err != nil {
			return err
		}
		for _, seq := range remove {
			if err := deleteSeq(tx, seq); err != nil {
				return err
			}
		}
		return nil
	})
	return st, s.explain(err)
}

// embedBatch is how many memories are embedded at a time. Vectors are
// quantised as each batch arrives, so an import of 141k memories (a fresh
// clone of a large project) holds 14 MB of int8 vectors, not 56 MB of
// float32 ones.
const embedBatch = 2048

// modelAtWrite is the most memories a write embeds with a layered
// embedder's model before it returns: a remember or a checkout's few
// changed memories get their model vectors at once, for about ten
// milliseconds each, and a larger import gets the instant ones only and
// leaves the model's to Fill.
const modelAtWrite = 8

// vectors are one embedder's quantised vectors for a write's memories.
type vectors struct {
	model string
	vecs  [][]byte // nil where a memory has none
}

// writeEmbedders are the embedders a write of n memories embeds with:
// the embedder, or a layered one's instant embedder and, for a small
// write, its model.
func (s *Store) writeEmbedders(n int) []memory.Embedder {
	switch {
	case s.embedder == nil:
		return nil
	case s.instant == nil:
		return []memory.Embedder{s.embedder}
	case n <= modelAtWrite:
		return []memory.Embedder{s.instant, s.embedder}
	}
	s.leftPending.Store(true)
	return []memory.Embedder{s.instant}
}

// embed computes the quantised document vectors of ms by each write
// embedder. Failure is not fatal: the memories are stored without those
// vectors (lexical search still finds them) and the warning says to run
// reindex.
func (s *Store) embed(ctx context.Context, ms []memory.Memory) ([]vectors, string) {
	var out []vectors
	for _, e := range s.writeEmbedders(len(ms)) {
		vs := vectors{model: e.Model(), vecs: make([][]byte, len(ms))}
		out = append(out, vs)
		for start := 0; start < len(ms); start += embedBatch {
			batch := ms[start:min(start+embedBatch, len(ms))]
			texts := make([]string, len(batch))
			for i := range batch {
				texts[i] = memory.EmbedText(&batch[i])
			}
			got, err := e.Embed(ctx, memory.PurposeDocument, texts)
			if err == nil && len(got) != len(batch) {
				err = fmt.Errorf("embedder returned %d vectors for %d texts", len(got), len(batch))
			}
			if err != nil {
				clear(vs.vecs)
				return out, fmt.Sprintf("stored without a vector (%v); run `acolyte reindex` when the embedder is reachable", err)
			}
			for i, v := range got {
				vs.vecs[start+i] = quantize(v)
			}
		}
	}
	return out, ""
}

// sameTime compares a stored time with an incoming one; a zero incoming time
// means "whenever it was first stored" and matches anything.
func sameTime(stored int64, t time.Time) bool {
	return t.IsZero() || stored == t.UnixMilli()
}

func encodePaths(paths []string) string {
	if len(paths) == 0 {
		return ""
	}
	b, _ := json.Marshal(paths) // a []string always marshals
	return string(b)
}

// upsert writes memories and their vectors (where vecs[i] is non-nil), then
// their lexical rows. existed says which ids may already have a lexical row.
// The lexical rows come last and together because FTS5 flushes its pending
// terms at every statement savepoint, which the upserts open; interleaving
// them cost a flush, and a segment merge, per memory.
func (s *Store) upsert(tx *txn, ms []memory.Memory, vecs []vectors, existed func(id string) bool) error {
	seqs := make([]int64, len(ms))
	nowMs := s.now().UnixMilli()
	for i := range ms {
		if err := tx.checkCancel(i); err != nil {
			return err
		}
		m := &ms[i]
		// A zero time means "keep what is stored", or now for a new memory.
		var created, updated any
		if !m.CreatedAt.IsZero() {
			created = m.CreatedAt.UnixMilli()
		}
		if !m.UpdatedAt.IsZero() {
			updated = m.UpdatedAt.UnixMilli()
		}
		m.Tokens = memory.EstimateTokens(m.Content)
		hash := memory.ContentHash(m.Content)
		if !existed(m.ID) {
			// A plain insert costs a third less than the upsert below,
			// which an import of a fresh clone runs once per memory.
			res, err := tx.exec(`INSERT INTO memories
				(id, scope, scope_key, kind, content, topic, source, content_hash, created_at, updated_at, tokens, commit_hash, paths, globs)
				VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, coalesce(?9, ?14), coalesce(?10, ?9, ?14), ?11, ?12, ?13, ?15)`,
				m.ID, m.Scope, m.ScopeKey, m.Kind, m.Content, m.Topic, m.Source, hash,
				created, updated, m.Tokens, m.Commit, encodePaths(m.Paths), nowMs, encodePaths(m.Globs))
			if err == nil {
				seqs[i], err = res.LastInsertId()
			}
			if err != nil {
				return fmt.Errorf("write memory %s: %w", m.ID, err)
			}
		} else if err := tx.queryRow(`INSERT INTO memories
			(id, scope, scope_key, kind, content, topic, source, content_hash, created_at, updated_at, tokens, commit_hash, paths, globs)
			VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, coalesce(?9, ?14), coalesce(?10, ?9, ?14), ?11, ?12, ?13, ?15)
			ON CONFLICT (scope, scope_key, id) DO UPDATE SET kind = excluded.kind,
				content = excluded.content, topic = excluded.topic, source = excluded.source,
				content_hash = excluded.content_hash, created_at = coalesce(?9, memories.created_at),
				updated_at = coalesce(?10, ?14), tokens = excluded.tokens, commit_hash = excluded.commit_hash, paths = excluded.paths,
				globs = excluded.globs
			RETURNING seq`,
			m.ID, m.Scope, m.ScopeKey, m.Kind, m.Content, m.Topic, m.Source, hash,
			created, updated, m.Tokens, m.Commit, encodePaths(m.Paths), nowMs, encodePaths(m.Globs)).Scan(&seqs[i]); err != nil {
			return fmt.Errorf("write memory %s: %w", m.ID, err)
		}
		tx.touched[seqs[i]] = true
		// A vector of the old content would now be wrong; an absent one is only incomplete.
		if _, err := tx.exec(`DELETE FROM embeddings WHERE seq = ? AND content_hash != ?`, seqs[i], hash); err != nil {
			return err
		}
		for _, vs := range vecs {
			if vs.vecs[i] == nil {
				continue
			}
			if _, err := tx.exec(`INSERT OR REPLACE INTO embeddings (seq, model, dim, content_hash, vec) VALUES (?, ?, ?, ?, ?)`,
				seqs[i], vs.model, len(vs.vecs[i])-4, hash, vs.vecs[i]); err != nil {
				return err
			}
		}
	}
	for i := range ms {
		if err := tx.checkCancel(i); err != nil {
			return err
		}
		if existed(ms[i].ID) {
			if _, err := tx.exec(`DELETE FROM memories_fts WHERE rowid = ?`, seqs[i]); err != nil {
				return err
			}
		}
		if _, err := tx.exec(`INSERT INTO memories_fts (rowid, body, forms) VALUES (?, ?, ?)`, seqs[i], memory.LexicalText(&ms[i]), memory.LexicalForms(&ms[i])); err != nil {
			return err
		}
	}
	return nil
}

// Delete removes memories visible from vis by id, with their lexical rows
// and vectors. If any id is unknown nothing is removed, so a typo never
// half-applies.
func (s *Store) Delete(ctx context.Context, vis memory.Visibility, ids ...string) ([]memory.Memory, error) {
	where, args := visible(vis, memory.Filter{})
	var removed []memory.Memory
	err := s.inTx(ctx, func(tx *txn) error {
		var (
			missing []string
			seqs    []int64
		)
		for _, id := range ids {
			seq, m, err := scanMemory(tx.queryRow(`SELECT `+memoryColumns+` FROM memories m WHERE m.id = ? AND `+where,
				append([]any{id}, args...)...))
			if errors.Is(err, sql.ErrNoRows) {
				missing = append(missing, id)
				continue
			}
			if err != nil {
				return err
			}
			removed = append(removed, m)
			seqs = append(seqs, seq)
		}
		if len(missing) > 0 {
			return fmt.Errorf("%w: %s (nothing was removed; `acolyte list` shows ids)", memory.ErrNotFound, strings.Join(missing, ", "))
		}
		for _, seq := range seqs {
			if err := deleteSeq(tx, seq); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, s.explain(err)
	}
	return removed, nil
}

func deleteSeq(tx *txn, seq int64) error {
	tx.touched[seq] = true
	if _, err := tx.exec(`DELETE FROM memories WHERE seq = ?`, seq); err != nil {
		return fmt.Errorf("remove memory: %w", err)
	}
	if _, err := tx.exec(`DELETE FROM memories_fts WHERE rowid = ?`, seq); err != nil {
		return err
	}
	_, err := tx.exec(`DELETE FROM embeddings WHERE seq = ?`, seq)
	return err
}

// txn is a write transaction that prepares each statement once: an import
// writes thousands of rows with the same five statements, and preparing
// them per row cost a third of the time.
type txn struct {
	ctx context.Context
	// stmtCtx is ctx without its cancellation, for single statements. With
	// a cancellable context the driver arms an interrupt (a goroutine and a
	// progress handler) around every statement, which cost an import of
	// 141k memories about 6% of its time; writers check ctx between rows
	// (checkCancel) instead, so a cancelled import still stops promptly.
	stmtCtx context.Context
	tx      *sql.Tx
	stmts   map[string]*sql.Stmt
	// touched holds the seqs the transaction wrote or removed.
	touched map[int64]bool
	// built, when not nil, is the whole catalog as the transaction leaves
	// it, built by a writer that knew it wrote every memory (bulkAdd into
	// an empty table): patchedCatalog then reads nothing back.
	built *catalogBuilder
}

func (t *txn) stmt(q string) (*sql.Stmt, error) {
	if st, ok := t.stmts[q]; ok {
		return st, nil
	}
	st, err := t.tx.PrepareContext(t.stmtCtx, q)
	if err != nil {
		return nil, err
	}
	t.stmts[q] = st
	return st, nil
}

func (t *txn) exec(q string, args ...any) (sql.Result, error) {
	st, err := t.stmt(q)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(t.stmtCtx, args...)
}

// errRow lets queryRow report a prepare error through Scan, as *sql.Row does.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

func (t *txn) queryRow(q string, args ...any) scanner {
	st, err := t.stmt(q)
	if err != nil {
		return errRow{err}
	}
	return st.QueryRowContext(t.stmtCtx, args...)
}

// checkCancel reports the transaction's cancellation every 256th row i.
func (t *txn) checkCancel(i int) error {
	if i%256 != 0 {
		return nil
	}
	return t.ctx.Err()
}

// inTx runs fn in a write transaction, bumps the generation and, when it
// can, brings the search catalog along (see patchCatalog).
func (s *Store) inTx(ctx context.Context, fn func(*txn) error) error {
	if err := s.refuseIfDamaged(ctx); err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	t := &txn{ctx: ctx, stmtCtx: context.WithoutCancel(ctx), tx: tx, stmts: map[string]*sql.Stmt{}, touched: map[int64]bool{}}
	var before string
	if err := t.queryRow(`SELECT ` + currentGeneration).Scan(&before); err != nil {
		tx.Rollback()
		return err
	}
	if err := fn(t); err != nil {
		tx.Rollback()
		return err
	}
	if len(t.touched) == 0 {
		// Nothing the catalog holds changed (a duplicate Add): the
		// generation, and with it the saved catalog, stays.
		return tx.Commit()
	}
	if _, err := t.exec(bumpGeneration); err != nil {
		tx.Rollback()
		return err
	}
	var patched []*catalogPatch
	for _, e := range s.spaces() {
		if p := s.patchedCatalog(t, before, modelOf(e)); p != nil {
			patched = append(patched, p)
		}
	}
	// A commit past SQLite's autocheckpoint writes the main file.
	if err := s.followCheckpoint(tx.Commit); err != nil {
		return err
	}
	for _, p := range patched {
		s.publishCatalog(p)
	}
	return nil
}

// visible appends the visibility rules and filters to a WHERE clause over
// memories m: own session, own project, every user memory; an explicit scope
// narrows to that scope.
func visible(vis memory.Visibility, f memory.Filter) (string, []any) {
	var (
		where []string
		args  []any
	)
	scopes := []string{`m.scope = 'user'`}
	if vis.ProjectKey != "" {
		scopes = append(scopes, `(m.scope = 'project' AND m.scope_key = ?)`)
		args = append(args, vis.ProjectKey)
	}
	if vis.SessionKey != "" {
		scopes = append(scopes, `(m.scope = 'session' AND m.scope_key = ?)`)
		args = append(args, vis.SessionKey)
	}
	where = append(where, "("+strings.Join(scopes, " OR ")+")")
	if f.Scope != "" {
		where = append(where, `m.scope = ?`)
		args = append(args, f.Scope)
	}
	if f.Kind != "" {
		where = append(where, `m.kind = ?`)
		args = append(args, f.Kind)
	}
	if f.Topic != "" {
		where = append(where, topicCondition("m.topic"))
		args = append(args, topicArgs(f.Topic)...)
	}
	return strings.Join(where, " AND "), args
}

// topicCondition is Filter.Topic in SQL on the column col, with
// topicArgs as its values. substr and length count characters, the same
// on both sides; a LIKE pattern would need the topic's % and _ escaped.
func topicCondition(col string) string {
	return "(" + col + " = ? OR substr(" + col + ", 1, length(?)) = ?)"
}

func topicArgs(filter string) []any {
	prefix := memory.TopicPrefix(filter)
	return []any{filter, prefix, prefix}
}

// List returns the memories visible from vis, oldest first.
func (s *Store) List(ctx context.Context, vis memory.Visibility, f memory.Filter) ([]memory.Memory, error) {
	where, args := visible(vis, f)
	q := `SELECT ` + memoryColumns + ` FROM memories m WHERE ` + where + ` ORDER BY m.created_at, m.id`
	if f.Limit > 0 {
		q += fmt.Sprintf(` LIMIT %d`, f.Limit)
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, s.explain(err)
	}
	defer rows.Close()
	var out []memory.Memory
	for rows.Next() {
		_, m, err := scanMemory(rows)
		if err != nil {
			return nil, s.explain(err)
		}
		out = append(out, m)
	}
	return out, s.explain(rows.Err())
}

// Reindex embeds every memory that has no vector from the current embedder,
// or whose vector is older than its content, and reports progress. With
// a layered embedder it does so for the instant embedder first, then the
// model. With all, every memory is embedded again, which is how to pick up
// a model that changed behind the same name. A memory keeps its old vector
// until its new one is written, and vectors are committed 64 memories at
// a time, so an interrupted reindex loses at most one batch's work and the
// next one goes on from there.
func (s *Store) Reindex(ctx context.Context, all bool, progress func(done, total int)) (int, error) {
	if s.embedder == nil {
		return 0, errors.New("reindex: no embedder configured")
	}
	spaces := []memory.Embedder{s.embedder}
	if s.instant != nil {
		spaces = []memory.Embedder{s.instant, s.embedder}
	}
	// A memory given both vectors counts once.
	embedded := map[int64]bool{}
	for _, e := range spaces {
		if _, err := s.reindexSpace(ctx, e, all, embedded, progress); err != nil {
			return len(embedded), err
		}
	}
	return len(embedded), nil
}

// Fill makes the model vectors a layered embedder's writes left for later
// (Pending), as Reindex does.
func (s *Store) Fill(ctx context.Context, progress func(done, total int)) (int, error) {
	if s.instant == nil {
		return 0, nil
	}
	// Writes from here on that leave vectors out say so again.
	s.leftPending.Store(false)
	return s.reindexSpace(ctx, s.embedder, false, nil, progress)
}

// Pending counts the memories that lack a current vector of the
// embedder's model: those a search in the model's space would miss.
func (s *Store) Pending(ctx context.Context) (int, error) {
	if s.embedder == nil {
		return 0, nil
	}
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM memories m
		LEFT JOIN embeddings e ON e.seq = m.seq AND e.model = ? AND e.content_hash = m.content_hash
		WHERE e.seq IS NULL`, s.embedder.Model()).Scan(&n)
	return n, s.explain(err)
}

// reindexSpace embeds with e the memories that lack a current vector of
// its model (every memory, with all), marking each one embedded in
// embedded when it is not nil.
func (s *Store) reindexSpace(ctx context.Context, e memory.Embedder, all bool, embedded map[int64]bool, progress func(done, total int)) (int, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+memoryColumns+` FROM memories m
		LEFT JOIN embeddings e ON e.seq = m.seq AND e.model = ?2
		WHERE ?1 OR e.seq IS NULL OR e.content_hash != m.content_hash ORDER BY m.seq`, all, e.Model())
	if err != nil {
		return 0, s.explain(err)
	}
	type item struct {
		seq int64
		m   memory.Memory
	}
	var todo []item
	for rows.Next() {
		seq, m, err := scanMemory(rows)
		if err != nil {
			rows.Close()
			return 0, s.explain(err)
		}
		todo = append(todo, item{seq, m})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, s.explain(err)
	}
	const batch = 64
	done := 0
	for start := 0; start < len(todo); start += batch {
		end := min(start+batch, len(todo))
		texts := make([]string, 0, end-start)
		for _, it := range todo[start:end] {
			texts = append(texts, memory.EmbedText(&it.m))
		}
		vecs, err := e.Embed(ctx, memory.PurposeDocument, texts)
		if err == nil && len(vecs) != len(texts) {
			err = fmt.Errorf("embedder returned %d vectors for %d texts", len(vecs), len(texts))
		}
		if err != nil {
			return done, fmt.Errorf("reindex: %d of %d memories embedded by %s, then: %w", done, len(todo), e.Model(), err)
		}
		err = s.inTx(ctx, func(tx *txn) error {
			for i, it := range todo[start:end] {
				hash := memory.ContentHash(it.m.Content)
				// The memory may have changed or gone since it was read:
				// the vector is written only for the content it was made of.
				res, err := tx.exec(`INSERT OR REPLACE INTO embeddings (seq, model, dim, content_hash, vec)
					SELECT seq, ?, ?, content_hash, ? FROM memories WHERE seq = ? AND content_hash = ?`,
					e.Model(), len(vecs[i]), quantize(vecs[i]), it.seq, hash)
				if err != nil {
					return err
				}
				if n, _ := res.RowsAffected(); n > 0 {
					tx.touched[it.seq] = true
				}
			}
			return nil
		})
		if err != nil {
			return done, s.explain(err)
		}
		for _, it := range todo[start:end] {
			if embedded != nil {
				embedded[it.seq] = true
			}
		}
		done = end
		if progress != nil {
			progress(done, len(todo))
		}
	}
	return done, nil
}

// GetState reads a bookkeeping value; a missing key reads as "".
func (s *Store) GetState(ctx context.Context, key string) (string, error) {
	var v string
	err := s.db.QueryRowContext(ctx, `SELECT value FROM state WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return v, s.explain(err)
}

// SetState writes a bookkeeping value.
func (s *Store) SetState(ctx context.Context, key, value string) error {
	if err := s.refuseIfDamaged(ctx); err != nil {
		return err
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO state (key, value) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value)
	return s.explain(err)
}

// VectorModels reports, by scope, how many memories visible from vis hold
// a vector of each embedding model, under "" those with none. Only vectors
// of the current embedder take part in search, so a model other than
// Embedder().Model() here means those memories are found by their words
// alone until Reindex.
func (s *Store) VectorModels(ctx context.Context, vis memory.Visibility) (map[memory.Scope]map[string]int, error) {
	where, args := visible(vis, memory.Filter{})
	rows, err := s.db.QueryContext(ctx, `SELECT m.scope, coalesce(e.model, ''), count(*)
		FROM memories m LEFT JOIN embeddings e ON e.seq = m.seq
		WHERE `+where+` GROUP BY m.scope, e.model`, args...)
	if err != nil {
		return nil, s.explain(err)
	}
	defer rows.Close()
	out := make(map[memory.Scope]map[string]int)
	for rows.Next() {
		var sc memory.Scope
		var model string
		var n int
		if err := rows.Scan(&sc, &model, &n); err != nil {
			return nil, s.explain(err)
		}
		if out[sc] == nil {
			out[sc] = make(map[string]int)
		}
		out[sc][model] = n
	}
	return out, s.explain(rows.Err())
}

// Counts reports how many memories are visible from vis, by scope and
// kind, with every scope and kind present (zero when there are none). The
// database also holds other checkouts' project memories and other sessions'
// memories; they are not counted, as no search from here would find them.
func (s *Store) Counts(ctx context.Context, vis memory.Visibility) (map[memory.Scope]map[memory.Kind]int, error) {
	where, args := visible(vis, memory.Filter{})
	rows, err := s.db.QueryContext(ctx, `SELECT m.scope, m.kind, count(*) FROM memories m WHERE `+where+` GROUP BY m.scope, m.kind`, args...)
	if err != nil {
		return nil, s.explain(err)
	}
	defer rows.Close()
	out := make(map[memory.Scope]map[memory.Kind]int, len(memory.Scopes))
	for _, sc := range memory.Scopes {
		out[sc] = make(map[memory.Kind]int, len(memory.Kinds))
		for _, k := range memory.Kinds {
			out[sc][k] = 0
		}
	}
	for rows.Next() {
		var sc memory.Scope
		var k memory.Kind
		var n int
		if err := rows.Scan(&sc, &k, &n); err != nil {
			return nil, s.explain(err)
		}
		out[sc][k] = n
	}
	return out, s.explain(rows.Err())
}
