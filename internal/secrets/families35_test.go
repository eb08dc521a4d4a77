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
	wrapped := base64.StdEncoding.EncodeToString([]byte("DB_PASSWORD=Zosze4bv@prq9Ebs"))
	if hits := scanSecrets("the app's env, base64'd: "+wrapped, 0); len(hits) != 1 || hits[0].kind != "a base64-encoded password" {
		t.Errorf("a base64'd DB_PASSWORD=…: found %v", hits)
	}
	// A JSON Web Token's parts are base64 of JSON: it stays a JWT.
	jwt := "eyJ" + "hbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.Q3JQ7Rai-UJQ1cpxKTU5wxLW1fITeqkfa485kB7WEJ8"
	if hits := scanSecrets("Authorization: Bearer "+jwt, 0); len(hits) != 1 || hits[0].kind != "a JSON Web Token" {
		t.Errorf("a JWT: found %v", hits)
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
