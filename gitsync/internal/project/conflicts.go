package project

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/gitsync/internal/acolytedir"
	"github.com/acolyte-dev/acolyte/gitsync/internal/git"
	"github.com/acolyte-dev/acolyte/memory"
)

// A project's memories are one set across its files, while git merges file
// by file. Where the files of one side are not those of the other, as
// across the split, git conflicts in ways the merge driver never sees: a
// revert of the commit that split a project deletes every shard, and each
// shard changed since is a modify/delete conflict, left in the tree as it
// is with every memory the revert meant to take out. ResolveConflicts is
// sync's answer: it merges the project by id, from the project as each of
// the three commits git is merging holds it, and writes and stages the
// result.

// conflictSides are the commits a merge, revert, cherry-pick or rebase in
// progress merges: the change from base to theirs applied to ours (HEAD).
type conflictSides struct {
	what, base, theirs string
}

// inProgress names the operation git is in the middle of, by the head
// file it keeps in the git directory, and the commit that file names; ""
// when there is none. It costs a read of each of the four.
func inProgress(r *git.Repo) (what, commit string) {
	gitDir := r.GitDir()
	for _, op := range []struct{ what, head string }{
		{"revert", "REVERT_HEAD"}, {"cherry-pick", "CHERRY_PICK_HEAD"}, {"merge", "MERGE_HEAD"}, {"rebase", "REBASE_HEAD"},
	} {
		if b, err := os.ReadFile(filepath.Join(gitDir, op.head)); err == nil {
			first, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n") // an octopus merge: its first
			if first != "" {
				return op.what, first
			}
		}
	}
	return "", ""
}

// sidesInProgress is the commits the operation git is in the middle of
// merges; ok is false when there is none.
func sidesInProgress(ctx context.Context, r *git.Repo) (sides conflictSides, ok bool, err error) {
	what, c := inProgress(r)
	switch what {
	case "":
		return sides, false, nil
	case "revert":
		return conflictSides{what: what, base: c, theirs: c + "^"}, true, nil
	case "merge":
		out, err := r.GitOutput(ctx, nil, "merge-base", "HEAD", c)
		if err != nil {
			return sides, false, err
		}
		return conflictSides{what: what, base: strings.TrimSpace(string(out)), theirs: c}, true, nil
	default: // a cherry-pick, or a rebase applying c
		return conflictSides{what: what, base: c + "^", theirs: c}, true, nil
	}
}

// unmergedMemories lists the files of project memory (the one file and the
// shards) git left unmerged in the index.
func unmergedMemories(ctx context.Context, r *git.Repo) ([]string, error) {
	out, err := r.GitOutput(ctx, nil, "ls-files", "-u", "-z", "--", acolytedir.MemoriesRel, acolytedir.ShardsRel)
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, entry := range strings.Split(string(out), "\x00") {
		if _, path, ok := strings.Cut(entry, "\t"); ok && (len(paths) == 0 || paths[len(paths)-1] != path) {
			paths = append(paths, path)
		}
	}
	return paths, nil
}

