package sqlite

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// statesPerQuery bounds the keys one query names, under SQLite's limit on
// a statement's parameters.
const statesPerQuery = 500

// GetStates reads the bookkeeping values of keys in one query a few
// hundred: a search looking up each of its hits' values one by one pays
// a query each. A missing key is left out of the map.
func (s *Store) GetStates(ctx context.Context, keys []string) (map[string]string, error) {
	out := make(map[string]string, len(keys))
	for start := 0; start < len(keys); start += statesPerQuery {
		chunk := keys[start:min(start+statesPerQuery, len(keys))]
		args := make([]any, len(chunk))
		for i, k := range chunk {
			args[i] = k
		}
		rows, err := s.db.QueryContext(ctx, `SELECT key, value FROM state WHERE key IN (?`+strings.Repeat(", ?", len(chunk)-1)+`)`, args...)
		if err != nil {
			return nil, s.explain(err)
		}
		for rows.Next() {
			var k, v string
			if err := rows.Scan(&k, &v); err != nil {
				rows.Close()
				return nil, s.explain(err)
			}
			out[k] = v
		}
		if err := rows.Close(); err != nil {
			return nil, s.explain(err)
		}
		if err := rows.Err(); err != nil {
			return nil, s.explain(err)
		}
	}
	return out, nil
}

// SetStates writes bookkeeping values in one transaction, a statement
// for every few hundred: a statement a value costs more to prepare and
// step than the whole staleness check of a page may take
// (gitsync's BenchmarkFirstLook).
func (s *Store) SetStates(ctx context.Context, values map[string]string) error {
	if len(values) == 0 {
		return nil
	}
	if err := s.refuseIfDamaged(ctx); err != nil {
		return err
	}
	keys := slices.Sorted(maps.Keys(values)) // one order, whatever the map's
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.explain(err)
	}
	defer tx.Rollback()
	for start := 0; start < len(keys); start += statesPerQuery {
		chunk := keys[start:min(start+statesPerQuery, len(keys))]
		args := make([]any, 0, 2*len(chunk))
		for _, k := range chunk {
			args = append(args, k, values[k])
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO state (key, value) VALUES (?, ?)`+strings.Repeat(", (?, ?)", len(chunk)-1)+`
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`, args...); err != nil {
			return s.explain(err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("keep %d values: %w", len(values), s.explain(err))
	}
	return nil
}
