package postgres

import (
	"context"

	"github.com/acolyte-dev/acolyte/memory"
)

// IDsWithPrefix lists, in order, at most limit ids of the team's memories
// that start with prefix.
func (s *Store) IDsWithPrefix(ctx context.Context, vis memory.Visibility, prefix string, limit int) ([]string, error) {
	if err := checkVis(vis); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT id FROM team_memories WHERE starts_with(id, $1) AND team = $2 ORDER BY id LIMIT $3`,
		prefix, vis.Team, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// IDsWithPrefix is Store.IDsWithPrefix, bounded.
func (r *Remote) IDsWithPrefix(ctx context.Context, vis memory.Visibility, prefix string, limit int) ([]string, error) {
	s, ctx, cancel, err := r.call(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	out, err := s.IDsWithPrefix(ctx, vis, prefix, limit)
	return out, bounded(ctx, "team id lookup", err)
}
