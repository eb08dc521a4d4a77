package wordpiece

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// mapVocab is a vocabulary held in a map, with token ids in insertion
// order.
type mapVocab struct {
	ids    map[string]int
	tokens []string
}

func (v *mapVocab) Find(token string) int {
	if i, ok := v.ids[token]; ok {
		return i
	}
	return -1
}

func vocabOf(tokens ...string) *mapVocab {
	v := &mapVocab{ids: map[string]int{}}
	for _, t := range tokens {
		v.ids[t] = len(v.tokens)
		v.tokens = append(v.tokens, t)
	}
	return v
}

func (v *mapVocab) strings(ids []int) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = v.tokens[id]
	}
	return out
}

func TestWordPiece(t *testing.T) {
	v := vocabOf("un", "##aff", "##able", "aff", "run", "##ning", ",", "hello", "cafe", "東", "京")
	for _, c := range []struct {
		text string
		want string
	}{
		{"unaffable", "un ##aff ##able"},
		{"Running, HELLO", "run ##ning , hello"},
		{"Café", "cafe"},               // accents stripped after lowercasing
		{"東京", "東 京"},                  // each ideograph a word
		{"unknownword hello", "hello"}, // a word no piece covers is dropped whole
		{"unaffx hello", "hello"},      // so is one whose tail no piece covers
		{"hel\u200blo", "hello"},       // format characters are removed
		{"", ""},
	} {
		if got := strings.Join(v.strings(Tokenize(v, c.text)), " "); got != c.want {
			t.Errorf("Tokenize(%q) = %q, want %q", c.text, got, c.want)
		}
	}
	long := strings.Repeat("a", maxWordRunes+1)
	if got := Tokenize(vocabOf("a", "##a"), long); len(got) != 0 {
		t.Errorf("a word of %d characters gave %d pieces, want none, as BERT's [UNK]", maxWordRunes+1, len(got))
	}
}

func FuzzTokenize(f *testing.F) {
	for _, s := range []string{"unaffable", "Café 東京", "a\u0000b", strings.Repeat("x", 200)} {
		f.Add(s)
	}
	v := vocabOf("un", "##aff", "##able", "a", "##a", "x", "##x", "b", "東")
	f.Fuzz(func(t *testing.T, s string) {
		for _, id := range Tokenize(v, s) {
			if id < 0 || id >= len(v.tokens) {
				t.Fatalf("Tokenize(%q) gave id %d outside the vocabulary", s, id)
			}
		}
	})
}

// piecesByRune is appendPieces as it was, building each candidate from the
// word's runes: the reference FuzzPiecesMatchRuneSplit holds it to.
func piecesByRune(ids []int, v Vocabulary, word string) []int {
	if i := v.Find(word); i >= 0 {
		return append(ids, i)
	}
	rs := []rune(word)
	if len(rs) > maxWordRunes {
		return ids
	}
	mark := len(ids)
	for start := 0; start < len(rs); {
		found := -1
		end := len(rs)
		for ; end > start; end-- {
			piece := string(rs[start:end])
			if start > 0 {
				piece = Continuation + piece
			}
			if found = v.Find(piece); found >= 0 {
				break
			}
		}
		if found < 0 {
			return ids[:mark]
		}
		ids = append(ids, found)
		start = end
	}
	return ids
}

// FuzzPiecesMatchRuneSplit: whatever the text, normalize leaves valid
// UTF-8, and every word of it splits into the pieces the rune-by-rune
// split finds, in a vocabulary of the teacher's real pieces and in a small one that leaves most
// words in several pieces or unknown.
func FuzzPiecesMatchRuneSplit(f *testing.F) {
	for _, s := range []string{"unaffable runTool", "héllo wörld naïve", "日本語のテキスト", "deduplicates thumbnailer", "aaaa", "x" + strings.Repeat("ab", 60), "ﬁle Ǆ ß", "a\xffb"} {
		f.Add(s)
	}
	table := teacherPieces(f)
	small := vocabOf("un", "##aff", "##able", "a", "##a", "##b", "b", "h", "##é", "##llo", "日", "##本", "ö", "##ö", "de", "##dup")
	f.Fuzz(func(t *testing.T, text string) {
		norm := normalize(text)
		if !utf8.ValidString(norm) {
			t.Fatalf("normalize(%q) = %q, not valid UTF-8", text, norm)
		}
		for _, word := range preTokenize(norm) {
			for _, v := range []Vocabulary{table, small} {
				if got, want := appendPieces(nil, v, word), piecesByRune(nil, v, word); !slices.Equal(got, want) {
					t.Fatalf("pieces of %q: %v, want %v", word, got, want)
				}
			}
		}
	})
}

// teacherPieces is a vocabulary of every piece the teacher's tokeniser
// made of the texts in testdata/teacher_tokens.jsonl.
func teacherPieces(tb testing.TB) *mapVocab {
	tb.Helper()
	data, err := os.ReadFile("testdata/teacher_tokens.jsonl")
	if err != nil {
		tb.Fatal(err)
	}
	v := vocabOf()
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var c struct {
			Tokens []string `json:"tokens"`
		}
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			tb.Fatal(err)
		}
		for _, tok := range c.Tokens {
			if _, ok := v.ids[tok]; !ok {
				v.ids[tok] = len(v.tokens)
				v.tokens = append(v.tokens, tok)
			}
		}
	}
	if len(v.tokens) < 500 {
		tb.Fatalf("only %d pieces", len(v.tokens))
	}
	return v
}
