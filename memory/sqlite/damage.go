package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/acolyte-dev/acolyte/memory"
)

// A damaged database is one whose pages no longer hold what SQLite wrote:
// a disk that lost a sector, a copy taken mid-write, another program
// writing into the file. SQLite keeps no page checksums, so a write that
// touches only healthy pages succeeds on such a file and the damage
// spreads. Two checks find it, and a marker beside the file keeps every
// later write off it until Repair:
//
//   - on the first error: any query that SQLite answers with
//     SQLITE_CORRUPT or SQLITE_NOTADB marks the file (explain);
//   - before writing, when the file changed behind acolyte's back, and
//     once a day: PRAGMA quick_check reads every page (about 1 s at 100k
//     memories, so it is not run on every write).
//
// Only SQLite's checkpoints write the main file (every change goes to the
// WAL first), so a change acolyte did not make shows in the file's stat:
// a record beside it (soundSuffix) holds the stat it had when last known
// sound, and acolyte moves the record along with each checkpoint it runs
// over a file that matched it (followCheckpoint). A write finding the
// file unlike the record checks it first (issue 37: a page scribbled over
// took user writes until the daily check, since they touch only the
// table's last pages). What the stat cannot show is a change made within
// the same clock tick as acolyte's own checkpoint, or a disk that loses a
// sector without a write: the daily check is there for those.
//
// Reads go on working while the file is marked, as far as they can.

// damagedSuffix names the marker beside a damaged database. It holds what
// was found, for the refusal to repeat.
const damagedSuffix = ".damaged"

// soundSuffix names the record beside the database of the main file's
// stat (fileStamp) when it was last known sound.
const soundSuffix = ".sound"

// verifyEvery is how often a writing command runs quick_check.
const verifyEvery = 24 * time.Hour

// verifiedKey is the state key holding when quick_check last passed.
const verifiedKey = "verified_at"

// repairHint is how to get out of a damaged database, said by every
// refusal.
const repairHint = "run `acolyte reindex --repair`: it keeps the file as a .bad copy, rebuilds the database from every memory that can still be read, and project memories come back from .acolyte/"

// errDamaged is the refusal of a write to a marked database.
func (s *Store) errDamaged(found string) error {
	return fmt.Errorf("%w: %s is damaged (%s), so nothing more is written to it; %s", memory.ErrCorrupt, s.path, found, repairHint)
}

// markDamaged records found (SQLite's report) beside the database. Best
// effort: the error that found the damage is reported either way.
func (s *Store) markDamaged(found string) {
	s.damagedMu.Lock()
	defer s.damagedMu.Unlock()
	if s.damaged != "" {
		return
	}
	found = strings.Join(strings.Fields(found), " ") // one line, for the refusals that repeat it
	s.damaged = found
	_ = os.WriteFile(s.path+damagedSuffix, []byte(found+"\n"), 0o600)
}

// loadDamaged reads the marker a previous command may have left.
func (s *Store) loadDamaged() {
	data, err := os.ReadFile(s.path + damagedSuffix)
	if err != nil {
		return
	}
	found := strings.TrimSpace(string(data))
	if found == "" {
		found = "marked damaged by an earlier command"
	}
	s.damaged = found
}

// CheckWritable refuses, as every write to the store does, when the
// database is damaged; a writer whose write begins elsewhere (a project
// memory goes to .acolyte/ first) calls it before writing anything.
func (s *Store) CheckWritable(ctx context.Context) error {
	return s.refuseIfDamaged(ctx)
}

// refuseIfDamaged is called before every write. Once this Store has found
// the file sound, a write costs a stat while the file stays as it was.
func (s *Store) refuseIfDamaged(ctx context.Context) error {
	if s.readOnly != "" {
		return s.errReadOnly()
	}
	s.damagedMu.Lock()
	found, verified, trusted := s.damaged, s.verified, s.trusted
	s.damagedMu.Unlock()
	if found != "" {
		return s.errDamaged(found)
	}
	// Taken before any check, so that a change made during one is not
	// taken for what was checked.
	now := s.mainStamp()
	if verified && now != "" && now == trusted {
		return nil
	}
	due := now == "" || now != s.soundRecord()
	if !verified && !due {
		var err error
		if due, err = s.dailyCheckDue(ctx); err != nil {
			return err
		}
	}
	if due {
		if err := s.Verify(ctx); err != nil {
			return err
		}
		if _, err := s.db.ExecContext(ctx, `INSERT INTO state (key, value) VALUES (?, ?)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`, verifiedKey, strconv.FormatInt(s.now().UnixMilli(), 10)); err != nil {
			return s.explain(err)
		}
		s.recordSound(now)
	}
	s.damagedMu.Lock()
	s.verified, s.trusted = true, now
	s.damagedMu.Unlock()
	return nil
}

