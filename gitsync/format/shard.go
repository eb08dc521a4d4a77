package format

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/acolyte-dev/acolyte/memory"
)

// A project of a few thousand memories keeps them in one file, which is what
// a reviewer reads best. Past SplitAt, one file makes every change cost the
// store: a line changed in the middle moves every byte after it, and git
// stores each version of the file as a new blob of megabytes. A split
// project keeps each memory in the shard its id hashes to,
// .acolyte/memories/XX.jsonl, each shard a memories file of its own
// (header, lines sorted by id), and memories.jsonl stays as a header-only
// inbox: acolyte releases that predate the split still write there, and the
// next write of a newer one moves what it holds to the shards. A project
// that has split stays split, so the layout is what is committed, never a
// count that a merge could move back and forth.

// ShardsDir is the directory under Dir that holds a split project's shards.
const ShardsDir = "memories"

// SplitAt is the most memories a project keeps in one file: the write that
// leaves more splits it. At 4,096 memories the file is under 1 MB.
const SplitAt = 4096

// ShardOf is the shard that holds the memory with id: the first byte of the
// id's SHA-256, in lowercase hex. A hash, not the id's own prefix, because
// ids are time-ordered and a prefix would put a year's memories in one
// shard; 256 shards keep each near 90 KB at 100k memories.
func ShardOf(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:1])
}

// ShardFile is the path of shard under Dir, slash-separated.
func ShardFile(shard string) string {
	return ShardsDir + "/" + shard + ".jsonl"
}

// ParseShardFile returns the shard a file under ShardsDir holds, from its
// base name: two lowercase hex digits and ".jsonl". Anything else there is
// not acolyte's.
func ParseShardFile(name string) (shard string, ok bool) {
	shard, ok = strings.CutSuffix(path.Base(name), ".jsonl")
	if !ok || len(shard) != 2 {
		return "", false
	}
	for _, c := range []byte(shard) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return "", false
		}
	}
	return shard, true
}

// Shard groups mems by the shard each belongs to, each group in the order
// of mems.
func Shard(mems []memory.Memory) map[string][]memory.Memory {
	out := make(map[string][]memory.Memory)
	for _, m := range mems {
		s := ShardOf(m.ID)
		out[s] = append(out[s], m)
	}
	return out
}

// Part is one file of a project's memories, as read: its path under Dir
// (MemoriesFile, or a ShardFile) and what DecodeAll made of it.
type Part struct {
	File    string
	Decoded Decoded
}

// Join reads the parts of a project as one set of memories, sorted by id.
// An id on lines of two files, as a merge across the split can leave it,
// is resolved as on two lines of one file (the later update wins), and
// the line dropped is reported in Duplicates. A memory in a shard it does
// not hash to is read all the same; CheckShards reports it.
func Join(parts []Part) Decoded {
	var out Decoded
	where := make(map[string]string) // id → the file it was kept from
	byID := make(map[string]int)     // id → index in out.Memories
	for _, p := range parts {
		out.Duplicates = append(out.Duplicates, p.Decoded.Duplicates...)
		out.Invalid = append(out.Invalid, p.Decoded.Invalid...)
		out.InvalidLines = append(out.InvalidLines, p.Decoded.InvalidLines...)
		for _, m := range p.Decoded.Memories {
			i, dup := byID[m.ID]
			if !dup {
				byID[m.ID] = len(out.Memories)
				where[m.ID] = p.File
				out.Memories = append(out.Memories, m)
				continue
			}
			prev := out.Memories[i]
			if Same(prev, m) {
				continue
			}
			winner, _ := pickLater(prev, m)
			kept, dropped, droppedMem := where[m.ID], p.File, m
			if Same(winner, m) {
				kept, dropped, droppedMem = p.File, where[m.ID], prev
				out.Memories[i] = m
				where[m.ID] = p.File
			}
			out.Duplicates = append(out.Duplicates, &LineError{Dir + "/" + dropped, 0, fmt.Errorf("id %s is also in %s/%s, as after a merge across the split without acolyte's merge driver; "+
				"that one is kept, as the merge driver would (the later update wins), and rewriting the project (`acolyte sync`) drops this line %s",
				safeID(m.ID), Dir, kept, preview(droppedMem))})
		}
	}
	slices.SortFunc(out.Memories, func(a, b memory.Memory) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// MisplacedIn reports the memories of a shard's decoded file that belong to
// another shard, which only a hand edit or a merge without acolyte's
// merge driver puts there.
func MisplacedIn(shard string, mems []memory.Memory) []memory.Memory {
	var out []memory.Memory
	for _, m := range mems {
		if ShardOf(m.ID) != shard {
			out = append(out, m)
		}
	}
	return out
}
