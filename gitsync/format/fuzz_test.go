package format

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/internal/secrets"
	"github.com/acolyte-dev/acolyte/memory"
)

// Seeds shared by the fuzz targets; more live in testdata/fuzz/<target>/,
// including every input a fuzz run ever failed on.
func fuzzFiles() []string {
	a := stored("01A", "fact a", t0)
	b := stored("01B", "fact b <&> \"quoted\"", t0)
	rule := memory.Memory{ID: "r-00000000000000aa", Kind: memory.KindRule, Content: "Run make test.", Topic: "testing", Source: "AGENTS.md#Testing"}
	return []string{
		"",
		string(Encode(nil)),
		string(Encode([]memory.Memory{a, b, rule})),
		fileHead + line(b) + line(a),
		fileHead + line(a) + line(edited(a, "fact a edited", t0.Add(time.Minute))),
		fileHead + line(a) + `{"id":"r-1","kind":"rule","content":"x y","topic":"a\u0000"}` + "\n",
		fileHead + line(a) + "<<<<<<< HEAD\n",
		strings.ReplaceAll(string(Encode([]memory.Memory{a, b})), "\n", "\r\n"),
	}
}

// FuzzDecode: whatever Decode accepts, Encode writes and Decode reads back
// as the same memories, and WriteFile would accept every one of them.
func FuzzDecode(f *testing.F) {
	for _, s := range fuzzFiles() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := DecodeAll("f", data)
		if err != nil {
			return
		}
		for _, m := range d.Memories {
			if err := CheckMemory(m); err != nil {
				t.Fatalf("DecodeAll returned a memory WriteFile refuses: %v", err)
			}
		}
		mems, err := Decode("f", data)
		if err != nil {
			if len(d.Invalid) == 0 {
				t.Fatalf("Decode failed where DecodeAll found no invalid line: %v", err)
			}
			return
		}
		enc := Encode(mems)
		again, err := Decode("f", enc)
		if err != nil {
			t.Fatalf("Decode(Encode(Decode(x))) failed: %v\n%s", err, enc)
		}
		if len(again) != len(mems) {
			t.Fatalf("round trip: %d memories, then %d", len(mems), len(again))
		}
		byID := indexByID(again)
		for _, m := range mems {
			if got, ok := byID[m.ID]; !ok || !Same(got, m) {
				t.Fatalf("round trip changed %s: %+v -> %+v", m.ID, m, got)
			}
		}
		if !bytes.Equal(Encode(again), enc) {
			t.Fatal("Encode is not stable across a round trip")
		}
	})
}

// FuzzMerge: the merge is symmetric (ours and theirs swapped give the same
// bytes) and loses nothing: every id in ours or theirs is in the result
// unless the other side deleted it while this side left it as in base, or
// it looks like a secret (which Merge reports).
func FuzzMerge(f *testing.F) {
	files := fuzzFiles()
	for _, b := range files[:4] {
		for _, o := range files[1:5] {
			f.Add([]byte(b), []byte(o), []byte(files[2]))
		}
	}
	a := stored("01A", "fact a", t0)
	f.Add([]byte(fileHead+line(a)), []byte(fileHead+line(edited(a, "apple", t0))), []byte(fileHead+line(edited(a, "banana", t0))))
	f.Add([]byte(fileHead+line(a)), []byte(fileHead), []byte(fileHead+line(edited(a, "kept", t0.Add(time.Hour)))))
	// Compact programs (see fuzzMergeInput): edits, ties, deletes,
	// duplicate ids and secrets among four ids.
	f.Add([]byte{0x00, 0x01, 0x02}, []byte{0x14, 0x01, 0x03}, []byte{0x24, 0x02, 0x43})
	f.Add([]byte{0x00}, []byte{0x04, 0x08}, []byte{0x0c, 0x00})
	f.Add([]byte{}, []byte{0x05, 0x15}, []byte{0x25, 0x0d})
	f.Fuzz(func(t *testing.T, base, ours, theirs []byte) {
		checkMerge(t, fuzzMergeInput(base), fuzzMergeInput(ours), fuzzMergeInput(theirs))
	})
}

// The fuzz properties over many random programs, for every plain test run.
func TestMergePropertiesOnRandomInputs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	program := func() []byte {
		p := make([]byte, 1+rng.IntN(5))
		for i := range p {
			p[i] = byte(rng.IntN(256))
		}
		return p
	}
	for range 1000 {
		base := program()
		if rng.IntN(4) == 0 {
			base = nil
		}
		checkMerge(t, fuzzMergeInput(base), fuzzMergeInput(program()), fuzzMergeInput(program()))
		if t.Failed() {
			return
		}
	}
}

func checkMerge(t *testing.T, base, ours, theirs []byte) {
	t.Helper()
	merged, _, err := Merge(base, ours, theirs)
	swapped, _, errSwapped := Merge(base, theirs, ours)
	if (err == nil) != (errSwapped == nil) {
		t.Fatalf("only one direction failed: %v / %v", err, errSwapped)
	}
	if err != nil {
		return
	}
	if !bytes.Equal(merged, swapped) {
		t.Fatalf("not symmetric:\n%s\nswapped:\n%s", merged, swapped)
	}
	out, err := Decode("merged", merged)
	if err != nil {
		t.Fatalf("merged output unreadable: %v", err)
	}
	if !isCanonical(merged) && len(out) > 0 {
		t.Fatalf("merged output not canonical:\n%s", merged)
	}
	b, _ := Decode("base", base)
	o, _ := Decode("ours", ours)
	th, _ := Decode("theirs", theirs)
	inBase, inOurs, inTheirs, inOut := indexByID(b), indexByID(o), indexByID(th), indexByID(out)
	check := func(side, other map[string]memory.Memory) {
		for id, m := range side {
			if _, kept := inOut[id]; kept {
				continue
			}
			bm, wasInBase := inBase[id]
			_, inOther := other[id]
			if wasInBase && !inOther && Same(m, bm) {
				continue // deleted on the other side, untouched on this one
			}
			if _, secret := secrets.Detect(m.Content); secret {
				continue
			}
			if w, ok := other[id]; ok {
				if _, secret := secrets.Detect(w.Content); secret {
					continue // the other side's version won and was left out
				}
			}
			t.Fatalf("merge lost %s", id)
		}
	}
	check(inOurs, inTheirs)
	check(inTheirs, inOurs)
}

