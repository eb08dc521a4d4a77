// Package postgres is the team database: memories shared live by every
// member of a team, in every repository, on PostgreSQL through pgx.
// Isolation between teams is the database's job (row-level security keyed
// on the team, see schema.go); ranking is memory's (memory.Score, fed by
// memory.DocEvidence), so a team search scores by the same code as a local
// one.
package postgres

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/acolyte-dev/acolyte/memory"
)

// defaultConnectTimeout applies when the URL sets no connect_timeout.
const defaultConnectTimeout = 5 * time.Second

// Store is a connection pool to a team database.
type Store struct {
	pool     *pgxpool.Pool
	embedder memory.Embedder
	now      func() time.Time
	// scanOnly makes every search read the whole team (searchScan), for
	// the tests and benchmarks that compare the two paths.
	scanOnly bool
	// scans counts the searches that read the whole team, for the tests
	// that check which path a search took.
	scans atomic.Int64
	// whole is how many memories a team may have for a search to read it
	// whole: wholeTeam, except in the tests of the path beyond.
	whole int
	// hnsw holds the names of the database's HNSW indexes (pgvector.go).
	hnsw map[string]bool
	// cells caches the centroids of the stock PostgreSQL vector path.
	cells *cellCache
	// tsConfig is the text search configuration queries are parsed with:
	// textSearchConfig, which the schema indexes with, except in the test
	// that measured the choice.
	tsConfig string
	// globs keeps the team's memories' globs compiled across searches.
	globs memory.GlobCache
}

var _ memory.TeamEngine = (*Store)(nil)

// connect opens one connection, for Init. url may be empty or partial: pgx
// fills the rest from the libpq variables (PGHOST, PGUSER, ...) and
// ~/.pgpass.
func connect(ctx context.Context, url string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, connectError(err)
	}
	// The URL is also the pool's (Open), and may set pool_max_conns (one,
	// for a server that serves one connection at a time, as PGlite does).
	// pgx.Connect would send those to the server as settings, which
	// PostgreSQL refuses: unrecognized configuration parameter.
	for k := range cfg.RuntimeParams {
		if strings.HasPrefix(k, "pool_") {
			delete(cfg.RuntimeParams, k)
		}
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, connectError(err)
	}
	return conn, nil
}

// ErrUnreachable marks a failed connection to the team database; its
// text starts the message connectError makes.
var ErrUnreachable = errors.New("connect to the team database")

// connectError explains a failed connection without the URL, which may
// hold a password.
func connectError(err error) error {
	return fmt.Errorf("%w: %w; check --team-db (or ACOLYTE_TEAM_DB, or the PG* variables and ~/.pgpass)", ErrUnreachable, err)
}

// Open connects to the team database at url and checks that its schema is
// this acolyte's. e embeds memories and queries; nil means lexical only.
func Open(ctx context.Context, url string, e memory.Embedder) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, connectError(err)
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		// Every command opens the team database; an unreachable host must
		// cost seconds, not the minutes a TCP connect can hang.
		cfg.ConnConfig.ConnectTimeout = defaultConnectTimeout
	}
	// pgxpool goes on connecting after ctx ends, and Close waits for it:
	// the connection must give up by ctx's deadline too.
	if d, ok := ctx.Deadline(); ok && time.Until(d) < cfg.ConnConfig.ConnectTimeout {
		cfg.ConnConfig.ConnectTimeout = max(time.Until(d), time.Millisecond)
	}
	// A call that runs out of time drops its connection at once. pgx's
	// default first asks the server, over a new connection, to cancel the
	// query, which on a slow network takes as long again; the server's
	// statement_timeout stops the query instead.
	cfg.ConnConfig.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.DeadlineContextWatcherHandler{Conn: c.Conn()}
	}
	// The server stops what the client gave up on (see Remote).
	for k, v := range map[string]string{"statement_timeout": statementTimeout, "lock_timeout": lockTimeout} {
		if _, set := cfg.ConnConfig.RuntimeParams[k]; !set {
			cfg.ConnConfig.RuntimeParams[k] = v
		}
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, connectError(err)
	}
	v, err := version(ctx, pool)
	if err != nil {
		// pgxpool goes on connecting after ctx ends, and Close waits for
		// that: on a slow network it would double the caller's bound.
		go pool.Close()
		return nil, connectError(err)
	}
	switch {
	case v > len(migrations):
		pool.Close()
		return nil, tooNew(v)
	case v < len(migrations):
		pool.Close()
		if v == 0 {
			return nil, errors.New("the team database has no acolyte schema; run `acolyte team init` once (as a role that may create tables)")
		}
		return nil, fmt.Errorf("the team database has schema version %d, this acolyte needs %d; run `acolyte team init` to migrate it (as the administrator whose role owns acolyte's tables; a member may not)", v, len(migrations))
	}
	hnsw, err := hnswIndexes(ctx, pool)
	if err != nil {
		pool.Close()
		return nil, connectError(err)
	}
	return &Store{pool: pool, embedder: e, now: time.Now, tsConfig: textSearchConfig, cells: &cellCache{}, whole: wholeTeam, hnsw: hnsw}, nil
}

