package derive

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/acolyte-dev/acolyte/internal/lazyre"
	"github.com/acolyte-dev/acolyte/memory"
)

// Rule splitting. Each bullet, numbered item or paragraph of an instruction
// file is one rule:
//   - nested bullets and continuation lines fold into their top-level item;
//   - a code fence belongs to the item or paragraph it directly follows (or
//     that ends with ":"), and is its own rule otherwise; fences are never
//     split;
//   - headings, thematic breaks and HTML comments are not rules, and blocks
//     of fewer than two words ("Notes:", "TBD", "@AGENTS.md") are noise;
//   - a document with a single level-1 heading at the top treats it as the
//     title, so sources read AGENTS.md#Testing rather than
//     AGENTS.md#Project guidelines/Testing.
//
// Rules in nested files start with "In <folder>/: " so that a search result
// says where the rule applies.

var (
	headingRe  = lazyre.New(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`)
	listItemRe = lazyre.New(`^( *)([-*+]|\d{1,9}[.)])(?:[ \t]+(.*))?$`)
	breakRe    = lazyre.New(`^ {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$`)
	fenceRe    = lazyre.New("^( *)(`{3,}|~{3,})")
	setext1Re  = lazyre.New(`^ {0,3}=+[ \t]*$`)
	setext2Re  = lazyre.New(`^ {0,3}-+[ \t]*$`)
)

type heading struct {
	level int
	text  string
}

type blockKind int

const (
	paragraphBlock blockKind = iota
	itemBlock
	fenceBlock
)

// block is one candidate rule while a file is being split.
type block struct {
	kind     blockKind
	line     int // 1-based line where the block starts
	headings []heading
	lines    []string
	// contentIndent is where an item's text starts; deeper lines belong to it.
	contentIndent int
}

func (b *block) text() string {
	lines := make([]string, len(b.lines))
	for i, l := range b.lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.Trim(strings.Join(lines, "\n"), "\n")
}