// dailyCheckDue says whether the last passing quick_check is older than
// verifyEvery.
func (s *Store) dailyCheckDue(ctx context.Context) (bool, error) {
	var last string
	err := s.db.QueryRowContext(ctx, `SELECT value FROM state WHERE key = ?`, verifiedKey).Scan(&last)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return false, s.explain(err)
	}
	ms, perr := strconv.ParseInt(last, 10, 64)
	return perr != nil || s.now().Sub(time.UnixMilli(ms)) >= verifyEvery, nil
}

// mainStamp is the main database file's fileStamp, "" when it cannot be
// read.
func (s *Store) mainStamp() string {
	fi, err := os.Stat(s.path)
	if err != nil {
		return ""
	}
	return fileStamp(fi)
}

// soundRecord is the stamp recorded beside the database, "" when none is.
func (s *Store) soundRecord() string {
	b, err := os.ReadFile(s.path + soundSuffix)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// recordSound records stamp as the main file's when last known sound. Best
// effort: without the record the next write checks the file again.
func (s *Store) recordSound(stamp string) {
	if stamp == "" {
		return
	}
	tmp := s.path + soundSuffix + ".tmp"
	if err := os.WriteFile(tmp, []byte(stamp+"\n"), 0o600); err != nil {
		return
	}
	if err := os.Rename(tmp, s.path+soundSuffix); err != nil {
		os.Remove(tmp)
	}
}

// followCheckpoint runs op, which may checkpoint the WAL into the main
// file (a commit past SQLite's autocheckpoint, the close of the last
// connection), and moves the record of a sound file along with it: a file
// that matched the record before op is sound after it, as SQLite wrote it.
func (s *Store) followCheckpoint(op func() error) error {
	if s.readOnly != "" {
		return op()
	}
	before := s.mainStamp()
	sound := before != "" && before == s.soundRecord()
	err := op()
	if !sound {
		return err
	}
	if after := s.mainStamp(); after != before {
		s.recordSound(after)
		s.damagedMu.Lock()
		if s.trusted == before {
			s.trusted = after
		}
		s.damagedMu.Unlock()
	}
	return err
}

// Verify reads every page of the database (PRAGMA quick_check) and marks
// it damaged if any is not as SQLite wrote it.
func (s *Store) Verify(ctx context.Context) error {
	rows, err := s.db.QueryContext(ctx, `PRAGMA quick_check(3)`)
	if err != nil {
		return s.explain(err)
	}
	defer rows.Close()
	var found []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return s.explain(err)
		}
		for _, l := range strings.Split(line, "\n") {
			if l = strings.TrimSpace(l); l != "ok" && l != "" && !strings.HasPrefix(l, "*** in database") {
				found = append(found, l)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return s.explain(err)
	}
	if len(found) == 0 {
		return nil
	}
	report := "quick_check: " + strings.Join(found, "; ")
	s.markDamaged(report)
	return s.errDamaged(report)
}

// Damaged reports what marked the database damaged, or "".
func (s *Store) Damaged() string {
	s.damagedMu.Lock()
	defer s.damagedMu.Unlock()
	return s.damaged
}

// Repaired is what Repair did.
type Repaired struct {
	// Recovered memories were read from the damaged file and stored again.
	Recovered int `json:"recovered"`
	// Unreadable counts the stretches of the memories table that could
	// not be read; memories there are lost unless .acolyte/ holds them.
	Unreadable int `json:"unreadable"`
	// Backup is where the damaged file was moved.
	Backup string `json:"backup"`
}

// Repair rebuilds the database at path from every memory that can still
// be read from it, with e's vectors, and moves the damaged file (and its
// WAL) aside as Backup. Nothing else may have the database open. Project
// memories are copied too, but the bookkeeping of what was imported is
// not, so the next command re-imports .acolyte/, the truth for them;
// sessions' bookkeeping is kept.
func Repair(ctx context.Context, path string, e memory.Embedder) (Repaired, error) {
	var out Repaired
	mems, state, unreadable, err := salvage(ctx, path)
	if err != nil {
		return out, err
	}
	out.Unreadable = unreadable
	fresh := path + ".repairing"
	for _, suffix := range []string{"", "-wal", "-shm", soundSuffix} {
		os.Remove(fresh + suffix)
	}
	s, err := Open(ctx, fresh, e)
	if err != nil {
		return out, fmt.Errorf("create the repaired database: %w", err)
	}
	if err := s.restore(ctx, mems, state); err != nil {
		s.Close()
		return out, fmt.Errorf("fill the repaired database: %w", err)
	}
	if err := s.Close(); err != nil {
		return out, err
	}
	out.Recovered = len(mems)
	out.Backup = backupName(path, time.Now())
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Rename(path+suffix, out.Backup+suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return out, fmt.Errorf("move the damaged %s aside: %w", path+suffix, err)
		}
	}
	if err := os.Rename(fresh, path); err != nil {
		return out, fmt.Errorf("put the repaired database in place (it is %s; the damaged one is %s): %w", fresh, out.Backup, err)
	}
	os.Remove(path + damagedSuffix)
	// The record of a sound file is about the old file, or names the
	// fresh one by its first name; the next write checks the new one.
	os.Remove(path + soundSuffix)
	os.Remove(fresh + soundSuffix)
	// The search catalogs are copies of the old file's rows.
	catalogs, _ := filepath.Glob(path + "-catalog-*")
	for _, c := range catalogs {
		os.Remove(c)
	}
	return out, nil
}

