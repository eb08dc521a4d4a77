package gitsync

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/gitsync/internal/git"
	"github.com/acolyte-dev/acolyte/internal/atomicfile"
	"github.com/acolyte-dev/acolyte/memory"
)

// The split layout (format.SplitAt) as the workspace reads and writes it.
// A split project is one whose .acolyte/memories/ directory exists; its
// memories are the inbox's and every shard's, read as one set
// (format.Join). A write puts each memory in its shard and empties the
// inbox after the shards are written, so a crash between the two leaves
// lines in both, which Join resolves and the next write finishes.
//
// The import state of a split project records each file's stamp and
// content hash (splitState): a command stats the files, re-hashes only
// those whose stamp moved (a shard is about 90 KB at 100k memories), and
// imports only when a content hash differs.

// shardsRel is the shards' directory, relative to the worktree root.
const shardsRel = format.Dir + "/" + format.ShardsDir

// isSplit reports whether the project under root is split.
func isSplit(root string) (bool, error) {
	fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(shardsRel)))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("checking %s: %w", shardsRel, err)
	}
	if !fi.IsDir() && fi.Mode()&fs.ModeSymlink == 0 {
		return false, fmt.Errorf("%s is a file, where acolyte keeps a directory of memory shards; move it away and run `%s`", shardsRel, FixCommand)
	}
	return true, nil
}

// shardFiles lists the shards under root by their path under .acolyte/, in
// name order. A name that is not a shard's (an editor's backup, a killed
// writer's temporary file) is not read; check reports it.
func shardFiles(root string) (shards, strays []string, err error) {
	entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(shardsRel)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("listing %s: %w", shardsRel, err)
	}
	for _, e := range entries {
		_, ok := format.ParseShardFile(e.Name())
		switch t := e.Type(); {
		case ok && t.IsRegular():
			shards = append(shards, format.ShardsDir+"/"+e.Name())
		case ok && t&fs.ModeSymlink == 0 && !t.IsDir():
			// A FIFO, socket or device under a shard's name: skipped, its
			// memories would vanish from the index; read, it would hang.
			return nil, nil, notRegular(shardsRel+"/"+e.Name(), t)
		default:
			strays = append(strays, format.ShardsDir+"/"+e.Name())
		}
	}
	return shards, strays, nil
}

// projectFile is one memories file of a project as read: its path under
// .acolyte/ and its bytes (nil when it is missing).
type projectFile struct {
	rel  string
	data []byte
}

// splitProject is a split project as read for an import or a write: the
// inbox first, then each shard in name order, and forgotten.jsonl.
type splitProject struct {
	files []projectFile
	tombs tombstones
	// hashes memoizes sums.
	hashes map[string]string
}

// readSplit reads a split project through readAcolyteFile, each file
// guarded and bounded as the one file is.
func readSplit(root string) (splitProject, error) {
	var p splitProject
	r, err := openGuarded(root)
	if err != nil {
		return p, err
	}
	defer r.Close()
	shards, _, err := shardFiles(root)
	if err != nil {
		return p, err
	}
	rels := append([]string{format.MemoriesFile}, shards...)
	if err := checkSplitSize(r, rels); err != nil {
		return p, err
	}
	for _, rel := range rels {
		data, err := readAcolyteFileIn(r, rel)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return p, err
		}
		p.files = append(p.files, projectFile{rel: rel, data: data})
	}
	if p.tombs, err = readTombstones(root); err != nil {
		return p, err
	}
	return p, nil
}

// decode decodes every file and joins them (format.Join). It fails as
// DecodeAll does, on the first file that cannot be read as a whole: a
// write must not drop what it cannot read.
func (p splitProject) decode() (format.Decoded, []format.Part, error) {
	parts, errs := decodeFiles(p.files)
	for _, err := range errs {
		if err != nil {
			return format.Decoded{}, nil, err
		}
	}
	return format.Join(parts), parts, nil
}