// splitMarkdown splits one instruction file into its blocks, and says
// whether it opens with its only level-1 heading (its title).
func splitMarkdown(src string) (blocks []*block, titleLevel1 bool) {
	sp := &mdSplitter{lines: strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n")}
	for sp.i = 0; sp.i < len(sp.lines); sp.i++ {
		sp.line(expandTabs(sp.lines[sp.i]))
	}
	sp.closeCurrent()
	return sp.blocks, sp.level1Count == 1 && sp.firstLevel == 1
}

// mdSplitter is splitMarkdown's state, a line at a time.
type mdSplitter struct {
	lines       []string
	i           int // the line read, 0-based
	blocks      []*block
	stack       []heading
	current     *block // the open paragraph or item
	previous    *block // the last closed block, which a fence may still join
	blankBefore bool
	inComment   bool
	level1Count int
	firstLevel  int
}

func (sp *mdSplitter) closeCurrent() {
	if sp.current != nil {
		sp.blocks = append(sp.blocks, sp.current)
		sp.previous = sp.current
		sp.current = nil
	}
}

func (sp *mdSplitter) open(kind blockKind) *block {
	sp.closeCurrent()
	sp.current = &block{kind: kind, line: sp.i + 1, headings: append([]heading(nil), sp.stack...)}
	return sp.current
}

// inItem says whether the open block is an item that a line indented by
// indent or more continues.
func (sp *mdSplitter) inItem(indent int) bool {
	return sp.current != nil && sp.current.kind == itemBlock && indent >= sp.current.contentIndent
}

// line reads one line (its tabs expanded), and any more a fence it opens
// takes.
func (sp *mdSplitter) line(line string) {
	indent := len(line) - len(strings.TrimLeft(line, " "))
	trimmed := strings.TrimSpace(line)
	switch {
	case sp.inComment:
		sp.inComment = !strings.Contains(line, "-->")
		return
	case trimmed == "":
		if sp.current != nil && sp.current.kind == paragraphBlock {
			sp.closeCurrent()
		}
		sp.blankBefore = true
		return
	case strings.HasPrefix(trimmed, "<!--"):
		sp.inComment = !strings.Contains(trimmed, "-->")
		sp.closeCurrent()
		return
	}
	if m := fenceRe().FindStringSubmatch(line); m != nil && (indent <= 3 || sp.inItem(indent)) {
		sp.fence(line, indent, m[2])
	} else if m := headingRe().FindStringSubmatch(line); m != nil {
		sp.closeCurrent()
		sp.heading(len(m[1]), strings.TrimSpace(m[2]))
	} else if sp.current != nil && sp.current.kind == paragraphBlock && len(sp.current.lines) == 1 && (setext1Re().MatchString(line) || setext2Re().MatchString(line)) {
		// The paragraph's one line is a heading's text, underlined.
		level := 2
		if setext1Re().MatchString(line) {
			level = 1
		}
		text := strings.TrimSpace(sp.current.lines[0])
		sp.current = nil
		sp.heading(level, text)
	} else if breakRe().MatchString(line) {
		sp.closeCurrent()
		sp.previous = nil
	} else if m := listItemRe().FindStringSubmatch(line); m != nil {
		sp.item(line, indent, m)
	} else {
		sp.text(line, indent, trimmed)
	}
	sp.blankBefore = false
}

// heading opens a section: blocks after it carry it, under the open
// headings of lower levels.
func (sp *mdSplitter) heading(level int, text string) {
	sp.previous = nil
	sp.stack = pushHeading(sp.stack, heading{level, text})
	if sp.firstLevel == 0 {
		sp.firstLevel = level
	}
	if level == 1 {
		sp.level1Count++
	}
}

// fence reads a code fence whole, from its opening line to the line that
// closes it with marker, into the block it belongs to (fenceTarget) or a
// block of its own.
func (sp *mdSplitter) fence(line string, indent int, marker string) {
	target := fenceTarget(sp.current, sp.previous, indent, sp.blankBefore)
	if target == nil {
		target = sp.open(fenceBlock)
		target.contentIndent = indent
	} else if target != sp.current {
		// Joining the block before a blank line: it is open again.
		sp.blocks = sp.blocks[:len(sp.blocks)-1]
		sp.current = target
	}
	if sp.blankBefore && len(target.lines) > 0 {
		target.lines = append(target.lines, "")
	}
	dedent := min(indent, target.contentIndent)
	if target.kind == paragraphBlock {
		dedent = indent
	}
	target.lines = append(target.lines, trimIndent(line, dedent))
	for sp.i+1 < len(sp.lines) {
		sp.i++
		fl := expandTabs(sp.lines[sp.i])
		target.lines = append(target.lines, trimIndent(fl, dedent))
		ft := strings.TrimSpace(fl)
		if strings.HasPrefix(ft, marker) && strings.Trim(ft, marker[:1]) == "" {
			break
		}
	}
	if target.kind != itemBlock {
		sp.closeCurrent()
	}
}

// item opens a list item, or folds a nested one into the open item; m is
// listItemRe's match of the line.
func (sp *mdSplitter) item(line string, indent int, m []string) {
	if sp.inItem(indent) {
		sp.current.lines = append(sp.current.lines, trimIndent(line, sp.current.contentIndent))
		return
	}
	b := sp.open(itemBlock)
	b.contentIndent = len(m[1]) + len(m[2]) + 1
	b.lines = append(b.lines, m[3])
}

// text continues the open item or paragraph with a line of text, or opens
// a paragraph.
func (sp *mdSplitter) text(line string, indent int, trimmed string) {
	switch c := sp.current; {
	case c != nil && c.kind == itemBlock && !sp.blankBefore:
		c.lines = append(c.lines, trimIndent(line, c.contentIndent))
	case sp.inItem(indent):
		c.lines = append(c.lines, "", trimIndent(line, c.contentIndent))
	case c != nil && c.kind == paragraphBlock:
		c.lines = append(c.lines, trimmed)
	default:
		sp.open(paragraphBlock).lines = []string{trimmed}
	}
}

// fenceTarget picks the block a code fence belongs to, or nil when the fence
// stands alone.
func fenceTarget(current, previous *block, indent int, blankBefore bool) *block {
	candidate := current
	if candidate == nil {
		candidate = previous
	}
	switch {
	case candidate == nil || candidate.kind == fenceBlock:
		return nil
	case candidate == current && !blankBefore:
		return candidate
	case candidate.kind == itemBlock && indent >= candidate.contentIndent:
		return candidate
	case strings.HasSuffix(candidate.text(), ":"):
		return candidate
	}
	return nil
}

func pushHeading(stack []heading, h heading) []heading {
	for len(stack) > 0 && stack[len(stack)-1].level >= h.level {
		stack = stack[:len(stack)-1]
	}
	return append(stack, h)
}

func expandTabs(line string) string {
	rest := strings.TrimLeft(line, " \t")
	lead := line[:len(line)-len(rest)]
	if !strings.Contains(lead, "\t") {
		return line
	}
	return strings.ReplaceAll(lead, "\t", "    ") + rest
}

func trimIndent(line string, n int) string {
	i := 0
	for i < n && i < len(line) && line[i] == ' ' {
		i++
	}
	return line[i:]
}

// RulesFromFile splits one instruction file into rule memories. rel is its
// slash-separated path relative to the worktree root, which becomes part of
// every rule's source and id.
func RulesFromFile(rel string, src []byte) ([]memory.Memory, error) {
	found, refused := rulesFromFile(rel, src)
	if len(refused) > 0 {
		return nil, refused[0]
	}
	rules := make([]memory.Memory, len(found))
	for i, r := range found {
		rules[i] = r.Memory
	}
	return rules, nil
}

// lineRule is a rule with the line its block starts on, for messages.
type lineRule struct {
	memory.Memory
	line int
}

// rulesFromFile splits one instruction file; a block that is not a valid
// memory is refused alone, so one bad rule does not hold back the others.
func rulesFromFile(rel string, src []byte) ([]lineRule, []Refusal) {
	return rulesIn(rel, path.Dir(rel), src)
}

// rulesIn splits a file whose rules apply in folder: its own, or for a file
// a CLAUDE.md imports, the importer's. Other agents' rule files apply from
// the root, where those agents read them, and say in their front matter
// which paths they are for.
func rulesIn(rel, folder string, src []byte) ([]lineRule, []Refusal) {
	if !utf8.ValidString(rel) {
		// The path becomes each rule's source, which the file stores as text.
		return nil, []Refusal{{File: fmt.Sprintf("%q", rel), Problem: ProblemInvalid,
			Message: fmt.Sprintf("%v: the path is not valid UTF-8; rename the file or its folder", memory.ErrInvalidText)}}
	}
	if !utf8.Valid(src) {
		return nil, []Refusal{{File: rel, Problem: ProblemInvalid,
			Message: fmt.Sprintf("%v: it contains invalid UTF-8; save it as UTF-8", memory.ErrInvalidText)}}
	}
	text := string(src)
	var fm FrontMatter
	if isAgentRuleFile(rel) {
		fm, text, _ = ParseFrontMatter(text)
		folder = "."
		// Every rule of the file would carry the description as its topic,
		// which is stored lower-cased, where the detector no longer sees it.
		if f, found := SecretRefusal(rel, 0, memory.Memory{Topic: fm.Description, Content: strings.Join(fm.Globs, " ")}); found {
			f.Message += " (in the front matter)"
			return nil, []Refusal{f}
		}
		// A rule scoped to paths it cannot name would apply nowhere, or
		// everywhere: the file is refused until its globs are fixed.
		if err := memory.ValidateGlobs(fm.AppliesTo()); err != nil {
			return nil, []Refusal{{File: rel, Line: 1, Problem: ProblemInvalid,
				Message: fmt.Sprintf("%v (in the front matter's paths, globs or applyTo); fix the glob, as in migrations/** or **/*.tsx", err)}}
		}
	}
	prefix := fm.scopePrefix()
	if folder != "." {
		prefix = "In " + folder + "/: " + prefix
	}
	blocks, hasTitle := splitMarkdown(text)
	var (
		rules   []lineRule
		refused []Refusal
	)
	seen := make(map[string]bool)
	for _, b := range blocks {
		text := b.text()
		if len(strings.Fields(text)) < 2 {
			// A lone word is no rule, but a lone credential is still
			// reported: the author should learn it sits in the file.
			if f, found := SecretRefusal(rel, b.line, memory.Memory{Content: text}); found {
				refused = append(refused, f)
			}
			continue
		}
		headings := b.headings
		if hasTitle && len(headings) > 0 && headings[0].level == 1 {
			headings = headings[1:]
		}
		source := rel
		var topic string
		if len(headings) > 0 {
			names := make([]string, len(headings))
			for i, h := range headings {
				names[i] = h.text
			}
			source += "#" + strings.Join(names, "/")
			topic = TopicFromHeadings(names)
		}
		if topic == "" && fm.Description != "" {
			topic = TopicFromHeadings([]string{fm.Description})
		}
		content := prefix + text
		if err := memory.ValidateContent(content); err != nil {
			refused = append(refused, Refusal{File: rel, Line: b.line, Problem: ProblemInvalid,
				Message: fmt.Sprintf("%v; split the rule into smaller items", err)})
			continue
		}
		id := ruleID(source, content)
		if seen[id] {
			continue
		}
		seen[id] = true
		rules = append(rules, lineRule{memory.Memory{
			ID:      id,
			Scope:   memory.ScopeProject,
			Kind:    memory.KindRule,
			Content: content,
			Topic:   topic,
			Source:  source,
			Globs:   fm.AppliesTo(),
		}, b.line})
	}
	return rules, refused
}

// ruleID derives a rule's id from where it is and what it says, so every
// clone derives the same id and an edited rule gets a new one.
func ruleID(source, content string) string {
	return "r-" + shortHash(source+"\n"+memory.Normalize(content))
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}

// TopicFromHeadings files a rule under its section headings, outermost
// first ("testing / unit tests"): the deepest heading names the rule's
// context most closely, and a topic filter on the outer one still keeps it
// (memory.Filter). Measured on coding-dev with its headings restored,
// the whole path gave fused recall@5 0.898 against 0.890 for the outermost
// heading alone (CONTRIBUTING.md, "Topics").
//
// Each heading becomes usable as a topic: lower case, one line, no control
// characters (a stray NUL or escape must not give a topic the file then
// refuses to read back), and " / " inside a heading becomes "/". The path
// keeps to memory.MaxTopicBytes by dropping its deepest headings, and a
// single heading too long for it is cut.
func TopicFromHeadings(headings []string) string {
	var topic string
	for _, h := range headings {
		h = strings.Map(func(r rune) rune {
			if unicode.IsControl(r) && !unicode.IsSpace(r) {
				return -1
			}
			return r
		}, h)
		h = strings.ToLower(strings.Join(strings.Fields(h), " "))
		// A heading's own " / " would read as two levels.
		h = strings.ReplaceAll(h, memory.TopicSeparator, "/")
		if h == "" {
			continue
		}
		next := h
		if topic != "" {
			next = topic + memory.TopicSeparator + h
		}
		if len(next) > memory.MaxTopicBytes {
			if topic != "" {
				break
			}
			for len(next) > memory.MaxTopicBytes {
				_, size := utf8.DecodeLastRuneInString(next)
				next = next[:len(next)-size]
			}
		}
		topic = next
	}
	return topic
}

// Rules derives the rules of every instruction file in the worktree at root.
// A file with the same bytes as one already read in its folder (CLAUDE.md as
// a copy of or symlink to AGENTS.md) adds nothing; a file that resolves
// outside the repository is not read, and a rule that is invalid or holds a
// secret is refused with an error naming its file and line.
func Rules(root string) ([]memory.Memory, error) {
	d, err := Worktree(root)
	if err != nil {
		return nil, err
	}
	var rules []memory.Memory
	for _, m := range d.Memories {
		if m.Kind == memory.KindRule {
			rules = append(rules, m)
		}
	}
	return rules, d.Err()
}
