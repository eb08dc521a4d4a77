package postgres

import (
	"context"
	"fmt"

	"github.com/acolyte-dev/acolyte/memory"
)

// Schema version 7: the files a team memory applies to (memory.Memory.Globs).
// The column is bounded in the database too, as content is by the client
// alone: a member writing SQL by hand could otherwise store what no acolyte
// would, and every teammate's path-scoped search would read it. (Each
// glob's own syntax is memory's; a search ignores a glob that does not
// compile.) The edit triggers of version 6 are redefined to count a change
// of globs as an edit, audited with who made it: a rule moved to other
// files changes what every teammate is told.
var migration7 = fmt.Sprintf(`ALTER TABLE @schema@.team_memories ADD COLUMN globs text[] NOT NULL DEFAULT '{}'
		CONSTRAINT team_memories_globs_bounded CHECK (pg_catalog.cardinality(globs) OPERATOR(pg_catalog.<=) %d
			AND pg_catalog.octet_length(pg_catalog.array_to_string(globs, '')) OPERATOR(pg_catalog.<=) %d);
	CREATE INDEX team_memories_with_globs ON @schema@.team_memories (team)
		WHERE pg_catalog.cardinality(globs) OPERATOR(pg_catalog.>) 0;

	DROP TRIGGER team_memories_edited ON @schema@.team_memories;
	CREATE TRIGGER team_memories_edited BEFORE UPDATE ON @schema@.team_memories FOR EACH ROW
		WHEN ((NEW.kind, NEW.content, NEW.content_hash, NEW.lexical, NEW.topic, NEW.source, NEW.created_at, NEW.updated_at,
		       NEW.tokens, NEW.commit_hash, NEW.paths, NEW.globs)
		      IS DISTINCT FROM (OLD.kind, OLD.content, OLD.content_hash, OLD.lexical, OLD.topic, OLD.source, OLD.created_at,
		       OLD.updated_at, OLD.tokens, OLD.commit_hash, OLD.paths, OLD.globs))
		EXECUTE FUNCTION @schema@.acolyte_set_editor();
	DROP TRIGGER team_memories_edit_audit ON @schema@.team_memories;
	CREATE TRIGGER team_memories_edit_audit AFTER UPDATE ON @schema@.team_memories FOR EACH ROW
		WHEN ((NEW.kind, NEW.content, NEW.content_hash, NEW.lexical, NEW.topic, NEW.source, NEW.created_at, NEW.updated_at,
		       NEW.tokens, NEW.commit_hash, NEW.paths, NEW.globs)
		      IS DISTINCT FROM (OLD.kind, OLD.content, OLD.content_hash, OLD.lexical, OLD.topic, OLD.source, OLD.created_at,
		       OLD.updated_at, OLD.tokens, OLD.commit_hash, OLD.paths, OLD.globs))
		EXECUTE FUNCTION @schema@.acolyte_audit_edit();`, memory.MaxGlobs, memory.MaxGlobs*memory.MaxGlobBytes)

// visibleGlobs are the globs of each team memory a path-scoped search sees
// that carries any, by id, for memory.Score's path stage, which adds them
// when the ranking did not find them; nil for a search without paths. Only
// the memories with globs are read, through their partial index, with the
// search's filters.
func (s *Store) visibleGlobs(ctx context.Context, vis memory.Visibility, q memory.Query) (map[string][]string, error) {
	if len(q.Paths) == 0 {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT m.id, m.globs FROM team_memories m
		WHERE m.team = $1 AND pg_catalog.cardinality(m.globs) > 0`+filterSQL(q.Filter, "m", 2),
		append([]any{vis.Team}, filterArgs(q.Filter)...)...)
	if err != nil {
		return nil, fmt.Errorf("team search: %w", err)
	}
	defer rows.Close()
	globs := map[string][]string{}
	for rows.Next() {
		var id string
		var g []string
		if err := rows.Scan(&id, &g); err != nil {
			return nil, fmt.Errorf("team search: %w", err)
		}
		globs[id] = g
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("team search: %w", err)
	}
	return globs, nil
}
