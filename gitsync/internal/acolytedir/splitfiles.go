package acolytedir

import (
	"bytes"
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

// ShardsRel is the shards' directory, relative to the worktree root.
const ShardsRel = format.Dir + "/" + format.ShardsDir

// IsSplit reports whether the project under root is split.
func IsSplit(root string) (bool, error) {
	fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(ShardsRel)))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("checking %s: %w", ShardsRel, err)
	}
	if !fi.IsDir() && fi.Mode()&fs.ModeSymlink == 0 {
		return false, fmt.Errorf("%s is a file, where acolyte keeps a directory of memory shards; move it away and run `%s`", ShardsRel, FixCommand)
	}
	return true, nil
}

// ShardFiles lists the shards under root by their path under .acolyte/, in
// name order. A name that is not a shard's (an editor's backup, a killed
// writer's temporary file) is not read; check reports it.
func ShardFiles(root string) (shards, strays []string, err error) {
	entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(ShardsRel)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("listing %s: %w", ShardsRel, err)
	}
	for _, e := range entries {
		_, ok := format.ParseShardFile(e.Name())
		switch t := e.Type(); {
		case ok && t.IsRegular():
			shards = append(shards, format.ShardsDir+"/"+e.Name())
		case ok && t&fs.ModeSymlink == 0 && !t.IsDir():
			// A FIFO, socket or device under a shard's name: skipped, its
			// memories would vanish from the index; read, it would hang.
			return nil, nil, notRegular(ShardsRel+"/"+e.Name(), t)
		default:
			strays = append(strays, format.ShardsDir+"/"+e.Name())
		}
	}
	return shards, strays, nil
}

// ProjectFile is one memories file of a project as read: its path under
// .acolyte/ and its bytes (nil when it is missing).
type ProjectFile struct {
	Rel  string
	Data []byte
}

// SplitProject is a split project as read for an import or a write: the
// inbox first, then each shard in name order, and forgotten.jsonl.
type SplitProject struct {
	Files []ProjectFile
	Tombs Tombstones
	// hashes memoizes sums.
	hashes map[string]string
}

// ReadSplit reads a split project through ReadAcolyteFile, each file
// guarded and bounded as the one file is.
func ReadSplit(root string) (SplitProject, error) {
	var p SplitProject
	r, err := OpenGuarded(root)
	if err != nil {
		return p, err
	}
	defer r.Close()
	shards, _, err := ShardFiles(root)
	if err != nil {
		return p, err
	}
	rels := append([]string{format.MemoriesFile}, shards...)
	if err := checkSplitSize(r, rels); err != nil {
		return p, err
	}
	for _, rel := range rels {
		data, err := ReadAcolyteFileIn(r, rel)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return p, err
		}
		p.Files = append(p.Files, ProjectFile{Rel: rel, Data: data})
	}
	if p.Tombs, err = ReadTombstones(root); err != nil {
		return p, err
	}
	return p, nil
}

// Decode decodes every file and joins them (format.Join). It fails as
// DecodeAll does, on the first file that cannot be read as a whole: a
// write must not drop what it cannot read.
func (p SplitProject) Decode() (format.Decoded, []format.Part, error) {
	parts, errs := DecodeFiles(p.Files)
	for _, err := range errs {
		if err != nil {
			return format.Decoded{}, nil, err
		}
	}
	return format.Join(parts), parts, nil
}

