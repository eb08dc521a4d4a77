package acolytedir

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/gitsync/internal/git"
	"github.com/acolyte-dev/acolyte/internal/atomicfile"
	"github.com/acolyte-dev/acolyte/internal/mapfile"
)

// The shadow (diffimport.go) is the memories file as the index holds it.
// Trusting it used to cost every import a SHA-256 of all of it (22 MB at
// 100k memories). Now whoever writes it also writes a note beside it
// (imported.jsonl.id) naming the content hash it was written with and the
// identity it had then: its stamp (size, modification and change times,
// inode, device, as Refresh trusts the memories file by) and the hash of
// its last 4 KiB. While the shadow still has that identity, it is
// trusted for that hash without being hashed; any other write to it
// changes the identity, and it is then hashed, as before, before it is
// believed.
//
// Nor is the shadow rewritten after every import: a checkout that changes
// a few lines leaves the shadow as it was, the base, and writes those
// lines beside it in a journal (imported.jsonl.journal) that the note also
// names, by its hash and the hash of the file base and journal make. The
// next import diffs the base with the new file and folds the journal in
// (shadow.changes). A fast-path write puts the lines it changed in the
// journal too (FollowShadow). The base is rewritten once the journal
// grows past MaxJournal lines, by a whole import, or by a write the note
// does not vouch for, which has the new file in hand.
//
// A hard link to the memories file instead of a copy was
// measured too: it saved about 10 ms of a 110 ms hook at 100k, and made
// the shadow an alias of a file people edit, so that a write to either
// name in place changed both.

// MaxJournal is the most lines a journal holds before the base is
// rewritten; each import reads them all.
const MaxJournal = 1024

// ShadowFiles are this checkout's shadow, its note and its journal, in
// CacheDir.
type ShadowFiles struct{ Dir string }

// ShadowPath is where this checkout's shadow lives.
func (sf ShadowFiles) ShadowPath() string {
	return filepath.Join(sf.Dir, "imported.jsonl")
}

func (sf ShadowFiles) ShadowNotePath() string    { return sf.ShadowPath() + ".id" }
func (sf ShadowFiles) ShadowJournalPath() string { return sf.ShadowPath() + ".journal" }

// Shadow is the file the index holds: base with journal applied, where
// journal maps an id to its line, or to nil for a line base has and the
// file has not.
type Shadow struct {
	Base     []byte
	baseHash string
	journal  map[string][]byte
	// release unmaps base (see ReadShadow); nil when there is nothing to
	// release.
	release func()
}

// Close releases the shadow's base; no slice of it may be used after.
func (sh Shadow) Close() {
	if sh.release != nil {
		sh.release()
	}
}

// shadowNote is what the note says: the base's identity and hash, and,
// with a journal, the journal's hash and that of the file both make.
type shadowNote struct {
	baseID, baseHash, JournalHash, Hash string
}

func (n shadowNote) String() string {
	s := n.baseID + "\n" + n.baseHash + "\n"
	if n.JournalHash != "" {
		s += n.JournalHash + "\n" + n.Hash + "\n"
	}
	return s
}

func (sf ShadowFiles) readNote() (shadowNote, bool) {
	data, err := os.ReadFile(sf.ShadowNotePath())
	if err != nil {
		return shadowNote{}, false
	}
	f := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	switch len(f) {
	case 2:
		return shadowNote{baseID: f[0], baseHash: f[1], Hash: f[1]}, true
	case 4:
		return shadowNote{baseID: f[0], baseHash: f[1], JournalHash: f[2], Hash: f[3]}, true
	}
	return shadowNote{}, false
}

func (sf ShadowFiles) writeNote(n shadowNote) {
	_ = atomicfile.Write(sf.ShadowNotePath(), atomicfile.Options{Perm: 0o644}, atomicfile.Bytes([]byte(n.String())))
}

// KeepShadow replaces the shadow with parts, in order, whose content hash
// is hash, and drops any journal. Best effort: a cache, not synced, and
// checked before use.
func (sf ShadowFiles) KeepShadow(hash string, parts ...[]byte) {
	path := sf.ShadowPath()
	os.Remove(sf.ShadowNotePath())
	os.Remove(sf.ShadowJournalPath())
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return
	}
	if atomicfile.Write(path, atomicfile.Options{Perm: 0o644}, atomicfile.Bytes(parts...)) != nil {
		os.Remove(path)
		return
	}
	if id, ok := sf.shadowID(); ok {
		sf.writeNote(shadowNote{baseID: id, baseHash: hash, Hash: hash})
	}
}

