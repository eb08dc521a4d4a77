// Package stalememo keeps what a memory.StaleFunc answered about each
// memory while the files it cites stay as they were, so that a search
// asks git only about memories it has not seen, or whose files moved.
// Asking git costs a few milliseconds a cited file (a subprocess or two
// each); the check a search runs on every hit must cost a stat.
package stalememo

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/acolyte-dev/acolyte/memory"
)

// settle is how long a file must have been left alone before an answer
// about it is kept: a write within the same mtime tick as the answer
// would leave the stamp unchanged, as git's index knows ("racy git").
const settle = 2 * time.Second

// maxKept bounds the memo; past it, it starts again, which costs one
// round of asking and keeps a long-running server's memory flat.
const maxKept = 100_000

// Memo wraps a StaleFunc; its zero value is not usable, use New.
type Memo struct {
	root  string
	stale memory.StaleFunc
	now   func() time.Time

	mu   sync.Mutex
	kept map[key]answer
}

// key is what an answer is about: the blob at a commit never changes, so
// only the files now can change it.
type key struct{ id, commit string }

type answer struct {
	paths  []string
	stamps []stamp
	s      memory.Staleness
}

// stamp is a file as stat sees it; gone is a file that is not there.
type stamp struct {
	gone, unknown bool
	size          int64
	mtime         int64 // nanoseconds since the epoch
	mode          fs.FileMode
}

// New remembers stale's answers about the files under root, the
// repository's working tree whose paths memories cite.
func New(root string, stale memory.StaleFunc) *Memo {
	return &Memo{root: root, stale: stale, now: time.Now, kept: map[key]answer{}}
}

// Stale is m as a memory.StaleFunc: the kept answers for memories whose
// files are as they were, and stale's for the rest, asked in one call.
func (m *Memo) Stale(ctx context.Context, mems []memory.Memory) (map[string]memory.Staleness, error) {
	root, err := os.OpenRoot(m.root)
	if err != nil {
		return m.stale(ctx, mems)
	}
	defer root.Close()
	out := map[string]memory.Staleness{}
	var ask []memory.Memory
	var askStamps [][]stamp
	m.mu.Lock()
	for _, mem := range mems {
		stamps := stampsOf(root, mem.Paths)
		a, ok := m.kept[key{mem.ID, mem.Commit}]
		if ok && slices.Equal(a.paths, mem.Paths) && slices.Equal(a.stamps, stamps) {
			if len(a.s.Changed)+len(a.s.Deleted) > 0 {
				out[mem.ID] = a.s
			}
			continue
		}
		ask = append(ask, mem)
		askStamps = append(askStamps, stamps)
	}
	m.mu.Unlock()
	if len(ask) == 0 {
		return out, nil
	}
	asked := m.now()
	found, err := m.stale(ctx, ask)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.kept)+len(ask) > maxKept {
		m.kept = map[key]answer{}
	}
	for i, mem := range ask {
		s := found[mem.ID]
		if len(s.Changed)+len(s.Deleted) > 0 {
			out[mem.ID] = s
		}
		if settled(askStamps[i], asked) {
			m.kept[key{mem.ID, mem.Commit}] = answer{paths: slices.Clone(mem.Paths), stamps: askStamps[i], s: s}
		}
	}
	return out, nil
}

func stampsOf(root *os.Root, paths []string) []stamp {
	out := make([]stamp, len(paths))
	for i, p := range paths {
		fi, err := root.Stat(filepath.FromSlash(p))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			out[i] = stamp{gone: true}
		case err != nil:
			// Unreadable or outside the tree: the answer is not kept.
			out[i] = stamp{unknown: true}
		default:
			out[i] = stamp{size: fi.Size(), mtime: fi.ModTime().UnixNano(), mode: fi.Mode()}
		}
	}
	return out
}

// settled says whether every file was last written well before the
// answer was asked for, so that a later write moves its stamp.
func settled(stamps []stamp, asked time.Time) bool {
	for _, s := range stamps {
		if s.unknown {
			return false
		}
		if !s.gone && s.mtime >= asked.Add(-settle).UnixNano() {
			return false
		}
	}
	return true
}
