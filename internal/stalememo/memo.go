// Package stalememo keeps what a memory.StaleFunc answered about each
// memory while the files it cites stay as they were, so that a search
// asks git only about memories it has not seen, or whose files moved.
// Asking git costs a few milliseconds a cited file (a subprocess or two
// each); the check a search runs on every hit must cost a stat.
package stalememo

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/acolyte-dev/acolyte/internal/beneath"
	"github.com/acolyte-dev/acolyte/memory"
)

// settle is how long a file must have been left alone before an answer
// about it is kept: a write within the same mtime tick as the answer
// would leave the stamp unchanged, as git's index knows ("racy git").
const settle = 2 * time.Second

// maxKept bounds the memo; past it, it starts again, which costs one
// round of asking and keeps a long-running server's memory flat.
const maxKept = 100_000

// State is where answers are kept between processes: a CLI search is a
// process of its own, and would otherwise ask git about every hit.
// memory/sqlite's Store is one.
type State interface {
	GetState(ctx context.Context, key string) (string, error)
	SetState(ctx context.Context, key, value string) error
}

// stateWait bounds what keeping answers in State may add to a search that
// had to ask git: a database another process is writing is skipped.
const stateWait = 50 * time.Millisecond

// Memo wraps a StaleFunc; its zero value is not usable, use New.
type Memo struct {
	root  string
	stale memory.StaleFunc
	now   func() time.Time
	// State, when set, keeps answers beyond this process.
	State State

	mu   sync.Mutex
	kept map[key]answer
	// pending is what the wrapped StaleFunc kept through NewKeeping's
	// state, written with the memo's own answers.
	pending map[string]string
}

// key is what an answer is about: the blob at a commit never changes, so
// only the files now can change it.
type key struct{ id, commit string }

type answer struct {
	Paths  []string         `json:"paths"`
	Stamps []stamp          `json:"stamps"`
	S      memory.Staleness `json:"s"`
}

// stamp is a file as stat sees it; gone is a file that is not there.
type stamp struct {
	Gone    bool        `json:"gone,omitempty"`
	Unknown bool        `json:"unknown,omitempty"`
	Size    int64       `json:"size,omitempty"`
	MTime   int64       `json:"mtime,omitempty"` // nanoseconds since the epoch
	Mode    fs.FileMode `json:"mode,omitempty"`
}

// stateKey names a memory's answer in State; one store serves every
// checkout, so the root is part of it.
func (m *Memo) stateKey(k key) string {
	return "stale:" + m.root + "\x00" + k.id + "\x00" + k.commit
}

// matches says whether a answers for paths whose files are now stamps.
func (a answer) matches(paths []string, stamps []stamp) bool {
	return slices.Equal(a.Paths, paths) && slices.Equal(a.Stamps, stamps)
}

// New remembers stale's answers about the files under root, the
// repository's working tree whose paths memories cite.
func New(root string, stale memory.StaleFunc) *Memo {
	return &Memo{root: root, stale: stale, now: time.Now, kept: map[key]answer{}}
}

// NewKeeping is New over check's StaleFunc, with answers kept in state.
// check is given a state of its own to keep what it finds (gitsync's
// StaleByIDKeeping keeps each cited blob's id); its writes wait for the
// memo's answers, and both are written in one transaction, where two
// cost a page's first look a fifth of a millisecond more
// (gitsync's BenchmarkFirstLook).
func NewKeeping(root string, state interface {
	State
	BatchState
}, check func(kept BatchState) memory.StaleFunc) *Memo {
	m := New(root, nil)
	m.State = state
	m.stale = check(keptWithMemo{m, state})
	return m
}

// keptWithMemo is the state NewKeeping gives the StaleFunc it wraps:
// reads go to the memo's State, writes wait for the memo's.
type keptWithMemo struct {
	m     *Memo
	state BatchState
}

func (k keptWithMemo) GetStates(ctx context.Context, keys []string) (map[string]string, error) {
	return k.state.GetStates(ctx, keys)
}

func (k keptWithMemo) SetStates(_ context.Context, values map[string]string) error {
	k.m.mu.Lock()
	defer k.m.mu.Unlock()
	if len(k.m.pending)+len(values) > maxKept {
		k.m.pending = nil // never written: found again next time
	}
	if k.m.pending == nil {
		k.m.pending = map[string]string{}
	}
	maps.Copy(k.m.pending, values)
	return nil
}

