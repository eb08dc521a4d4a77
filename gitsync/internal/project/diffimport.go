package project

import (
	"context"
	"errors"
	"maps"
	"strings"
	"time"

	"github.com/acolyte-dev/acolyte/gitsync/derive"
	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/gitsync/internal/acolytedir"
	"github.com/acolyte-dev/acolyte/memory"
)

// A checkout, merge or pull that changes k memories should import k, not
// decode the whole file and read every row of the index. So every import
// and write also keeps a copy of the memories file as the index holds it,
// the shadow, in the git directory beside git's own index (a cache of this
// checkout, never committed). The next import walks the shadow and the new
// file line by line, both in id order, decodes only the lines that differ
// and puts or deletes just those rows. The shadow is trusted only when its
// content hash is the one the last import or write recorded (shadow.go
// says how that is known without hashing it), so a shadow another acolyte
// home wrote, a torn one or a missing one costs the whole import, never a
// wrong index.

// MaxDiffChanges is the most changed lines imported one by one; more are
// cheaper as one ReplaceScope.
const MaxDiffChanges = 256

// diffPlan is an import by line diff worked out from the shadow and the
// new file, before anything is written: the memories to put and the ids
// to delete. It holds the shadow open until applied or closed.
type diffPlan struct {
	sh      acolytedir.Shadow
	journal map[string][]byte
	pending map[string]time.Time
	put     []memory.Memory
	removed []string
	out     Imported
}

// close releases a plan that will not be applied.
func (p *diffPlan) close() {
	if p != nil {
		p.sh.Close()
	}
}

// PlanDiff works out the import of data, the memories file now, as its
// line diff from the shadow, when the shadow is the file last imported,
// the tombstones did not change, the last import warned of nothing and no
// hand edit is pending. It needs no content hash of data, so a caller can
// hash the file beside it: at 100k memories each is a sixth of a
// checkout's hook. A nil plan means the whole file must be imported; so
// does a file whose content is what was last imported, which the caller
// tells by the hash.
func (one OneFile) PlanDiff(ctx context.Context, w *Workspace, data []byte, lastState string, ts acolytedir.Tombstones) (*diffPlan, error) {
	lastHash, _, warnings := acolytedir.ParseImportState(lastState)
	if len(warnings) > 0 || len(ts.Warnings) > 0 {
		return nil, nil
	}
	lastFileHash, lastTombs, _ := strings.Cut(lastHash, "+")
	if _, tombs, _ := strings.Cut(acolytedir.WithForgotten("", ts.Data), "+"); tombs != lastTombs {
		return nil, nil
	}
	pending, err := w.PendingHandEdits(ctx)
	if err != nil {
		return nil, err
	}
	sh, ok := w.Shadows().ReadShadow(lastFileHash)
	if !ok {
		return nil, nil
	}
	p := &diffPlan{sh: sh, pending: pending}
	if ok := one.planChanges(w, p, data, ts); !ok {
		p.close()
		return nil, nil
	}
	return p, nil
}

// planChanges fills p with the lines that differ between the shadow and
// data, decoded; false means they cannot be imported one by one.
func (one OneFile) planChanges(w *Workspace, p *diffPlan, data []byte, ts acolytedir.Tombstones) bool {
	fromBase, removedFromBase, same, err := format.DiffLines(p.sh.Base, data, acolytedir.MaxJournal+MaxDiffChanges)
	if err != nil {
		return false
	}
	changes, removed, journal, ok := p.sh.Changes(fromBase, removedFromBase)
	if !ok || len(changes)+len(removed) > MaxDiffChanges {
		return false
	}
	for _, c := range changes {
		m, err := format.DecodeLine(c.New)
		if err != nil {
			return false // the whole import reports it
		}
		for _, t := range ts.List {
			if t.Covers(m) {
				return false
			}
		}
		m.Scope, m.ScopeKey = memory.ScopeProject, w.Repo.Root
		if c.Old == nil {
			p.out.Added++
		} else {
			old, err := format.DecodeLine(c.Old)
			if err != nil {
				return false
			}
			p.out.Updated++
			if old.UpdatedAt.Equal(m.UpdatedAt) && (old.Content != m.Content || old.Topic != m.Topic) {
				p.out.Revised = append(p.out.Revised, m.ID)
			}
		}
		p.put = append(p.put, m)
	}
	// Every line of data is one DiffLines found the same as the base's or
	// one it returned.
	p.out.Removed, p.out.Unchanged = len(removed), same+len(fromBase)-len(p.put)
	p.removed, p.journal = removed, journal
	return true
}

