package format

import (
	"runtime"
	"slices"
	"sync"

	"github.com/acolyte-dev/acolyte/internal/secrets"
	"github.com/acolyte-dev/acolyte/memory"
)

// Secret is where a memory holds a credential: the field, the kind of
// credential and the line of the field it starts on. Like secrets.Finding
// it never carries the text, so no message built from it can repeat the
// secret.
type Secret struct {
	Field, Kind string
	Line        int
}

// FindSecret is the one secret check of a whole memory, over every field
// memory.Memory.Fields lists. Every road into a store calls it, directly
// or through gitsync.RefuseSecret, so that no road checks only the content
// and forgets a topic, a source, a commit, a path or an id.
func FindSecret(m memory.Memory) (Secret, bool) {
	for f := range m.AllFields() {
		if f.Text == "" {
			continue
		}
		if found := secrets.Find(f.Text); len(found) > 0 {
			return Secret{Field: f.Name, Kind: found[0].Kind, Line: found[0].Line}, true
		}
	}
	return Secret{}, false
}

// Phrase says what was found where, after the memory's name: "contains
// X" for its content, "contains X in its topic" for another field.
func (s Secret) Phrase() string {
	if s.Field == "content" {
		return "contains " + s.Kind
	}
	return "contains " + s.Kind + " in its " + s.Field
}

// String is Phrase as a clause: "it contains X in its topic".
func (s Secret) String() string { return "it " + s.Phrase() }

// Name names the memory m in a message about the secret s: by its id,
// unless the id is where the secret is, when it is named by where it is.
func (s Secret) Name(m memory.Memory, where string) string {
	if s.Field == "id" {
		return "the memory " + where
	}
	return "memory " + m.ID
}

// SecretAt is a memory of a list that holds a credential: its index in the
// list, and where in it the credential is.
type SecretAt struct {
	Index int
	Secret
}

// FindSecrets is FindSecret over every memory of mems, in mems' order. A
// large list is scanned on every CPU, as DecodeAll decodes one: the scan was
// about half of what `acolyte check` spent on 100k memories, and each
// memory's scan is independent of the others'.
func FindSecrets(mems []memory.Memory) []SecretAt {
	scan := func(lo, hi int) []SecretAt {
		var out []SecretAt
		for i := lo; i < hi; i++ {
			if sec, found := FindSecret(mems[i]); found {
				out = append(out, SecretAt{i, sec})
			}
		}
		return out
	}
	workers := runtime.GOMAXPROCS(0)
	if len(mems) < 10_000 || workers < 2 {
		return scan(0, len(mems))
	}
	chunk := (len(mems) + workers - 1) / workers
	found := make([][]SecretAt, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := min(w*chunk, len(mems)), min((w+1)*chunk, len(mems))
		wg.Go(func() { found[w] = scan(lo, hi) })
	}
	wg.Wait()
	return slices.Concat(found...)
}
