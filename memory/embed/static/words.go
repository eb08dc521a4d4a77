package static

import (
	"strings"
	"unicode"
)

// Words splits text into lowercase words the way code and prose both
// read: identifiers break at case changes and punctuation (runTool → run
// tool, HTTPServer → http server, memory_embeddings → memory embeddings,
// cmd/root.go → cmd root go), decimals stay whole (3.5), letters and
// digits stay together (utf8, sha256), and English contractions lose
// their clitic except for the negation (don't → do not, it's → it).
func Words(text string) []string {
	var words []string
	rs := []rune(text)
	for i := 0; i < len(rs); {
		if !isAlnum(rs[i]) {
			i++
			continue
		}
		j := i + 1
		for j < len(rs) && (isAlnum(rs[j]) || joins(rs, j)) {
			j++
		}
		words = appendChunk(words, rs[i:j])
		i = j
	}
	return words
}

func isAlnum(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// joins reports whether the punctuation at rs[j] belongs inside a word: a
// decimal point between digits or an apostrophe between letters.
func joins(rs []rune, j int) bool {
	if j+1 >= len(rs) {
		return false
	}
	prev, next := rs[j-1], rs[j+1]
	switch rs[j] {
	case '.':
		return unicode.IsDigit(prev) && unicode.IsDigit(next)
	case '\'', '’':
		return unicode.IsLetter(prev) && unicode.IsLetter(next)
	}
	return false
}

// negations spells out the contractions whose stem changes.
var negations = map[string]string{"can": "can", "won": "will", "shan": "shall", "ain": "is"}

func appendChunk(words []string, chunk []rune) []string {
	apos := -1
	for k, r := range chunk {
		if r == '\'' || r == '’' {
			apos = k
			break
		}
	}
	if apos < 0 {
		return appendCamel(words, chunk)
	}
	stem, clitic := chunk[:apos], strings.ToLower(string(chunk[apos+1:]))
	if clitic != "t" || len(stem) < 2 || unicode.ToLower(stem[len(stem)-1]) != 'n' {
		// 's, 'm, 're, 'll, 've, 'd: the stem carries the meaning.
		return appendCamel(words, stem)
	}
	base := strings.ToLower(string(stem))
	if full, ok := negations[base]; ok {
		return append(words, full, "not")
	}
	return append(appendCamel(words, stem[:len(stem)-1]), "not") // don't → do not
}

// appendCamel splits an identifier at its case changes.
func appendCamel(words []string, rs []rune) []string {
	start := 0
	for k := 1; k < len(rs); k++ {
		if !unicode.IsUpper(rs[k]) {
			continue
		}
		prev := rs[k-1]
		nextLower := k+1 < len(rs) && unicode.IsLower(rs[k+1])
		if unicode.IsLower(prev) || ((unicode.IsUpper(prev) || unicode.IsDigit(prev)) && nextLower) {
			words = append(words, strings.ToLower(string(rs[start:k])))
			start = k
		}
	}
	return append(words, strings.ToLower(string(rs[start:])))
}