// decodeReadable is decode for an import: a file that cannot be read as a
// whole (a conflict, a missing header, binary garbage) is left out alone,
// and unreadable says which and why, so that one damaged shard hides its
// own memories and no others. Writes still refuse such a project. good
// is the files that decoded, whose shadows may be kept.
func (p splitProject) decodeReadable() (d format.Decoded, unreadable []string, good []projectFile, err error) {
	parts, errs := decodeFiles(p.files)
	readable := parts[:0:0]
	for i, err := range errs {
		if err != nil {
			unreadable = append(unreadable, fmt.Sprintf("%v; its memories are left out of search until it is fixed (`%s` repairs what it can)", err, FixCommand))
			continue
		}
		readable = append(readable, parts[i])
		good = append(good, p.files[i])
	}
	return format.Join(readable), unreadable, good, nil
}

// emptiedShard is the error of a shard with no bytes at all. acolyte
// writes a shard only while it holds a memory, and always with its header,
// so an empty one was truncated (`: > file`, a failed copy), and reading
// it as no memories would forget them without a word.
func emptiedShard(rel string) error {
	path := format.Dir + "/" + rel
	return fmt.Errorf("%s: %w: the shard is empty, where acolyte always writes a header and at least one memory; restore it (`git checkout -- %s`, or from a backup)", path, format.ErrInvalidFile, path)
}

// decodeFiles decodes each file (DecodeAll), on every CPU: a shard is too
// small for DecodeAll to spread over them itself. errs holds, by file, why
// one cannot be read as a whole.
func decodeFiles(files []projectFile) (parts []format.Part, errs []error) {
	parts = make([]format.Part, len(files))
	errs = make([]error, len(files))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(files)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(files); i = int(next.Add(1) - 1) {
				f := files[i]
				parts[i].File = f.rel
				if f.data != nil && len(f.data) == 0 && f.rel != format.MemoriesFile {
					errs[i] = emptiedShard(f.rel)
					continue
				}
				parts[i].Decoded, errs[i] = format.DecodeAll(format.Dir+"/"+f.rel, f.data)
			}
		})
	}
	wg.Wait()
	return parts, errs
}

// hash is the project's content hash as an import state records it: of
// each file's name and content hash, and forgotten.jsonl's.
func (p *splitProject) hash() string {
	files := make(map[string]fileRecord, len(p.files)+1)
	for rel, sum := range p.sums() {
		if rel != format.ForgottenFile || len(p.tombs.data) > 0 {
			files[rel] = fileRecord{hash: sum}
		}
	}
	return tableHash(files)
}

// sums is the content hash of each file p holds, forgotten.jsonl's
// included, worked out once (22 MB at 100k memories).
func (p *splitProject) sums() map[string]string {
	if p.hashes == nil {
		p.hashes = make(map[string]string, len(p.files)+1)
		for _, f := range p.files {
			if f.data != nil {
				p.hashes[f.rel] = sha256Hex(f.data)
			}
		}
		p.hashes[format.ForgottenFile] = sha256Hex(p.tombs.data)
	}
	return p.hashes
}

