package memory

import (
	"errors"
	"fmt"
	"strings"
)

// ErrAmbiguousID refuses an id prefix that more than one memory's id
// starts with, or one too short to look up.
var ErrAmbiguousID = errors.New("ambiguous id")

// MinIDPrefix is the shortest id prefix that is looked up, as git asks
// for four characters of a hash: shorter, nearly every prefix is shared.
const MinIDPrefix = 4

// PrefixLimit is how many ids a lookup of a prefix asks for: one more than
// an ambiguity error lists, so that it can say there are more.
const PrefixLimit = 6

// ChooseID picks the memory prefix stands for among the ids found that
// start with it: prefix itself when it is a whole id, else the only one.
func ChooseID(prefix string, found []string) (string, error) {
	for _, id := range found {
		if id == prefix {
			return id, nil
		}
	}
	switch {
	case len(found) == 0:
		return "", fmt.Errorf("%w: %s", ErrNotFound, prefix)
	case len(found) == 1 && len(prefix) >= MinIDPrefix:
		return found[0], nil
	case len(prefix) < MinIDPrefix:
		return "", fmt.Errorf("%w: %q is too short to name one memory; give at least %d characters of its id", ErrAmbiguousID, prefix, MinIDPrefix)
	}
	shown := found[:min(len(found), PrefixLimit-1)]
	more := ""
	if len(found) > len(shown) {
		more = " and more"
	}
	return "", fmt.Errorf("%w: %s is the start of %s%s; give more of the id", ErrAmbiguousID, prefix, strings.Join(shown, ", "), more)
}