// Close closes the pool.
func (s *Store) Close() { s.pool.Close() }

// SetClock replaces the clock, for tests that need distinct times.
func (s *Store) SetClock(now func() time.Time) { s.now = now }

// explain turns the database's refusals into what to do about them.
func explain(team string, err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42501" { // insufficient_privilege, including a row-level security refusal
		return fmt.Errorf("team %q: this database role may not write the team's memories; an administrator grants it with `acolyte team grant <role> --team %s` (GRANT %s TO <role>) after `acolyte team init --team %s`: %w",
			team, team, pgx.Identifier{TeamRole(team)}.Sanitize(), team, err)
	}
	return err
}

func checkVis(vis memory.Visibility) error {
	if vis.Team == "" {
		return fmt.Errorf("%w: no team is named; pass --team NAME or set ACOLYTE_TEAM", memory.ErrNoTeam)
	}
	return CheckTeam(vis.Team)
}

const columns = `id, team, kind, content, topic, source, created_at, updated_at, tokens, commit_hash, paths, recalled_at, author, globs`

// scan reads the columns of a memory, then any extra ones into extra.
func scan(row pgx.Row, extra ...any) (memory.Memory, error) {
	var (
		m        memory.Memory
		recalled *time.Time
	)
	err := row.Scan(append([]any{&m.ID, &m.ScopeKey, &m.Kind, &m.Content, &m.Topic, &m.Source, &m.CreatedAt, &m.UpdatedAt, &m.Tokens, &m.Commit, &m.Paths, &recalled, &m.Author, &m.Globs}, extra...)...)
	m.Scope = memory.ScopeTeam
	m.CreatedAt, m.UpdatedAt = m.CreatedAt.UTC(), m.UpdatedAt.UTC()
	if recalled != nil {
		m.RecalledAt = recalled.UTC()
	}
	if len(m.Paths) == 0 {
		m.Paths = nil
	}
	if len(m.Globs) == 0 {
		m.Globs = nil
	}
	return m, err
}

