package sqlite

import (
	"context"

	"github.com/acolyte-dev/acolyte/memory"
)

// IDsWithPrefix lists, in order, at most limit ids visible from vis that
// start with prefix.
func (s *Store) IDsWithPrefix(ctx context.Context, vis memory.Visibility, prefix string, limit int) ([]string, error) {
	where, args := visible(vis, memory.Filter{})
	// Ids are ASCII, so the byte after the last one bounds them; the
	// range compares as BINARY, byte by byte.
	from, to := prefix, prefix+"\x7f"
	rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT m.id FROM memories m WHERE m.id >= ? AND m.id < ? AND `+where+` ORDER BY m.id LIMIT ?`,
		append(append([]any{from, to}, args...), limit)...)
	if err != nil {
		return nil, s.explain(err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, s.explain(err)
		}
		ids = append(ids, id)
	}
	return ids, s.explain(rows.Err())
}
