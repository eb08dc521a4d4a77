package memory_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/acolyte-dev/acolyte/memory"
)

// TestFieldsCoverEveryText holds Memory.Fields to every text field of
// Memory: the secret guard scans only what Fields lists, so a new text
// field must be listed there, or named here as acolyte's own words.
func TestFieldsCoverEveryText(t *testing.T) {
	own := map[string]bool{"Scope": true, "ScopeKey": true, "Kind": true, "Author": true}
	m := memory.Memory{Paths: []string{"p1", "p2"}, Globs: []string{"g1", "g2"}}
	v := reflect.ValueOf(&m).Elem()
	var want []string
	for i := range v.NumField() {
		f := v.Type().Field(i)
		switch {
		case own[f.Name]:
		case f.Type.Kind() == reflect.String:
			v.Field(i).SetString("x-" + f.Name)
			want = append(want, "x-"+f.Name)
		case f.Type == reflect.TypeFor[[]string]():
			for j := range v.Field(i).Len() {
				want = append(want, v.Field(i).Index(j).String())
			}
		}
	}
	var got []string
	for _, f := range m.Fields() {
		got = append(got, f.Text)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("Memory.Fields gives %q, want every text field %q", got, want)
	}
}