// projectAt reads the project's memories as commit holds them, in either
// layout, held to the limits a worktree's files are.
func projectAt(ctx context.Context, r *git.Repo, commit string) ([]memory.Memory, error) {
	out, err := r.GitOutput(ctx, nil, "ls-tree", "-r", "-z", "-l", commit, "--", acolytedir.MemoriesRel, acolytedir.ShardsRel)
	if err != nil {
		return nil, err
	}
	var files []acolytedir.ProjectFile
	var blobs []string
	var total int64
	for _, entry := range strings.Split(string(out), "\x00") {
		meta, path, ok := strings.Cut(entry, "\t")
		fields := strings.Fields(meta)
		if !ok || len(fields) != 4 || fields[1] != "blob" {
			continue
		}
		rel := strings.TrimPrefix(path, format.Dir+"/")
		if _, shard := format.ParseShardFile(rel); rel != format.MemoriesFile && !(shard && strings.HasPrefix(rel, format.ShardsDir+"/")) {
			continue
		}
		size, _ := strconv.ParseInt(fields[3], 10, 64)
		if strings.HasPrefix(rel, format.ShardsDir+"/") && size > format.MaxShardBytes {
			return nil, fmt.Errorf("%s at %s: %w", path, commit, acolytedir.TooLarge(path, format.MaxShardBytes))
		}
		if total += size; total > format.MaxFileBytes {
			return nil, fmt.Errorf("the project at %s: %w", commit, acolytedir.TooLarge(acolytedir.ShardsRel, format.MaxFileBytes))
		}
		files = append(files, acolytedir.ProjectFile{Rel: rel})
		blobs = append(blobs, fields[2])
	}
	if len(blobs) == 0 {
		return nil, nil
	}
	batch, err := r.GitOutput(ctx, []byte(strings.Join(blobs, "\n")+"\n"), "cat-file", "--batch")
	if err != nil {
		return nil, err
	}
	for i := range files {
		// "<oid> blob <size>\n<content>\n"
		header, rest, _ := strings.Cut(string(batch), "\n")
		fields := strings.Fields(header)
		size := -1
		if len(fields) == 3 {
			size, _ = strconv.Atoi(fields[2])
		}
		if size < 0 || size > len(rest) {
			return nil, fmt.Errorf("git cat-file %s: %s", blobs[i], header)
		}
		files[i].Data = []byte(rest[:size])
		if bytes.Count(files[i].Data, []byte("\n")) > acolytedir.MaxFileLines {
			return nil, acolytedir.TooManyLines(format.Dir+"/"+files[i].Rel+" at "+commit, int64(size))
		}
		batch = batch[len(header)+1+size+1:]
	}
	parts, errs := acolytedir.DecodeFiles(files)
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("the project at %s: %w", commit, err)
	}
	return format.Join(parts).Memories, nil
}

