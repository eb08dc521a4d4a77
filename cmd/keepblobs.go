package cmd

import (
	"context"
	"errors"

	"github.com/acolyte-dev/acolyte/gitsync"
	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/sqlite"
)

// keepCitedBlobs finds, off any search's path, which blob each project
// memory's cited paths named at its commit (gitsync.KeepCitedBlobs), so
// that a search's first look at a memory costs hashing its files rather
// than reading the repository's history. The background fill runs it in
// the repository the command ran in, and servers beside their serving;
// outside a repository there is nothing to find.
func keepCitedBlobs(ctx context.Context, s *sqlite.Store, dir string) error {
	repo, err := gitsync.Discover(dir)
	if errors.Is(err, gitsync.ErrNotRepo) {
		return nil
	}
	if err != nil {
		return err
	}
	mems, err := s.List(ctx, memory.Visibility{ProjectKey: repo.Root}, memory.Filter{Scope: memory.ScopeProject})
	if err != nil {
		return err
	}
	return repo.KeepCitedBlobs(ctx, s, mems)
}

// keepCitedWhileServing runs keepCitedBlobs once beside a server; stop
// ends it and waits, before the store closes.
func keepCitedWhileServing(ctx context.Context, w *workspace) (stop func()) {
	if w.Repo == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		// A failure costs only time: a search finds what is not kept.
		_ = keepCitedBlobs(ctx, w.Store, w.Repo.Root)
	}()
	return func() {
		cancel()
		<-done
	}
}
