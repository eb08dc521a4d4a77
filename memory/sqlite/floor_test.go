package sqlite_test

import (
	"testing"

	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/embed/minilm"
	"github.com/acolyte-dev/acolyte/memory/embed/static"
)

var projectRules = []string{
	"Run the unit tests with make test before pushing",
	"Biome is the formatter and linter; run pnpm biome check",
	"Releases are cut from the main branch every Tuesday",
	"Database migrations live in db/migrations and run in order",
	"Auth via Bearer token in the Authorization header",
	"Never log request bodies: they can hold personal data",
}

// A question about something the memories never mention finds nothing,
// with the offline embedder and without one, while a question they answer
// still finds its answer.
func TestSearchFindsNothingWhenNothingIsRelevant(t *testing.T) {
	for name, e := range map[string]memory.Embedder{"minilm": minilm.New(), "static": static.New(), "lexical": nil} {
		t.Run(name, func(t *testing.T) {
			s := openStore(t, "", e)
			byID := addAll(t, s, projectRules...)
			for _, q := range []string{
				"what is the recipe for banana bread?",
				"who won the football world cup in 1998?",
				"how tall is the Eiffel tower",
			} {
				rs, err := s.Search(ctx, projA, memory.Query{Text: q})
				if err != nil {
					t.Fatal(err)
				}
				if len(rs) != 0 {
					t.Errorf("%q found %q; want nothing", q, contents(rs, byID))
				}
				if rs, _ := s.Search(ctx, projA, memory.Query{Text: q, NoFloor: true}); len(rs) == 0 && e != nil {
					t.Errorf("%q without the floor found nothing; the floor test proves nothing", q)
				}
			}
			for q, want := range map[string]string{
				"which formatter does the project use?": "Biome is the formatter and linter; run pnpm biome check",
				"how do I run the tests?":               "Run the unit tests with make test before pushing",
				"where do database migrations live?":    "Database migrations live in db/migrations and run in order",
			} {
				rs, err := s.Search(ctx, projA, memory.Query{Text: q})
				if err != nil {
					t.Fatal(err)
				}
				if got := contents(rs, byID); len(got) == 0 || got[0] != want {
					t.Errorf("%q found %q; want %q first", q, got, want)
				}
			}
		})
	}
}

var teamFacts = []string{
	"The staging database is reached through bastion-2",
	"Production deploys need two approvals from the platform team",
	"Caroline adopted a puppy named Biscuit last spring",
	"The CI runners cache Go modules between builds",
	"Integration tests start a real PostgreSQL server in a temp dir",
	"The billing service is written in Kotlin and deployed weekly",
	"Use the staging Kafka cluster for load tests, never production",
	"Melanie went camping with her kids by the lake in July",
	"Release notes live in CHANGES.md and are written before tagging",
	"The on-call rotation changes every Monday at noon",
	"Database migrations must be reversible and reviewed by two people",
	"Our coffee machine is descaled on Fridays",
	"The CI runner configuration lives in .github/workflows",
}

// A question of one word that no memory holds is answered by meaning
// alone: the floor must let the memory its vector points at through. (Of
// fewer memories a vector lies fewer deviations above the crowd, and the
// floor turns the question away.)
func TestOneWordFindsItsMeaning(t *testing.T) {
	for name, e := range map[string]memory.Embedder{"minilm": minilm.New(), "static": static.New()} {
		t.Run(name, func(t *testing.T) {
			s := openStore(t, "", e)
			byID := addAll(t, s, teamFacts...)
			for _, q := range []string{"dog", "pet"} {
				rs, err := s.Search(ctx, projA, memory.Query{Text: q})
				if err != nil {
					t.Fatal(err)
				}
				if got := contents(rs, byID); len(got) == 0 || got[0] != teamFacts[2] {
					t.Errorf("%q found %q; want the puppy first", q, got)
				}
			}
		})
	}
}

// Each of several queries is held to the floor alone: an irrelevant one
// adds nothing to the results of a relevant one.
func TestFloorJudgesEachQueryAlone(t *testing.T) {
	s := openStore(t, "", static.New())
	byID := addAll(t, s, projectRules...)
	rs, err := s.Search(ctx, projA, memory.Query{Text: "what is the recipe for banana bread?", Queries: []string{"when are releases cut?"}})
	if err != nil {
		t.Fatal(err)
	}
	got := contents(rs, byID)
	if len(got) == 0 || got[0] != "Releases are cut from the main branch every Tuesday" {
		t.Fatalf("found %q; want the release rule first", got)
	}
	alone, _ := s.Search(ctx, projA, memory.Query{Text: "when are releases cut?"})
	if len(got) != len(alone) {
		t.Errorf("with an irrelevant query beside it: %d results; alone: %d", len(got), len(alone))
	}
}