// ResolveConflicts merges the project's memories by id when git left any
// file of them unmerged in a merge, revert, cherry-pick or rebase: from
// the project at the base, HEAD and the other side, as the merge driver
// merges one file, and with every memory the files hold that none of the
// three commits does (one remembered in the middle of the operation); an
// edit made in the middle of it is not kept. The result is written in one
// file, or in shards past format.SplitAt, replacing whatever git left, and
// staged with acolyte's .gitattributes and .gitignore, so that the
// operation can go on (`git revert --continue`). It reports what it did,
// or "" when nothing was unmerged; the caller holds the lock.
func (w *Workspace) ResolveConflicts(ctx context.Context) (string, error) {
	if what, _ := inProgress(w.Repo); what == "" {
		// git leaves a path unmerged only within an operation; a sync
		// outside one pays four failed opens, not a git process.
		return "", nil
	}
	unmerged, err := unmergedMemories(ctx, w.Repo)
	if err != nil || len(unmerged) == 0 {
		return "", err
	}
	sides, ok, err := sidesInProgress(ctx, w.Repo)
	if err != nil || !ok {
		return "", err
	}
	var sets [3][]byte
	known := make(map[string]bool)
	for i, commit := range []string{sides.base, "HEAD", sides.theirs} {
		mems, err := projectAt(ctx, w.Repo, commit)
		if err != nil {
			return "", fmt.Errorf("merging the project's memories for the %s: %w", sides.what, err)
		}
		sets[i] = format.Encode(mems)
		for _, m := range mems {
			known[m.ID] = true
		}
	}
	merged, _, err := format.Merge(sets[0], sets[1], sets[2])
	if err != nil {
		return "", fmt.Errorf("merging the project's memories for the %s: %w", sides.what, err)
	}
	mems, err := format.Decode(acolytedir.MemoriesRel, merged)
	if err != nil {
		return "", err
	}
	// A memory written in the middle of the operation is in the files
	// but in none of the commits: it is kept.
	for _, m := range memoriesInWorktree(w.Repo.Root) {
		if !known[m.ID] {
			mems = append(mems, m)
		}
	}
	slices.SortFunc(mems, func(a, b memory.Memory) int { return strings.Compare(a.ID, b.ID) })
	merged = format.Encode(mems)
	shardDir := filepath.Join(w.Repo.Root, filepath.FromSlash(acolytedir.ShardsRel))
	if err := os.RemoveAll(shardDir); err != nil {
		return "", fmt.Errorf("removing %s to write the merged memories: %w", acolytedir.ShardsRel, err)
	}
	layout := acolytedir.MemoriesRel
	if len(mems) > format.SplitAt {
		if err := acolytedir.WriteAtomic(format.MemoriesPath(w.Repo.Root), format.Encode(nil)); err != nil {
			return "", err
		}
		if _, err := writeSplitFiles(w.Repo.Root, acolytedir.SplitProject{}, nil, mems); err != nil {
			return "", err
		}
		layout = acolytedir.ShardsRel + "/"
	} else if err := acolytedir.WriteAtomic(format.MemoriesPath(w.Repo.Root), merged); err != nil {
		return "", err
	}
	// acolyte's own .gitattributes and .gitignore, as the layout needs
	// them, go with the files they describe.
	if err := EnsureAttributes(w.Repo.Root); err != nil {
		return "", err
	}
	if err := w.Repo.Git(ctx, "add", "-A", "--", acolytedir.MemoriesRel, acolytedir.ShardsRel, format.Dir+"/"+acolytedir.AttributesFile, format.Dir+"/"+acolytedir.IgnoreFile); err != nil {
		return "", err
	}
	if _, err := os.Stat(shardDir); errors.Is(err, fs.ErrNotExist) {
		// git add -A stages the shards' removal; a directory left empty
		// would make the project look split.
		_ = os.Remove(shardDir)
	}
	return fmt.Sprintf("merged the project's memories by id for the %s (%d unmerged files), wrote %d memories in %s and staged them; continue the %s with git",
		sides.what, len(unmerged), len(mems), layout, sides.what), nil
}

// UnmergedWarning says, while git is in the middle of an operation that
// left a file of project memory unmerged, that what the index shows may
// not be what the operation makes of it, and what fixes it; "" otherwise.
// Outside such an operation it costs a read of each of git's heads; in
// one, a `git ls-files`.
func UnmergedWarning(ctx context.Context, r *git.Repo) string {
	what, _ := inProgress(r)
	if what == "" {
		return ""
	}
	unmerged, err := unmergedMemories(ctx, r)
	if err != nil || len(unmerged) == 0 {
		return ""
	}
	return fmt.Sprintf("the %s in progress left %d files of project memory unmerged (%s): the memories shown are the files as git left them, "+
		"which may still hold what the %s takes out; run `%s` to merge them by id and stage them", what, len(unmerged), strings.Join(unmerged, ", "), what, acolytedir.FixCommand)
}

// memoriesInWorktree is every memory the files of project memory in the
// worktree hold that can be read, as git left them in the middle of an
// operation: a file that cannot be read (conflict markers) gives none.
func memoriesInWorktree(root string) []memory.Memory {
	r, err := acolytedir.OpenGuarded(root)
	if err != nil {
		return nil
	}
	defer r.Close()
	rels := []string{format.MemoriesFile}
	if shards, _, err := acolytedir.ShardFiles(root); err == nil {
		rels = append(rels, shards...)
	}
	var files []acolytedir.ProjectFile
	for _, rel := range rels {
		if data, err := acolytedir.ReadAcolyteFileIn(r, rel); err == nil {
			files = append(files, acolytedir.ProjectFile{Rel: rel, Data: data})
		}
	}
	parts, errs := acolytedir.DecodeFiles(files)
	var readable []format.Part
	for i, p := range parts {
		if errs[i] == nil {
			readable = append(readable, p)
		}
	}
	return format.Join(readable).Memories
}
