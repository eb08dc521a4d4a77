package postgres

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/acolyte-dev/acolyte/memory"
)

// Vector extension states, as Status reports them.
const (
	VectorInstalled = "installed" // CREATE EXTENSION vector has run in this database
	VectorAvailable = "available" // the server has it; team init would enable it
	VectorAbsent    = "absent"    // stock PostgreSQL
)

// Status is what `acolyte team status` reports about a team database.
type Status struct {
	// Server is the server's version, e.g. "15.14".
	Server string
	// Vector is the pgvector extension's state: VectorInstalled,
	// VectorAvailable or VectorAbsent; VectorVersion its installed
	// version, or the one the server offers.
	Vector, VectorVersion string
	// Search says in one line how a team search finds the nearest
	// vectors with this Vector state.
	Search string
	// Schema is the schema version of the database (0: none), and Known
	// the one this acolyte reads and writes.
	Schema, Known int
	// Teams are the teams whose memories the connected role can see: row-
	// level security leaves out the others, so a member sees only theirs.
	Teams []TeamStatus
}

// TeamStatus is one visible team's memories.
type TeamStatus struct {
	Team   string
	Counts map[memory.Kind]int
	// Models holds how many vectors each embedding model has stored.
	Models map[string]int
}

// VectorSearchNote says how search finds a team's nearest vectors for a
// vector extension state. Status reports it; it is one fact, so the
// search and this line change together.
func VectorSearchNote(vector string) string {
	const small = "a team of up to 1,024 memories is read whole and its vectors compared exactly in acolyte; "
	if vector == VectorInstalled {
		return small + "a larger one takes its nearest vectors from pgvector's HNSW index of its model (built by team init; a model first seen since uses acolyte's cells until the next init)"
	}
	return small + "without pgvector, a larger one reads the few cells of its vectors nearest the query (an inverted file acolyte keeps in plain tables), then compares those exactly (recall within 0.01 of reading all: CONTRIBUTING.md)"
}

// ReadStatus connects to the team database at url and reports on it. It
// works on a database of any schema version, so it can say what team init
// would do.
func ReadStatus(ctx context.Context, url string) (Status, error) {
	st := Status{Known: len(migrations)}
	conn, err := connect(ctx, url)
	if err != nil {
		return st, err
	}
	defer conn.Close(ctx)
	if err := conn.QueryRow(ctx, `SHOW server_version`).Scan(&st.Server); err != nil {
		return st, fmt.Errorf("team status: %w", err)
	}
	var installed, available *string
	if err := conn.QueryRow(ctx, `SELECT (SELECT extversion FROM pg_extension WHERE extname = 'vector'),
		(SELECT default_version FROM pg_available_extensions WHERE name = 'vector')`).Scan(&installed, &available); err != nil {
		return st, fmt.Errorf("team status: %w", err)
	}
	switch {
	case installed != nil:
		st.Vector, st.VectorVersion = VectorInstalled, *installed
	case available != nil:
		st.Vector, st.VectorVersion = VectorAvailable, *available
	default:
		st.Vector = VectorAbsent
	}
	st.Search = VectorSearchNote(st.Vector)
	if st.Schema, err = version(ctx, conn); err != nil {
		return st, fmt.Errorf("team status: %w", err)
	}
	if st.Schema < 1 || st.Schema > len(migrations) {
		return st, nil // no tables to count, or ones this acolyte does not know
	}
	teams := map[string]*TeamStatus{}
	team := func(name string) *TeamStatus {
		if teams[name] == nil {
			teams[name] = &TeamStatus{Team: name, Counts: map[memory.Kind]int{}, Models: map[string]int{}}
		}
		return teams[name]
	}
	// Row-level security restricts both counts to the role's teams. A
	// failed Query yields rows whose Err ForEachRow returns.
	var (
		name, model string
		kind        memory.Kind
		n           int
	)
	rows, _ := conn.Query(ctx, `SELECT team, kind, count(*) FROM team_memories GROUP BY team, kind`)
	if _, err := pgx.ForEachRow(rows, []any{&name, &kind, &n}, func() error { team(name).Counts[kind] = n; return nil }); err != nil {
		return st, fmt.Errorf("team status: %w", err)
	}
	rows, _ = conn.Query(ctx, `SELECT team, model, count(*) FROM team_embeddings GROUP BY team, model`)
	if _, err := pgx.ForEachRow(rows, []any{&name, &model, &n}, func() error { team(name).Models[model] = n; return nil }); err != nil {
		return st, fmt.Errorf("team status: %w", err)
	}
	for _, t := range teams {
		st.Teams = append(st.Teams, *t)
	}
	sort.Slice(st.Teams, func(i, j int) bool { return st.Teams[i].Team < st.Teams[j].Team })
	return st, nil
}

// Grant makes role a member of team's group role, so it reads and writes
// the team's memories; Revoke takes that away. Both say what to do when
// the team has no role yet or the caller may not manage it. changed is
// false when there was nothing to do (already a member, or not one).
func Grant(ctx context.Context, url, team, role string) (changed bool, err error) {
	return membership(ctx, url, team, role, true)
}

// Revoke ends role's membership of team; see Grant.
func Revoke(ctx context.Context, url, team, role string) (changed bool, err error) {
	return membership(ctx, url, team, role, false)
}

func membership(ctx context.Context, url, team, role string, grant bool) (bool, error) {
	verb := map[bool]string{true: "grant", false: "revoke"}[grant]
	if err := CheckTeam(team); err != nil {
		return false, err
	}
	if role == "" {
		return false, fmt.Errorf("team %s: name the database role", verb)
	}
	conn, err := connect(ctx, url)
	if err != nil {
		return false, err
	}
	defer conn.Close(ctx)
	group := TeamRole(team)
	var teamExists, roleExists, member bool
	err = conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1),
		EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $2),
		EXISTS (SELECT 1 FROM pg_auth_members m JOIN pg_roles g ON g.oid = m.roleid JOIN pg_roles r ON r.oid = m.member
			WHERE g.rolname = $1 AND r.rolname = $2)`, group, role).Scan(&teamExists, &roleExists, &member)
	if err != nil {
		return false, fmt.Errorf("team %s: %w", verb, err)
	}
	switch {
	case !teamExists:
		return false, fmt.Errorf("team %q has no role %s on this server; run `acolyte team init --team %s` first (as an administrator)", team, group, team)
	case !roleExists:
		return false, fmt.Errorf("there is no database role %q; create it first (CREATE ROLE %s LOGIN), or check its spelling: role names are case-sensitive", role, pgx.Identifier{role}.Sanitize())
	case member == grant:
		return false, nil
	}
	q := `GRANT ` + pgx.Identifier{group}.Sanitize() + ` TO ` + pgx.Identifier{role}.Sanitize()
	if !grant {
		q = `REVOKE ` + pgx.Identifier{group}.Sanitize() + ` FROM ` + pgx.Identifier{role}.Sanitize()
	}
	if _, err := conn.Exec(ctx, q); err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "42501" {
			return false, fmt.Errorf("team %s: this database role may not manage %s; run it as the role that ran team init, or one with CREATEROLE or ADMIN OPTION on %s: %w", verb, group, group, err)
		}
		return false, fmt.Errorf("team %s: %w", verb, err)
	}
	return true, nil
}
