package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/embed/static"
	"github.com/acolyte-dev/acolyte/memory/postgres"
)

// benchWords are the common words of the benchmark corpus; benchVocabulary
// adds rarer made-up ones, drawn with Zipf's law as words of real text are.
var benchWords = []string{"staging", "database", "bastion", "deploy", "release", "tests", "cache", "queue",
	"kafka", "billing", "service", "runner", "docker", "migration", "review", "monday", "friday",
	"coffee", "office", "network", "proxy", "certificate", "backup", "replica", "index", "schema"}

func benchVocabulary() []string {
	words := slices.Clone(benchWords)
	const letters = "bcdfghklmnprstvz"
	const vowels = "aeiou"
	r := rand.New(rand.NewPCG(3, 5))
	for len(words) < 5000 {
		var b strings.Builder
		for range 2 + r.IntN(3) {
			b.WriteByte(letters[r.IntN(len(letters))])
			b.WriteByte(vowels[r.IntN(len(vowels))])
		}
		if w := b.String(); !slices.Contains(words, w) {
			words = append(words, w)
		}
	}
	return words
}

// benchCorpus is n memories of 12 words each, the i-th word of the
// vocabulary drawn with probability ∝ 1/(i+2): "staging" is in about 7%
// of the memories, a word of rank 1000 in 0.1%.
func benchCorpus(n int) []string {
	vocab := benchVocabulary()
	r := rand.New(rand.NewPCG(1, uint64(n)))
	z := rand.NewZipf(r, 1.0001, 2, uint64(len(vocab)-1))
	out := make([]string, n)
	for i := range out {
		words := make([]string, 12)
		for j := range words {
			words[j] = vocab[z.Uint64()]
		}
		out[i] = fmt.Sprintf("fact %d: %s", i, strings.Join(words, " "))
	}
	return out
}

// benchQueries are the searches timed: the question of the old benchmark
// (three of the most common words) and questions of three words drawn
// from the corpus's own distribution.
func benchQueries() []string {
	vocab := benchVocabulary()
	r := rand.New(rand.NewPCG(9, 9))
	z := rand.NewZipf(r, 1.0001, 2, uint64(len(vocab)-1))
	qs := []string{"how do I reach the staging database through the bastion"}
	for len(qs) < 50 {
		qs = append(qs, fmt.Sprintf("what about %s and %s with %s", vocab[z.Uint64()], vocab[z.Uint64()], vocab[z.Uint64()]))
	}
	return qs
}

// populate fills team red of a new database with the corpus and its
// static vectors through COPY (as the superuser: COPY refuses tables
// under row-level security to the others), the triggers filling the
// search indexes as they would for member writes, then VACUUM ANALYZE as
// autovacuum would after a bulk load.
func populate(b *testing.B, c *cluster, contents []string) string {
	ctx := b.Context()
	db := c.database(b)
	conn, err := pgx.Connect(ctx, c.srv.URL("postgres", db))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	e := static.New()
	now := time.Now().UTC().Add(-time.Hour)
	var mrows, erows [][]any
	for start := 0; start < len(contents); start += 1000 {
		batch := contents[start:min(start+1000, len(contents))]
		ms := make([]memory.Memory, len(batch))
		texts := make([]string, len(batch))
		for i, content := range batch {
			at := now.Add(time.Duration(start+i) * time.Millisecond)
			ms[i] = memory.Memory{ID: memory.NewID(at), Scope: memory.ScopeTeam, ScopeKey: "red", Kind: memory.KindStored,
				Content: content, CreatedAt: at, UpdatedAt: at, Tokens: memory.EstimateTokens(content)}
			texts[i] = memory.EmbedText(&ms[i])
		}
		vecs, err := e.Embed(ctx, memory.PurposeDocument, texts)
		if err != nil {
			b.Fatal(err)
		}
		for i, m := range ms {
			// Every fourth a rule, for the searches filtered by kind (its
			// vector is the stored one's: the kind only filters).
			kind := m.Kind
			if (start+i)%4 == 0 {
				kind = memory.KindRule
			}
			mrows = append(mrows, []any{m.ID, "red", string(kind), m.Content, memory.ContentHash(m.Content), postgres.Lexical(&m),
				m.CreatedAt, m.UpdatedAt, m.Tokens})
			memory.Normalize32(vecs[i])
			erows = append(erows, []any{m.ID, "red", e.Model(), postgres.EncodeVector(vecs[i])})
		}
	}
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"team_memories"},
		[]string{"id", "team", "kind", "content", "content_hash", "lexical", "created_at", "updated_at", "tokens"}, pgx.CopyFromRows(mrows)); err != nil {
		b.Fatal(err)
	}
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"team_embeddings"}, []string{"id", "team", "model", "vec"}, pgx.CopyFromRows(erows)); err != nil {
		b.Fatal(err)
	}
	s := c.open(b, "alice", db, e)
	if err := postgres.CutCells(ctx, s, "red", e.Model()); err != nil {
		b.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "VACUUM ANALYZE"); err != nil {
		b.Fatal(err)
	}
	return db
}

