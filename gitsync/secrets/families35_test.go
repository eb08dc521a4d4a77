package secrets

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"
)

// A credential wrapped in base64 is found with the words that name it, and
// a line of many runs of base64 that decode to text costs its length, not
// its length times the runs (each is read with a window around it).
func TestBase64RunsAreReadInTheirPlace(t *testing.T) {
	word := base64.StdEncoding.EncodeToString([]byte("plain words here"))
	if hits := scanSecrets("password: "+base64.StdEncoding.EncodeToString([]byte("Zosze4bv@prq9Ebs")), 0); len(hits) != 1 || hits[0].kind != "a base64-encoded password" {
		t.Errorf("a base64'd password after password: found %v", hits)
	}
	for _, n := range []int{1000, 8000} {
		line := strings.Repeat(word+" ", n)
		start := time.Now()
		if hits := scanSecrets(line, 0); len(hits) != 0 {
			t.Fatalf("%d runs of plain words: %v", n, hits)
		}
		d := time.Since(start)
		t.Logf("%d runs of base64 in one line (%d KiB): %v", n, len(line)>>10, d)
		if per := d / time.Duration(n); per > 200*time.Microsecond {
			t.Errorf("%v a run: the cost grows with the line", per)
		}
	}
}
