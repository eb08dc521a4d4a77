package gitsync

import (
	"github.com/acolyte-dev/acolyte/memory"

	"github.com/acolyte-dev/acolyte/gitsync/secrets"
)

// RefuseShared is the credential check of memories shared beyond this
// machine without git (the team database): it refuses content that looks
// like a secret, with an error that is memory.ErrSecret to errors.Is, and never
// repeats the secret.
func RefuseShared(content string) error {
	if what, found := secrets.Detect(content); found {
		return sharedSecretError{what}
	}
	return nil
}

type sharedSecretError struct{ what string }

func (e sharedSecretError) Error() string {
	return "refusing to share what looks like a secret with the team: it contains " + e.what +
		". Team memories are read by everyone on the team; keep credentials in the environment or a secret manager, or store a pointer to where the secret lives"
}

func (e sharedSecretError) Unwrap() error { return memory.ErrSecret }
