package cmd

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/acolyte-dev/acolyte/memory/sqlite"
)

// The layered embedder's model vectors (memory.Layered) are made in the
// background when a command leaves memories without them: a detached
// `acolyte reindex --background` takes them over, one at a time per
// database (sqlite.Store.FillInBackground), so the command that imported
// a clone's 10,000 memories returns at once, and search moves to the
// model's space when they are all done.

// envBackgroundFill set to 0 keeps commands from starting the background
// fill; tests that must not leave processes behind set it.
const envBackgroundFill = "ACOLYTE_BACKGROUND_FILL"

// metaStores is where openStore lists the stores a command opened, and
// metaWorkspaces where bindWorkspace lists the workspaces it bound, for
// startFill to ask when the command ends.
const (
	metaStores     = "acolyte.stores"
	metaWorkspaces = "acolyte.workspaces"
)

// note adds v to the command's list under key.
func note[T any](c *cli.Context, key string, v T) {
	if c.App.Metadata == nil {
		c.App.Metadata = map[string]any{}
	}
	list, _ := c.App.Metadata[key].([]T)
	c.App.Metadata[key] = append(list, v)
}

// startFill starts the background fill when a store the command opened
// met memories without their model vectors, or a workspace left cited
// blob ids to find (workspace.leftBlobsToKeep).
// A failure to start it costs only time: the next command tries again,
// and search meanwhile uses the instant vectors, and reads history for
// the blob ids.
func startFill(c *cli.Context) error {
	stores, _ := c.App.Metadata[metaStores].([]*sqlite.Store)
	pending := false
	for _, s := range stores {
		// A filler already running takes up what this command left.
		// A read-only home takes no vectors.
		pending = pending || (s.LeftPending() && !s.Filling() && s.ReadOnly() == "")
	}
	workspaces, _ := c.App.Metadata[metaWorkspaces].([]*workspace)
	for _, w := range workspaces {
		pending = pending || w.leftBlobsToKeep()
	}
	if !pending || os.Getenv(envBackgroundFill) == "0" {
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	dir, err := home(c)
	if err != nil {
		return nil
	}
	repo, err := filepath.Abs(global(c, flagRepo))
	if err != nil {
		return nil
	}
	args := []string{"reindex", "--background", "--" + flagHome, dir, "--" + flagRepo, repo}
	if name := global(c, flagEmbedder); name != "" {
		args = append(args, "--"+flagEmbedder, name)
	}
	cmd := exec.Command(exe, args...)
	detach(cmd)
	if cmd.Start() == nil {
		_ = cmd.Process.Release()
	}
	return nil
}

// runBackgroundFill is reindex --background: the cited blobs and the
// model vectors, at the lowest scheduling priority, so that it takes only
// the processor time the user's own work leaves idle, and silently, as
// nothing reads its output.
func runBackgroundFill(c *cli.Context, s *sqlite.Store) error {
	yieldProcessor()
	// The command that started it left memories to index in its
	// repository, which a search will check for staleness: their cited
	// blobs are found first, off its path, in seconds where the vectors
	// may take minutes.
	kept := keepCitedBlobs(c.Context, s, global(c, flagRepo))
	_, _, err := s.FillInBackground(c.Context, nil)
	return errors.Join(kept, err)
}

// fillPoll is how often a server looks for vectors to make after its
// first fill: a write it served may have left some.
const fillPoll = 5 * time.Second

// fillWhileServing makes the model vectors in the background of a
// long-running server (mcp, ui): at once, for what earlier commands left,
// then whenever a write or search met memories without them. stop ends
// it and waits, before the store closes.
func fillWhileServing(ctx context.Context, s *sqlite.Store) (stop func()) {
	if s.Instant() == nil || os.Getenv(envBackgroundFill) == "0" {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(fillPoll)
		defer tick.Stop()
		for first := true; ; first = false {
			if first || s.LeftPending() {
				// A failure (another process filling, a locked database) is
				// retried at the next tick that finds work.
				_, _, _ = s.FillInBackground(ctx, nil)
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}
