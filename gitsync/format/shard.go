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
// not hash to is read all the same; check reports it.
//
// Each part is sorted already (a canonical file is), so the parts are
// merged, not sorted again: at 100k memories sorting the joined set was
// half of `acolyte check`. An id on two files then comes out twice in a
// row, which is where it is resolved.
func Join(parts []Part) Decoded {
	var out Decoded
	lists := make([][]memory.Memory, len(parts))
	total := 0
	for i, p := range parts {
		out.Duplicates = append(out.Duplicates, p.Decoded.Duplicates...)
		out.Invalid = append(out.Invalid, p.Decoded.Invalid...)
		out.InvalidLines = append(out.InvalidLines, p.Decoded.InvalidLines...)
		ms := p.Decoded.Memories
		if !slices.IsSortedFunc(ms, byID) {
			ms = slices.Clone(ms)
			slices.SortFunc(ms, byID)
		}
		lists[i] = ms
		total += len(ms)
	}
	out.Memories = make([]memory.Memory, 0, total)
	h := mergeHeap{lists: lists}
	for i := range lists {
		if len(lists[i]) > 0 {
			h.parts = append(h.parts, i)
		}
	}
	h.init()
	keptFrom := "" // the file the last memory of out.Memories came from
	for len(h.parts) > 0 {
		i := h.parts[0]
		m := lists[i][0]
		lists[i] = lists[i][1:]
		h.fix()
		n := len(out.Memories)
		if n == 0 || out.Memories[n-1].ID != m.ID {
			out.Memories = append(out.Memories, m)
			keptFrom = parts[i].File
			continue
		}
		prev := out.Memories[n-1]
		if Same(prev, m) {
			continue
		}
		winner, _ := pickLater(prev, m)
		kept, dropped, droppedMem := keptFrom, parts[i].File, m
		if Same(winner, m) {
			kept, dropped, droppedMem = parts[i].File, keptFrom, prev
			out.Memories[n-1] = m
			keptFrom = parts[i].File
		}
		out.Duplicates = append(out.Duplicates, &LineError{Dir + "/" + dropped, 0, fmt.Errorf("id %s is also in %s/%s, as after a merge across the split without acolyte's merge driver; "+
			"that one is kept, as the merge driver would (the later update wins), and rewriting the project (`acolyte sync`) drops this line %s",
			safeID(m.ID), Dir, kept, preview(droppedMem))})
	}
	return out
}

func byID(a, b memory.Memory) int { return strings.Compare(a.ID, b.ID) }

// mergeHeap orders the parts that still hold memories by the id of each
// one's first memory; a part of lower index comes first on equal ids, so
// the merge is deterministic.
type mergeHeap struct {
	lists [][]memory.Memory
	parts []int
}

func (h *mergeHeap) less(a, b int) bool {
	x, y := h.lists[h.parts[a]][0].ID, h.lists[h.parts[b]][0].ID
	return x < y || x == y && h.parts[a] < h.parts[b]
}

func (h *mergeHeap) init() {
	for i := len(h.parts)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

// fix restores the heap after its top part lost its first memory, dropping
// the part when it has none left.
func (h *mergeHeap) fix() {
	if len(h.lists[h.parts[0]]) == 0 {
		last := len(h.parts) - 1
		h.parts[0] = h.parts[last]
		h.parts = h.parts[:last]
	}
	if len(h.parts) > 0 {
		h.down(0)
	}
}

func (h *mergeHeap) down(i int) {
	for {
		least, l, r := i, 2*i+1, 2*i+2
		if l < len(h.parts) && h.less(l, least) {
			least = l
		}
		if r < len(h.parts) && h.less(r, least) {
			least = r
		}
		if least == i {
			return
		}
		h.parts[i], h.parts[least] = h.parts[least], h.parts[i]
		i = least
	}
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
