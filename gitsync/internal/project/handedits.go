package project

import (
	"context"
	"encoding/json"
	"maps"
	"time"

	"github.com/acolyte-dev/acolyte/gitsync/derive"
	"github.com/acolyte-dev/acolyte/memory"
)

// MarkHandEdits moves the updated time of every memory whose content or
// topic in the file differs from the index's copy while its updated time
// does not: someone edited the line by hand. Without it, the hand edit
// would tie with the old text in a merge and lose on content order.
func MarkHandEdits(file, indexed []memory.Memory, now time.Time) []memory.Memory {
	return StampHandEdits(file, HandEdits(file, indexed), now)
}

// HandEdits finds the hand edits MarkHandEdits stamps: the id of each
// memory of file edited by hand, with the updated time it kept. Derived
// memories are rewritten from their files on every sync, so an edit of
// their line is no edit to keep.
func HandEdits(file, indexed []memory.Memory) map[string]time.Time {
	before := make(map[string]memory.Memory, len(indexed))
	for _, m := range indexed {
		before[m.ID] = m
	}
	var out map[string]time.Time
	for _, m := range file {
		old, ok := before[m.ID]
		if !ok || derive.IsDerived(m) || !m.UpdatedAt.Equal(old.UpdatedAt) || (m.Content == old.Content && m.Topic == old.Topic) {
			continue
		}
		if out == nil {
			out = map[string]time.Time{}
		}
		out[m.ID] = m.UpdatedAt
	}
	return out
}

// StampHandEdits moves past now (or past the old time, with a clock
// behind it) the updated time of each memory of file that edits names and
// whose updated time is still the one recorded there: a memory revised
// since already carries a later time of its own.
func StampHandEdits(file []memory.Memory, edits map[string]time.Time, now time.Time) []memory.Memory {
	if len(edits) == 0 {
		return file
	}
	now = now.UTC().Truncate(time.Millisecond)
	for i, m := range file {
		old, ok := edits[m.ID]
		if !ok || derive.IsDerived(m) || !m.UpdatedAt.Equal(old) {
			continue
		}
		file[i].UpdatedAt = now
		if !now.After(old) {
			file[i].UpdatedAt = old.Add(time.Millisecond)
		}
	}
	return file
}

// handEditsKey names the hand edits that imports found and no write of the
// memories file has stamped yet. Every command imports a changed file
// before it runs, and the import makes the index hold the hand edit too,
// so by the time sync compares the file with the index the edit no longer
// shows: the import records it here for the next write to stamp, since a
// read-only command must not write the file.
func (w *Workspace) handEditsKey() string { return "hand-edits:" + w.StateKey() }

// PendingHandEdits reads what recordHandEdits left: ids and the updated
// times their hand-edited lines kept.
func (w *Workspace) PendingHandEdits(ctx context.Context) (map[string]time.Time, error) {
	raw, err := w.Store.GetState(ctx, w.handEditsKey())
	if err != nil || raw == "" {
		return nil, err
	}
	var edits map[string]time.Time
	if err := json.Unmarshal([]byte(raw), &edits); err != nil {
		// Losing the record costs a hand edit its stamp, never a memory;
		// a broken record must not stop every command.
		return nil, nil
	}
	return edits, nil
}

func (w *Workspace) SetPendingHandEdits(ctx context.Context, edits map[string]time.Time) error {
	if len(edits) == 0 {
		return w.Store.SetState(ctx, w.handEditsKey(), "")
	}
	raw, err := json.Marshal(edits)
	if err != nil {
		return err
	}
	return w.Store.SetState(ctx, w.handEditsKey(), string(raw))
}

// recordHandEdits runs in an import, after the index took file: it adds
// the memories the import found revised in place (memory.ReplaceStats'
// Revised: content or topic changed, updated time kept) to the pending
// hand edits, and keeps only those file still holds with their recorded
// updated time. The store finds them while it compares the file with the
// index anyway, so this costs no read of its own, and imports run only
// when the file's bytes changed: nothing on the hooks' nothing-changed path.
func (w *Workspace) recordHandEdits(ctx context.Context, file []memory.Memory, revised []string) error {
	pending, err := w.PendingHandEdits(ctx)
	if err != nil {
		return err
	}
	if len(revised) == 0 && len(pending) == 0 {
		return nil
	}
	isRevised := make(map[string]bool, len(revised))
	for _, id := range revised {
		isRevised[id] = true
	}
	found := make(map[string]time.Time, len(revised))
	for _, m := range file {
		if isRevised[m.ID] && !derive.IsDerived(m) {
			found[m.ID] = m.UpdatedAt
		}
	}
	next := make(map[string]time.Time, len(pending)+len(found))
	for _, m := range file {
		if old, ok := found[m.ID]; ok {
			next[m.ID] = old
		} else if old, ok := pending[m.ID]; ok && m.UpdatedAt.Equal(old) && !derive.IsDerived(m) {
			next[m.ID] = old
		}
	}
	if maps.EqualFunc(next, pending, time.Time.Equal) {
		return nil
	}
	return w.SetPendingHandEdits(ctx, next)
}