// Stale is m as a memory.StaleFunc: the kept answers for memories whose
// files are as they were, and stale's for the rest, asked in one call.
func (m *Memo) Stale(ctx context.Context, mems []memory.Memory) (map[string]memory.Staleness, error) {
	root, err := beneath.Open(m.root)
	if err != nil {
		return m.stale(ctx, mems)
	}
	defer root.Close()
	out := map[string]memory.Staleness{}
	answered := func(a answer, mem memory.Memory) {
		if len(a.S.Changed)+len(a.S.Deleted) > 0 {
			out[mem.ID] = a.S
		}
	}
	stamps := make([][]stamp, len(mems))
	var unkept []int
	for i, mem := range mems {
		stamps[i] = stampsOf(root, mem.Paths)
		m.mu.Lock()
		a, ok := m.kept[key{mem.ID, mem.Commit}]
		m.mu.Unlock()
		if ok && a.matches(mem.Paths, stamps[i]) {
			answered(a, mem)
			continue
		}
		unkept = append(unkept, i)
	}
	fromState := m.fromState(ctx, mems, unkept)
	var ask []memory.Memory
	var askStamps [][]stamp
	for _, i := range unkept {
		mem := mems[i]
		if a, ok := fromState[key{mem.ID, mem.Commit}]; ok && a.matches(mem.Paths, stamps[i]) {
			m.mu.Lock()
			m.kept[key{mem.ID, mem.Commit}] = a
			m.mu.Unlock()
			answered(a, mem)
			continue
		}
		ask = append(ask, mem)
		askStamps = append(askStamps, stamps[i])
	}
	if len(ask) == 0 {
		return out, nil
	}
	asked := m.now()
	found, err := m.stale(ctx, ask)
	if err != nil {
		return nil, err
	}
	keep := map[key]answer{}
	for i, mem := range ask {
		a := answer{Paths: slices.Clone(mem.Paths), Stamps: askStamps[i], S: found[mem.ID]}
		answered(a, mem)
		if settled(askStamps[i], asked) {
			keep[key{mem.ID, mem.Commit}] = a
		}
	}
	m.mu.Lock()
	if len(m.kept)+len(keep) > maxKept {
		m.kept = map[key]answer{}
	}
	maps.Copy(m.kept, keep)
	m.mu.Unlock()
	m.toState(ctx, keep)
	return out, nil
}

// BatchState is a State that reads and writes many values at once, as
// memory/sqlite's Store does: a page's first look then costs one query
// and one transaction, where a query and a transaction a hit cost more
// than the whole check may (BenchmarkFirstLook).
type BatchState interface {
	GetStates(ctx context.Context, keys []string) (map[string]string, error)
	SetStates(ctx context.Context, values map[string]string) error
}

// fromState reads the answers another process kept about mems[at...];
// any failure is a miss.
func (m *Memo) fromState(ctx context.Context, mems []memory.Memory, at []int) map[key]answer {
	if m.State == nil || len(at) == 0 {
		return nil
	}
	keys := make([]string, len(at))
	for j, i := range at {
		keys[j] = m.stateKey(key{mems[i].ID, mems[i].Commit})
	}
	values := map[string]string{}
	if batch, ok := m.State.(BatchState); ok {
		values, _ = batch.GetStates(ctx, keys)
	} else {
		for _, k := range keys {
			if v, err := m.State.GetState(ctx, k); err == nil && v != "" {
				values[k] = v
			}
		}
	}
	out := map[key]answer{}
	for j, i := range at {
		var a answer
		if v := values[keys[j]]; v != "" && json.Unmarshal([]byte(v), &a) == nil {
			out[key{mems[i].ID, mems[i].Commit}] = a
		}
	}
	return out
}

// toState keeps answers for the next process, with what the wrapped
// StaleFunc kept through NewKeeping's state, within stateWait; what is
// not written is asked again next time.
func (m *Memo) toState(ctx context.Context, keep map[key]answer) {
	m.mu.Lock()
	values := m.pending
	m.pending = nil
	m.mu.Unlock()
	if m.State == nil || len(keep)+len(values) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, stateWait)
	defer cancel()
	if values == nil {
		values = make(map[string]string, len(keep))
	}
	for k, a := range keep {
		b, err := json.Marshal(a)
		if err != nil {
			return
		}
		values[m.stateKey(k)] = string(b)
	}
	if batch, ok := m.State.(BatchState); ok {
		_ = batch.SetStates(ctx, values)
		return
	}
	for k, v := range values {
		if m.State.SetState(ctx, k, v) != nil {
			return
		}
	}
}

func stampsOf(root *beneath.Dir, paths []string) []stamp {
	out := make([]stamp, len(paths))
	for i, p := range paths {
		fi, err := root.Stat(filepath.FromSlash(p))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			out[i] = stamp{Gone: true}
		case err != nil:
			// Unreadable or outside the tree: the answer is not kept.
			out[i] = stamp{Unknown: true}
		default:
			out[i] = stamp{Size: fi.Size(), MTime: fi.ModTime().UnixNano(), Mode: fi.Mode()}
		}
	}
	return out
}

// settled says whether every file was last written well before the
// answer was asked for, so that a later write moves its stamp.
func settled(stamps []stamp, asked time.Time) bool {
	for _, s := range stamps {
		if s.Unknown {
			return false
		}
		if !s.Gone && s.MTime >= asked.Add(-settle).UnixNano() {
			return false
		}
	}
	return true
}
