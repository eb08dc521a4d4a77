package cmd

import (
	"regexp"
	"testing"
)

// TestOwnDefaultMatchesTheExpression holds ownDefault to the regular
// expression it replaced, on usage texts of every shape.
func TestOwnDefaultMatchesTheExpression(t *testing.T) {
	re := regexp.MustCompile(`\s*\(default:? ([^()]*)\)$`)
	for _, usage := range []string{
		"how many results (default: all)",
		"how many results (default all)",
		"how many results  \t(default: 10)",
		"(default: 5)",
		"no default here",
		"ends in a paren (see below)",
		"nested (a (default: 3))",
		"a (default: b) c",
		"two (default: 1) (default: 2)",
		"colon without space (default:3)",
		"two spaces (default:  3)",
		"empty (default: )",
		"not closed (default: 3",
		"close inside (default: a)b)",
		"",
		")",
		"(default )",
	} {
		rest, def, ok := ownDefault(usage)
		m := re.FindStringSubmatchIndex(usage)
		if ok != (m != nil) {
			t.Errorf("ownDefault(%q) ok = %v, the expression matched: %v", usage, ok, m != nil)
			continue
		}
		if ok && (rest != usage[:m[0]] || def != usage[m[2]:m[3]]) {
			t.Errorf("ownDefault(%q) = %q, %q; the expression gives %q, %q", usage, rest, def, usage[:m[0]], usage[m[2]:m[3]])
		}
	}
}
