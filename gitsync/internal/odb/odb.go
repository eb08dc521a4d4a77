// Package odb reads a git repository's objects without starting git:
// just enough to tell which blob a path named at a commit, as
// `git cat-file --batch-check` answers for "<commit>:<path>". A search
// asks that of every hit it has not seen, and starting git costs
// milliseconds where reading a few objects costs tens of microseconds.
//
// It reads loose objects and version 2 pack indexes with their packs,
// deltas included, of SHA-1 repositories. Whatever it cannot be sure of
// reading as git would (SHA-256 or reftable repositories, alternates,
// replace refs, a missing object, which a partial clone may fetch) is
// ErrUnsupported, and the caller asks git instead.
package odb

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrUnsupported means git must be asked: the repository or the object
// is one this package does not read as git would.
var ErrUnsupported = errors.New("not readable without git")

// maxObject bounds one object's size: a commit or tree past it is no
// repository's, and reading it would cost what starting git costs.
const maxObject = 64 << 20

// maxChain bounds a delta chain; git's deepest (--depth) is 4095.
const maxChain = 5000

// maxCached bounds the bytes of inflated objects kept while a DB is open,
// which delta chains sharing bases read again.
const maxCached = 32 << 20

// envMovesObjects are the environment variables with which git would read
// objects from somewhere else, or other objects, than the repository's.
var envMovesObjects = []string{"GIT_DIR", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY",
	"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_REPLACE_REF_BASE"}

// Object types as packs number them.
const (
	typeCommit   = 1
	typeTree     = 2
	typeBlob     = 3
	typeTag      = 4
	typeOfsDelta = 6
	typeRefDelta = 7
)

// DB is one repository's objects, read as they are when asked: open one
// for a batch of questions and close it, so packs git writes or deletes
// in between are seen.
type DB struct {
	objects string
	packs   []*pack
	cache   map[cacheKey]object
	cached  int
	// bytes, buffer, zlib and loose are reused for every object read,
	// never concurrently: making them costs more than a small object.
	bytes  bytes.Reader
	buffer *bufio.Reader
	zlib   io.ReadCloser
	loose  *bufio.Reader
}

type cacheKey struct {
	pack   *pack
	offset int64
}

type object struct {
	kind int
	data []byte
}

// pack is one packfile and its index, opened on first use.
type pack struct {
	idxPath, packPath string
	mapped            bool
	opened            bool
	idx, data         *source
	fanout            [256]uint32
}

// Open reads the objects of the repository whose common git directory is
// commonDir, or answers ErrUnsupported when git must be asked instead.
func Open(commonDir string) (*DB, error) {
	return open(commonDir, canMap)
}

// open is Open mapping the packs or reading them through their files.
func open(commonDir string, mapPacks bool) (*DB, error) {
	for _, v := range envMovesObjects {
		if os.Getenv(v) != "" {
			return nil, fmt.Errorf("%w: %s is set", ErrUnsupported, v)
		}
	}
	config, err := os.ReadFile(filepath.Join(commonDir, "config"))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	lower := bytes.ToLower(config)
	// A SHA-256 repository names its objects otherwise; a reftable one
	// keeps refs where replace refs cannot be seen here.
	if bytes.Contains(lower, []byte("objectformat")) || bytes.Contains(lower, []byte("refstorage")) {
		return nil, fmt.Errorf("%w: the repository's object format or ref storage is not git's default", ErrUnsupported)
	}
	objects := filepath.Join(commonDir, "objects")
	if _, err := os.Stat(filepath.Join(objects, "info", "alternates")); err == nil {
		return nil, fmt.Errorf("%w: the repository borrows objects (alternates)", ErrUnsupported)
	}
	if _, err := os.Stat(filepath.Join(commonDir, "refs", "replace")); err == nil {
		return nil, fmt.Errorf("%w: the repository replaces objects (git replace)", ErrUnsupported)
	}
	if packed, err := os.ReadFile(filepath.Join(commonDir, "packed-refs")); err == nil && bytes.Contains(packed, []byte(" refs/replace/")) {
		return nil, fmt.Errorf("%w: the repository replaces objects (git replace)", ErrUnsupported)
	}
	db := &DB{objects: objects, cache: map[cacheKey]object{}}
	entries, err := os.ReadDir(filepath.Join(objects, "pack"))
	if err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	for _, e := range entries {
		base, ok := strings.CutSuffix(e.Name(), ".idx")
		if !ok {
			continue
		}
		db.packs = append(db.packs, &pack{
			idxPath:  filepath.Join(objects, "pack", e.Name()),
			packPath: filepath.Join(objects, "pack", base+".pack"),
			mapped:   mapPacks,
		})
	}
	return db, nil
}

