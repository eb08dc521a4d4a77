package postgres_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/embed/static"
)

// BenchmarkTeamSearch measures one team search (the full-text lookups,
// every vector of the team fetched and compared in Go, the fusion) over n
// memories, on a private server on this machine:
//
//	go test -run '^$' -bench TeamSearch -benchtime 50x ./memory/postgres/
func BenchmarkTeamSearch(b *testing.B) {
	words := []string{"staging", "database", "bastion", "deploy", "release", "tests", "cache", "queue",
		"kafka", "billing", "service", "runner", "docker", "migration", "review", "monday", "friday",
		"coffee", "office", "network", "proxy", "certificate", "backup", "replica", "index", "schema"}
	c := start(b)
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			ctx := b.Context()
			s := c.open(b, "alice", c.database(b), static.New())
			vis := memory.Visibility{Team: "red"}
			r := rand.New(rand.NewPCG(1, uint64(n)))
			for i := range n {
				content := fmt.Sprintf("fact %d:", i)
				for range 8 {
					content += " " + words[r.IntN(len(words))]
				}
				if _, err := s.Add(ctx, vis, memory.Draft{Content: content, Scope: memory.ScopeTeam}); err != nil {
					b.Fatal(err)
				}
			}
			for b.Loop() {
				rs, err := s.Search(ctx, vis, memory.Query{Text: "how do I reach the staging database through the bastion"})
				if err != nil || len(rs) == 0 {
					b.Fatalf("%v %v", rs, err)
				}
			}
		})
	}
}