func collect(rows pgx.Rows, err error) ([]memory.Memory, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []memory.Memory
	for rows.Next() {
		m, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// vector embeds one memory; a failure leaves it lexical only, as in the
// local store, and says so.
func (s *Store) vector(ctx context.Context, m *memory.Memory) ([]float32, string) {
	if s.embedder == nil {
		return nil, ""
	}
	vecs, err := s.embedder.Embed(ctx, memory.PurposeDocument, []string{memory.EmbedText(m)})
	if err == nil && len(vecs) != 1 {
		err = fmt.Errorf("embedder returned %d vectors for 1 text", len(vecs))
	}
	if err != nil {
		return nil, fmt.Sprintf("stored without a vector (%v); search finds it by its words only", err)
	}
	memory.Normalize32(vecs[0])
	return vecs[0], ""
}

// Add stores a team memory, unless the team already has the same content,
// in which case it returns the existing one. The unique index on (team,
// content hash) decides, so two members adding at once cannot both add.
func (s *Store) Add(ctx context.Context, vis memory.Visibility, d memory.Draft) (memory.Added, error) {
	if err := checkVis(vis); err != nil {
		return memory.Added{}, err
	}
	if d.Scope != "" && d.Scope != memory.ScopeTeam {
		return memory.Added{}, fmt.Errorf("%w %q: the team database holds only team memories", memory.ErrUnknownScope, d.Scope)
	}
	if d.Kind == "" {
		d.Kind = memory.KindStored
	}
	if err := memory.ValidateContent(d.Content); err != nil {
		return memory.Added{}, err
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	m := memory.Memory{
		ID: memory.NewID(now), Scope: memory.ScopeTeam, ScopeKey: vis.Team, Kind: d.Kind,
		Content: strings.TrimSpace(d.Content), Topic: strings.TrimSpace(d.Topic), Source: d.Source,
		Globs: memory.NormalizeGlobs(d.Globs), CreatedAt: now, UpdatedAt: now,
	}
	m.Tokens = memory.EstimateTokens(m.Content)
	if err := m.Validate(); err != nil {
		return memory.Added{}, err
	}
	if existing, found, err := s.find(ctx, vis.Team, m.Content); err != nil || found {
		return memory.Added{Memory: existing, Existing: found}, err
	}
	vec, warning := s.vector(ctx, &m)
	inserted := false
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// The author is not sent: the database records session_user.
		err := tx.QueryRow(ctx, `INSERT INTO team_memories (id, team, kind, content, content_hash, lexical, topic, source, created_at, updated_at, tokens, commit_hash, paths, globs)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) ON CONFLICT (team, content_hash) DO NOTHING RETURNING author`,
			m.ID, m.ScopeKey, m.Kind, m.Content, memory.ContentHash(m.Content), lexical(&m), m.Topic, m.Source,
			m.CreatedAt, m.UpdatedAt, m.Tokens, m.Commit, nonNil(m.Paths), nonNil(m.Globs)).Scan(&m.Author)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		inserted = true
		return s.putVector(ctx, tx, m, vec)
	})
	if err != nil {
		return memory.Added{}, explain(vis.Team, err)
	}
	if !inserted {
		// Another member added the same fact between the check and the insert.
		existing, _, err := s.find(ctx, vis.Team, m.Content)
		return memory.Added{Memory: existing, Existing: true}, err
	}
	return memory.Added{Memory: m, Warning: warning}, nil
}

// lexical is the text of the full-text index: what the local store
// indexes, cut into words the way its FTS5 tokenizer cuts them, at every
// character that is not a letter or digit. PostgreSQL's parser would keep
// "CHANGES.md" or "bastion-2.example.com" whole, so a search for
// "changes" would find a memory in one engine and not the other.
func lexical(m *memory.Memory) string {
	return strings.Join(memory.Words(memory.LexicalText(m)), " ")
}

func nonNil(paths []string) []string {
	if paths == nil {
		return []string{}
	}
	return paths
}

func (s *Store) putVector(ctx context.Context, tx pgx.Tx, m memory.Memory, vec []float32) error {
	if _, err := tx.Exec(ctx, `SELECT acolyte_forget_vectors($1, $2)`, m.ScopeKey, m.ID); err != nil {
		return err
	}
	if vec == nil {
		return nil
	}
	if _, err := tx.Exec(ctx, `INSERT INTO team_embeddings (id, team, model, vec) VALUES ($1, $2, $3, $4)`,
		m.ID, m.ScopeKey, s.embedder.Model(), encodeVector(vec)); err != nil {
		return err
	}
	return s.sketchVectors(ctx, tx, m.ScopeKey, s.embedder.Model(), []string{m.ID}, [][]float32{vec})
}

// encodeVector and decodeVector are the stored form of a vector: its
// float32s, little-endian.
func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func decodeVector(b []byte) []float32 {
	if len(b) == 0 || len(b)%4 != 0 {
		return nil
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func (s *Store) find(ctx context.Context, team, content string) (memory.Memory, bool, error) {
	m, err := scan(s.pool.QueryRow(ctx, `SELECT `+columns+` FROM team_memories WHERE team = $1 AND content_hash = $2`,
		team, memory.ContentHash(content)))
	if errors.Is(err, pgx.ErrNoRows) {
		return memory.Memory{}, false, nil
	}
	return m, err == nil, err
}

// Get returns the team memory with this id.
func (s *Store) Get(ctx context.Context, vis memory.Visibility, id string) (memory.Memory, error) {
	if err := checkVis(vis); err != nil {
		return memory.Memory{}, err
	}
	m, err := scan(s.pool.QueryRow(ctx, `SELECT `+columns+` FROM team_memories WHERE id = $1 AND team = $2`, id, vis.Team))
	if errors.Is(err, pgx.ErrNoRows) {
		return memory.Memory{}, fmt.Errorf("%w: %s", memory.ErrNotFound, id)
	}
	return m, err
}

// Delete removes team memories by id, and their vectors. If any id is
// unknown nothing is removed.
func (s *Store) Delete(ctx context.Context, vis memory.Visibility, ids ...string) ([]memory.Memory, error) {
	return s.DeleteThen(ctx, vis, ids, nil)
}

// DeleteThen is Delete in a transaction that commits only when then (if
// not nil) returns nil; then runs after every id was found and deleted.
// then's error is returned as it is.
func (s *Store) DeleteThen(ctx context.Context, vis memory.Visibility, ids []string, then func() error) ([]memory.Memory, error) {
	if err := checkVis(vis); err != nil {
		return nil, err
	}
	var removed []memory.Memory
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// Members may not DELETE (a table's DELETE right would let them
		// lock it against every team): acolyte_forget removes as the
		// tables' owner, the caller's team's rows only (teamlock.go).
		got, err := collect(tx.Query(ctx, `SELECT `+columns+` FROM acolyte_forget($1, $2)`, vis.Team, ids))
		if err != nil {
			return err
		}
		var missing []string
		for _, id := range ids {
			if !slices.ContainsFunc(got, func(m memory.Memory) bool { return m.ID == id }) && !slices.Contains(missing, id) {
				missing = append(missing, id)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("%w: %s (nothing was removed; `acolyte list --scope team` shows ids)", memory.ErrNotFound, strings.Join(missing, ", "))
		}
		removed = got
		if then != nil {
			if err := then(); err != nil {
				return &thenError{err}
			}
		}
		return nil
	})
	var te *thenError
	if errors.As(err, &te) {
		return nil, te.err
	}
	if err != nil {
		return nil, explain(vis.Team, err)
	}
	return removed, nil
}

// thenError carries the error of DeleteThen's then through the
// transaction, to be returned unwrapped.
type thenError struct{ err error }

func (e *thenError) Error() string { return e.err.Error() }

// where is the filter of a listing or search over the caller's team.
func where(vis memory.Visibility, f memory.Filter) (string, []any) {
	clause, args := `team = $1`, []any{vis.Team}
	if f.Kind != "" {
		args = append(args, f.Kind)
		clause += fmt.Sprintf(` AND kind = $%d`, len(args))
	}
	if f.Topic != "" {
		clause += " AND " + topicCondition("topic", len(args)+1)
		args = append(args, topicArgs(f.Topic)...)
	}
	return clause, args
}

// List returns the team's memories, oldest first.
func (s *Store) List(ctx context.Context, vis memory.Visibility, f memory.Filter) ([]memory.Memory, error) {
	if err := checkVis(vis); err != nil {
		return nil, err
	}
	if f.Scope != "" && f.Scope != memory.ScopeTeam {
		return nil, nil
	}
	clause, args := where(vis, f)
	q := `SELECT ` + columns + ` FROM team_memories WHERE ` + clause + ` ORDER BY created_at, id`
	if f.Limit > 0 {
		q += fmt.Sprintf(` LIMIT %d`, f.Limit)
	}
	return collect(s.pool.Query(ctx, q, args...))
}

// Edit revises a team memory's content (and topic and globs, when given),
// and its vector with it.
func (s *Store) Edit(ctx context.Context, vis memory.Visibility, id string, r memory.Revision) (memory.Memory, error) {
	if err := checkVis(vis); err != nil {
		return memory.Memory{}, err
	}
	if err := memory.ValidateContent(r.Content); err != nil {
		return memory.Memory{}, err
	}
	m, err := s.Get(ctx, vis, id)
	if err != nil {
		return memory.Memory{}, err
	}
	if m, err = r.Apply(m, s.now()); err != nil {
		return memory.Memory{}, err
	}
	vec, _ := s.vector(ctx, &m)
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// Globs are the edit's or the memory's own (Revision.Revised); the
		// edit triggers audit a change of them as of the content.
		tag, err := tx.Exec(ctx, `UPDATE team_memories SET content = $3, content_hash = $4, lexical = $5, topic = $6, updated_at = $7, tokens = $8, globs = $9
			WHERE id = $1 AND team = $2`, m.ID, vis.Team, m.Content, memory.ContentHash(m.Content), lexical(&m), m.Topic, m.UpdatedAt, m.Tokens, nonNil(m.Globs))
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("%w: %s", memory.ErrNotFound, id)
		}
		return s.putVector(ctx, tx, m, vec)
	})
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" {
		return memory.Memory{}, errors.New("edit: another team memory already says that; forget this one instead")
	}
	if err != nil {
		return memory.Memory{}, explain(vis.Team, err)
	}
	return m, nil
}

