package derive

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/internal/subpath"
	"github.com/acolyte-dev/acolyte/memory"
)

// Kinds of Refusal.
const (
	// ProblemOutside: the file resolves outside the repository and was not read.
	ProblemOutside = "outside"
	// ProblemSecret: the rule or seed holds a credential and was not written.
	ProblemSecret = "secret"
	// ProblemInvalid: the rule or seed is not a valid memory and was not written.
	ProblemInvalid = "invalid"
)

// Refusal is a file, rule or seed that derivation did not use, and why. It
// names where the problem is and never repeats the text: the text may be a
// secret.
type Refusal struct {
	// File is slash-separated and relative to the worktree root.
	File string `json:"file"`
	Line int    `json:"line,omitempty"`
	Col  int    `json:"col,omitempty"`
	// Seed is the 1-based index of the element in a seeds file.
	Seed    int    `json:"seed,omitempty"`
	Problem string `json:"problem"`
	// Secret is the kind of credential found, for ProblemSecret.
	Secret  string `json:"secret,omitempty"`
	Message string `json:"message"`
}

func (f Refusal) Error() string {
	where := f.File
	if f.Line > 0 {
		where += fmt.Sprintf(":%d", f.Line)
		if f.Col > 0 {
			where += fmt.Sprintf(":%d", f.Col)
		}
	}
	if f.Seed > 0 {
		where += fmt.Sprintf(": seed %d", f.Seed)
	}
	return where + ": " + f.Message
}

// Derivation is what the instruction files and seeds.json produce.
type Derivation struct {
	Memories []memory.Memory
	// Skipped are files that were not read at all (they resolve outside the
	// repository). A warning: nothing of them reaches .acolyte/.
	Skipped []Refusal
	// Refused are rules and seeds that were not written: secrets and
	// invalid memories. Each fails alone; the rest are derived.
	Refused []Refusal
	// Origins says where each derived memory's text is, by id: the file
	// and line a person edits to change it (acolyte ui points there).
	Origins map[string]Origin
}

// Origin is the place in an instruction file or seeds.json that a derived
// memory comes from.
type Origin struct {
	// File is slash-separated and relative to the worktree root.
	File string `json:"file"`
	Line int    `json:"line,omitempty"`
}

func (d *Derivation) origin(id, file string, line int) {
	if d.Origins == nil {
		d.Origins = map[string]Origin{}
	}
	d.Origins[id] = Origin{File: file, Line: line}
}

// Err is nil when nothing was refused, and otherwise names every refusal.
func (d Derivation) Err() error {
	errs := make([]error, len(d.Refused))
	for i, f := range d.Refused {
		errs[i] = f
	}
	return errors.Join(errs...)
}

// ErrOutside marks a file whose resolved path leaves the repository.
var ErrOutside = errors.New("it resolves outside the repository")

// tree is where derivation reads from: the worktree for sync and check, the
// index for the pre-commit hook, so each derives from what it is about to
// write or commit.
type Tree interface {
	// InstructionFiles lists AGENTS.md-style files, sorted as
	// SortInstructionFiles does.
	InstructionFiles() ([]string, error)
	// Read returns a file's bytes, fs.ErrNotExist when it is absent and
	// ErrOutside when it is a symlink that leads out of the repository.
	Read(rel string) ([]byte, error)
}

// Memories returns the memories that the worktree's instruction files and
// .acolyte/seeds.json produce right now. Derived memories carry no
// timestamps, commit or paths: they are a pure function of those files, so
// every clone derives byte-identical entries and `acolyte check` gives the
// same answer everywhere. Any refused rule or seed makes the error non-nil;
// Worktree reports them one by one instead.
func Memories(root string) ([]memory.Memory, error) {
	d, err := Worktree(root)
	if err != nil {
		return nil, err
	}
	return d.Memories, d.Err()
}

