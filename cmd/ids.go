package cmd

import (
	"context"
	"fmt"
	"slices"

	"github.com/acolyte-dev/acolyte/memory"
)

// resolveIDs turns each id typed, whole or an unambiguous prefix as git
// takes them, into the id of the memory it names among those visible
// here: the local store's and, when one is configured, the team's.
func resolveIDs(ctx context.Context, w *workspace, typed []string) ([]string, error) {
	if w.Workspace != nil {
		// A memory pulled without hooks is found by its id too.
		if _, err := w.Workspace.Refresh(ctx); err != nil {
			return nil, err
		}
	}
	out := make([]string, 0, len(typed))
	for _, prefix := range typed {
		id, err := resolveID(ctx, w, prefix)
		if err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, nil
}

func resolveID(ctx context.Context, w *workspace, prefix string) (string, error) {
	found, err := w.Store.IDsWithPrefix(ctx, w.Visibility, prefix, memory.PrefixLimit)
	if err != nil {
		return "", err
	}
	if w.Team != nil && !slices.Contains(found, prefix) {
		team, err := w.Team.IDsWithPrefix(ctx, w.Visibility, prefix, memory.PrefixLimit)
		if err != nil {
			return "", &marked{fmt.Errorf("%s is not a local memory, and the team database, which may hold it, is unreachable: %w; nothing was changed, try again when it answers", prefix, err), errTeamUnreachable}
		}
		found = append(found, team...)
		slices.Sort(found)
		found = slices.Compact(found)
	}
	return memory.ChooseID(prefix, found)
}
