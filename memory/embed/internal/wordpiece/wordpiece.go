// Package wordpiece is the teacher's tokeniser, reimplemented: BERT's uncased
// basic tokeniser followed by WordPiece. The static embedder splits text
// with it, and internal/gen splits the distillation corpus with it, so the
// table is fitted to exactly the pieces it is later looked up by.
package wordpiece

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// The rules are those the tokenizer.json shipped with all-MiniLM-L6-v2
// configures (BertNormalizer with clean_text,
// handle_chinese_chars and lowercase, accents stripped because lowercase
// is on; BertPreTokenizer; WordPiece with "##" continuations and at most
// 100 characters a word). The token vectors were made for exactly these
// pieces, so any difference here is a difference in meaning;
// TestTokensMatchTheTeacher holds the two together on text the teacher's
// own tokeniser split.

const (
	// Continuation marks a piece that continues a word.
	Continuation = "##"
	maxWordRunes = 100
)

// Vocabulary is what WordPiece needs of the token table.
type Vocabulary interface {
	// Find returns the index of token, or -1.
	Find(token string) int
}

// Tokenize returns the vocabulary indexes of text's WordPiece tokens. A word
// WordPiece cannot cover (BERT's [UNK]) contributes nothing, as the
// unknown token carries no meaning of its own.
func Tokenize(v Vocabulary, text string) []int {
	return tokenize(v, text, -1)
}

// TokenizeUnknown is Tokenize for a model that reads BERT's [UNK]: a word
// WordPiece cannot cover contributes the token unknown, as the teacher's
// tokeniser has it, so the model sees that a word stood there.
func TokenizeUnknown(v Vocabulary, text string, unknown int) []int {
	return tokenize(v, text, unknown)
}

func tokenize(v Vocabulary, text string, unknown int) []int {
	var ids []int
	for _, word := range preTokenize(normalize(text)) {
		n := len(ids)
		if ids = appendPieces(ids, v, word); len(ids) == n && unknown >= 0 {
			ids = append(ids, unknown)
		}
	}
	return ids
}

// normalize applies BertNormalizer: control characters dropped, every
// whitespace a space, CJK ideographs padded so each is a word of its own,
// lowercase, accents stripped (NFD, then no combining marks).
func normalize(text string) string {
	var b strings.Builder
	b.Grow(len(text))
	if !isASCII(text) {
		text = norm.NFD.String(text) // ASCII is its own decomposition
	}
	for _, r := range text {
		switch {
		case r == 0 || r == unicode.ReplacementChar || isControl(r):
			continue
		case isWhitespace(r):
			b.WriteByte(' ')
		case isCJK(r):
			b.WriteByte(' ')
			b.WriteRune(r)
			b.WriteByte(' ')
		case unicode.Is(unicode.Mn, r):
			continue
		case r < utf8.RuneSelf:
			b.WriteByte(byte(unicode.ToLower(r)))
		default:
			b.WriteString(strings.ToLower(string(r)))
		}
	}
	return b.String()
}

// preTokenize applies BertPreTokenizer: words split at whitespace, and
// every punctuation character a word of its own.
func preTokenize(text string) []string {
	var words []string
	start := -1
	for i, r := range text {
		switch {
		case r == ' ':
			if start >= 0 {
				words = append(words, text[start:i])
				start = -1
			}
		case isPunctuation(r):
			if start >= 0 {
				words = append(words, text[start:i])
				start = -1
			}
			words = append(words, string(r))
		default:
			if start < 0 {
				start = i
			}
		}
	}
	if start >= 0 {
		words = append(words, text[start:])
	}
	return words
}

// appendPieces splits one word greedily, longest piece first, as WordPiece
// does; a word with any part no piece covers is unknown as a whole.
func appendPieces(ids []int, v Vocabulary, word string) []int {
	if i := v.Find(word); i >= 0 {
		return append(ids, i) // most words are one piece
	}
	if utf8.RuneCountInString(word) > maxWordRunes {
		return ids
	}
	// Each candidate piece is a slice of the word, or of "##" and the rest
	// of the word from where the piece starts: one string per start, where
	// building each candidate from the word's runes cost a string per
	// candidate, and an import of 100k memories a tenth of its embedding.
	// Words come from normalize, whose output is valid UTF-8, so the
	// word's own bytes are the runes' encoding.
	mark := len(ids)
	for start := 0; start < len(word); {
		rest := word[start:]
		if start > 0 {
			rest = Continuation + rest
		}
		found, end := -1, len(rest)
		for ; end > len(rest)-len(word[start:]); end = lastRuneStart(rest, end) {
			if found = v.Find(rest[:end]); found >= 0 {
				break
			}
		}
		if found < 0 {
			return ids[:mark]
		}
		ids = append(ids, found)
		start += end - (len(rest) - len(word[start:]))
	}
	return ids
}

// lastRuneStart is where the last rune of s[:end] starts.
func lastRuneStart(s string, end int) int {
	_, size := utf8.DecodeLastRuneInString(s[:end])
	return end - size
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// isWhitespace is BERT's: space, tab, newline, carriage return or any
// space separator.
func isWhitespace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\r' || unicode.Is(unicode.Zs, r)
}

// isControl is BERT's: any control or format character but the three
// whitespace ones.
func isControl(r rune) bool {
	if r == '\t' || r == '\n' || r == '\r' {
		return false
	}
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs)
}

// isPunctuation is BERT's: every non-alphanumeric ASCII symbol, such as $
// and ^, which Unicode does not class as punctuation, and any Unicode
// punctuation.
func isPunctuation(r rune) bool {
	if r >= 33 && r <= 47 || r >= 58 && r <= 64 || r >= 91 && r <= 96 || r >= 123 && r <= 126 {
		return true
	}
	return unicode.IsPunct(r)
}

// isCJK is BERT's range of CJK ideographs.
func isCJK(r rune) bool {
	return r >= 0x4E00 && r <= 0x9FFF || r >= 0x3400 && r <= 0x4DBF ||
		r >= 0x20000 && r <= 0x2A6DF || r >= 0x2A700 && r <= 0x2B73F ||
		r >= 0x2B740 && r <= 0x2B81F || r >= 0x2B820 && r <= 0x2CEAF ||
		r >= 0xF900 && r <= 0xFAFF || r >= 0x2F800 && r <= 0x2FA1F
}
