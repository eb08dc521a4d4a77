package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/acolyte-dev/acolyte/memory/embed/static/internal/wordvec"
)

// distill.py's DIMS, CLS and SEP.
const (
	dims  = 256
	clsID = 101
	sepID = 102
)

// readVocab returns the WordPiece vocabulary of a tokenizer.json, indexed
// by token id.
func readVocab(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var tj struct {
		Model struct {
			Type  string         `json:"type"`
			Vocab map[string]int `json:"vocab"`
		} `json:"model"`
	}
	if err := json.Unmarshal(data, &tj); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if tj.Model.Type != "WordPiece" {
		return nil, fmt.Errorf("%s: model is %q, want WordPiece", path, tj.Model.Type)
	}
	vocab := make([]string, len(tj.Model.Vocab))
	for tok, id := range tj.Model.Vocab {
		if id < 0 || id >= len(vocab) || vocab[id] != "" {
			return nil, fmt.Errorf("%s: token ids are not 0..%d, each once", path, len(vocab)-1)
		}
		vocab[id] = tok
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