// searchScan ranks the team's memories for q with memory.Score over all
// of them: the lexical side tested row by row against fts, the vector side
// from every stored vector of the current embedder's model, compared here.
// Search takes it only in the tests and benchmarks that compare the
// paths (scanOnly); it reads the whole team, or the whole of a kind or
// topic (BenchmarkTeamScale/10000/search/scan: 57 ms at 10k memories).
func (s *Store) searchScan(ctx context.Context, vis memory.Visibility, q memory.Query, texts []string) ([]memory.Result, error) {
	s.scans.Add(1)
	model := ""
	if s.embedder != nil {
		model = s.embedder.Model()
	}
	terms, words := queryWords(texts)
	query, args, kinWords := s.scanQuery(vis, q.Filter, model, words)
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("team search: %w", err)
	}
	scan, err := readScan(rows, words, kinWords)
	if err != nil {
		return nil, fmt.Errorf("team search: %w", err)
	}
	textVecs, wordVec := s.embedQuery(ctx, q, texts, words, scan.haveVectors)
	evidence := textEvidence(texts, terms, scan.held, scan.kin, wordVec, textVecs,
		func(rt []memory.RankTerm, qv []float32) memory.TextEvidence[string] {
			return memory.DocEvidence(scan.ids, scan.docs, rt, qv, nil)
		})
	return s.rank(ctx, vis, q, evidence, nil)
}

