package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/acolyte-dev/acolyte/memory/embed/static/internal/wordvec"
)

// TestWriteTableKeepsTextTokensOnly converts a vocabulary and distill.py's
// rows as gen does, and reads the table back as the embedder does.
func TestWriteTableKeepsTextTokensOnly(t *testing.T) {
	dir := t.TempDir()
	vocab := map[string]int{"[CLS]": clsID, "[SEP]": sepID, "##ing": sepID + 1, "run": sepID + 2}
	for id := range clsID {
		vocab[fmt.Sprintf("[unused%d]", id)] = id
	}
	tj, _ := json.Marshal(map[string]any{"model": map[string]any{"type": "WordPiece", "vocab": vocab}})
	tokPath := filepath.Join(dir, "tokenizer.json")
	if err := os.WriteFile(tokPath, tj, 0o644); err != nil {
		t.Fatal(err)
	}
	words, err := readVocab(tokPath)
	if err != nil {
		t.Fatal(err)
	}
	raw := make([]byte, len(words)*dims*4)
	for id := range words {
		for d := range dims {
			binary.LittleEndian.PutUint32(raw[(id*dims+d)*4:], math.Float32bits(float32(id+d)))
		}
	}
	vecPath := filepath.Join(dir, "vectors.f32")
	if err := os.WriteFile(vecPath, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "tokvec.bin")
	if err := writeTable(out, words, vecPath); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	table, err := wordvec.Open(string(data))
	if err != nil {
		t.Fatal(err)
	}
	if table.Len() != 2 || table.Find("run") < 0 || table.Find("##ing") < 0 || table.Find("[CLS]") >= 0 {
		t.Fatalf("table holds %d tokens; want run and ##ing only", table.Len())
	}
	if table.Name != name || table.Dim != dims {
		t.Errorf("table is %s with %d dimensions, want %s with %d", table.Name, table.Dim, name, dims)
	}
	i := table.Find("run")
	if table.Rank(i) != sepID+2 {
		t.Errorf("rank of run = %d, want its id %d", table.Rank(i), sepID+2)
	}
	v := make([]float32, dims)
	table.AddTo(v, i, 1)
	if want := float64(sepID + 2 + dims - 1); math.Abs(float64(v[dims-1])-want) > want/100 {
		t.Errorf("last element of run = %v, want about %v", v[dims-1], want)
	}
}

func TestReadVocabRefusesAnotherModel(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokenizer.json")
	if err := os.WriteFile(path, []byte(`{"model":{"type":"BPE","vocab":{"a":0}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readVocab(path); err == nil {
		t.Error("a BPE tokenizer.json was read as WordPiece")
	}
}