// Worktree derives from the files in the worktree at root. Files are
// read through an os.Root, so a symlink (or a path swapped for one while
// acolyte runs) cannot make it read outside the repository.
func Worktree(root string) (Derivation, error) {
	if resolved, err := filepath.EvalSymlinks(root); err == nil {
		root = resolved
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return Derivation{}, fmt.Errorf("open the worktree: %w", err)
	}
	defer r.Close()
	return From(worktree{path: root, root: r})
}

func From(t Tree) (Derivation, error) {
	var d Derivation
	files, err := t.InstructionFiles()
	if err != nil {
		return d, fmt.Errorf("finding AGENTS.md files: %w", err)
	}
	read := make(map[string]bool) // folder + "\x00" + contents
	listed := make(map[string]bool, len(files))
	queue := make([]pendingFile, len(files))
	for i, rel := range files {
		listed[rel] = true
		queue[i] = pendingFile{rel: rel, folder: path.Dir(rel)}
	}
	// Imports join the queue as they are found; a file is read once.
	for i := 0; i < len(queue); i++ {
		p := queue[i]
		src, err := t.Read(p.rel)
		switch {
		case errors.Is(err, ErrOutside):
			d.Skipped = append(d.Skipped, outsideRefusal(p.rel))
			continue
		case errors.Is(err, fs.ErrNotExist):
			continue // a dangling symlink or an import of nothing: nothing to read
		case err != nil:
			return d, fmt.Errorf("reading %s: %w", p.rel, err)
		case len(src) > maxInstructionBytes:
			d.Refused = append(d.Refused, Refusal{File: p.rel, Problem: ProblemInvalid,
				Message: fmt.Sprintf("not read: it is %d bytes, over the %d an instruction file may have; split it into smaller files", len(src), maxInstructionBytes)})
			continue
		}
		key := p.folder + "\x00" + string(src)
		if read[key] {
			continue
		}
		read[key] = true
		if path.Base(p.rel) == "CLAUDE.md" || p.depth > 0 {
			body, imports := SplitImports(string(src))
			src = []byte(body)
			for _, imp := range imports {
				next, skip := p.follow(imp, listed)
				if skip != nil {
					d.Skipped = append(d.Skipped, *skip)
				} else if next.rel != "" {
					listed[next.rel] = true
					queue = append(queue, next)
				}
			}
		}
		rules, refused := rulesIn(p.rel, p.folder, src)
		d.addRules(p.rel, rules, refused)
	}
	seedsRel := format.Dir + "/" + SeedsFile
	data, err := t.Read(seedsRel)
	switch {
	case errors.Is(err, ErrOutside):
		d.Skipped = append(d.Skipped, outsideRefusal(seedsRel))
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return d, fmt.Errorf("reading seeds: %w", err)
	case len(data) > maxInstructionBytes:
		// Every seed is a derived memory, which every clone indexes
		// whatever the project's limit: a million generated seeds took a
		// check 105 s.
		d.Refused = append(d.Refused, Refusal{File: seedsRel, Problem: ProblemInvalid,
			Message: fmt.Sprintf("not read: it is %d bytes, over the %d an instruction file may have; keep the seeds every session needs, split the rest into AGENTS.md sections or `acolyte seed FILE` them once", len(data), maxInstructionBytes)})
	default:
		seeds, lines, refused := seedsFrom(seedsRel, SeedsFile, data)
		for i, s := range seeds {
			d.origin(s.ID, seedsRel, lines[i])
		}
		d.Memories = append(d.Memories, seeds...)
		d.Refused = append(d.Refused, refused...)
	}
	slices.SortFunc(d.Memories, func(a, b memory.Memory) int { return strings.Compare(a.ID, b.ID) })
	return d, nil
}

// maxInstructionBytes bounds one instruction file, imports included, and
// seeds.json: rules and seeds are short, and a file this large is
// generated or pasted, not written.
const maxInstructionBytes = 1 << 20

// pendingFile is an instruction file to read: a listed one, or one a
// CLAUDE.md imports, whose rules apply in the importer's folder.
type pendingFile struct {
	rel, folder string
	depth       int
}