// Close closes the packs read.
func (db *DB) Close() error {
	var errs []error
	for _, p := range db.packs {
		if p.idx != nil {
			errs = append(errs, p.idx.Close())
		}
		if p.data != nil {
			errs = append(errs, p.data.Close())
		}
	}
	return errors.Join(errs...)
}

// Entry is what a tree holds at a path: the object's id and whether it is
// a blob (a file or a symlink) rather than a tree or a submodule's commit.
type Entry struct {
	ID   string
	Blob bool
}

// At finds what commit's tree holds at path (slash-separated, relative to
// the top), as git resolves "<commit>:<path>"; ok is false when the commit
// has nothing there. A commit that is not a full SHA-1 id, a path git
// would read relative to its working directory ("./x", "a/../b"), and an
// object not in the repository are ErrUnsupported.
func (db *DB) At(commit, path string) (e Entry, ok bool, err error) {
	id, err := parseID(commit)
	if err != nil {
		return Entry{}, false, err
	}
	parts := strings.Split(path, "/")
	for _, p := range parts {
		if p == "" || p == "." || p == ".." {
			return Entry{}, false, fmt.Errorf("%w: path %q is not a plain path from the top", ErrUnsupported, path)
		}
	}
	c, err := db.read(id, 0)
	if err != nil {
		return Entry{}, false, err
	}
	if c.kind != typeCommit {
		return Entry{}, false, fmt.Errorf("%w: %s is not a commit", ErrUnsupported, commit)
	}
	treeHex, ok := bytes.CutPrefix(c.data, []byte("tree "))
	if !ok || len(treeHex) < 40 {
		return Entry{}, false, fmt.Errorf("%w: commit %s names no tree", ErrUnsupported, commit)
	}
	tree, err := parseID(string(treeHex[:40]))
	if err != nil {
		return Entry{}, false, err
	}
	for i, name := range parts {
		t, err := db.read(tree, 0)
		if err != nil {
			return Entry{}, false, err
		}
		if t.kind != typeTree {
			return Entry{}, false, fmt.Errorf("%w: %x is not a tree", ErrUnsupported, tree)
		}
		mode, next, found, err := lookup(t.data, name)
		if err != nil || !found {
			return Entry{}, false, err
		}
		if i == len(parts)-1 {
			// 0100000 is a regular file, 0120000 a symlink: both blobs.
			kind := mode & 0o170000
			return Entry{ID: hex.EncodeToString(next[:]), Blob: kind == 0o100000 || kind == 0o120000}, true, nil
		}
		if mode&0o170000 != 0o040000 {
			return Entry{}, false, nil // a file or submodule where the path goes on: nothing there
		}
		tree = next
	}
	return Entry{}, false, nil // not reached: strings.Split gives at least one part
}

func parseID(s string) ([20]byte, error) {
	var id [20]byte
	if len(s) != 40 {
		return id, fmt.Errorf("%w: %q is not a full SHA-1 object id", ErrUnsupported, s)
	}
	if _, err := hex.Decode(id[:], []byte(s)); err != nil {
		return id, fmt.Errorf("%w: %q is not a full SHA-1 object id", ErrUnsupported, s)
	}
	return id, nil
}

// lookup finds name among a tree's entries ("<octal mode> <name>\0<id>").
func lookup(tree []byte, name string) (mode uint32, id [20]byte, found bool, err error) {
	for len(tree) > 0 {
		sp := bytes.IndexByte(tree, ' ')
		nul := bytes.IndexByte(tree, 0)
		if sp < 0 || nul < sp || len(tree) < nul+21 {
			return 0, id, false, fmt.Errorf("%w: a tree is malformed", ErrUnsupported)
		}
		if string(tree[sp+1:nul]) == name {
			m, err := strconv.ParseUint(string(tree[:sp]), 8, 32)
			if err != nil {
				return 0, id, false, fmt.Errorf("%w: a tree entry's mode %q", ErrUnsupported, tree[:sp])
			}
			copy(id[:], tree[nul+1:nul+21])
			return uint32(m), id, true, nil
		}
		tree = tree[nul+21:]
	}
	return 0, id, false, nil
}

// read finds an object in the packs, then loose; depth counts the delta
// chain it is a base of.
func (db *DB) read(id [20]byte, depth int) (object, error) {
	for _, p := range db.packs {
		off, found, err := p.find(id)
		if err != nil {
			return object{}, err
		}
		if found {
			return db.readPacked(p, off, depth)
		}
	}
	return db.readLoose(id)
}

