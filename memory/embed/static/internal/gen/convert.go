package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/acolyte-dev/acolyte/memory/embed/internal/teacher"
	"github.com/acolyte-dev/acolyte/memory/embed/static/internal/wordvec"
)

// distill.py's DIMS, CLS and SEP.
const (
	dims  = 256
	clsID = 101
	sepID = 102
)

// readVocab returns the teacher's WordPiece vocabulary, indexed by token
// id, having checked the ids distill.py assumes.
func readVocab(path string) ([]string, error) {
	vocab, err := teacher.ReadVocab(path)
	if err != nil {
		return nil, err
	}
	// distill.py wraps each token in these by id.
	if len(vocab) <= sepID || vocab[clsID] != "[CLS]" || vocab[sepID] != "[SEP]" {
		return nil, fmt.Errorf("%s: [CLS] and [SEP] are not tokens %d and %d, as distill.py assumes", path, clsID, sepID)
	}
	return vocab, nil
}

// special reports the tokens WordPiece never produces from text: [PAD],
// [UNK], [CLS], [SEP], [MASK] and the [unusedN] slots.
func special(tok string) bool {
	return len(tok) > 2 && strings.HasPrefix(tok, "[") && strings.HasSuffix(tok, "]")
}

// writeTable writes the rows distill.py wrote for the vocabulary, but the
// special tokens, as a wordvec table. A token's rank is its id, the order
// the SIF weights were estimated from.
func writeTable(out string, vocab []string, vectorsPath string) error {
	raw, err := os.ReadFile(vectorsPath)
	if err != nil {
		return err
	}
	if len(raw) != len(vocab)*dims*4 {
		return fmt.Errorf("%s has %d bytes, want %d tokens × %d float32s", vectorsPath, len(raw), len(vocab), dims)
	}
	var words []wordvec.Word
	for id, tok := range vocab {
		if special(tok) {
			continue
		}
		v := make([]float32, dims)
		for d := range v {
			v[d] = math.Float32frombits(binary.LittleEndian.Uint32(raw[(id*dims+d)*4:]))
		}
		words = append(words, wordvec.Word{Text: tok, Rank: id, Vector: v})
	}
	var buf bytes.Buffer
	if err := wordvec.Write(&buf, name, dims, len(vocab), words); err != nil {
		return err
	}
	return os.WriteFile(out, buf.Bytes(), 0o644)
}