// encodeSplit is the files a split project of mems is written as: every
// shard that holds a memory, and the inbox as its header, each keeping the
// lines it held that are not valid memories (which have no id to place
// them by). A shard left with nothing is absent, its data nil.
func encodeSplit(mems []memory.Memory, parts []format.Part) []projectFile {
	keep := make(map[string][]string)
	for _, p := range parts {
		keep[p.File] = p.Decoded.InvalidLines
	}
	byShard := format.Shard(mems)
	names := []string{}
	for s := range byShard {
		names = append(names, format.ShardFile(s))
	}
	for _, p := range parts {
		if p.File != format.MemoriesFile {
			names = append(names, p.File)
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	out := []projectFile{{rel: format.MemoriesFile, data: format.EncodeKeeping(nil, keep[format.MemoriesFile])}}
	for _, rel := range names {
		shard, _ := format.ParseShardFile(rel)
		f := projectFile{rel: rel}
		if group := byShard[shard]; len(group) > 0 || len(keep[rel]) > 0 {
			f.data = format.EncodeKeeping(group, keep[rel])
		}
		out = append(out, f)
	}
	return out
}

// writeSplit writes the files of next that differ from the project as
// read: shards first, then the inbox, and removes shards left empty. Every
// memory is checked as the decoder will read it back, and one that would
// not be is refused, by id, before anything is written.
func writeSplit(root string, read splitProject, next []projectFile) error {
	// Only shards are written in the shards' directory, each under the
	// lock the caller holds, so a temporary file there is a killed
	// writer's. Not every command looks, as for the rest of .acolyte/
	// (RemoveStaleTemps): listing 256 shards is a fifth of a no-op hook.
	atomicfile.RemoveStale(filepath.Join(root, filepath.FromSlash(shardsRel)), 0)
	have := make(map[string][]byte, len(read.files))
	for _, f := range read.files {
		have[f.rel] = f.data
	}
	// The inbox goes last: until it is written its lines are also in the
	// shards, which a reader resolves.
	ordered := append(slices.Clone(next[1:]), next[0])
	for _, f := range ordered {
		path := filepath.Join(root, format.Dir, filepath.FromSlash(f.rel))
		old := have[f.rel]
		switch {
		case f.data == nil && old != nil:
			if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("removing the empty shard %s/%s: %w", format.Dir, f.rel, err)
			}
		case f.data != nil && !bytes.Equal(old, f.data):
			if err := writeAtomic(path, f.data); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeSplitFiles writes next as a split project over p, whose files were
// read into parts, and returns the files it is now: the shards' directory
// and its union fallback are made first (a project splitting for the first
// time), and nothing is written when a memory would not read back.
func writeSplitFiles(root string, p splitProject, parts []format.Part, next []memory.Memory) ([]projectFile, error) {
	if err := format.CheckMemories(next, shardsRel); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(root, filepath.FromSlash(shardsRel)), 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", shardsRel, err)
	}
	if err := EnsureAttributes(root); err != nil {
		return nil, err
	}
	files := encodeSplit(next, parts)
	return files, writeSplit(root, p, files)
}

// fileRecord is what a split project's import state holds of one file:
// its stamp, once settled (empty before), and its content hash.
type fileRecord struct {
	stamp, hash string
}

// filesPrefix marks the split project's file table in the import state's
// first line.
const filesPrefix = "files="

// withFiles adds the file table to an import state's first line.
func withFiles(state string, files map[string]fileRecord) string {
	names := make([]string, 0, len(files))
	for rel := range files {
		names = append(names, rel)
	}
	slices.Sort(names)
	var b strings.Builder
	b.WriteString(filesPrefix)
	for i, rel := range names {
		if i > 0 {
			b.WriteByte(';')
		}
		r := files[rel]
		b.WriteString(rel + "," + r.stamp + "," + r.hash)
	}
	head, rest, hasWarnings := strings.Cut(state, "\n")
	head += stampSep + b.String()
	if hasWarnings {
		return head + "\n" + rest
	}
	return head
}

// stateFiles is the file table an import state holds; ok is false for the
// state of a project that is not split.
func stateFiles(state string) (map[string]fileRecord, bool) {
	head, _, _ := strings.Cut(state, "\n")
	for _, f := range strings.Split(head, stampSep)[1:] {
		table, ok := strings.CutPrefix(f, filesPrefix)
		if !ok {
			continue
		}
		files := make(map[string]fileRecord)
		for _, entry := range strings.Split(table, ";") {
			fields := strings.Split(entry, ",")
			if len(fields) != 3 {
				return nil, false
			}
			files[fields[0]] = fileRecord{stamp: fields[1], hash: fields[2]}
		}
		return files, true
	}
	return nil, false
}

// projectFiles are the files a split project's import state covers, by
// path under .acolyte/: the inbox, forgotten.jsonl and the shards.
func projectFiles(root string) ([]string, error) {
	shards, _, err := shardFiles(root)
	if err != nil {
		return nil, err
	}
	return append([]string{format.MemoriesFile, format.ForgottenFile}, shards...), nil
}

// filesHold reports whether the files under root are still those the
// table describes: each by its stamp while that is recorded and unmoved,
// else by its content hash, so a file written within its clock tick (whose
// stamp was not yet settled) costs a re-read of that file alone.
func filesHold(root string, files map[string]fileRecord) bool {
	holds, _ := checkFiles(root, files, -1)
	return holds
}

// checkFiles is filesHold that also, given settle >= 0, records in files
// the stamp of each file that holds by its hash and has settled since,
// and says whether it recorded any: the next check of that file is a stat.
func checkFiles(root string, files map[string]fileRecord, settle time.Duration) (holds, restamped bool) {
	rels, listed, err := listedFiles(root, files, settle)
	if err != nil {
		return false, false
	}
	holds, seen, restamped := checkRels(root, files, rels, settle)
	if _, ok := files[shardsDirKey]; ok {
		seen++
	}
	return holds && seen == len(files), restamped || listed
}

// shardsDirKey records, in a split project's file table, the stamp of the
// shards' directory: while it holds, the directory has the shards the
// table names, and a check needs no listing of it (a fifth of a no-op
// hook). Creating, removing or renaming a file in it moves its stamp.
const shardsDirKey = format.ShardsDir + "/"

// listedFiles is projectFiles, taken from the table when the shards'
// directory's stamp says it still holds the shards the table names.
// listed reports that the directory was listed and its settled stamp
// recorded in files, for the caller to keep.
func listedFiles(root string, files map[string]fileRecord, settle time.Duration) (rels []string, listed bool, err error) {
	dir := filepath.Join(root, filepath.FromSlash(shardsRel))
	fi, statErr := os.Stat(dir)
	if rec, ok := files[shardsDirKey]; ok && statErr == nil && rec.stamp != "" && rec.stamp == git.Stamp(fi) {
		rels = []string{format.MemoriesFile, format.ForgottenFile}
		for rel := range files {
			if strings.HasPrefix(rel, format.ShardsDir+"/") && rel != shardsDirKey {
				rels = append(rels, rel)
			}
		}
		return rels, false, nil
	}
	if rels, err = projectFiles(root); err != nil {
		return nil, false, err
	}
	if statErr == nil && settle >= 0 {
		if st := settledStamp(dir, fi, nil, shardSettle(fi, settle)); st != "" {
			files[shardsDirKey] = fileRecord{stamp: st}
			return rels, true, nil
		}
	}
	return rels, false, nil
}

// checkRels is checkFiles for the files rels alone (paths under .acolyte/),
// which may include files the table does not record but that do not
// exist; seen counts those recorded.
func checkRels(root string, files map[string]fileRecord, rels []string, settle time.Duration) (holds bool, seen int, restamped bool) {
	var r *os.Root // opened for the first file whose stamp moved
	defer func() {
		if r != nil {
			r.Close()
		}
	}()
	var shardNames []string
	for _, rel := range rels {
		if name, ok := strings.CutPrefix(rel, format.ShardsDir+"/"); ok {
			shardNames = append(shardNames, name)
		}
	}
	shardStamps, fast := git.StampsAt(filepath.Join(root, filepath.FromSlash(shardsRel)), shardNames)
	for _, rel := range rels {
		path := filepath.Join(root, format.Dir, filepath.FromSlash(rel))
		rec, recorded := files[rel]
		var now string
		var err error
		if name, isShard := strings.CutPrefix(rel, format.ShardsDir+"/"); isShard && fast {
			var ok bool
			if now, ok = shardStamps[name]; !ok {
				err = fs.ErrNotExist
			}
		} else {
			var fi os.FileInfo
			if fi, err = os.Stat(path); err == nil {
				now = git.Stamp(fi)
			}
		}
		if errors.Is(err, fs.ErrNotExist) && !recorded {
			continue
		}
		if err != nil || !recorded {
			return false, seen, false
		}
		seen++
		if rec.stamp != "" && rec.stamp == now {
			continue
		}
		if r == nil {
			if r, err = openGuarded(root); err != nil {
				return false, seen, false
			}
		}
		data, err := readAcolyteFileIn(r, rel)
		if err != nil || sha256Hex(data) != rec.hash {
			return false, seen, false
		}
		if fi, err := os.Stat(path); err == nil && settle >= 0 {
			if s := settledStamp(path, fi, nil, shardSettle(fi, settle)); s != "" {
				rec.stamp = s
				files[rel] = rec
				restamped = true
			}
		}
	}
	return true, seen, restamped
}

// recordFiles is the file table for the project's files as they are now,
// given the content hashes of those a caller holds (written or read under
// the lock); any other file is read to hash it. A stamp is recorded only once
// settled (settledStamp), and stat'ed before the hash it vouches for.
func recordFiles(root string, known map[string]string, settle time.Duration) (map[string]fileRecord, error) {
	rels, err := projectFiles(root)
	if err != nil {
		return nil, err
	}
	files := make(map[string]fileRecord, len(rels))
	var r *os.Root // opened for the first file the caller does not hold
	defer func() {
		if r != nil {
			r.Close()
		}
	}()
	for _, rel := range rels {
		path := filepath.Join(root, format.Dir, filepath.FromSlash(rel))
		before, statErr := os.Stat(path)
		if errors.Is(statErr, fs.ErrNotExist) {
			continue
		}
		sum, ok := known[rel]
		if !ok {
			if r == nil {
				if r, err = openGuarded(root); err != nil {
					return nil, err
				}
			}
			data, err := readAcolyteFileIn(r, rel)
			if err != nil {
				return nil, err
			}
			sum = sha256Hex(data)
		}
		var st string
		if statErr == nil {
			st = settledStamp(path, before, statErr, shardSettle(before, settle))
		}
		files[rel] = fileRecord{stamp: st, hash: sum}
	}
	return files, nil
}

// shardsMergeAttribute routes the shards to the acolyte merge driver, as
// mergeAttribute routes the one file: each shard merges by id as the file
// does.
const shardsMergeAttribute = "/" + shardsRel + "/*.jsonl merge=" + MergeDriverName

// shardsUnionAttribute is the shards' line in .acolyte/.gitattributes, the
// union fallback of a clone without acolyte's driver.
const shardsUnionAttribute = format.ShardsDir + "/*.jsonl merge=union"

// routeShards gives the shards the merge driver in a repository whose
// memories file has it, for a driver installed before the project split.
func (r *Repo) routeShards() error {
	attrs, err := os.ReadFile(r.infoAttributes())
	if err != nil || !slices.Contains(strings.Split(string(attrs), "\n"), mergeAttribute) {
		return nil
	}
	return ensureLines(r.infoAttributes(), shardsMergeAttribute)
}

// rewrite is change for a split project: every file read and joined,
// edited as one set, and only the files whose bytes differ written.
func (s shards) rewrite(ctx context.Context, w *Checkout, edit func([]memory.Memory) ([]memory.Memory, error)) (memory.ReplaceStats, error) {
	p, err := readSplit(w.Repo.Root)
	if err != nil {
		return memory.ReplaceStats{}, err
	}
	if len(p.tombs.warnings) > 0 {
		return memory.ReplaceStats{}, fmt.Errorf("%w: %s", format.ErrInvalidFile, p.tombs.warnings[0])
	}
	d, parts, err := p.decode()
	if err != nil {
		return memory.ReplaceStats{}, err
	}
	w.warn(d.Warnings())
	d.Memories, _ = format.Forget(d.Memories, p.tombs.list)
	hash := p.hash()
	last, err := w.store.GetState(ctx, w.stateKey())
	if err != nil {
		return memory.ReplaceStats{}, err
	}
	lastHash, _, warnings := parseImportState(last)
	exact := lastHash == hash && len(warnings) == 0 && len(d.InvalidLines) == 0 && len(d.Duplicates) == 0
	return s.editSplit(ctx, w, p, parts, d.Memories, hash, exact, edit)
}

// editSplit runs edit over mems, the project's memories as read into p and
// parts (hash is p's content hash; exact says the index holds exactly
// mems), writes the result split and brings the index to it. A project
// that is not yet split comes here from change once it would hold more
// than format.SplitAt memories, with p holding no file: every shard is
// written, then the inbox is left as its header.
func (s shards) editSplit(ctx context.Context, w *Checkout, p splitProject, parts []format.Part, mems []memory.Memory, hash string, exact bool,
	edit func([]memory.Memory) ([]memory.Memory, error)) (memory.ReplaceStats, error) {
	var stats memory.ReplaceStats
	pending, err := w.handEditsToStamp(ctx, mems, hash)
	if err != nil {
		return stats, err
	}
	indexed := slices.Clone(mems)
	next, err := edit(mems)
	if err != nil {
		return stats, err
	}
	next = stampHandEdits(next, pending, time.Now())
	if err := s.writeSplitIndexed(ctx, w, p, parts, indexed, next, exact, &stats); err != nil {
		return stats, err
	}
	if len(pending) > 0 {
		return stats, w.setPendingHandEdits(ctx, nil)
	}
	return stats, nil
}

// writeSplitIndexed writes next as a split project over p, brings the
// index from indexed to it, and records the files in the import state.
func (s shards) writeSplitIndexed(ctx context.Context, w *Checkout, p splitProject, parts []format.Part, indexed, next []memory.Memory, exact bool, stats *memory.ReplaceStats) error {
	if err := w.Repo.routeShards(); err != nil {
		return err
	}
	files, err := writeSplitFiles(w.Repo.Root, p, parts, next)
	if err != nil {
		return err
	}
	defer s.keepShardShadows(w, files)
	done, err := w.indexWritten(ctx, shardsRel, func() (err error) {
		*stats, err = w.indexChanges(ctx, exact, indexed, next)
		return err
	})
	if !done {
		return err
	}
	// edit may have added tombstones (a forget).
	ts, err := readTombstones(w.Repo.Root)
	if err != nil {
		return err
	}
	written := splitProject{files: files, tombs: ts}
	var warnings []string
	for _, f := range files {
		if !slices.ContainsFunc(parts, func(pt format.Part) bool { return pt.File == f.rel && len(pt.Decoded.InvalidLines) > 0 }) {
			continue
		}
		// Recorded like an import's warnings: every command goes on naming
		// the kept lines, at their new place.
		kept, _ := format.DecodeAll(format.Dir+"/"+f.rel, f.data)
		warnings = append(warnings, kept.Warnings()...)
	}
	return s.recordSplit(ctx, w, &written, warnings)
}

// recordSplit records p, as now on disk, in the import state: its content
// hash, the warnings its import gave, and each file's stamp and hash.
func (s shards) recordSplit(ctx context.Context, w *Checkout, p *splitProject, warnings []string) error {
	files, err := recordFiles(w.Repo.Root, p.sums(), w.settle)
	if err != nil {
		return err
	}
	return w.store.SetState(ctx, w.stateKey(), withFiles(importState(p.hash(), "", warnings), files))
}

// importSplit makes the index equal to a split project, under the lock.
// A project that cannot be read as a whole (conflict markers, a newer
// format) leaves the last import searchable and says why.
func (s shards) importSplit(ctx context.Context, w *Checkout) (Imported, error) {
	var out Imported
	err := w.locked(ctx, func() error {
		last, err := w.store.GetState(ctx, w.stateKey())
		if err != nil {
			return err
		}
		if files, ok := stateFiles(last); ok {
			var done bool
			if out, done, err = s.importShards(ctx, w, last, files); done || err != nil {
				return err
			}
		}
		p, err := readSplit(w.Repo.Root)
		if err != nil {
			out = Imported{Skipped: true, Warnings: []string{fmt.Sprintf("project memories not re-imported, searching the last import: %v", err)}}
			return nil
		}
		hash := p.hash()
		if lastHash, _, lastWarnings := parseImportState(last); lastHash == hash {
			// Touched, not changed: only the stamps are new.
			out = Imported{Skipped: true, Warnings: lastWarnings}
			return s.recordSplit(ctx, w, &p, lastWarnings)
		}
		d, unreadable, good, err := p.decodeReadable()
		if err != nil {
			out = Imported{Skipped: true, Warnings: []string{fmt.Sprintf("project memories not re-imported, searching the last import: %v", err)}}
			return nil
		}
		// The shadows are written while the index takes the rows, as the
		// one file's is (importDecoded). A shard that cannot be decoded
		// keeps the shadow of its last good import, which is what sync
		// repairs it from (repairShards).
		var shadowed sync.WaitGroup
		shadowed.Go(func() { s.keepShardShadows(w, good) })
		defer shadowed.Wait()
		if out, err = w.importDecoded(ctx, d, p.tombs, hash, nil); err != nil {
			return err
		}
		// Recorded like every warning of an import, so that each command
		// names the damaged files until they are fixed, and the next
		// change imports whole.
		out.Warnings = append(unreadable, out.Warnings...)
		return s.recordSplit(ctx, w, &p, out.Warnings)
	})
	return out, err
}

// projectRead is a project read whole, in either layout, for sync.
type projectRead struct {
	decoded format.Decoded
	locate  lineLocator
	// hash is the content hash an import of the project records, with
	// the tombstones ts.
	hash func(ts tombstones) string
	// differs reports whether writing next would change the project's
	// files: a byte that differs, or a project that next would split.
	differs func(next []memory.Memory) bool
}

// read reads and decodes every file of the split project.
func (s shards) read() (projectRead, error) {
	p, err := readSplit(s.root)
	if err != nil {
		return projectRead{}, err
	}
	d, parts, err := p.decode()
	if err != nil {
		return projectRead{}, err
	}
	hash := func(ts tombstones) string {
		q := p
		q.tombs = ts
		return q.hash()
	}
	differs := func(next []memory.Memory) bool {
		files := encodeSplit(next, parts)
		have := make(map[string][]byte, len(p.files))
		for _, f := range p.files {
			have[f.rel] = f.data
		}
		return slices.ContainsFunc(files, func(f projectFile) bool { return !bytes.Equal(have[f.rel], f.data) })
	}
	return projectRead{decoded: d, locate: p.locator(), hash: hash, differs: differs}, nil
}

// read reads and decodes the memories file.
func (one oneFile) read() (projectRead, error) {
	raw, err := readMemories(one.root)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return projectRead{}, err
	}
	d, err := format.DecodeAll(memoriesRel, raw)
	if err != nil {
		return projectRead{}, err
	}
	hash := func(ts tombstones) string { return withForgotten(sha256Hex(raw), ts.data) }
	differs := func(next []memory.Memory) bool {
		if len(next) > format.SplitAt {
			return true
		}
		return (len(raw) > 0 || len(next) > 0) && !bytes.Equal(raw, format.EncodeKeeping(next, d.InvalidLines))
	}
	return projectRead{decoded: d, locate: oneFileLocator(raw), hash: hash, differs: differs}, nil
}

// readProject reads and decodes the project under root, in its layout.
func readProject(root string) (projectRead, error) {
	l, err := layoutOf(root)
	if err != nil {
		return projectRead{}, err
	}
	return l.read()
}

// wouldSplit reports whether a memories file of parts, in order, holds
// more than format.SplitAt memories, which a write must split instead.
func wouldSplit(parts ...[]byte) bool {
	lines := 0
	for _, p := range parts {
		lines += bytes.Count(p, []byte("\n"))
	}
	return lines-1 > format.SplitAt
}

// minLineBytes is less than the shortest memory line, {"id":"x",...}, so
// that a file under SplitAt times it holds fewer than SplitAt memories.
const minLineBytes = 64

// mayHoldSplitAt reports whether the file may hold format.SplitAt memories
// already, so that one more must split it: by its size when that rules it
// out, else by counting its lines.
func (m *memoriesFile) mayHoldSplitAt() bool {
	if m.info.Size() < format.SplitAt*minLineBytes {
		return false
	}
	data := make([]byte, m.info.Size())
	if _, err := m.f.ReadAt(data, 0); err != nil {
		return true
	}
	return bytes.Count(data, []byte("\n"))-1 >= format.SplitAt
}

// restampSplit records the stamps checkFiles found settled in files, under
// the lock and only while the import state is still last, so that a
// write since is never overwritten.
func (s shards) restampSplit(ctx context.Context, w *Checkout, last string, files map[string]fileRecord) error {
	return w.locked(ctx, func() error {
		now, err := w.store.GetState(ctx, w.stateKey())
		if err != nil || now != last {
			return err
		}
		hash, _, warnings := parseImportState(last)
		return w.store.SetState(ctx, w.stateKey(), withFiles(importState(hash, "", warnings), files))
	})
}

// MemoriesLocation names where the project under root keeps its memories,
// relative to root, for messages: the one file, or the shards' directory
// once the project is split.
func MemoriesLocation(root string) string {
	l, err := layoutOf(root)
	if err != nil {
		return memoriesRel
	}
	return l.location()
}

func (one oneFile) location() string { return memoriesRel }
func (s shards) location() string    { return shardsRel + "/" }

func (one oneFile) attributes() (attrs, ignores []string) { return nil, nil }

// attributes gives the shards the union merge of a clone without acolyte's
// driver, and ignores a killed writer's temporary files among them.
func (s shards) attributes() (attrs, ignores []string) {
	return []string{shardsUnionAttribute}, []string{"/" + format.ShardsDir + "/" + atomicfile.TempPrefix + "*"}
}

// fineSettle is how long a split project's file waits before its stamp is
// trusted on a filesystem that keeps times finer than a millisecond: there
// a later change gets a later time once the kernel's clock has ticked
// (a few milliseconds), where settleTime allows for filesystems that keep
// whole seconds. A long-lived writer (the MCP server, adding memories as
// fast as a client asks) would otherwise re-hash every shard it wrote in
// the last two seconds on each write: 31 ms an add at 100k.
const fineSettle = 50 * time.Millisecond

// shardSettle is settle for the file fi, shortened to fineSettle when its
// modification time shows the filesystem keeps sub-millisecond times (a
// whole-millisecond time, one in a million on such a filesystem, keeps
// the long wait, which is only slower).
func shardSettle(fi os.FileInfo, settle time.Duration) time.Duration {
	if settle > fineSettle && fi.ModTime().Nanosecond()%int(time.Millisecond) != 0 {
		return fineSettle
	}
	return settle
}

// refresh imports the shards whose recorded stamps moved, unless the
// import state last still describes every file.
func (s shards) refresh(ctx context.Context, w *Checkout, last string) (Imported, error) {
	files, ok := stateFiles(last)
	if !ok {
		return s.importSplit(ctx, w)
	}
	holds, restamped := checkFiles(w.Repo.Root, files, w.settle)
	if !holds {
		return s.importSplit(ctx, w)
	}
	if restamped {
		// Best effort, as for the one file's stamp: without it the
		// next command re-reads the files that settled.
		_ = s.restampSplit(ctx, w, last, files)
	}
	_, _, lastWarnings := parseImportState(last)
	return Imported{Skipped: true, Warnings: lastWarnings}, nil
}

// holds reports whether the import state still describes every file,
// reading none of them: each recorded stamp is its file's.
func (s shards) holds(w *Checkout, state string, _ os.FileInfo) bool {
	files, ok := stateFiles(state)
	return ok && filesHold(w.Repo.Root, files)
}
