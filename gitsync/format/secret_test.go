package format

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/acolyte-dev/acolyte/internal/secrets/secretstest"
	"github.com/acolyte-dev/acolyte/memory"
)

// TestFindSecretsFindsWhatFindSecretFinds: over a list large enough to be
// scanned in parallel, FindSecrets finds each memory FindSecret finds, in
// order, in every field, at the ends of the list and of each chunk.
func TestFindSecretsFindsWhatFindSecretFinds(t *testing.T) {
	const n = 25_001
	mems := make([]memory.Memory, n)
	for i := range mems {
		mems[i] = stored(fmt.Sprintf("01K%08d", i), fmt.Sprintf("the uploader retries %d times after a failed login", i), t0)
	}
	creds := secretstest.Credentials
	for k, i := range []int{0, 1, n/2 - 1, n / 2, n/2 + 1, 12_500, 12_501, n - 1} {
		c := creds[k%len(creds)].Content
		switch k % 3 {
		case 0:
			mems[i].Content = c
		case 1:
			mems[i].Topic = "ops"
			mems[i].Source = c
		case 2:
			mems[i].Paths = []string{"a.go", c}
		}
	}
	var want []SecretAt
	for i, m := range mems {
		if sec, found := FindSecret(m); found {
			want = append(want, SecretAt{i, sec})
		}
	}
	if got := FindSecrets(mems); len(want) < 6 || !reflect.DeepEqual(got, want) {
		t.Fatalf("FindSecrets:\n%+v\nFindSecret one by one:\n%+v", got, want)
	}
}