// reportPercentiles times f n times and reports the p50 and p95 in ms.
func reportPercentiles(b *testing.B, n int, f func(i int)) {
	ds := make([]time.Duration, n)
	b.ResetTimer()
	for i := range n {
		t := time.Now()
		f(i)
		ds[i] = time.Since(t)
	}
	b.StopTimer()
	slices.Sort(ds)
	b.ReportMetric(float64(ds[n/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(ds[n*95/100].Microseconds())/1000, "p95-ms")
	b.ReportMetric(0, "ns/op")
}

// precomputed is an embedder whose vectors were computed beforehand, so
// a timed remember leaves the embedding out.
type precomputed struct {
	memory.Embedder
	vecs map[string][]float32
}

func (p precomputed) Embed(ctx context.Context, purpose memory.Purpose, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v, ok := p.vecs[t]
		if !ok {
			return p.Embedder.Embed(ctx, purpose, texts)
		}
		out[i] = slices.Clone(v)
	}
	return out, nil
}

// BenchmarkTeamScale measures, on a private Debian PostgreSQL server on
// this machine, a team search (p50 and p95 over 50 questions, each asked
// 4 times, from the client: stemming, index reads, ranking, the results
// read and marked recalled) and a team remember (p50 over 200 new
// memories, embedding excluded, the centroids read again each time as a
// new process reads them) with n team memories:
//
//	go test -run '^$' -bench TeamScale -benchtime 1x -count 5 -timeout 1h ./memory/postgres/
//
// The "scan" search reads the whole team, as before schema 4; the
// "-rules" searches are filtered by kind, to the quarter of the team that
// are rules.
func BenchmarkTeamScale(b *testing.B) {
	c := start(b)
	queries := benchQueries()
	for _, n := range []int{10000, 100000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) { benchTeamScale(b, c, queries, n) })
	}
}

func benchTeamScale(b *testing.B, c *cluster, queries []string, n int) {
	{
		contents := benchCorpus(n)
		db := populate(b, c, contents)
		ctx := b.Context()
		vis := memory.Visibility{Team: "red"}
		e := static.New()
		s := c.open(b, "alice", db, e)
		for _, path := range []string{"indexed", "scan", "indexed-rules", "scan-rules"} {
			if path == "scan" && n > 10000 {
				continue // about a second a search (a quarter for the rules)
			}
			b.Run("search/"+path, func(b *testing.B) {
				postgres.SetScanOnly(s, strings.HasPrefix(path, "scan"))
				defer postgres.SetScanOnly(s, false)
				var f memory.Filter
				if strings.HasSuffix(path, "-rules") {
					f.Kind = memory.KindRule // a quarter of the team
				}
				reportPercentiles(b, 4*len(queries), func(i int) {
					if _, err := s.Search(ctx, vis, memory.Query{Text: queries[i%len(queries)], Filter: f}); err != nil {
						b.Fatal(err)
					}
				})
			})
		}
		round := 0
		b.Run("remember", func(b *testing.B) {
			// New memories each round: -count runs this again on the same team.
			round++
			fresh := benchCorpus(n + 200)[n:]
			p := precomputed{Embedder: e, vecs: map[string][]float32{}}
			for i := range fresh {
				fresh[i] = fmt.Sprintf("new in round %d: %s", round, fresh[i])
				m := memory.Memory{Content: fresh[i]}
				vs, err := e.Embed(ctx, memory.PurposeDocument, []string{memory.EmbedText(&m)})
				if err != nil {
					b.Fatal(err)
				}
				p.vecs[memory.EmbedText(&m)] = vs[0]
			}
			w := c.open(b, "alice", db, p)
			reportPercentiles(b, len(fresh), func(i int) {
				// As in a new process, which reads the centroids again.
				postgres.ForgetCells(w)
				if _, err := w.Add(ctx, vis, memory.Draft{Content: fresh[i], Scope: memory.ScopeTeam}); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}
