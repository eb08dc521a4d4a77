package gitsync

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acolyte-dev/acolyte/gitsync/internal/git"
	"github.com/acolyte-dev/acolyte/gitsync/internal/odb"
	"github.com/acolyte-dev/acolyte/memory"
)

// committedBlobs answers, for each "<commit>:<path>", the id of the blob
// there, or "" when there is none (nothing at that path then, or a folder
// or a submodule): what `git cat-file --batch-check` answers. The objects
// are read in-process, 0.05 ms a path at a recent commit and 0.2 at one
// deep in a packed history (BenchmarkCommittedBlobs), where starting git
// costs 3 ms or more, past a search's whole staleness budget (2 ms); what
// odb cannot be sure to read as git would is asked of git, in one process.
func (r *Repo) committedBlobs(ctx context.Context, specs []string) ([]string, error) {
	blobs, _, err := r.resolveBlobs(ctx, specs)
	return blobs, err
}

// resolveBlobs is committedBlobs saying which answers are final: every
// blob id, and "no blob" where odb read the commit's trees. Git's
// "missing" may be a commit a shallow clone has not fetched yet.
func (r *Repo) resolveBlobs(ctx context.Context, specs []string) (blobs []string, final []bool, err error) {
	blobs, final = make([]string, len(specs)), make([]bool, len(specs))
	var askGit []int
	db, err := odb.Open(r.CommonDir())
	if err != nil {
		if !errors.Is(err, odb.ErrUnsupported) {
			return nil, nil, err
		}
		for i := range specs {
			askGit = append(askGit, i)
		}
	} else {
		defer db.Close()
		for i, spec := range specs {
			if err := ctx.Err(); err != nil {
				return nil, nil, err // a server shutting down waits for no more
			}
			commit, path, _ := strings.Cut(spec, ":")
			e, found, err := db.At(commit, path)
			switch {
			case errors.Is(err, odb.ErrUnsupported):
				askGit = append(askGit, i)
			case err != nil:
				return nil, nil, err
			case found && e.Blob:
				blobs[i], final[i] = e.ID, true
			default:
				final[i] = true
			}
		}
	}
	if len(askGit) == 0 {
		return blobs, final, nil
	}
	var in strings.Builder
	for _, i := range askGit {
		in.WriteString(specs[i] + "\n")
	}
	answer, err := r.GitOutput(ctx, []byte(in.String()), "cat-file", "--batch-check")
	if err != nil {
		return nil, nil, err
	}
	lines := strings.Split(strings.TrimSuffix(string(answer), "\n"), "\n")
	if len(lines) != len(askGit) {
		return nil, nil, fmt.Errorf("git cat-file --batch-check answered %d lines for %d paths", len(lines), len(askGit))
	}
	for k, i := range askGit {
		// Not a blob: not committed then, or not a file then.
		if oid, kind, _ := strings.Cut(lines[k], " "); strings.HasPrefix(kind, "blob ") {
			blobs[i], final[i] = oid, true
		}
	}
	return blobs, final, nil
}

// BlobState keeps which blob each cited path named at its commit, between
// processes: memory/sqlite's Store is one. The answer never changes, and
// an object id names the same content in every clone, so one store's
// answers serve all of a repository's checkouts.
type BlobState interface {
	GetStates(ctx context.Context, keys []string) (map[string]string, error)
	SetStates(ctx context.Context, values map[string]string) error
}

// noBlob is kept for a path that named no blob at its commit.
const noBlob = "-"

// keepWait bounds what keeping new answers may add to a search: a
// database another process is writing is skipped, and the answers are
// found again next time.
const keepWait = 50 * time.Millisecond

func blobStateKey(spec string) string { return "blob:" + spec }

// keptBlobs is committedBlobs answering from state what was found before,
// and keeping there what it finds, within wait (0: no bound but ctx's).
func (r *Repo) keptBlobs(ctx context.Context, state BlobState, specs []string, wait time.Duration) ([]string, error) {
	keys := make([]string, len(specs))
	for i, s := range specs {
		keys[i] = blobStateKey(s)
	}
	kept, err := state.GetStates(ctx, keys)
	if err != nil {
		kept = nil // a store that cannot answer costs the reading, not the search
	}
	out := make([]string, len(specs))
	var ask []string
	var at []int
	for i, k := range keys {
		switch v := kept[k]; {
		case v == noBlob:
		case git.IsHash(v):
			out[i] = v
		default:
			ask, at = append(ask, specs[i]), append(at, i)
		}
	}
	if len(ask) == 0 {
		return out, nil
	}
	blobs, final, err := r.resolveBlobs(ctx, ask)
	if err != nil {
		return nil, err
	}
	keep := map[string]string{}
	for k, i := range at {
		out[i] = blobs[k]
		if final[k] {
			keep[keys[i]] = cmp.Or(blobs[k], noBlob)
		}
	}
	if wait > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, wait)
		defer cancel()
	}
	_ = state.SetStates(ctx, keep) // what is not kept is found again
	return out, nil
}

// StaleByIDKeeping is StaleByID keeping in state the blob each cited path
// named at its memory's commit: once found, by this process or another,
// or ahead of time by KeepCitedBlobs, a memory's check costs reading and
// hashing its files, even after they change.
func (r *Repo) StaleByIDKeeping(state BlobState) memory.StaleFunc {
	return func(ctx context.Context, mems []memory.Memory) (map[string]memory.Staleness, error) {
		return byID(r.staleAmong(ctx, mems, func(ctx context.Context, specs []string) ([]string, error) {
			return r.keptBlobs(ctx, state, specs, keepWait)
		}))
	}
}

