package acolytedir

import (
	"bytes"
	"crypto/sha256"
	"encoding"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/gitsync/internal/git"
)

// A write must cost the change, not the file: hashing 25 MB twice to learn
// that the file is still what acolyte last wrote was most of what a
// `remember` at 100k memories spent. So every writer and import also
// records a fingerprint of the file it left or read: its stat stamp (size,
// times, inode, device, as git's index keeps), forgotten.jsonl's stamp, the
// SHA-256 of its last bytes, and the running state of the SHA-256 of the
// whole file. While stamp and tail still match, the file is the one the
// fingerprint was taken of, so a write trusts it without reading it whole,
// and an append resumes the whole-file hash from the saved state, hashing
// only its own line: the content hash every other reader compares stays
// exactly sha256 of the file.
//
// The stamp is trusted at once, not only once settled as Refresh trusts an
// outside file's (SettleTime): what could fool it is an outside change in
// place (same inode) within the same tick of the filesystem's clock as
// acolyte's own write, of the same size, that leaves the last TailBytes
// alone. git and editors replace files by rename or change their size; a
// rename changes the inode, and the tail hash catches the rest of what
// appends and truncations do.

// TailBytes is how much of the file's end the fingerprint hashes, and what
// an append reads to find the last id.
const TailBytes = 4096

// Fingerprint is what a write or import recorded about the memories file.
type Fingerprint struct {
	Stamp  string // stamp of memories.jsonl, then ForgottenStamp
	tail   string // hex SHA-256 of the last TailBytes bytes
	Digest []byte // the SHA-256 state after the whole file (MarshalBinary)
}

// fingerprintPrefix marks the fingerprint in the import state's first line.
const fingerprintPrefix = "w:"

func (f Fingerprint) String() string {
	if f.Stamp == "" {
		return ""
	}
	return fingerprintPrefix + f.Stamp + "/" + f.tail + "/" + base64.RawURLEncoding.EncodeToString(f.Digest)
}

func parseFingerprint(s string) (Fingerprint, bool) {
	rest, ok := strings.CutPrefix(s, fingerprintPrefix)
	if !ok {
		return Fingerprint{}, false
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 3 || parts[0] == "" {
		return Fingerprint{}, false
	}
	digest, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return Fingerprint{}, false
	}
	return Fingerprint{Stamp: parts[0], tail: parts[1], Digest: digest}, true
}

// memoriesFile is the open memories file with what a fingerprint is
// compared against.
type memoriesFile struct {
	F     *os.File
	Info  os.FileInfo
	Stamp string // with forgotten.jsonl's
}

