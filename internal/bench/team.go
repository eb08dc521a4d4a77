package bench

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/acolyte-dev/acolyte/memory"
)

// Team is a corpus indexed in a team database, each group in its own
// team, as each group is its own project in the local store: a team is
// what isolates memories there.
type Team struct {
	engine   memory.Engine
	embedder memory.Embedder
	teams    map[string]string   // group → team
	docIDs   map[string][]string // memory id → corpus ids
}

// TeamNames names a team for each group of docs: prefix, a dash, and the
// group in the letters a team name allows, in the order groups first
// appear. valid checks a name (the team database's own rule).
func TeamNames(prefix string, docs []Doc, valid func(string) error) (map[string]string, []string, error) {
	teams := map[string]string{}
	var order []string
	taken := map[string]bool{}
	for _, d := range docs {
		if _, ok := teams[d.Group]; ok {
			continue
		}
		base := prefix + "-" + strings.Map(func(r rune) rune {
			switch {
			case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_', r == '-':
				return r
			case r >= 'A' && r <= 'Z':
				return r - 'A' + 'a'
			}
			return '-'
		}, d.Group)
		base = base[:min(len(base), 34)]
		name := base
		for n := 2; taken[name]; n++ {
			name = fmt.Sprintf("%s-%d", base, n)
		}
		if err := valid(name); err != nil {
			return nil, nil, fmt.Errorf("group %q: %w", d.Group, err)
		}
		taken[name] = true
		teams[d.Group] = name
		order = append(order, name)
	}
	return teams, order, nil
}

// IndexTeam adds the corpus to the team database through e, one memory
// per document in its group's team (see TeamNames), with e's embedder e
// names. The teams must be empty, so that a figure is never a mix of two
// runs. A team memory gets its id and time from the database, so the
// corpus ids are kept beside it to score the results.
func IndexTeam(ctx context.Context, e memory.Engine, embedder memory.Embedder, teams map[string]string, docs []Doc, progress func(done, total int)) (*Team, time.Duration, error) {
	t := &Team{engine: e, embedder: embedder, teams: teams, docIDs: map[string][]string{}}
	var order []string
	for _, d := range docs {
		if !slices.Contains(order, teams[d.Group]) {
			order = append(order, teams[d.Group])
		}
	}
	for _, team := range order {
		got, err := e.List(ctx, memory.Visibility{Team: team}, memory.Filter{Limit: 1})
		if err != nil {
			return nil, 0, fmt.Errorf("team %s: %w", team, err)
		}
		if len(got) > 0 {
			return nil, 0, fmt.Errorf("team %s already holds memories; benchmark in a fresh database or name other teams with --team", team)
		}
	}
	start := time.Now()
	for i, d := range docs {
		a, err := e.Add(ctx, memory.Visibility{Team: teams[d.Group]}, memory.Draft{Content: d.Content, Topic: d.Topic, Scope: memory.ScopeTeam, Kind: memory.KindStored, Source: "bench", Globs: d.Globs})
		if err != nil {
			return nil, 0, fmt.Errorf("index %s: %w", d.ID, err)
		}
		if a.Warning != "" {
			return nil, 0, fmt.Errorf("index %s: %s", d.ID, a.Warning)
		}
		// The same content twice in a group is one team memory: both
		// corpus ids count when it is found.
		t.docIDs[a.Memory.ID] = append(t.docIDs[a.Memory.ID], d.ID)
		if progress != nil {
			progress(i+1, len(docs))
		}
	}
	return t, time.Since(start), nil
}

// RunTeam is Run on a corpus indexed by IndexTeam.
func RunTeam(ctx context.Context, t *Team, queries []Query, ks []int, o Options, progress func(done, total int)) (Report, error) {
	for _, q := range queries {
		if _, ok := t.teams[q.Group]; !ok {
			return Report{}, fmt.Errorf("query %s: group %q has no memories in the corpus", q.ID, q.Group)
		}
	}
	return run(ctx, target{
		engine: t.engine, embedder: t.embedder, scope: memory.ScopeTeam, docIDs: t.docIDs,
		vis: func(group string) memory.Visibility { return memory.Visibility{Team: t.teams[group]} },
	}, queries, ks, o, progress)
}