// DecodeReadable is decode for an import: a file that cannot be read as a
// whole (a conflict, a missing header, binary garbage) is left out alone,
// and unreadable says which and why, so that one damaged shard hides its
// own memories and no others. Writes still refuse such a project. good
// is the files that decoded, whose shadows may be kept.
func (p SplitProject) DecodeReadable() (d format.Decoded, unreadable []string, good []ProjectFile, err error) {
	parts, errs := DecodeFiles(p.Files)
	readable := parts[:0:0]
	for i, err := range errs {
		if err != nil {
			unreadable = append(unreadable, fmt.Sprintf("%v; its memories are left out of search until it is fixed (`%s` repairs what it can)", err, FixCommand))
			continue
		}
		readable = append(readable, parts[i])
		good = append(good, p.Files[i])
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

// DecodeFiles decodes each file (DecodeAll), on every CPU: a shard is too
// small for DecodeAll to spread over them itself. errs holds, by file, why
// one cannot be read as a whole.
func DecodeFiles(files []ProjectFile) (parts []format.Part, errs []error) {
	parts = make([]format.Part, len(files))
	errs = make([]error, len(files))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(files)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(files); i = int(next.Add(1) - 1) {
				f := files[i]
				parts[i].File = f.Rel
				if f.Data != nil && len(f.Data) == 0 && f.Rel != format.MemoriesFile {
					errs[i] = emptiedShard(f.Rel)
					continue
				}
				parts[i].Decoded, errs[i] = format.DecodeAll(format.Dir+"/"+f.Rel, f.Data)
			}
		})
	}
	wg.Wait()
	return parts, errs
}

// Hash is the project's content hash as an import state records it: of
// each file's name and content hash, and forgotten.jsonl's.
func (p *SplitProject) Hash() string {
	files := make(map[string]FileRecord, len(p.Files)+1)
	for rel, sum := range p.Sums() {
		if rel != format.ForgottenFile || len(p.Tombs.Data) > 0 {
			files[rel] = FileRecord{Hash: sum}
		}
	}
	return TableHash(files)
}

// Sums is the content hash of each file p holds, forgotten.jsonl's
// included, worked out once (22 MB at 100k memories).
func (p *SplitProject) Sums() map[string]string {
	if p.hashes == nil {
		p.hashes = make(map[string]string, len(p.Files)+1)
		for _, f := range p.Files {
			if f.Data != nil {
				p.hashes[f.Rel] = Sha256Hex(f.Data)
			}
		}
		p.hashes[format.ForgottenFile] = Sha256Hex(p.Tombs.Data)
	}
	return p.hashes
}

// EncodeSplit is the files a split project of mems is written as: every
// shard that holds a memory, and the inbox as its header, each keeping the
// lines it held that are not valid memories (which have no id to place
// them by). A shard left with nothing is absent, its data nil.
func EncodeSplit(mems []memory.Memory, parts []format.Part) []ProjectFile {
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
	out := []ProjectFile{{Rel: format.MemoriesFile, Data: format.EncodeKeeping(nil, keep[format.MemoriesFile])}}
	for _, rel := range names {
		shard, _ := format.ParseShardFile(rel)
		f := ProjectFile{Rel: rel}
		if group := byShard[shard]; len(group) > 0 || len(keep[rel]) > 0 {
			f.Data = format.EncodeKeeping(group, keep[rel])
		}
		out = append(out, f)
	}
	return out
}

// WriteSplit writes the files of next that differ from the project as
// read: shards first, then the inbox, and removes shards left empty. Every
// memory is checked as the decoder will read it back, and one that would
// not be is refused, by id, before anything is written.
func WriteSplit(root string, read SplitProject, next []ProjectFile) error {
	// Only shards are written in the shards' directory, each under the
	// lock the caller holds, so a temporary file there is a killed
	// writer's. Not every command looks, as for the rest of .acolyte/
	// (RemoveStaleTemps): listing 256 shards is a fifth of a no-op hook.
	atomicfile.RemoveStale(filepath.Join(root, filepath.FromSlash(ShardsRel)), 0)
	have := make(map[string][]byte, len(read.Files))
	for _, f := range read.Files {
		have[f.Rel] = f.Data
	}
	// The inbox goes last: until it is written its lines are also in the
	// shards, which a reader resolves.
	ordered := append(slices.Clone(next[1:]), next[0])
	for _, f := range ordered {
		path := filepath.Join(root, format.Dir, filepath.FromSlash(f.Rel))
		old := have[f.Rel]
		switch {
		case f.Data == nil && old != nil:
			if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("removing the empty shard %s/%s: %w", format.Dir, f.Rel, err)
			}
		case f.Data != nil && !bytes.Equal(old, f.Data):
			if err := WriteAtomic(path, f.Data); err != nil {
				return err
			}
		}
	}
	return nil
}

