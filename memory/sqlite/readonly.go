package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/acolyte-dev/acolyte/memory"
)

// A read-only home (issue 37) is a data directory, or a database in it,
// that this process may not write: a home shared from another account, a
// read-only mount, a snapshot. Reads need no write, so the database is
// opened read-only and searched and listed as it stands, and every write
// is refused, naming the directory and the fix. Without it, opening ran
// the schema check's transaction and every command failed, reads too.

// openReadOnly opens the existing database at path for reading only;
// reason is why it cannot be written (readOnlyReason).
func openReadOnly(ctx context.Context, path string, e memory.Embedder, reason string) (*Store, error) {
	dir := filepath.Dir(path)
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("%w: there is no database at %s, and none can be created: %s; make %s writable (chmod u+w %s) or set ACOLYTE_HOME to a writable directory",
			memory.ErrIO, path, reason, dir, dir)
	}
	dsn := "file:" + path + "?mode=ro" + fmt.Sprintf("&_pragma=busy_timeout(%d)", BusyTimeout.Milliseconds()) +
		"&_pragma=foreign_keys(ON)&_pragma=temp_store(MEMORY)"
	// A WAL database is read through its -shm index, which SQLite would
	// create. Without a -wal (the last writer closed it cleanly), the
	// main file holds every commit and, since nothing here can write it,
	// it is read as it is, with no index at all.
	if fi, err := os.Stat(path + "-wal"); err != nil || fi.Size() == 0 {
		dsn += "&immutable=1"
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	s := &Store{db: db, path: path, embedder: e, now: time.Now, readOnly: reason}
	if l, ok := e.(memory.Layered); ok {
		s.instant = l.Instant()
	}
	s.loadDamaged()
	version, err := userVersion(ctx, db)
	if err != nil {
		db.Close()
		return nil, s.explain(err)
	}
	switch {
	case version > SchemaVersion:
		db.Close()
		return nil, fmt.Errorf("%w: %s has schema version %d, this acolyte knows %d; upgrade acolyte", memory.ErrSchemaTooNew, path, version, SchemaVersion)
	case version < SchemaVersion:
		db.Close()
		return nil, fmt.Errorf("%w: %s is from an older acolyte (schema %d, this one writes %d) and must be upgraded, which writes, but %s; make %s writable (chmod u+w %s) and run any acolyte command once",
			memory.ErrIO, path, version, SchemaVersion, reason, dir, dir)
	}
	return s, nil
}

// errReadOnly is the refusal of a write to a read-only home.
func (s *Store) errReadOnly() error {
	dir := filepath.Dir(s.path)
	return fmt.Errorf("%w: %s is read-only (%s): acolyte can search and list the memories it holds, but cannot store a change, nor take in project memories changed in .acolyte/ since it was last written; make it writable (chmod u+w %s %s) or set ACOLYTE_HOME to a writable directory",
		memory.ErrIO, dir, s.readOnly, dir, s.path)
}

// ReadOnly says why the database cannot be written, "" when it can.
func (s *Store) ReadOnly() string { return s.readOnly }

// readOnlyReason says why this process cannot write the database at path
// or create files beside it (SQLite's -wal and -shm, the search catalog),
// "" when it can: the error alone for the directory, with the file's name
// for a file in it. It asks the operating system (access(2)), which knows
// the permissions, the mount and the process's privileges alike: a root
// process may write a file without write permission, but not on a
// read-only mount.
func readOnlyReason(path string) string {
	dir := filepath.Dir(path)
	if err := canWrite(dir); err != nil {
		return unwrapPath(err).Error()
	}
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		if err := canWrite(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Sprintf("%s: %v", f, unwrapPath(err))
		}
	}
	return ""
}

// unwrapPath drops the *PathError's own path, which the caller names.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