// backupName is a name beside path that no earlier repair took.
func backupName(path string, now time.Time) string {
	base := fmt.Sprintf("%s.bad-%s", path, now.UTC().Format("20060102T150405"))
	name := base
	for i := 2; ; i++ {
		if _, err := os.Lstat(name); errors.Is(err, os.ErrNotExist) {
			return name
		}
		name = fmt.Sprintf("%s-%d", base, i)
	}
}

// salvage reads what it can of the damaged database: every memory row that
// a scan in seq order reaches, stepping over stretches it cannot read, and
// the state rows worth keeping.
func salvage(ctx context.Context, path string) ([]memory.Memory, map[string]string, int, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, nil, 0, fmt.Errorf("%w: %v", memory.ErrIO, err)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return nil, nil, 0, err
	}
	defer db.Close()
	var mems []memory.Memory
	unreadable := 0
	var maxSeq int64
	if err := db.QueryRowContext(ctx, `SELECT seq FROM sqlite_sequence WHERE name = 'memories'`).Scan(&maxSeq); err != nil || maxSeq <= 0 {
		maxSeq = 1 << 40 // unknown: the skips below double, so they get there quickly
	}
	after, step := int64(0), int64(1)
	for after < maxSeq {
		if err := ctx.Err(); err != nil {
			return nil, nil, 0, err
		}
		got, last, err := salvageBatch(ctx, db, after)
		mems = append(mems, got...)
		switch {
		case err == nil && len(got) == 0:
			after = maxSeq // the end of the table
		case err == nil:
			after, step = last, 1
		default:
			// The page after last cannot be read: skip ahead, further each
			// time the same stretch fails.
			if len(got) > 0 {
				after, step = last, 1
			}
			if step == 1 {
				unreadable++
			}
			after += step
			step *= 2
		}
	}
	state := map[string]string{}
	if rows, err := db.QueryContext(ctx, `SELECT key, value FROM state`); err == nil {
		for rows.Next() {
			var k, v string
			if rows.Scan(&k, &v) == nil && keepState(k) {
				state[k] = v
			}
		}
		rows.Close()
	}
	return mems, state, unreadable, nil
}

// salvageBatch reads up to 256 memories after seq, returning those it read
// before any error and the seq of the last.
func salvageBatch(ctx context.Context, db *sql.DB, after int64) ([]memory.Memory, int64, error) {
	rows, err := db.QueryContext(ctx, `SELECT `+memoryColumns+` FROM memories m WHERE m.seq > ? ORDER BY m.seq LIMIT 256`, after)
	if err != nil {
		return nil, after, err
	}
	defer rows.Close()
	var out []memory.Memory
	last := after
	for rows.Next() {
		seq, m, err := scanMemory(rows)
		if err != nil {
			return out, last, err
		}
		if m.Validate() == nil {
			out = append(out, m)
		}
		last = seq
	}
	return out, last, rows.Err()
}

// keepState says which bookkeeping survives a repair: not what was
// imported (so .acolyte/ is imported again), nor the database's identity,
// nor the last check.
func keepState(key string) bool {
	switch {
	case key == "database_id", key == verifiedKey, key == generationKey:
		return false
	case strings.HasPrefix(key, "import:"), strings.HasPrefix(key, "hand-edits:"):
		return false
	}
	return true
}

// restore stores the salvaged memories, scope by scope, and the state.
func (s *Store) restore(ctx context.Context, mems []memory.Memory, state map[string]string) error {
	type scopeKey struct {
		scope memory.Scope
		key   string
	}
	var order []scopeKey
	groups := map[scopeKey][]memory.Memory{}
	for _, m := range mems {
		k := scopeKey{m.Scope, m.ScopeKey}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], m)
	}
	for _, k := range order {
		if _, err := s.ReplaceScope(ctx, k.scope, k.key, groups[k]); err != nil {
			return err
		}
	}
	for k, v := range state {
		if err := s.SetState(ctx, k, v); err != nil {
			return err
		}
	}
	return nil
}