// OpenMemories opens .acolyte/memories.jsonl under root with flag
// (os.O_RDONLY, or os.O_RDWR to append in place), through GuardDir and an
// os.Root as ReadAcolyteFile reads it. A missing file is fs.ErrNotExist.
func OpenMemories(root string, flag int) (*memoriesFile, error) {
	r, err := OpenGuarded(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	f, fi, err := openRegular(r, format.Dir+"/"+format.MemoriesFile, flag)
	if err != nil {
		return nil, err
	}
	return &memoriesFile{F: f, Info: fi, Stamp: JoinStamps(root, fi)}, nil
}

func (m *memoriesFile) Close() error { return m.F.Close() }

// ReadTail returns the last n bytes of the file (all of it when shorter).
func (m *memoriesFile) ReadTail(n int64) ([]byte, error) {
	size := m.Info.Size()
	off := max(0, size-n)
	buf := make([]byte, size-off)
	if _, err := m.F.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return buf, nil
}

// Matches reports whether the open file is the one fp was taken of.
func (m *memoriesFile) Matches(fp Fingerprint) bool {
	if m.Stamp == "" || m.Stamp != fp.Stamp {
		return false
	}
	tail, err := m.ReadTail(TailBytes)
	return err == nil && tailHash(tail) == fp.tail
}

func tailHash(tail []byte) string {
	sum := sha256.Sum256(tail)
	return hex.EncodeToString(sum[:16])
}

// LastLine returns the file's last line (newline included) and its offset,
// reading back from the end no further than that line. ok is false when the
// file does not end in a newline or holds only its header.
func (m *memoriesFile) LastLine() (line []byte, at int64, ok bool) {
	size := m.Info.Size()
	for n := int64(TailBytes); ; n *= 4 {
		tail, err := m.ReadTail(n)
		if err != nil || len(tail) == 0 || tail[len(tail)-1] != '\n' {
			return nil, 0, false
		}
		if i := bytes.LastIndexByte(tail[:len(tail)-1], '\n'); i >= 0 {
			return tail[i+1:], size - int64(len(tail)) + int64(i) + 1, true
		}
		if int64(len(tail)) == size || n > format.MaxFileBytes {
			return nil, 0, false // the header alone, or one enormous line
		}
	}
}

// Hasher is the running SHA-256 of a memories file.
type Hasher = hash.Hash

// newHasher is a SHA-256 whose state can be saved in a fingerprint.
func newHasher() hash.Hash { return sha256.New() }

// ResumeHasher restores the state saved after the file's content.
func ResumeHasher(digest []byte) (hash.Hash, bool) {
	h := sha256.New()
	u, ok := h.(encoding.BinaryUnmarshaler)
	if !ok || u.UnmarshalBinary(digest) != nil {
		return nil, false
	}
	return h, true
}

// saveHasher is h's state, for a fingerprint.
func saveHasher(h hash.Hash) []byte {
	m, ok := h.(encoding.BinaryMarshaler)
	if !ok {
		return nil
	}
	state, err := m.MarshalBinary()
	if err != nil {
		return nil
	}
	return state
}

// NewFingerprint is the fingerprint of a memories file whose stamp (with
// forgotten.jsonl's) is stampNow, that ends in tail, and whose whole
// content h hashed; empty when the platform has no stamp.
func NewFingerprint(stampNow string, tail []byte, h hash.Hash) Fingerprint {
	digest := saveHasher(h)
	if stampNow == "" || digest == nil {
		return Fingerprint{}
	}
	if len(tail) > TailBytes {
		tail = tail[len(tail)-TailBytes:]
	}
	return Fingerprint{Stamp: stampNow, tail: tailHash(tail), Digest: digest}
}

// CurrentStamp is the stamp of the memories file under root joined with
// forgotten.jsonl's, as a fingerprint records it; "" when either cannot
// be read.
func CurrentStamp(root string) string {
	fi, err := os.Stat(format.MemoriesPath(root))
	if err != nil {
		return ""
	}
	return JoinStamps(root, fi)
}

func JoinStamps(root string, fi os.FileInfo) string {
	s := git.Stamp(fi)
	if s == "" {
		return ""
	}
	ffi, ferr := os.Stat(format.ForgottenPath(root))
	if ferr != nil && !errors.Is(ferr, fs.ErrNotExist) {
		return ""
	}
	return s + ForgottenStamp(ffi, ferr)
}

// TailOf is the last TailBytes of the parts in order.
func TailOf(parts ...[]byte) []byte {
	var tail []byte
	for i := len(parts) - 1; i >= 0 && len(tail) < TailBytes; i-- {
		p := parts[i]
		need := TailBytes - len(tail)
		if len(p) > need {
			p = p[len(p)-need:]
		}
		tail = append(append([]byte(nil), p...), tail...)
	}
	return tail
}

// HashParts hashes the parts in order into a fresh hasher.
func HashParts(parts ...[]byte) hash.Hash {
	h := newHasher()
	for _, p := range parts {
		h.Write(p)
	}
	return h
}

// HexSum is h's sum as Refresh records it.
func HexSum(h hash.Hash) string { return hex.EncodeToString(h.Sum(nil)) }

// HashFingerprinted hashes the memories file under root in small pieces,
// as HashFile does, and also returns its fingerprint, empty when the file
// changed while it was read.
func HashFingerprinted(root string) (string, Fingerprint, error) {
	mf, err := OpenMemories(root, os.O_RDONLY)
	if err != nil {
		return "", Fingerprint{}, err
	}
	defer mf.Close()
	h := newHasher()
	if _, err := io.Copy(h, mf.F); err != nil {
		return "", Fingerprint{}, err
	}
	tail, err := mf.ReadTail(TailBytes)
	if err != nil {
		return "", Fingerprint{}, err
	}
	fp := NewFingerprint(mf.Stamp, tail, h)
	if mf.Stamp != CurrentStamp(root) {
		fp = Fingerprint{}
	}
	return HexSum(h), fp, nil
}

// Sha256Hex is the content hash Refresh records, of the parts in order.
func Sha256Hex(parts ...[]byte) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write(p)
	}
	return hex.EncodeToString(h.Sum(nil))
}
