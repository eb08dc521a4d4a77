package gitsync

import (
	"fmt"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/memory"
)

// RefuseSecret is the secret guard of every store, for every scope
// (memory.Guard): it refuses a memory with a credential in any of its
// fields (format.FindSecret), with an error that is memory.ErrSecret to
// errors.Is, says why that scope must not hold it, and never repeats the
// secret. User and session memories are refused too: the database is a
// plain file that every agent and model acolyte serves reads back.
func RefuseSecret(m memory.Memory) error {
	sec, found := format.FindSecret(m)
	if !found {
		return nil
	}
	const fix = "keep credentials in the environment or a secret manager, or store a pointer to where the secret lives"
	switch m.Scope {
	case memory.ScopeProject:
		return projectSecretError(sec)
	case memory.ScopeTeam:
		return fmt.Errorf("%w with the team: %s. Team memories are read by everyone on the team; %s", memory.ErrSecret, sec, fix)
	case memory.ScopeUser:
		return fmt.Errorf("%w in user memory: %s. The memory database is a plain file that agents and models read; %s "+
			"(or, to keep it in your own user memory anyway, pass --allow-secret)", memory.ErrSecret, sec, fix)
	}
	return fmt.Errorf("%w in %s memory: %s. The memory database is a plain file that agents and models read; %s", memory.ErrSecret, m.Scope, sec, fix)
}

// RefuseSecret is the package's guard, so that a Checkout is a
// memory.Guarded toolkit.
func (w *Checkout) RefuseSecret(m memory.Memory) error { return RefuseSecret(m) }