// fuzzMergeInput lets FuzzMerge reach the merge's decisions instead of the
// JSON parser's: an input that starts like a memories file is used as it
// is; any other is a program of one byte per line, whose bits choose the id
// (one of four), the content (including a credential), the updated time
// and the kind, written in the given order, so that ids repeat and lines
// come out of order as after a union merge.
func fuzzMergeInput(p []byte) []byte {
	if len(p) == 0 || p[0] == '{' {
		return p
	}
	contents := []string{"fact one", "fact one, edited", "a different fact", "the key is AKIAQX7NR3JTMB2W5KPL"}
	kinds := []memory.Kind{memory.KindStored, memory.KindObservation, memory.KindStored, memory.KindSeed}
	var b strings.Builder
	b.WriteString(fileHead)
	for _, c := range p {
		m := memory.Memory{
			ID:        "01" + string(rune('A'+c&3)),
			Kind:      kinds[c>>6&3],
			Content:   contents[c>>2&3],
			Source:    "cli",
			UpdatedAt: t0.Add(time.Duration(c>>4&3) * time.Minute),
		}
		b.WriteString(line(m))
	}
	return []byte(b.String())
}

// FuzzParseLayoutTime: a time parseLayoutTime reads is the time
// time.Parse reads, in UTC at millisecond precision, as parseTime keeps it;
// and every time appendTime writes is one it reads.
func FuzzParseLayoutTime(f *testing.F) {
	for _, s := range []string{"2026-01-01T00:00:00.000Z", "2024-02-29T23:59:59.999Z", "2025-02-29T00:00:00.000Z", "0000-01-01T00:00:00.000Z",
		"9999-12-31T23:59:59.999Z", "2026-04-31T00:00:00.000Z", "2026-01-01T24:00:00.000Z", "2026-01-01T00:00:60.000Z", "2026-1-01T00:00:00.000Z",
		"2026-01-01T00:00:00.000+00:00", "2026-01-01 00:00:00.000Z", "+026-01-01T00:00:00.000Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fast, ok := parseLayoutTime(s)
		slow, err := time.Parse(time.RFC3339Nano, s)
		if ok && (err != nil || fast != slow.UTC().Truncate(time.Millisecond)) {
			t.Fatalf("parseLayoutTime(%q) = %v, time.Parse %v, %v", s, fast, slow, err)
		}
		if ok && string(appendTime(nil, fast)) != s {
			t.Fatalf("parseLayoutTime(%q) = %v, which writes as %s", s, fast, appendTime(nil, fast))
		}
		if err == nil && slow.Year() >= 0 && slow.Year() <= 9999 {
			written := string(appendTime(nil, slow))
			if back, ok := parseLayoutTime(written); !ok || back != slow.UTC().Truncate(time.Millisecond) {
				t.Fatalf("appendTime wrote %s for %v, read back %v, %v", written, slow, back, ok)
			}
		}
	})
}

// FuzzJoin: a file's lines dealt out over several files, as a merge across
// the split or a crash during it leaves them, read back joined as the one
// file reads: the same memories, each id resolved as Decode resolves it.
// The file is split by the bytes of seed, not by shard, so that an id's
// lines land in different files in every order.
func FuzzJoin(f *testing.F) {
	for i, s := range fuzzFiles() {
		f.Add([]byte(s), []byte{byte(i), 3, 1})
	}
	f.Fuzz(func(t *testing.T, data, seed []byte) {
		want, err := DecodeAll("f", data)
		if err != nil || len(data) == 0 || len(seed) == 0 || len(want.Invalid) > 0 {
			return
		}
		lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		files := make([]string, 1+int(seed[0])%4)
		for i := range files {
			files[i] = lines[0] + "\n"
		}
		for i, l := range lines[1:] {
			k := int(seed[i%len(seed)]) % len(files)
			files[k] += l + "\n"
		}
		var parts []Part
		for i, file := range files {
			d, err := DecodeAll("f", []byte(file))
			if err != nil {
				t.Fatalf("part %d of a readable file is unreadable: %v", i, err)
			}
			parts = append(parts, Part{File: "f", Decoded: d})
		}
		got := Join(parts)
		if len(got.Memories) != len(want.Memories) {
			t.Fatalf("Join read %d memories, DecodeAll %d", len(got.Memories), len(want.Memories))
		}
		byID := make(map[string]memory.Memory, len(want.Memories))
		for _, m := range want.Memories {
			byID[m.ID] = m
		}
		for i, m := range got.Memories {
			if i > 0 && got.Memories[i-1].ID >= m.ID {
				t.Fatalf("Join is not sorted by id at %d", i)
			}
			if w, ok := byID[m.ID]; !ok || !Same(w, m) {
				t.Fatalf("Join chose another version of %s than DecodeAll", m.ID)
			}
		}
	})
}