// scanQuery is the one pass over the team's memories that answers both
// sides: each memory's vector of model, and which query words, and which
// of their kin, its full-text index holds; kinWords are the words whose
// kin it tests, in the order of its kin column.
//
// The words are tested in the scan rather than looked up in the GIN index
// because row-level security keeps the planner from using the index with
// @@, which is not leakproof: a lookup per word scanned every row anyway
// (58 ms for 4 words at 10k memories, measured with EXPLAIN ANALYZE), and
// the vectors need the scan regardless.
//
// Kin (see memory.KinForms) are matched in the same scan, one tsquery per
// word ORing its forms, each stemmed by the index's configuration as FTS5
// stems its terms; a prefix form is a prefix tsquery (word:*). The
// tsqueries are built once, in a one-row subquery, not per row. Unlike
// Store.Search, which skips the kin of a word held by more than a few
// hundred memories to save reading postings, this scan tests every row
// anyway, so kin are matched for every plain word and memory.DocEvidence
// drops those of common words. Cost: the old BenchmarkTeamSearch at 10k
// memories went from 73 to 90 ms per search (30 runs each).
func (s *Store) scanQuery(vis memory.Visibility, f memory.Filter, model string, words []*word) (query string, args []any, kinWords []string) {
	clause, args := where(vis, f)
	args = append(args, model, s.tsConfig)
	modelArg, cfgArg := len(args)-1, len(args) // their $ numbers
	for _, w := range words {
		args = append(args, w.text)
	}
	matchList := "ARRAY[]::boolean[]"
	if len(words) > 0 {
		parts := make([]string, len(words))
		for j := range words {
			parts[j] = fmt.Sprintf("m.fts @@ plainto_tsquery($%d::regconfig, $%d)", cfgArg, cfgArg+1+j)
		}
		matchList = "ARRAY[" + strings.Join(parts, ", ") + "]"
	}
	var kinQueries []string
	for _, w := range words {
		if !w.plain { // an identifier whole has no kin
			continue
		}
		var ors []string
		for _, k := range memory.KinForms(w.text) {
			args = append(args, k.Text)
			if k.Prefix {
				ors = append(ors, fmt.Sprintf("to_tsquery($%d::regconfig, quote_literal($%d) || ':*')", cfgArg, len(args)))
			} else {
				ors = append(ors, fmt.Sprintf("plainto_tsquery($%d::regconfig, $%d)", cfgArg, len(args)))
			}
		}
		if len(ors) > 0 {
			kinWords = append(kinWords, w.text)
			kinQueries = append(kinQueries, "("+strings.Join(ors, " || ")+")")
		}
	}
	kinFrom, kinList := "", "ARRAY[]::boolean[]"
	if len(kinQueries) > 0 {
		kinFrom = "(SELECT ARRAY[" + strings.Join(kinQueries, ", ") + "] AS q) k, "
		parts := make([]string, len(kinQueries))
		for j := range kinQueries {
			parts[j] = fmt.Sprintf("m.fts @@ k.q[%d]", j+1)
		}
		kinList = "ARRAY[" + strings.Join(parts, ", ") + "]"
	}
	query = `SELECT m.id, e.vec, ` + matchList + `, ` + kinList + ` FROM ` + kinFrom + `team_memories m
		LEFT JOIN team_embeddings e ON e.team = m.team AND e.id = m.id AND e.model = $` + fmt.Sprint(modelArg) + `
		WHERE ` + strings.ReplaceAll(clause, "team = $1", "m.team = $1") + ` ORDER BY m.id`
	return query, args, kinWords
}