func (db *DB) readLoose(id [20]byte) (object, error) {
	h := hex.EncodeToString(id[:])
	f, err := os.Open(filepath.Join(db.objects, h[:2], h[2:]))
	if err != nil {
		// Not here: a partial clone may fetch it, or git may know better.
		return object{}, fmt.Errorf("%w: object %s: %w", ErrUnsupported, h, err)
	}
	defer f.Close()
	if db.buffer == nil {
		db.buffer = bufio.NewReaderSize(f, 4096)
	} else {
		db.buffer.Reset(f)
	}
	if err := db.resetZlib(db.buffer); err != nil {
		return object{}, fmt.Errorf("%w: object %s: %w", ErrUnsupported, h, err)
	}
	if db.loose == nil {
		db.loose = bufio.NewReaderSize(db.zlib, 512)
	} else {
		db.loose.Reset(db.zlib)
	}
	r := db.loose
	header, err := r.ReadString(0)
	if err != nil {
		return object{}, fmt.Errorf("%w: object %s: %w", ErrUnsupported, h, err)
	}
	name, sizeText, _ := strings.Cut(strings.TrimSuffix(header, "\x00"), " ")
	size, err := strconv.ParseInt(sizeText, 10, 64)
	kind := map[string]int{"commit": typeCommit, "tree": typeTree, "blob": typeBlob, "tag": typeTag}[name]
	if err != nil || kind == 0 || size < 0 || size > maxObject {
		return object{}, fmt.Errorf("%w: object %s has header %q", ErrUnsupported, h, header)
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(r, data); err != nil {
		return object{}, fmt.Errorf("%w: object %s: %w", ErrUnsupported, h, err)
	}
	return object{kind: kind, data: data}, nil
}

// open reads a pack index's header and fanout table.
func (p *pack) open() error {
	if p.opened {
		if p.idx == nil {
			return fmt.Errorf("%w: pack index %s", ErrUnsupported, p.idxPath)
		}
		return nil
	}
	p.opened = true
	idx, err := openSource(p.idxPath, p.mapped)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	var head [8 + 256*4]byte
	if _, err := idx.ReadAt(head[:], 0); err != nil || string(head[:8]) != "\xfftOc\x00\x00\x00\x02" {
		idx.Close()
		return fmt.Errorf("%w: %s is not a version 2 pack index", ErrUnsupported, p.idxPath)
	}
	data, err := openSource(p.packPath, p.mapped)
	if err != nil {
		idx.Close()
		return fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	for i := range p.fanout {
		p.fanout[i] = binary.BigEndian.Uint32(head[8+4*i:])
	}
	p.idx, p.data = idx, data
	return nil
}

// find looks id up in the pack's index: the fanout table bounds the ids
// starting with its first byte, read in one go and searched.
func (p *pack) find(id [20]byte) (offset int64, found bool, err error) {
	if err := p.open(); err != nil {
		return 0, false, err
	}
	count := int64(p.fanout[255])
	lo := int64(0)
	if id[0] > 0 {
		lo = int64(p.fanout[id[0]-1])
	}
	hi := int64(p.fanout[id[0]])
	if hi <= lo {
		return 0, false, nil
	}
	names := make([]byte, (hi-lo)*20)
	if _, err := p.idx.ReadAt(names, 1032+lo*20); err != nil {
		return 0, false, fmt.Errorf("%w: %s: %w", ErrUnsupported, p.idxPath, err)
	}
	i, j := 0, int(hi-lo)
	for i < j {
		h := int(uint(i+j) >> 1)
		if bytes.Compare(names[h*20:h*20+20], id[:]) < 0 {
			i = h + 1
		} else {
			j = h
		}
	}
	if i == int(hi-lo) || !bytes.Equal(names[i*20:i*20+20], id[:]) {
		return 0, false, nil
	}
	n := lo + int64(i)
	var b [8]byte
	if _, err := p.idx.ReadAt(b[:4], 1032+count*24+n*4); err != nil {
		return 0, false, fmt.Errorf("%w: %s: %w", ErrUnsupported, p.idxPath, err)
	}
	small := binary.BigEndian.Uint32(b[:4])
	if small&0x80000000 == 0 {
		return int64(small), true, nil
	}
	if _, err := p.idx.ReadAt(b[:], 1032+count*28+int64(small&0x7fffffff)*8); err != nil {
		return 0, false, fmt.Errorf("%w: %s: %w", ErrUnsupported, p.idxPath, err)
	}
	return int64(binary.BigEndian.Uint64(b[:])), true, nil
}