// KeepJournal makes the shadow sh.base with journal, the file data whose
// content hash is hash; past MaxJournal lines it rewrites the base to data.
func (sf ShadowFiles) KeepJournal(sh Shadow, journal map[string][]byte, hash string, data []byte) {
	if len(journal) > MaxJournal || sh.baseHash == "" {
		if data == nil { // nothing to rewrite the base with: hashed next time
			os.Remove(sf.ShadowNotePath())
			return
		}
		sf.KeepShadow(hash, data)
		return
	}
	id, ok := sf.shadowID()
	os.Remove(sf.ShadowNotePath())
	if !ok {
		return
	}
	if len(journal) == 0 {
		os.Remove(sf.ShadowJournalPath())
		sf.writeNote(shadowNote{baseID: id, baseHash: sh.baseHash, Hash: sh.baseHash})
		return
	}
	encoded := encodeJournal(journal)
	if atomicfile.Write(sf.ShadowJournalPath(), atomicfile.Options{Perm: 0o644}, atomicfile.Bytes(encoded)) != nil {
		return
	}
	sf.writeNote(shadowNote{baseID: id, baseHash: sh.baseHash, JournalHash: Sha256Hex(encoded), Hash: hash})
}

// encodeJournal writes one entry a line, by id: "+" and the line, or "-"
// and the id of a line the base has and the file has not.
func encodeJournal(journal map[string][]byte) []byte {
	var b []byte
	for _, id := range slices.Sorted(maps.Keys(journal)) {
		if line := journal[id]; line != nil {
			b = append(append(b, '+'), line...)
		} else {
			b = append(append(append(b, '-'), id...), '\n')
		}
	}
	return b
}

func DecodeJournal(data []byte) (map[string][]byte, bool) {
	out := map[string][]byte{}
	for len(data) > 0 {
		end := bytes.IndexByte(data, '\n')
		if end < 0 {
			return nil, false
		}
		entry := data[:end+1]
		data = data[end+1:]
		switch entry[0] {
		case '+':
			id, ok := format.LineID(entry[1:])
			if !ok {
				return nil, false
			}
			out[id] = entry[1:]
		case '-':
			out[string(entry[1:end])] = nil
		default:
			return nil, false
		}
	}
	return out, true
}

