// Package memory is acolyte's domain: small individual facts (Memory, Scope,
// Kind), who may see them (Visibility), the Embedder interface that places
// them in vector space, the Engine interface every store implements, the
// Toolkit the CLI, the agent and the MCP server drive, and the hybrid
// ranking every engine shares (fusion.go). The engines live one per package
// beneath it: memory/sqlite (the local store) and memory/postgres (the team
// database); the embedders under memory/embed. It imports no package of
// ours.
package memory

import (
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Scope says who can see a memory.
type Scope string

const (
	// ScopeProject memories belong to one repository and travel with it in .acolyte/.
	ScopeProject Scope = "project"
	// ScopeUser memories follow the user into every project.
	ScopeUser Scope = "user"
	// ScopeSession memories live only as long as one agent session cares about them.
	ScopeSession Scope = "session"
	// ScopeTeam memories are shared live by every member of a team, in every
	// repository. They live only in the team database (memory/postgres),
	// never in the local store or in .acolyte/.
	ScopeTeam Scope = "team"
)

// Scopes lists every scope, in the order help texts show them.
var Scopes = []Scope{ScopeProject, ScopeUser, ScopeSession, ScopeTeam}

// ParseScope validates a scope name from a flag, a tool call or a file.
func ParseScope(s string) (Scope, error) {
	for _, sc := range Scopes {
		if string(sc) == s {
			return sc, nil
		}
	}
	return "", fmt.Errorf("%w %q: use one of %s", ErrUnknownScope, s, joinNames(Scopes))
}

// Kind says how a memory came to exist.
type Kind string

const (
	// KindStored is a fact someone asked acolyte to remember.
	KindStored Kind = "stored"
	// KindObservation is a fact the distill step extracted from a finished task.
	KindObservation Kind = "observation"
	// KindRule is one rule split out of AGENTS.md (or CLAUDE.md, GEMINI.md).
	KindRule Kind = "rule"
	// KindSeed is a curated cold-start fact from .acolyte/seeds.json.
	KindSeed Kind = "seed"
)

// Kinds lists every kind.
var Kinds = []Kind{KindStored, KindObservation, KindRule, KindSeed}

// ParseKind validates a kind name.
func ParseKind(s string) (Kind, error) {
	for _, k := range Kinds {
		if string(k) == s {
			return k, nil
		}
	}
	return "", fmt.Errorf("%w %q: use one of %s", ErrUnknownKind, s, joinNames(Kinds))
}

func joinNames[T ~string](names []T) string {
	s := make([]string, len(names))
	for i, n := range names {
		s[i] = string(n)
	}
	return strings.Join(s, ", ")
}

// MaxContentBytes caps one memory. A memory is a single fact; anything longer
// is a document, and documents belong in the repository, not in memory.
const MaxContentBytes = 8 << 10

// Memory is one fact.
type Memory struct {
	ID    string `json:"id"`
	Scope Scope  `json:"scope"`
	// ScopeKey names the project (its worktree root) or session the memory
	// belongs to. It is empty for user memories.
	ScopeKey string `json:"scope_key,omitempty"`
	Kind     Kind   `json:"kind"`
	Content  string `json:"content"`
	Topic    string `json:"topic,omitempty"`
	// Source says where the memory came from: cli, agent, distill, mcp,
	// ui, AGENTS.md#Heading, seeds.json.
	Source     string    `json:"source,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
	RecalledAt time.Time `json:"recalled_at,omitzero"`
	Tokens     int       `json:"tokens"`
	// Commit and Paths record provenance: the HEAD commit when the memory was
	// written and the repository paths its content mentions.
	Commit string   `json:"commit,omitempty"`
	Paths  []string `json:"paths,omitempty"`
	// Globs say which files the memory applies to (see AlwaysGlob): a
	// path-scoped search ranks it above others for a file they match.
	// None, the usual case, means it applies wherever its meaning does.
	Globs []string `json:"globs,omitempty"`
	// Author is the database role that wrote a team memory, as the team
	// database records it (session_user); empty for other scopes, which
	// have one writer.
	Author string `json:"author,omitempty"`
}

// Field is one text a memory carries, named as the memories file names it.
type Field struct{ Name, Text string }

// Fields lists every text a memory carries that a person, a model or a
// file can fill: the secret guard scans exactly these, so a text field
// added to Memory is added here or it is never checked
// (TestFieldsCoverEveryText). Scope, kind and author are acolyte's own
// words; ScopeKey is the checkout's path or the session's name.
func (m Memory) Fields() []Field {
	return slices.AppendSeq(make([]Field, 0, 5+len(m.Paths)+len(m.Globs)), m.AllFields())
}

// AllFields is Fields one at a time, without a slice of them: the secret
// scan of every memory of a large file allocated one slice per memory.
func (m *Memory) AllFields() iter.Seq[Field] {
	return func(yield func(Field) bool) {
		for _, f := range [...]Field{{"id", m.ID}, {"content", m.Content}, {"topic", m.Topic}, {"source", m.Source}, {"commit", m.Commit}} {
			if !yield(f) {
				return
			}
		}
		for _, p := range m.Paths {
			if !yield(Field{"paths", p}) {
				return
			}
		}
		for _, g := range m.Globs {
			if !yield(Field{"globs", g}) {
				return
			}
		}
	}
}

// Errors callers can test for with errors.Is.
var (
	ErrEmpty        = errors.New("memory is empty")
	ErrTooLarge     = errors.New("memory is too large")
	ErrInvalidText  = errors.New("memory is not valid text")
	ErrUnknownScope = errors.New("unknown scope")
	ErrUnknownKind  = errors.New("unknown kind")
	ErrNotFound     = errors.New("no memory with that id")
	// ErrSecret refuses a memory with a field that looks like a
	// credential, in every scope: a committed file and the team database
	// are read by others, and the local database is a plain file that
	// agents and models read. The check itself lives with the roads that
	// need it (gitsync) and is handed in as a Guard.
	ErrSecret         = errors.New("refusing to store what looks like a secret")
	ErrNoScopeKey     = errors.New("scope needs a key")
	ErrSchemaTooNew   = errors.New("database schema is newer than this acolyte")
	ErrDatabaseLocked = errors.New("database is locked")
	ErrCorrupt        = errors.New("database is corrupt")
	// ErrIO means the operating system refused or failed a read or write
	// of the database: a full disk, a file size limit, lost permissions, a
	// failing device.
	ErrIO     = errors.New("database I/O error")
	ErrNoTeam = errors.New("no team database is configured")
	// ErrTeamSlow means the team side of a search or listing did not
	// answer within team.Toolkit's TeamWait and was left out.
	ErrTeamSlow = errors.New("the team database did not answer in time")
)

// ValidateContent checks text before it is stored, so that nothing unusable
// ever reaches the store or a tracked file.
func ValidateContent(content string) error {
	if !utf8.ValidString(content) {
		return fmt.Errorf("%w: it contains invalid UTF-8; re-encode it as UTF-8", ErrInvalidText)
	}
	if strings.IndexByte(content, 0) >= 0 {
		return fmt.Errorf("%w: it contains NUL bytes; binary content cannot be stored", ErrInvalidText)
	}
	if strings.TrimSpace(content) == "" {
		return fmt.Errorf("%w: give the fact to remember as text", ErrEmpty)
	}
	if len(content) > MaxContentBytes {
		return fmt.Errorf("%w: %d bytes, the limit is %d; store one fact per memory", ErrTooLarge, len(content), MaxContentBytes)
	}
	return validateGlyphs(content)
}

// validateGlyphs refuses text that shows something else than it holds, or
// nothing: only control characters (escape sequences, backspaces), or a
// bidirectional override or isolate, which reorders how the text around it
// is displayed ("Trojan Source"), so that a reviewer of .acolyte/ or a
// model reading the memory would see another fact than the one stored.
func validateGlyphs(text string) error {
	visible := false
	// inCSI is inside a terminal control sequence (ESC [ ... final byte),
	// whose parameters are printable but show nothing.
	inCSI, afterESC := false, false
	for i, r := range text {
		if isBidiControl(r) {
			return bidiError(r, i)
		}
		switch {
		case afterESC && r == '[':
			inCSI = true
		case inCSI:
			inCSI = r < 0x40 || r > 0x7e
		case !unicode.IsControl(r) && !unicode.IsSpace(r):
			visible = true
		}
		if visible {
			// The rest can only hold a bidirectional control, which a
			// search for its lead byte finds faster than decoding every
			// rune: validating a large memories file spent a tenth of
			// its time here.
			if at, r := indexBidi(text[i:]); at >= 0 {
				return bidiError(r, i+at)
			}
			return nil
		}
		afterESC = r == 0x1b
	}
	return fmt.Errorf("%w: it holds only control characters; give the fact to remember as text", ErrInvalidText)
}

func bidiError(r rune, at int) error {
	return fmt.Errorf("%w: it contains the bidirectional control U+%04X at byte %d, which displays the text around it in another order than it is stored; remove it", ErrInvalidText, r, at)
}

// indexBidi is the byte offset and rune of the first bidirectional control
// in s, or -1. Every one is encoded as 0xE2 and two continuation bytes, and
// no rune's encoding holds 0xE2 but at its start, so each 0xE2 found is
// where decoding s rune by rune would stand.
func indexBidi(s string) (int, rune) {
	for i := 0; i < len(s); i++ {
		j := strings.IndexByte(s[i:], 0xE2)
		if j < 0 {
			return -1, 0
		}
		i += j
		if r, _ := utf8.DecodeRuneInString(s[i:]); isBidiControl(r) {
			return i, r
		}
	}
	return -1, 0
}

// isBidiControl says whether r is an explicit bidirectional embedding,
// override or isolate (U+202A-U+202E, U+2066-U+2069). The implicit marks
// (LRM, RLM, ALM) do not reorder text and are left alone.
func isBidiControl(r rune) bool {
	return (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069)
}

// Validate checks a memory's fields.
func (m *Memory) Validate() error {
	if err := ValidateContent(m.Content); err != nil {
		return err
	}
	if _, err := ParseScope(string(m.Scope)); err != nil {
		return err
	}
	if _, err := ParseKind(string(m.Kind)); err != nil {
		return err
	}
	if m.Scope != ScopeUser && m.ScopeKey == "" {
		return fmt.Errorf("%w: %s memories need a %s key", ErrNoScopeKey, m.Scope, m.Scope)
	}
	if err := ValidateGlobs(m.Globs); err != nil {
		return err
	}
	return ValidateTopic(m.Topic)
}

// ValidateTopic checks a topic before it is stored: one line of valid
// UTF-8, at most MaxTopicBytes, so that a filter can name it.
func ValidateTopic(topic string) error {
	if !utf8.ValidString(topic) || strings.ContainsAny(topic, "\x00\n") || len(topic) > MaxTopicBytes {
		return fmt.Errorf("%w: topic must be a single line of at most %d bytes", ErrInvalidText, MaxTopicBytes)
	}
	if strings.IndexFunc(topic, isBidiControl) >= 0 {
		return fmt.Errorf("%w: the topic contains a bidirectional control (U+202A-U+202E, U+2066-U+2069), which displays it in another order than it is stored; remove it", ErrInvalidText)
	}
	return nil
}

// Normalize reduces content to the form used for duplicate detection: case
// and runs of whitespace do not make two facts different.
func Normalize(content string) string {
	return strings.Join(strings.Fields(strings.ToLower(content)), " ")
}

// EstimateTokens is the documented offline token estimate: one token per four
// bytes of UTF-8, rounded up, which tracks BPE tokenizers on English prose and
// code within about 20%.
func EstimateTokens(s string) int {
	return (len(s) + 3) / 4
}