// follow is the file an import names, or why it is not read; a zero
// pendingFile for one already read or listed (`@AGENTS.md` beside it).
func (p pendingFile) follow(imp Import, listed map[string]bool) (pendingFile, *Refusal) {
	target, ok := resolveImport(p.rel, imp.Path)
	switch {
	case !ok:
		return pendingFile{}, &Refusal{File: p.rel, Line: imp.Line, Problem: ProblemOutside,
			Message: "import not followed: it names a file outside the repository, and acolyte never copies outside files into .acolyte/; move the file into the repository"}
	case p.depth+1 > maxImportDepth:
		return pendingFile{}, &Refusal{File: p.rel, Line: imp.Line, Problem: ProblemInvalid,
			Message: fmt.Sprintf("import not followed: it is more than %d imports deep, as far as Claude Code follows; import the file from nearer the top", maxImportDepth)}
	case listed[target]:
		return pendingFile{}, nil
	}
	return pendingFile{rel: target, folder: p.folder, depth: p.depth + 1}, nil
}

// addRules adds one file's rules, refusing those that hold a secret.
func (d *Derivation) addRules(rel string, rules []lineRule, refused []Refusal) {
	for _, r := range rules {
		if f, found := SecretRefusal(rel, r.line, r.Memory); found {
			refused = append(refused, f)
			continue
		}
		d.Memories = append(d.Memories, r.Memory)
		d.origin(r.ID, rel, r.line)
	}
	slices.SortStableFunc(refused, func(a, b Refusal) int { return a.Line - b.Line })
	d.Refused = append(d.Refused, refused...)
}

// seedsFrom reads a seeds file at rel (for messages), labelling its seeds
// with source, and returns the line each seed starts on beside it. A
// malformed file is refused whole; a bad or secret seed alone.
func seedsFrom(rel, source string, data []byte) ([]memory.Memory, []int, []Refusal) {
	parsed, err := parseSeeds(rel, data)
	if err != nil {
		f := Refusal{File: rel, Problem: ProblemInvalid}
		msg, _ := strings.CutPrefix(err.Error(), rel+":")
		if n, _ := fmt.Sscanf(msg, "%d:%d:", &f.Line, &f.Col); n == 2 {
			msg = strings.TrimSpace(strings.SplitN(msg, ":", 3)[2])
		}
		f.Message = "no seed was read: " + msg
		return nil, nil, []Refusal{f}
	}
	var (
		seeds   []memory.Memory
		lines   []int
		refused []Refusal
	)
	for _, s := range parsed {
		if s.err != nil {
			refused = append(refused, Refusal{File: rel, Line: s.line, Col: s.col, Seed: s.index, Problem: ProblemInvalid, Message: s.err.Error()})
			continue
		}
		if f, found := SecretRefusal(rel, s.line, s.Memory); found {
			f.Col, f.Seed = s.col, s.index
			refused = append(refused, f)
			continue
		}
		s.Source = source
		if source != SeedsFile {
			s.ID = importedSeedID(s.Content)
		}
		seeds = append(seeds, s.Memory)
		lines = append(lines, s.line)
	}
	return seeds, lines, refused
}

// ParseSeedsFile reads a seeds file for `acolyte seed FILE`: the same rules
// and the same secret guard as .acolyte/seeds.json, but its seeds are
// labelled ImportedSource(name) so that sync, which owns only seeds.json,
// keeps them. rel names the file in messages.
func ParseSeedsFile(rel string, data []byte) ([]memory.Memory, []Refusal) {
	seeds, _, refused := seedsFrom(rel, ImportedSource(path.Base(filepath.ToSlash(rel))), data)
	return seeds, refused
}

// importedSeedID is the id of an imported seed. It differs from the id the
// same fact gets in seeds.json: one id is one owner, and if they shared it,
// dropping the fact from seeds.json would make sync delete the imported
// copy as well.
func importedSeedID(content string) string {
	return "i-" + shortHash(memory.Normalize(content))
}

