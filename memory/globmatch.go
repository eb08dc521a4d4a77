package memory

import (
	"math/bits"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// What a path-scoped search costs (issue 35). A memory's globs are
// compiled once (CompileGlobs, kept by a store's GlobCache), not parsed on
// every search. A search prepares its files once (NewPathMatcher): each
// distinct segment pattern of any memory is matched against each segment
// of the files once per search, by path.Match (greedy per `*`, so at most
// its pattern's length times the segment's, never exponential), and the
// result kept as a bit set over the segments. A glob's alternatives then
// run over those bit sets, a few word operations per segment of the
// glob: `**` fills every position from the first it reaches, any other
// segment shifts what it reaches by one where its bits say it matches.
// So no glob costs more than its patterns times the files' bytes, plus its
// segments times the files' segments; and the whole search is held to
// pathWorkBudget units of that work, past which the memories not yet
// matched count as not applying to the files at hand.

// pathWorkBudget bounds the matching work of one search, in units of one
// byte compared by path.Match (charged as its worst case, the pattern's
// length times the segment's) or one word of a bit set. Real projects
// spend far less (TestPathMatchingWorkOfRealGlobs): a thousand memories
// carrying the longest valid globs, against 32 long paths, reach it.
const pathWorkBudget = 1 << 26

// starStar is the segment index of `**` in a globAlt.
const starStar = -1

// GlobSet is a memory's globs compiled for matching: each distinct segment
// pattern once, and each distinct alternative (after brace expansion) as
// the indices of its segments' patterns. An invalid glob adds nothing, as
// it matches nothing.
type GlobSet struct {
	patterns []string
	alts     []globAlt
}

type globAlt struct {
	segments []int // into patterns, or starStar
	inside   bool
}

// CompileGlobs compiles a memory's globs.
func CompileGlobs(globs []string) *GlobSet {
	b := newGlobBuilder()
	for _, g := range globs {
		_ = parseGlob(g, b) // an invalid glob matches nothing
	}
	return &b.set
}

// globBuilder builds a GlobSet, each pattern and alternative once.
type globBuilder struct {
	set   GlobSet
	index map[string]int // raw segment → its pattern
	raw   []string       // raw segment of each pattern
	bad   map[string]bool
	seen  map[string]bool // alternatives, by their key
	keys  []string        // key of each alternative
	segs  []int           // scratch
	key   []byte          // scratch
}

func newGlobBuilder() *globBuilder {
	return &globBuilder{index: map[string]int{}, bad: map[string]bool{}, seen: map[string]bool{}}
}

// pattern is the index of the segment s, a valid path.Match pattern once
// gitignore's [!…] is spelled [^…].
func (b *globBuilder) pattern(s string) (int, error) {
	if at, ok := b.index[s]; ok {
		return at, nil
	}
	if b.bad[s] {
		return 0, path.ErrBadPattern
	}
	p := bangClass(s)
	if _, err := path.Match(p, ""); err != nil {
		b.bad[s] = true
		return 0, err
	}
	at := len(b.set.patterns)
	b.index[s] = at
	b.raw = append(b.raw, s)
	b.set.patterns = append(b.set.patterns, p)
	return at, nil
}

// add adds one alternative, unless it is there already.
func (b *globBuilder) add(segs []int, inside bool) {
	b.key = b.key[:0]
	for _, at := range segs {
		b.key = append(b.key, byte(at>>8), byte(at))
	}
	if inside {
		b.key = append(b.key, '/')
	}
	if b.seen[string(b.key)] {
		return
	}
	key := string(b.key)
	b.seen[key] = true
	b.keys = append(b.keys, key)
	b.set.alts = append(b.set.alts, globAlt{segments: slices.Clone(segs), inside: inside})
}

type builderMark struct{ patterns, alts int }

func (b *globBuilder) mark() builderMark {
	return builderMark{len(b.set.patterns), len(b.set.alts)}
}

// reset drops what was added since m.
func (b *globBuilder) reset(m builderMark) {
	for _, s := range b.raw[m.patterns:] {
		delete(b.index, s)
	}
	for _, k := range b.keys[m.alts:] {
		delete(b.seen, k)
	}
	b.raw, b.keys = b.raw[:m.patterns], b.keys[:m.alts]
	b.set.patterns, b.set.alts = b.set.patterns[:m.patterns], b.set.alts[:m.alts]
}

// Empty says the set matches nothing.
func (s *GlobSet) Empty() bool { return s == nil || len(s.alts) == 0 }

// matchFile is one file of a search: its segments, and where its bits
// start in a pattern's bit set (positions 0..len(segs), in words).
type matchFile struct {
	segs   []string
	offset int
	words  int
}

// PathMatcher matches compiled globs against the files of one search,
// within pathWorkBudget. It is not safe for concurrent use.
type PathMatcher struct {
	files []matchFile
	words int // the bit set of one pattern over every file
	// bits holds, by pattern, the segments of the files it matches.
	bits    map[string][]uint64
	masks   [][]uint64
	reach   []uint64
	budget  int64
	spent   int64
	stopped bool
}

// NewPathMatcher prepares the files of a search (Query.Paths). A path
// outside the repository (absolute, or leaving it by ..) is no file.
func NewPathMatcher(paths []string) *PathMatcher {
	m := &PathMatcher{bits: map[string][]uint64{}, budget: pathWorkBudget}
	for _, p := range paths {
		p = strings.TrimPrefix(p, "./")
		if p == "" || strings.HasPrefix(p, "/") {
			continue
		}
		p = path.Clean(p)
		if p == "." || p == ".." || strings.HasPrefix(p, "../") {
			continue
		}
		segs := strings.Split(p, "/")
		f := matchFile{segs: segs, offset: m.words, words: (len(segs) + 1 + 63) / 64}
		m.words += f.words
		m.files = append(m.files, f)
	}
	return m
}

// Stopped says the search's matching work reached its bound, so that
// some memories were not matched (and count as not applying).
func (m *PathMatcher) Stopped() bool { return m.stopped }

// charge spends n units of work, and says whether the budget allows it.
func (m *PathMatcher) charge(n int) bool {
	if m.stopped {
		return false
	}
	m.spent += int64(n)
	if m.spent > m.budget {
		m.stopped = true
		return false
	}
	return true
}

// patternBits is which segments of the files pattern matches, matched
// once per search.
func (m *PathMatcher) patternBits(pattern string) ([]uint64, bool) {
	if b, ok := m.bits[pattern]; ok {
		return b, true
	}
	cost := 0
	for _, f := range m.files {
		for _, seg := range f.segs {
			cost += (len(pattern) + 1) * (len(seg) + 1)
		}
	}
	if !m.charge(cost) {
		return nil, false
	}
	b := make([]uint64, m.words)
	for _, f := range m.files {
		for j, seg := range f.segs {
			if ok, _ := path.Match(pattern, seg); ok {
				b[f.offset+j/64] |= 1 << (j % 64)
			}
		}
	}
	m.bits[pattern] = b
	return b, true
}

// Matches reports whether any of s's globs matches any of the files, or a
// folder one lies in; false once the search's work is spent.
func (m *PathMatcher) Matches(s *GlobSet) bool {
	if s.Empty() || len(m.files) == 0 || m.stopped {
		return false
	}
	m.masks = m.masks[:0]
	for _, p := range s.patterns {
		b, ok := m.patternBits(p)
		if !ok {
			return false
		}
		m.masks = append(m.masks, b)
	}
	for _, f := range m.files {
		for _, a := range s.alts {
			if !m.charge(len(a.segments)*f.words + 1) {
				return false
			}
			if m.altMatches(a, f) {
				return true
			}
		}
	}
	return false
}

// altMatches runs one alternative over one file's bit sets: reach has bit
// j set when the alternative's segments so far can match the file's first
// j segments. It must end at a folder of the file (a matched folder holds
// the file), or at the file itself unless the alternative names a folder.
func (m *PathMatcher) altMatches(a globAlt, f matchFile) bool {
	n := len(f.segs)
	if f.words == 1 {
		full := uint64(1)<<(n+1) - 1
		reach := uint64(1)
		for _, s := range a.segments {
			if s == starStar {
				reach = ^(reach&-reach - 1) & full
			} else {
				reach = (reach & m.masks[s][f.offset]) << 1
			}
			if reach == 0 {
				return false
			}
		}
		ends := full &^ 1
		if a.inside {
			ends &^= 1 << n
		}
		return reach&ends != 0
	}
	if cap(m.reach) < f.words {
		m.reach = make([]uint64, f.words)
	}
	reach := m.reach[:f.words]
	clear(reach)
	reach[0] = 1
	for _, s := range a.segments {
		if s == starStar {
			fillFrom(reach, n)
		} else {
			mask := m.masks[s][f.offset : f.offset+f.words]
			var carry uint64
			for w := range reach {
				v := reach[w] & mask[w]
				reach[w] = v<<1 | carry
				carry = v >> 63
			}
		}
		if isZero(reach) {
			return false
		}
	}
	for j := 1; j <= n; j++ {
		if j == n && a.inside {
			break
		}
		if reach[j/64]&(1<<(j%64)) != 0 {
			return true
		}
	}
	return false
}

// fillFrom sets every bit from the lowest set one up to bit n.
func fillFrom(b []uint64, n int) {
	for w := range b {
		if b[w] == 0 {
			continue
		}
		low := bits.TrailingZeros64(b[w])
		b[w] |= ^uint64(0) << low
		for v := w + 1; v < len(b); v++ {
			b[v] = ^uint64(0)
		}
		break
	}
	last := len(b) - 1
	if top := n - last*64; top < 63 {
		b[last] &= uint64(1)<<(top+1) - 1
	}
}

func isZero(b []uint64) bool {
	for _, w := range b {
		if w != 0 {
			return false
		}
	}
	return true
}

// compileWeight is what compiling costs, in units of pathWorkBudget, per
// byte of a glob's expansion (its alternatives times its length): about
// 16 ns a byte, where a unit of matching is about 1 ns.
const compileWeight = 8

// globsCost is what compiling globs costs (compileWeight units per byte of
// their expansion), worked out without expanding them.
func globsCost(globs []string) int {
	cost := 0
	for _, g := range globs {
		n, _ := countAlternatives(g, 0, 0)
		cost += compileWeight * (n*len(g) + 1)
	}
	return cost
}

// countAlternatives counts the alternatives the braces of g[i:] expand to
// (at most maxGlobAlternatives+1), up to the `,` or `}` that ends the
// alternative it is in; it returns where it stopped.
func countAlternatives(g string, i, depth int) (int, int) {
	n := 1
	for i < len(g) {
		switch g[i] {
		case '\\':
			i += 2
		case '[':
			for i++; i < len(g) && g[i] != ']'; i++ {
				if g[i] == '\\' {
					i++
				}
			}
			i++
		case '{':
			if depth > MaxGlobBytes {
				return n, len(g)
			}
			sum := 0
			i++
			for {
				var c int
				c, i = countAlternatives(g, i, depth+1)
				sum += c
				if i >= len(g) {
					break
				}
				i++
				if g[i-1] == '}' {
					break
				}
			}
			n = min(n*max(sum, 1), maxGlobAlternatives+1)
		case ',', '}':
			if depth > 0 {
				return n, i
			}
			i++
		default:
			i++
		}
	}
	return n, i
}

// pathSearch is the path stage of one search: its files, and the cache of
// compiled globs of the engine running it (nil for none).
type pathSearch[K comparable] struct {
	matcher *PathMatcher
	cache   *GlobCache
}

// applying are the memories of globs that match a file at hand. The
// cheapest to compile and match go first, so that the bound on a search's
// work leaves unmatched only the memories whose globs cost the most:
// whoever wrote them, the others still match.
func (ps pathSearch[K]) applying(globs map[K][]string) map[K]bool {
	type entry struct {
		k    K
		cost int
	}
	order := make([]entry, 0, len(globs))
	for k, g := range globs {
		order = append(order, entry{k, globsCost(g)})
	}
	slices.SortFunc(order, func(a, b entry) int { return a.cost - b.cost })
	out := map[K]bool{}
	for _, e := range order {
		if !ps.matcher.charge(e.cost) {
			break
		}
		g := globs[e.k]
		var set *GlobSet
		if ps.cache != nil {
			set = ps.cache.Compiled(globsKey(g), func() []string { return g })
		} else {
			set = CompileGlobs(g)
		}
		if ps.matcher.Matches(set) {
			out[e.k] = true
		}
		if ps.matcher.stopped {
			break
		}
	}
	return out
}

// globsKey is a memory's globs as one string, each length-prefixed.
func globsKey(globs []string) string {
	var b strings.Builder
	for _, g := range globs {
		b.WriteString(strconv.Itoa(len(g)))
		b.WriteByte(':')
		b.WriteString(g)
	}
	return b.String()
}

// GlobCache keeps memories' compiled globs by the text a store keeps them
// as, so that a store compiles each memory's globs once, not on every
// search. It is safe for concurrent use, and bounded: past
// maxCachedGlobSets entries it starts again empty.
type GlobCache struct {
	mu   sync.Mutex
	sets map[string]*GlobSet
}

const maxCachedGlobSets = 1 << 16

// Compiled is the GlobSet stored as key, compiling globs() on a miss.
func (c *GlobCache) Compiled(key string, globs func() []string) *GlobSet {
	c.mu.Lock()
	s, ok := c.sets[key]
	c.mu.Unlock()
	if ok {
		return s
	}
	s = CompileGlobs(globs())
	c.mu.Lock()
	if c.sets == nil || len(c.sets) >= maxCachedGlobSets {
		c.sets = map[string]*GlobSet{}
	}
	c.sets[key] = s
	c.mu.Unlock()
	return s
}
