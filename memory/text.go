package memory

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"unicode"
)

// What every engine derives from a memory's text, defined once so that the
// local store and the team database deduplicate, embed and index alike.

// ContentHash is the key duplicates are detected by: equal for contents
// that Normalize makes equal.
func ContentHash(content string) string {
	sum := sha256.Sum256([]byte(Normalize(content)))
	return hex.EncodeToString(sum[:16])
}

// LexicalText is what an engine's full-text index sees of a memory: the
// content, the topic, the words hidden inside identifiers, which FTS5's
// tokenizer would keep whole (runTool, HTTP2Server; it already splits at
// punctuation by itself), and the wholes of identifiers it would split
// (http_server is also httpserver), so a question that writes one word
// finds a memory that writes its parts. On the dev sets the wholes moved
// recall@5 only on LoCoMo (fused 0.6020 to 0.6035).
func LexicalText(m *Memory) string {
	var b strings.Builder
	b.WriteString(m.Content)
	if m.Topic != "" {
		b.WriteString("\n")
		b.WriteString(m.Topic)
	}
	for _, tok := range strings.FieldsFunc(m.Content, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if parts := splitIdentifier(tok); len(parts) > 1 {
			b.WriteString("\n")
			b.WriteString(strings.Join(parts, " "))
		}
	}
	for _, w := range identifierWholes(m.Content) {
		b.WriteString("\n")
		b.WriteString(w)
	}
	return b.String()
}

// LexicalForms is the second text a lexical index keeps of a memory: the
// derivational base (see DerivationalBase) of each word of the content and
// topic. A search reaches it only through kin (KinForms), so a memory that
// says "Deduplication" is a kin of a question that says "duplicate", at
// KinWeight, and never an exact match.
func LexicalForms(m *Memory) string {
	var forms []string
	for _, w := range Words(m.Content + "\n" + m.Topic) {
		if b := DerivationalBase(w); b != "" && !slices.Contains(forms, b) {
			forms = append(forms, b)
		}
	}
	return strings.Join(forms, " ")
}

// EmbedText is the text whose vector stands for a memory.
func EmbedText(m *Memory) string {
	if m.Topic == "" {
		return m.Content
	}
	return m.Topic + ": " + m.Content
}