// ImportedSource is the source of seeds imported once from a file named
// name. It can never equal SeedsFile, which IsDerived claims.
func ImportedSource(name string) string { return "imported:" + name }

// SecretRefusal is the one secret guard that every road to the tracked file
// takes: sync from instruction files and seeds.json, `acolyte seed FILE`
// and the pre-commit hook. It checks every field of m (format.FindSecret);
// line is where m's content starts in file.
func SecretRefusal(file string, line int, m memory.Memory) (Refusal, bool) {
	sec, found := format.FindSecret(m)
	if !found {
		return Refusal{}, false
	}
	if sec.Field == "content" && line > 0 {
		line += sec.Line - 1
	}
	return Refusal{File: file, Line: line, Problem: ProblemSecret, Secret: sec.Kind,
		Message: fmt.Sprintf("%s; remove it from %s and rotate the credential (project memories are committed, so acolyte does not copy it into %s/%s)", sec.Phrase(), file, format.Dir, format.MemoriesFile)}, true
}

func outsideRefusal(rel string) Refusal {
	return Refusal{File: rel, Problem: ProblemOutside,
		Message: "not read: it is a symlink that resolves outside the repository, and acolyte never copies outside files into .acolyte/; make it a regular file or a link inside the repository"}
}

// worktree reads the checked-out files.
type worktree struct {
	path string
	root *os.Root
}

func (t worktree) InstructionFiles() ([]string, error) { return InstructionFiles(t.path) }

func (t worktree) Read(rel string) ([]byte, error) {
	name := filepath.FromSlash(rel)
	data, err := t.root.ReadFile(name)
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		return data, err
	}
	// os.Root refuses every absolute symlink and every link that escapes.
	// An absolute link back inside the repository is fine, so resolve it by
	// hand and read the result through the root again: a link swapped in
	// between still cannot lead outside.
	resolved, rerr := filepath.EvalSymlinks(filepath.Join(t.path, name))
	if errors.Is(rerr, fs.ErrNotExist) {
		return nil, rerr
	}
	if rerr != nil {
		return nil, err
	}
	inside, ok := within(t.path, resolved)
	if !ok {
		return nil, ErrOutside
	}
	data, err = t.root.ReadFile(inside)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, ErrOutside
	}
	return data, err
}

// within returns p relative to root when p is inside root.
func within(root, p string) (string, bool) { return subpath.Rel(root, p) }

// IsDerived reports whether m is owned by Derive: every rule, and the seeds
// that came from .acolyte/seeds.json. Seeds imported once from another file
// (`acolyte seed FILE`, source ImportedSource) are kept like stored memories.
func IsDerived(m memory.Memory) bool {
	return m.Kind == memory.KindRule || m.Kind == memory.KindSeed && m.Source == SeedsFile
}

// Refresh replaces every derived memory in existing with derived, keeping
// stored memories, observations and imported seeds. A derived memory whose id
// was already there keeps the timestamps it had, so an unchanged rule never
// churns the file. The result is sorted by id.
func Refresh(existing, derived []memory.Memory) []memory.Memory {
	// Maps of the few derived ids only: a large file is mostly stored
	// memories, which pass through.
	taken := make(map[string]int, len(derived))
	for i, d := range derived {
		taken[d.ID] = i
	}
	out := make([]memory.Memory, 0, len(existing)+len(derived))
	out = append(out, derived...)
	for _, m := range existing {
		i, isTaken := taken[m.ID]
		if isTaken {
			out[i].CreatedAt, out[i].UpdatedAt = m.CreatedAt, m.UpdatedAt
		}
		if !IsDerived(m) && !isTaken {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b memory.Memory) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// ReadWorktree reads the file rel of the worktree at root through r, an
// os.Root opened on root, as derivation reads it: a symlink that leads out
// of the repository gives ErrOutside, one that stays inside is followed.
func ReadWorktree(root string, r *os.Root, rel string) ([]byte, error) {
	return worktree{path: root, root: r}.Read(rel)
}
