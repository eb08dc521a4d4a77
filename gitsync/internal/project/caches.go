package project

import (
	"path/filepath"

	"github.com/acolyte-dev/acolyte/gitsync/internal/git"
)

// A checkout keeps caches so that a command can skip work: a hook that
// finds nothing changed answers in milliseconds at 100k memories. Every
// one of them is derived from the files in .acolyte/ and git's index, so
// deleting them all changes no result, only how long the next command
// takes (TestDroppingEveryCacheChangesNothing). They live in two places.
//
// In CacheDir ($GIT_DIR/acolyte/), private to the clone:
//   - imported.jsonl, with its note (.id) and journal (.journal): the one
//     file as the index holds it, which an import diffs against
//     (acolytedir/shadow.go, diffimport.go);
//   - imported/: the same for each shard (shards_import.go), but for a
//     shard that could not be decoded, whose shadow keeps its last good
//     import: the one source of its memories that sync repairs it from
//     (shards_repair.go) beside the damaged file and HEAD, so that there
//     deleting it can cost memories written since the last commit;
//   - import-state: a copy of the import state, from which QuickHook
//     answers a hook without opening the index (gitsync/quickhook.go);
//   - verified.json and verified-shards.json: the staged blobs the last
//     pre-commit hook checked, which the next one starts from
//     (precommit/onefile.go, precommit/shards_fast.go).
//
// In the index's bookkeeping, under StateKey: the import state, which
// holds the content hash last imported and, to trust the files without
// reading them, their settled stamps (git/stamp*.go), the writer's
// fingerprint (acolytedir/fingerprint.go) and each shard's record
// (acolytedir/splitfiles.go).
//
// The pending hand edits (handedits.go) are not a cache: they are the only
// record of an edit made by hand that a write has still to stamp. Nor is
// damaged/, where sync keeps each damaged shard's bytes before it
// rewrites the shard (shards_repair.go).

// CacheDir is where a clone's on-disk caches live.
func CacheDir(r *git.Repo) string { return filepath.Join(r.GitDir(), "acolyte") }
