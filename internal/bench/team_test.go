package bench_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/internal/bench"
)

// TestTeamNames: every group gets its own team, a name the team database
// accepts, even when two groups differ only in letters it does not.
func TestTeamNames(t *testing.T) {
	valid := regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,39}$`)
	check := func(name string) error {
		if !valid.MatchString(name) {
			return errors.New("invalid team name " + name)
		}
		return nil
	}
	long := strings.Repeat("x", 60)
	docs := []bench.Doc{{Group: "conv26"}, {Group: "Conv 26"}, {Group: "conv26"}, {Group: "conv 26"}, {Group: long}}
	teams, order, err := bench.TeamNames("bench", docs, check)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"conv26": "bench-conv26", "Conv 26": "bench-conv-26", "conv 26": "bench-conv-26-2", long: "bench-" + strings.Repeat("x", 28)}
	for g, name := range want {
		if teams[g] != name {
			t.Errorf("group %q: team %q, want %q", g, teams[g], name)
		}
	}
	if strings.Join(order, " ") != "bench-conv26 bench-conv-26 bench-conv-26-2 bench-"+strings.Repeat("x", 28) {
		t.Errorf("teams in order: %v", order)
	}
	if _, _, err := bench.TeamNames("Bad Prefix", docs, check); err == nil {
		t.Error("a prefix the database refuses was accepted")
	}
}