// scanned is what the scan read: every memory's id and vector in id
// order, by word the positions of the memories holding it (held) or only
// its kin (kin), and whether any memory had a vector of the model.
type scanned struct {
	ids         []string
	docs        []memory.RankDoc
	held, kin   map[string][]int
	haveVectors bool
}

// readScan reads the rows of scanQuery and closes them.
func readScan(rows pgx.Rows, words []*word, kinWords []string) (scanned, error) {
	defer rows.Close()
	sc := scanned{held: make(map[string][]int, len(words)), kin: make(map[string][]int, len(kinWords))}
	for rows.Next() {
		var (
			id    string
			raw   []byte
			holds []bool
			kins  []bool
		)
		if err := rows.Scan(&id, &raw, &holds, &kins); err != nil {
			return scanned{}, err
		}
		for j, h := range holds {
			if h && j < len(words) {
				sc.held[words[j].text] = append(sc.held[words[j].text], len(sc.ids))
			}
		}
		for j, h := range kins {
			if h && j < len(kinWords) {
				sc.kin[kinWords[j]] = append(sc.kin[kinWords[j]], len(sc.ids))
			}
		}
		vec := decodeVector(raw)
		sc.ids = append(sc.ids, id)
		sc.docs = append(sc.docs, memory.RankDoc{Vec: vec})
		sc.haveVectors = sc.haveVectors || vec != nil
	}
	rows.Close()
	return sc, rows.Err()
}