// FileRecord is what a split project's import state holds of one file:
// its stamp, once settled (empty before), and its content hash.
type FileRecord struct {
	Stamp, Hash string
}

// filesPrefix marks the split project's file table in the import state's
// first line.
const filesPrefix = "files="

// WithFiles adds the file table to an import state's first line.
func WithFiles(state string, files map[string]FileRecord) string {
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
		b.WriteString(rel + "," + r.Stamp + "," + r.Hash)
	}
	head, rest, hasWarnings := strings.Cut(state, "\n")
	head += StampSep + b.String()
	if hasWarnings {
		return head + "\n" + rest
	}
	return head
}

// StateFiles is the file table an import state holds; ok is false for the
// state of a project that is not split.
func StateFiles(state string) (map[string]FileRecord, bool) {
	head, _, _ := strings.Cut(state, "\n")
	for _, f := range strings.Split(head, StampSep)[1:] {
		table, ok := strings.CutPrefix(f, filesPrefix)
		if !ok {
			continue
		}
		files := make(map[string]FileRecord)
		for _, entry := range strings.Split(table, ";") {
			fields := strings.Split(entry, ",")
			if len(fields) != 3 {
				return nil, false
			}
			files[fields[0]] = FileRecord{Stamp: fields[1], Hash: fields[2]}
		}
		return files, true
	}
	return nil, false
}

// ProjectFiles are the files a split project's import state covers, by
// path under .acolyte/: the inbox, forgotten.jsonl and the shards.
func ProjectFiles(root string) ([]string, error) {
	shards, _, err := ShardFiles(root)
	if err != nil {
		return nil, err
	}
	return append([]string{format.MemoriesFile, format.ForgottenFile}, shards...), nil
}

// FilesHold reports whether the files under root are still those the
// table describes: each by its stamp while that is recorded and unmoved,
// else by its content hash, so a file written within its clock tick (whose
// stamp was not yet settled) costs a re-read of that file alone.
func FilesHold(root string, files map[string]FileRecord) bool {
	holds, _ := CheckFiles(root, files, -1)
	return holds
}

// CheckFiles is FilesHold that also, given settle >= 0, records in files
// the stamp of each file that holds by its hash and has settled since,
// and says whether it recorded any: the next check of that file is a stat.
func CheckFiles(root string, files map[string]FileRecord, settle time.Duration) (holds, restamped bool) {
	rels, listed, err := listedFiles(root, files, settle)
	if err != nil {
		return false, false
	}
	holds, seen, restamped := CheckRels(root, files, rels, settle)
	if _, ok := files[ShardsDirKey]; ok {
		seen++
	}
	return holds && seen == len(files), restamped || listed
}

// ShardsDirKey records, in a split project's file table, the stamp of the
// shards' directory: while it holds, the directory has the shards the
// table names, and a check needs no listing of it (a fifth of a no-op
// hook). Creating, removing or renaming a file in it moves its stamp.
const ShardsDirKey = format.ShardsDir + "/"