// shadowID is the base's identity: its stamp and the hash of its tail.
func (sf ShadowFiles) shadowID() (string, bool) {
	f, err := os.Open(sf.ShadowPath())
	if err != nil {
		return "", false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || git.Stamp(fi) == "" {
		return "", false // no stamp on this platform: always hashed
	}
	tail := make([]byte, min(fi.Size(), TailBytes))
	if _, err := f.ReadAt(tail, fi.Size()-int64(len(tail))); err != nil && !errors.Is(err, io.EOF) {
		return "", false
	}
	return git.Stamp(fi) + ":" + tailHash(tail), true
}

// Noted returns the note when it vouches for the base as it is now.
func (sf ShadowFiles) Noted() (shadowNote, bool) {
	n, ok := sf.readNote()
	if !ok {
		return n, false
	}
	id, ok := sf.shadowID()
	return n, ok && id == n.baseID
}

// ReadShadow returns the shadow when it holds the file of hash: by its
// note, checked before and after the base is read, and otherwise by
// hashing the base, which then stands alone.
//
// The base is mapped, not read: at 100k memories reading it was a fifth of
// a checkout's hook, in the copy and in zeroing a 22 MB buffer. Only
// acolyte writes the shadow, by rename or past its end (AppendShadow), so
// the mapped bytes cannot change under their reader. The caller closes the
// shadow when done with it.
func (sf ShadowFiles) ReadShadow(hash string) (sh Shadow, ok bool) {
	before, notedBefore := sf.Noted()
	base, release, err := mapfile.Map(sf.ShadowPath())
	if err != nil {
		return Shadow{}, false
	}
	defer func() {
		if !ok {
			release()
		}
	}()
	if after, notedAfter := sf.Noted(); notedBefore && notedAfter && after == before && before.Hash == hash {
		sh := Shadow{Base: base, baseHash: before.baseHash, release: release}
		if before.JournalHash == "" {
			return sh, true
		}
		data, err := os.ReadFile(sf.ShadowJournalPath())
		if err == nil && Sha256Hex(data) == before.JournalHash {
			sh.journal, notedAfter = DecodeJournal(data)
			return sh, notedAfter
		}
	}
	sum := sha256.Sum256(base)
	if hex.EncodeToString(sum[:]) != hash {
		return Shadow{}, false
	}
	return Shadow{Base: base, baseHash: hash, release: release}, true
}

// Changes folds the journal into the line diff from the base to a new
// file (format.DiffLines): the lines that differ between the file the
// shadow holds and the new one, the ids only the shadow holds, and the
// journal from the base to the new file.
func (sh Shadow) Changes(fromBase []format.LineChange, removedFromBase []string) (changes []format.LineChange, removed []string, journal map[string][]byte, ok bool) {
	journal = make(map[string][]byte, len(fromBase)+len(removedFromBase))
	for _, c := range fromBase {
		id, ok := format.LineID(c.New)
		if !ok {
			return nil, nil, nil, false
		}
		journal[id] = c.New
		old, inJournal := sh.journal[id]
		if !inJournal {
			old = c.Old
		}
		if old == nil || !bytes.Equal(old, c.New) {
			changes = append(changes, format.LineChange{Old: old, New: c.New})
		}
	}
	for _, id := range removedFromBase {
		journal[id] = nil
		if old, inJournal := sh.journal[id]; !inJournal || old != nil {
			removed = append(removed, id)
		}
	}
	// What the journal changed and the new file has as the base has it.
	back := map[string]bool{}
	for id := range sh.journal {
		if _, ok := journal[id]; !ok {
			back[id] = true
		}
	}
	if len(back) == 0 {
		return changes, removed, journal, true
	}
	lines, err := format.LinesByID(sh.Base, back)
	if err != nil {
		return nil, nil, nil, false
	}
	for _, id := range slices.Sorted(maps.Keys(back)) {
		was, base := sh.journal[id], lines[id]
		switch {
		case base == nil:
			removed = append(removed, id)
		case was == nil || !bytes.Equal(was, base):
			changes = append(changes, format.LineChange{Old: was, New: base})
		}
	}
	return changes, removed, journal, true
}

// FollowShadow brings the shadow along a write that made the file of prev
// the file of hash, whose parts are next, by changing the lines in lines
// (an id's new line, or nil for a line removed): while the note vouches
// for the shadow as the file of prev, the changes go into the journal, as
// an import's do, instead of a rewrite of the whole base (22 MB at 100k
// memories, a tenth of a forget's CPU). Otherwise, or with lines nil, or
// past MaxJournal, the base is rewritten from next.
func (sf ShadowFiles) FollowShadow(prev string, lines map[string][]byte, hash string, next [][]byte) {
	n, noted := sf.Noted()
	if lines == nil || !noted || n.Hash != prev {
		sf.KeepShadow(hash, next...)
		return
	}
	sh := Shadow{baseHash: n.baseHash, journal: map[string][]byte{}}
	if n.JournalHash != "" {
		var ok bool
		if sh, ok = sf.readShadowJournal(n); !ok {
			sf.KeepShadow(hash, next...)
			return
		}
	}
	// The journal holds a line the base has (changed) or lacks (added).
	// Removing the latter removes its entry; the former, or a line the
	// journal does not hold, which the base then has, becomes a "-".
	added, err := sf.addedInJournal(sh, lines)
	if err != nil {
		sf.KeepShadow(hash, next...)
		return
	}
	for id, line := range lines {
		if line == nil && added[id] {
			delete(sh.journal, id)
		} else {
			sh.journal[id] = line
		}
	}
	if len(sh.journal) > MaxJournal {
		sf.KeepShadow(hash, next...)
		return
	}
	sf.KeepJournal(sh, sh.journal, hash, nil)
}

// addedInJournal returns which of the removed lines in lines the journal
// holds and the base lacks, asking the base only when the journal holds
// a line for one.
func (sf ShadowFiles) addedInJournal(sh Shadow, lines map[string][]byte) (map[string]bool, error) {
	ask := map[string]bool{}
	for id, line := range lines {
		if line == nil && sh.journal[id] != nil {
			ask[id] = true
		}
	}
	if len(ask) == 0 {
		return nil, nil
	}
	base, release, err := mapfile.Map(sf.ShadowPath())
	if err != nil {
		return nil, err
	}
	defer release()
	inBase, err := format.LinesByID(base, ask)
	if err != nil {
		return nil, err
	}
	added := map[string]bool{}
	for id := range ask {
		if inBase[id] == nil {
			added[id] = true
		}
	}
	return added, nil
}

// AppendShadow follows an append of line to the memories file, which held
// size bytes before it and the file of prev, now that of hash: into the
// journal when there is one, else onto a base holding size bytes. A
// shadow it cannot vouch for after is left without a note, to be hashed.
func (sf ShadowFiles) AppendShadow(size int64, line []byte, prev, hash string) {
	n, noted := sf.Noted()
	noted = noted && n.Hash == prev
	if noted && n.JournalHash != "" {
		sh, ok := sf.readShadowJournal(n)
		id, idOK := format.LineID(line)
		if ok && idOK {
			sh.journal[id] = line
			sf.KeepJournal(sh, sh.journal, hash, nil)
			return
		}
	}
	path := sf.ShadowPath()
	os.Remove(sf.ShadowNotePath())
	os.Remove(sf.ShadowJournalPath())
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return
	}
	fi, err := f.Stat()
	if err == nil && fi.Size() == size {
		_, err = f.WriteAt(line, size)
	} else if err == nil {
		err = errors.New("shadow out of step")
	}
	f.Close()
	if err != nil {
		os.Remove(path)
		return
	}
	if id, ok := sf.shadowID(); ok && noted && n.JournalHash == "" {
		sf.writeNote(shadowNote{baseID: id, baseHash: hash, Hash: hash})
	}
}

// readShadowJournal reads the journal the note n names, without the base.
func (sf ShadowFiles) readShadowJournal(n shadowNote) (Shadow, bool) {
	data, err := os.ReadFile(sf.ShadowJournalPath())
	if err != nil || Sha256Hex(data) != n.JournalHash {
		return Shadow{}, false
	}
	journal, ok := DecodeJournal(data)
	return Shadow{baseHash: n.baseHash, journal: journal}, ok
}