// rank ranks a search's evidence with memory.Score, the team's memories
// that carry globs matched against q.Paths, and returns the results, marked
// recalled. known holds memories already read, by id; the others are read
// here.
func (s *Store) rank(ctx context.Context, vis memory.Visibility, q memory.Query, evidence []memory.TextEvidence[string], known map[string]memory.Memory) ([]memory.Result, error) {
	globs, err := s.visibleGlobs(ctx, vis, q)
	if err != nil {
		return nil, err
	}
	ranked := memory.Score(q, evidence, globs, &s.globs)
	if len(ranked) == 0 {
		return []memory.Result{}, nil
	}
	var want []string
	for _, r := range ranked {
		if _, ok := known[r.Key]; !ok {
			want = append(want, r.Key)
		}
	}
	byID := map[string]memory.Memory{}
	for id, m := range known {
		byID[id] = m
	}
	if len(want) > 0 {
		ms, err := collect(s.pool.Query(ctx, `SELECT `+columns+` FROM team_memories WHERE team = $1 AND id = ANY($2)`, vis.Team, want))
		if err != nil {
			return nil, fmt.Errorf("team search: %w", err)
		}
		for _, m := range ms {
			byID[m.ID] = m
		}
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	out := make([]memory.Result, 0, len(ranked))
	var stale []string
	for _, r := range ranked {
		if m, ok := byID[r.Key]; ok {
			if m.RecalledAt.Before(now.Add(-memory.RecallGranularity)) {
				stale = append(stale, m.ID)
			}
			m.RecalledAt = now
			out = append(out, memory.Result{Memory: m, Score: float64(int(r.Score*1e4+0.5)) / 1e4})
		}
	}
	if len(stale) > 0 {
		// As in the local store: recall times feed staleness reports, not
		// search, so a failed write does not fail the search, and they are
		// kept to the granularity, so a repeated search writes nothing.
		_, _ = s.pool.Exec(ctx, `UPDATE team_memories SET recalled_at = $3
			WHERE team = $1 AND id = ANY($2) AND (recalled_at IS NULL OR recalled_at < $4)`,
			vis.Team, stale, now, now.Add(-memory.RecallGranularity))
	}
	return out, nil
}

// Counts returns how many memories the team has, by kind.
func (s *Store) Counts(ctx context.Context, vis memory.Visibility) (map[memory.Kind]int, error) {
	if err := checkVis(vis); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT kind, count(*) FROM team_memories WHERE team = $1 GROUP BY kind`, vis.Team)
	if err != nil {
		return nil, fmt.Errorf("team counts: %w", err)
	}
	defer rows.Close()
	out := map[memory.Kind]int{}
	for rows.Next() {
		var (
			k memory.Kind
			n int
		)
		if err := rows.Scan(&k, &n); err != nil {
			return nil, fmt.Errorf("team counts: %w", err)
		}
		out[k] = n
	}
	return out, rows.Err()
}

// reindexBatch is how many memories one embedder call takes.
const reindexBatch = 256

// Reindex embeds the team's memories that have no vector from the current
// embedder, or, with all, every one of them, and returns how many it
// embedded. Each member's embedder adds its own model's vectors beside the
// others', so members with different embedders all search by vector.
func (s *Store) Reindex(ctx context.Context, vis memory.Visibility, all bool) (int, error) {
	if err := checkVis(vis); err != nil {
		return 0, err
	}
	if s.embedder == nil {
		return 0, errors.New("team reindex: no embedder configured")
	}
	model := s.embedder.Model()
	q, args := `SELECT `+columns+` FROM team_memories m WHERE team = $1`, []any{vis.Team}
	if !all {
		q += ` AND NOT EXISTS (SELECT 1 FROM team_embeddings e WHERE e.team = m.team AND e.id = m.id AND e.model = $2)`
		args = append(args, model)
	}
	ms, err := collect(s.pool.Query(ctx, q+` ORDER BY id`, args...))
	if err != nil {
		return 0, fmt.Errorf("team reindex: %w", err)
	}
	done := 0
	for start := 0; start < len(ms); start += reindexBatch {
		batch := ms[start:min(start+reindexBatch, len(ms))]
		texts := make([]string, len(batch))
		for i := range batch {
			texts[i] = memory.EmbedText(&batch[i])
		}
		vecs, err := s.embedder.Embed(ctx, memory.PurposeDocument, texts)
		if err == nil && len(vecs) != len(batch) {
			err = fmt.Errorf("embedder returned %d vectors for %d texts", len(vecs), len(batch))
		}
		if err != nil {
			return done, fmt.Errorf("team reindex: %w", err)
		}
		err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			for i, m := range batch {
				memory.Normalize32(vecs[i])
				// A memory deleted meanwhile has no row to point at: the
				// insert selects nothing rather than fail the batch.
				if _, err := tx.Exec(ctx, `INSERT INTO team_embeddings (id, team, model, vec)
					SELECT id, team, $3, $4 FROM team_memories WHERE id = $1 AND team = $2
					ON CONFLICT (team, id, model) DO UPDATE SET vec = EXCLUDED.vec`, m.ID, vis.Team, model, encodeVector(vecs[i])); err != nil {
					return err
				}
			}
			ids := make([]string, len(batch))
			for i, m := range batch {
				ids[i] = m.ID
			}
			return s.sketchVectors(ctx, tx, vis.Team, model, ids, vecs)
		})
		if err != nil {
			return done, explain(vis.Team, err)
		}
		done += len(batch)
	}
	if err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return s.repairSketches(ctx, tx, vis.Team, model) }); err != nil {
		return done, fmt.Errorf("team reindex: %w", explain(vis.Team, err))
	}
	return done, nil
}