// listedFiles is ProjectFiles, taken from the table when the shards'
// directory's stamp says it still holds the shards the table names.
// listed reports that the directory was listed and its settled stamp
// recorded in files, for the caller to keep.
func listedFiles(root string, files map[string]FileRecord, settle time.Duration) (rels []string, listed bool, err error) {
	dir := filepath.Join(root, filepath.FromSlash(ShardsRel))
	fi, statErr := os.Stat(dir)
	if rec, ok := files[ShardsDirKey]; ok && statErr == nil && rec.Stamp != "" && rec.Stamp == git.Stamp(fi) {
		rels = []string{format.MemoriesFile, format.ForgottenFile}
		for rel := range files {
			if strings.HasPrefix(rel, format.ShardsDir+"/") && rel != ShardsDirKey {
				rels = append(rels, rel)
			}
		}
		return rels, false, nil
	}
	if rels, err = ProjectFiles(root); err != nil {
		return nil, false, err
	}
	if statErr == nil && settle >= 0 {
		if st := SettledStamp(dir, fi, nil, ShardSettle(fi, settle)); st != "" {
			files[ShardsDirKey] = FileRecord{Stamp: st}
			return rels, true, nil
		}
	}
	return rels, false, nil
}

// CheckRels is CheckFiles for the files rels alone (paths under .acolyte/),
// which may include files the table does not record but that do not
// exist; seen counts those recorded.
func CheckRels(root string, files map[string]FileRecord, rels []string, settle time.Duration) (holds bool, seen int, restamped bool) {
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
	shardStamps, fast := git.StampsAt(filepath.Join(root, filepath.FromSlash(ShardsRel)), shardNames)
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
		if rec.Stamp != "" && rec.Stamp == now {
			continue
		}
		if r == nil {
			if r, err = OpenGuarded(root); err != nil {
				return false, seen, false
			}
		}
		data, err := ReadAcolyteFileIn(r, rel)
		if err != nil || Sha256Hex(data) != rec.Hash {
			return false, seen, false
		}
		if fi, err := os.Stat(path); err == nil && settle >= 0 {
			if s := SettledStamp(path, fi, nil, ShardSettle(fi, settle)); s != "" {
				rec.Stamp = s
				files[rel] = rec
				restamped = true
			}
		}
	}
	return true, seen, restamped
}

// RecordFiles is the file table for the project's files as they are now,
// given the content hashes of those a caller holds (written or read under
// the lock); any other file is read to hash it. A stamp is recorded only once
// settled (SettledStamp), and stat'ed before the hash it vouches for.
func RecordFiles(root string, known map[string]string, settle time.Duration) (map[string]FileRecord, error) {
	rels, err := ProjectFiles(root)
	if err != nil {
		return nil, err
	}
	files := make(map[string]FileRecord, len(rels))
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
				if r, err = OpenGuarded(root); err != nil {
					return nil, err
				}
			}
			data, err := ReadAcolyteFileIn(r, rel)
			if err != nil {
				return nil, err
			}
			sum = Sha256Hex(data)
		}
		var st string
		if statErr == nil {
			st = SettledStamp(path, before, statErr, ShardSettle(before, settle))
		}
		files[rel] = FileRecord{Stamp: st, Hash: sum}
	}
	return files, nil
}

// WouldSplit reports whether a memories file of parts, in order, holds
// more than format.SplitAt memories, which a write must split instead.
func WouldSplit(parts ...[]byte) bool {
	lines := 0
	for _, p := range parts {
		lines += bytes.Count(p, []byte("\n"))
	}
	return lines-1 > format.SplitAt
}

// minLineBytes is less than the shortest memory line, {"id":"x",...}, so
// that a file under SplitAt times it holds fewer than SplitAt memories.
const minLineBytes = 64

// MayHoldSplitAt reports whether the file may hold format.SplitAt memories
// already, so that one more must split it: by its size when that rules it
// out, else by counting its lines.
func (m *memoriesFile) MayHoldSplitAt() bool {
	if m.Info.Size() < format.SplitAt*minLineBytes {
		return false
	}
	data := make([]byte, m.Info.Size())
	if _, err := m.F.ReadAt(data, 0); err != nil {
		return true
	}
	return bytes.Count(data, []byte("\n"))-1 >= format.SplitAt
}

