package gitsync

import (
	"context"
	"time"

	"github.com/acolyte-dev/acolyte/gitsync/internal/project"
	"github.com/acolyte-dev/acolyte/memory"
)

// A checkout's project memories, in either layout, are package project's:
// importing them into the index, writing them, syncing and checking them.
// These are the parts of it commands use.

// Store is the local index a Checkout keeps in step with the checkout's
// .acolyte/ files (project.Store).
type Store = project.Store

// Imported reports what an import changed.
type Imported = project.Imported

// Synced reports what Sync changed.
type Synced = project.Synced

// Report is what Check found; Problem one thing it found wrong, and Change
// one way the derived rules and seeds differ from the file.
type (
	Report  = project.Report
	Problem = project.Problem
	Change  = project.Change
)

// ShardRepair says what sync recovered of a shard it could not decode.
type ShardRepair = project.ShardRepair

// ErrShardUnrecoverable means a damaged shard could not be recovered.
var ErrShardUnrecoverable = project.ErrShardUnrecoverable

// Check reports, reading only the files under root, whether the project's
// memories are what sync would leave (project.Check).
func Check(root string) (Report, error) { return project.Check(root) }

// Diff lists how after differs from before, by id.
func Diff(before, after []memory.Memory) []Change { return project.Diff(before, after) }

// FormatDiff formats changes to file for a person to read.
func FormatDiff(file string, changes []Change) string { return project.FormatDiff(file, changes) }

// MarkHandEdits stamps the memories of file that differ from indexed, the
// index's version of them, as edited by hand at now.
func MarkHandEdits(file, indexed []memory.Memory, now time.Time) []memory.Memory {
	return project.MarkHandEdits(file, indexed, now)
}

// MemoriesLocation names where the project under root keeps its memories,
// relative to root, for messages.
func MemoriesLocation(root string) string { return project.MemoriesLocation(root) }

// Update applies change to the project memories under root and writes
// them, holding the .acolyte/ lock (project.Update).
func Update(ctx context.Context, root string, change func([]memory.Memory) ([]memory.Memory, error)) error {
	return project.Update(ctx, root, change)
}

// EnsureAttributes makes .acolyte/.gitattributes and .gitignore hold the
// lines the project's layout needs (project.EnsureAttributes).
func EnsureAttributes(root string) error { return project.EnsureAttributes(root) }