// ApplyDiff writes a plan to the index and keeps the shadow's journal for
// data, whose content hash is hash. ok is false when the index did not
// hold what the plan assumed, and nothing was written; the caller then
// imports the whole file.
func (one OneFile) ApplyDiff(ctx context.Context, w *Workspace, p *diffPlan, hash string, data []byte) (out Imported, ok bool, err error) {
	defer p.close()
	if len(p.removed) > 0 {
		// A line a tombstone hid was never indexed: the whole import,
		// which applies the tombstones, sorts that out. Delete removes
		// nothing unless it finds every id.
		if _, err := w.Store.Delete(ctx, w.Vis, p.removed...); errors.Is(err, memory.ErrNotFound) {
			return Imported{}, false, nil
		} else if err != nil {
			return p.out, true, err
		}
	}
	out = p.out
	for _, m := range p.put {
		added, err := w.Store.Put(ctx, m)
		if err != nil {
			return out, true, err
		}
		if added.Warning != "" {
			out.Warning = added.Warning
		}
	}
	if err := w.recordHandEditsDiff(ctx, p.pending, p.put, p.removed, out.Revised); err != nil {
		return out, true, err
	}
	w.Shadows().KeepJournal(p.sh, p.journal, hash, data)
	return out, true, nil
}

// recordHandEditsDiff is recordHandEdits for an import of changed lines
// alone: a pending hand edit of a memory whose line did not change stays,
// one of a removed memory goes, and the changed ones are judged as
// recordHandEdits judges every memory.
func (w *Workspace) recordHandEditsDiff(ctx context.Context, pending map[string]time.Time, changed []memory.Memory, removed, revised []string) error {
	next := maps.Clone(pending)
	if next == nil {
		next = map[string]time.Time{}
	}
	for _, id := range removed {
		delete(next, id)
	}
	isRevised := make(map[string]bool, len(revised))
	for _, id := range revised {
		isRevised[id] = true
	}
	for _, m := range changed {
		old, ok := pending[m.ID]
		switch {
		case derive.IsDerived(m):
			delete(next, m.ID)
		case isRevised[m.ID]:
			next[m.ID] = m.UpdatedAt
		case ok && m.UpdatedAt.Equal(old):
		default:
			delete(next, m.ID)
		}
	}
	if maps.EqualFunc(next, pending, time.Time.Equal) {
		return nil
	}
	return w.SetPendingHandEdits(ctx, next)
}

// indexChanges brings the index from before to after, two versions of the
// project memories: when exact (the index holds exactly before), by
// putting and deleting the memories that differ, so that a sync changing
// one rule in a large file touches one row instead of reading every row
// as ReplaceScope does; otherwise, or past MaxDiffChanges, by ReplaceScope.
func (w *Workspace) indexChanges(ctx context.Context, exact bool, before, after []memory.Memory) (memory.ReplaceStats, error) {
	replace := func() (memory.ReplaceStats, error) {
		return w.Store.ReplaceScope(ctx, memory.ScopeProject, w.Repo.Root, after)
	}
	if !exact {
		return replace()
	}
	return w.IndexDiff(ctx, before, after, replace)
}

// IndexDiff puts and deletes the memories that differ between before, what
// the index holds, and after; past MaxDiffChanges, or when a row to delete
// is missing, it calls replace instead.
func (w *Workspace) IndexDiff(ctx context.Context, before, after []memory.Memory, replace func() (memory.ReplaceStats, error)) (memory.ReplaceStats, error) {
	old := make(map[string]memory.Memory, len(before))
	for _, m := range before {
		old[m.ID] = m
	}
	var st memory.ReplaceStats
	var put []memory.Memory
	for _, m := range after {
		prev, ok := old[m.ID]
		delete(old, m.ID)
		switch {
		case ok && format.Same(prev, m):
			st.Unchanged++
			continue
		case ok:
			st.Updated++
			if prev.UpdatedAt.Equal(m.UpdatedAt) && (prev.Content != m.Content || prev.Topic != m.Topic) {
				st.Revised = append(st.Revised, m.ID)
			}
		default:
			st.Added++
		}
		put = append(put, m)
		if len(put) > MaxDiffChanges {
			return replace()
		}
	}
	if len(old) > MaxDiffChanges {
		return replace()
	}
	removed := make([]string, 0, len(old))
	for id := range old {
		removed = append(removed, id)
	}
	if len(removed) > 0 {
		if _, err := w.Store.Delete(ctx, w.Vis, removed...); errors.Is(err, memory.ErrNotFound) {
			return replace()
		} else if err != nil {
			return st, err
		}
	}
	for _, m := range put {
		m.Scope, m.ScopeKey = memory.ScopeProject, w.Repo.Root
		added, err := w.Store.Put(ctx, m)
		if err != nil {
			return st, err
		}
		if added.Warning != "" {
			st.Warning = added.Warning
		}
	}
	st.Removed = len(removed)
	return st, nil
}
