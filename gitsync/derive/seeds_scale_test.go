package derive

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/internal/gittest"
	"github.com/acolyte-dev/acolyte/memory"
)

// manySeeds is a seeds file of n distinct seeds, one a line, as a
// generated seeds.json would be.
func manySeeds(n int) []byte {
	seeds := make([]string, n)
	for i := range seeds {
		seeds[i] = fmt.Sprintf("seed number %d says the build of service-%d fails", i, i%113)
	}
	data, err := json.MarshalIndent(seeds, "", "")
	if err != nil {
		panic(err)
	}
	return data
}

// The cursor gives every seed the line and column position gives it,
// counting each byte once, for any increasing offsets, on one line or many.
func TestCursorAgreesWithPosition(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, data := range [][]byte{manySeeds(50), []byte(strings.ReplaceAll(string(manySeeds(50)), "\n", "")), []byte("\n\n[\n\"a\",\n\n \"b\"]\n"), nil} {
		c := cursor{data: data}
		for offset := int64(0); offset <= int64(len(data))+2; offset += int64(r.IntN(7)) {
			line, col := c.position(offset)
			wantLine, wantCol := position(data, offset)
			if line != wantLine || col != wantCol {
				t.Fatalf("offset %d of %q: %d:%d, want %d:%d", offset, data, line, col, wantLine, wantCol)
			}
		}
	}
}

// BenchmarkParseSeeds is a seeds file of 5,000 and 20,000 seeds read;
// ns/op should grow fourfold between them (it grew elevenfold when every
// seed's position was counted from the file's start).
func BenchmarkParseSeeds(b *testing.B) {
	for _, n := range []int{5_000, 20_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			data := manySeeds(n)
			for b.Loop() {
				if seeds, err := parseSeeds(SeedsFile, data); err != nil || len(seeds) != n {
					b.Fatalf("%d seeds, %v", len(seeds), err)
				}
			}
		})
	}
}

// A seeds.json over the bytes an instruction file may have is refused
// whole, as an instruction file is, naming its size, the limit and the
// fix: a million generated seeds (57 MB) took a check 105 s and 935 MB.
func TestOversizedSeedsFileIsRefused(t *testing.T) {
	root := t.TempDir()
	gittest.WriteFiles(t, root, map[string]string{
		"AGENTS.md":           "## Testing\n\n- Run go test before pushing.\n",
		".acolyte/seeds.json": string(manySeeds(maxInstructionBytes/50 + 1000)),
	})
	d, err := Worktree(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Memories) != 1 || d.Memories[0].Kind != memory.KindRule {
		t.Errorf("derived %d memories, want the rule alone", len(d.Memories))
	}
	if len(d.Refused) != 1 || d.Refused[0].File != ".acolyte/seeds.json" || !strings.Contains(d.Refused[0].Message, fmt.Sprint(maxInstructionBytes)) ||
		!strings.Contains(d.Refused[0].Message, "split") {
		t.Fatalf("refused %+v, want seeds.json refused with its size, the limit and the fix", d.Refused)
	}
}