// FineSettle is how long a split project's file waits before its stamp is
// trusted on a filesystem that keeps times finer than a millisecond: there
// a later change gets a later time once the kernel's clock has ticked
// (a few milliseconds), where SettleTime allows for filesystems that keep
// whole seconds. A long-lived writer (the MCP server, adding memories as
// fast as a client asks) would otherwise re-hash every shard it wrote in
// the last two seconds on each write: 31 ms an add at 100k.
const FineSettle = 50 * time.Millisecond

// ShardSettle is settle for the file fi, shortened to FineSettle when its
// modification time shows the filesystem keeps sub-millisecond times (a
// whole-millisecond time, one in a million on such a filesystem, keeps
// the long wait, which is only slower).
func ShardSettle(fi os.FileInfo, settle time.Duration) time.Duration {
	if settle > FineSettle && fi.ModTime().Nanosecond()%int(time.Millisecond) != 0 {
		return FineSettle
	}
	return settle
}

// TableHash is the content hash SplitProject.hash gives for the files a
// table records.
func TableHash(files map[string]FileRecord) string {
	names := make([]string, 0, len(files))
	for rel := range files {
		if rel != format.ForgottenFile && rel != ShardsDirKey {
			names = append(names, rel)
		}
	}
	slices.SortFunc(names, func(a, b string) int {
		// The inbox first, then the shards by name, as ReadSplit lists them.
		if (a == format.MemoriesFile) != (b == format.MemoriesFile) {
			if a == format.MemoriesFile {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	var b strings.Builder
	for _, rel := range names {
		b.WriteString(rel + " " + files[rel].Hash + "\n")
	}
	h := "split-" + Sha256Hex([]byte(b.String()))
	if f, ok := files[format.ForgottenFile]; ok && f.Hash != EmptyHash {
		h += "+" + f.Hash
	}
	return h
}

// EmptyInboxHash is the SHA-256 of a split project's inbox as acolyte
// leaves it: the header alone. Worked out when a write asks, not at
// start-up, which every command and hook pays.
func EmptyInboxHash() string { return Sha256Hex(format.Encode(nil)) }

// EmptyHash is the SHA-256 of no bytes: an empty forgotten.jsonl adds
// nothing to the hash, as WithForgotten has it.
const EmptyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// ShardEdit changes the memories of one shard; it returns them unchanged
// when it has nothing to do there.
type ShardEdit func(mems []memory.Memory) ([]memory.Memory, error)

// WriteShard replaces the shard file rel, whose bytes were old, with data,
// or removes it for nil.
// A new memory's id is time-ordered, so it almost always sorts last in its
// shard and data is old with one more line: that line is appended in place
// and synced, as the one file's append is (appendPatched), which spares
// the temporary file, the rename and the directory's sync that a rewrite
// costs. Anything else is written whole, atomically.
func WriteShard(root, rel string, old, data []byte) error {
	path := filepath.Join(root, format.Dir, filepath.FromSlash(rel))
	if data == nil {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing the empty shard %s/%s: %w", format.Dir, rel, err)
		}
		return nil
	}
	if len(old) == 0 || !bytes.HasPrefix(data, old) {
		atomicfile.RemoveStale(filepath.Dir(path), 0) // a killed writer's, under this lock
		return WriteAtomic(path, data)
	}
	r, err := OpenGuarded(root)
	if err != nil {
		return err
	}
	defer r.Close()
	f, err := r.OpenFile(filepath.FromSlash(format.Dir+"/"+rel), os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("writing %s/%s: %w", format.Dir, rel, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Size() != int64(len(old)) {
		return format.ErrNotPatchable // changed since it was read; the caller holds the lock, so not by acolyte
	}
	if err := AppendSynced(f, int64(len(old)), data[len(old):]); err != nil {
		return fmt.Errorf("writing %s/%s: %w", format.Dir, rel, err)
	}
	return nil
}

// LastLine is the last line of a memories file's bytes, newline included;
// nil for a file of its header alone, or none.
func LastLine(data []byte) []byte {
	if len(data) == 0 || data[len(data)-1] != '\n' {
		return nil
	}
	start := bytes.LastIndexByte(data[:len(data)-1], '\n') + 1
	if start == 0 {
		return nil // the header
	}
	return data[start:]
}

// EditShard decodes the shard file rel, of shard, runs edit over its
// memories and encodes the result (nil for none left). Only the memories
// edit changed are checked as the decoder will read them back: the others
// were just read. A shard the decoder must work around is for the full
// path.
func EditShard(rel, shard string, data []byte, edit ShardEdit) ([]byte, error) {
	d, err := format.DecodeAll(format.Dir+"/"+rel, data)
	if err != nil || len(d.Invalid)+len(d.Duplicates) > 0 || len(format.MisplacedIn(shard, d.Memories)) > 0 {
		return nil, format.ErrNotPatchable
	}
	was := make(map[string]memory.Memory, len(d.Memories))
	for _, m := range d.Memories {
		was[m.ID] = m
	}
	next, err := edit(slices.Clone(d.Memories))
	if err != nil {
		return nil, err
	}
	var changed []memory.Memory
	for _, m := range next {
		if old, ok := was[m.ID]; !ok || !format.Same(old, m) {
			changed = append(changed, m)
		}
	}
	if err := format.CheckMemories(changed, format.Dir+"/"+rel); err != nil {
		return nil, err
	}
	if len(next) == 0 {
		return nil, nil
	}
	return format.Encode(next), nil
}

// unreadLine is a line of a damaged shard that did not decode: its number,
// the id it seems to hold ("" when none), and why.
type unreadLine struct {
	N   int
	Id  string
	Why string
}

// SalvageLines reads what it can of a damaged shard line by line: a byte
// order mark is dropped, the header and conflict markers are skipped (both
// sides of a conflict are read, as the merge driver unions by id), and a
// line that does not decode is reported. An id on two lines keeps the
// newest.
func SalvageLines(data []byte) ([]memory.Memory, []unreadLine) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	var mems []memory.Memory
	var unread []unreadLine
	at := make(map[string]int)
	for i, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(bytes.TrimSpace(line)) == 0 || format.IsConflictMarker(line) || bytes.HasPrefix(line, []byte(`{"acolyte":`)) {
			continue
		}
		m, err := format.DecodeLine(line)
		if err == nil {
			err = format.CheckMemory(m)
		}
		if err != nil {
			id, _ := format.LineID(line)
			unread = append(unread, unreadLine{N: i + 1, Id: id, Why: err.Error()})
			continue
		}
		if j, ok := at[m.ID]; ok {
			if m.UpdatedAt.After(mems[j].UpdatedAt) {
				mems[j] = m
			}
			continue
		}
		at[m.ID] = len(mems)
		mems = append(mems, m)
	}
	return mems, unread
}

// CleanShard decodes a shard file of shard, named rel, for ImportShards:
// ok is false for one the decoder must work around (a bad line, an id on
// two lines, a memory of another shard), which the full import reports.
func CleanShard(rel, shard string, data []byte) ([]memory.Memory, bool) {
	if data == nil {
		return nil, true
	}
	d, err := format.DecodeAll(format.Dir+"/"+rel, data)
	if err != nil || len(d.Invalid)+len(d.Duplicates) > 0 || len(format.MisplacedIn(shard, d.Memories)) > 0 || !bytes.HasSuffix(data, []byte("\n")) {
		return nil, false
	}
	return d.Memories, true
}

// AppendSynced writes line at offset size, the file's end, and syncs the
// file; on failure it cuts the file back to size, so a full disk leaves the
// old file.
func AppendSynced(f *os.File, size int64, line []byte) error {
	_, err := f.WriteAt(line, size)
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		_ = f.Truncate(size)
	}
	return err
}