// KeepCitedBlobs finds, off a search's path, the blob each memory's
// cited paths named at its commit, and keeps it in state for
// StaleByIDKeeping; what is kept already costs one lookup. Reading a
// commit deep in a packed history costs about a fifth of a millisecond a
// path, most of a search's budget for a page of them.
func (r *Repo) KeepCitedBlobs(ctx context.Context, state BlobState, mems []memory.Memory) error {
	var specs []string
	for _, m := range mems {
		if !citesAtCommit(m) {
			continue
		}
		for _, p := range m.Paths {
			// Another path git may refuse ("../x" stops the whole batch)
			// or read relative to its directory: a search asks about it
			// as it always did.
			if citable(p) && plainPath(p) {
				specs = append(specs, m.Commit+":"+p)
			}
		}
	}
	if len(specs) == 0 {
		return nil
	}
	_, err := r.keptBlobs(ctx, state, specs, 0)
	return err
}

// citesAtCommit says whether m names paths at a commit that can be asked
// about.
func citesAtCommit(m memory.Memory) bool {
	return m.Commit != "" && len(m.Paths) > 0 && !strings.ContainsAny(m.Commit, " \n:")
}

// plainPath says whether p names a path from the top of the tree, with
// no "." or ".." in it.
func plainPath(p string) bool {
	for part := range strings.SplitSeq(p, "/") {
		if part == "" || part == "." || part == ".." {
			return false
		}
	}
	return true
}

// citable says whether a cited path can be asked about in a line of
// `git cat-file --batch-check`.
func citable(path string) bool { return !strings.ContainsAny(path, "\n") }

// keepInline bounds the memories one write keeps cited blobs for on its
// own path: a pull brings a few, at up to a fifth of a millisecond a
// path; a clone's thousands are left to the background fill
// (KeepCitedBlobs from `reindex --background`), which the vectors they
// lack start.
const keepInline = 64

// keepInlinePuts bounds the single memories (Put) keepingStore keeps
// cited blobs for on their own path in any second, each with a lookup
// and a transaction of its own, about a millisecond: a remember or an
// edit is one, a server's adds come seconds apart, and an import that
// patches the index a memory at a time (up to 256 of them) leaves the
// rest to the background fill.
const keepInlinePuts = 8

// putBudget counts the Puts keepingStore kept blobs for in the current
// second.
type putBudget struct {
	mu    sync.Mutex
	since time.Time
	n     int
}

// take says whether one more Put may keep its blobs now.
func (b *putBudget) take(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if now.Sub(b.since) >= time.Second {
		b.since, b.n = now, 0
	}
	b.n++
	return b.n <= keepInlinePuts
}

// keepingStore is the index a Checkout writes project memories through.
// A write that leaves memories citing files at a commit finds those
// files' blob ids then, off any search's path: a memory remembered here,
// or brought by a pull, costs its first search hashing its files
// (BenchmarkFirstLook, blobs kept) rather than reading history (cold).
// What keeping fails at, a search finds again.
type keepingStore struct {
	Store
	repo  *Repo
	state BlobState
	// left says a write brought more memories than keepInline, or a
	// second more Puts than keepInlinePuts, for the command to start the
	// background fill (Checkout.LeftBlobsToKeep).
	left *atomic.Bool
	puts *putBudget
}

// keepingWrites is store keeping cited blobs as it writes, when it can
// keep them; otherwise store.
func keepingWrites(repo *Repo, store Store) Store {
	state, ok := store.(BlobState)
	if !ok {
		return store
	}
	return keepingStore{Store: store, repo: repo, state: state, left: new(atomic.Bool), puts: new(putBudget)}
}

func (s keepingStore) Put(ctx context.Context, m memory.Memory) (memory.Added, error) {
	out, err := s.Store.Put(ctx, m)
	switch {
	case err != nil || out.Existing || !citesAtCommit(out.Memory):
	case !s.puts.take(time.Now()):
		s.left.Store(true)
	default:
		s.keep(ctx, []memory.Memory{out.Memory})
	}
	return out, err
}

func (s keepingStore) ReplaceScope(ctx context.Context, scope memory.Scope, key string, ms []memory.Memory) (memory.ReplaceStats, error) {
	st, err := s.Store.ReplaceScope(ctx, scope, key, ms)
	if err != nil || scope != memory.ScopeProject || len(st.Written) == 0 {
		return st, err
	}
	if len(st.Written) > keepInline {
		s.left.Store(true)
		return st, nil
	}
	written := make(map[string]bool, len(st.Written))
	for _, id := range st.Written {
		written[id] = true
	}
	var mems []memory.Memory
	for _, m := range ms {
		if written[m.ID] {
			mems = append(mems, m)
		}
	}
	s.keep(ctx, mems)
	return st, nil
}

func (s keepingStore) keep(ctx context.Context, mems []memory.Memory) {
	_ = s.repo.KeepCitedBlobs(ctx, s.state, mems)
}

// WaitWritable passes the import's wait for the index's write lock on
// (project's writableWaiter); a store without it is not waited for.
func (s keepingStore) WaitWritable(ctx context.Context, wait time.Duration) error {
	if ww, ok := s.Store.(interface {
		WaitWritable(context.Context, time.Duration) error
	}); ok {
		return ww.WaitWritable(ctx, wait)
	}
	return nil
}

// LeftBlobsToKeep says whether a write brought more memories than it
// keeps cited blobs for on its own path: the command that made it starts
// the background fill, which keeps them (KeepCitedBlobs), whatever the
// embedder.
func (w *Checkout) LeftBlobsToKeep() bool {
	s, ok := w.ws.Store.(keepingStore)
	return ok && s.left.Load()
}
