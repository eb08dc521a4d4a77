package ui_test

import (
	"github.com/acolyte-dev/acolyte/memory/team"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/gitsync"
	"github.com/acolyte-dev/acolyte/internal/pgtest"
	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/embed/static"
	"github.com/acolyte-dev/acolyte/memory/postgres"
)

// With a team database, the page shows the team's memories with the role
// that wrote each, edits them through the team's guard, and shows nothing
// of another team's, though both live in one database.
func TestTeamMemoriesShowTheirAuthorAndNoOtherTeam(t *testing.T) {
	srv := pgtest.Start(t)
	for _, team := range []string{"red", "blue"} {
		if _, err := postgres.Init(t.Context(), srv.URL("postgres", "postgres"), team); err != nil {
			t.Fatal(err)
		}
	}
	srv.Admin(t, "postgres", "CREATE ROLE alice LOGIN", "GRANT acolyte_team_red TO alice",
		"CREATE ROLE bob LOGIN", "GRANT acolyte_team_blue TO bob")
	open := func(role string) *postgres.Store {
		s, err := postgres.Open(t.Context(), srv.URL(role, "postgres"), static.New())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return s
	}
	alice, bob := open("alice"), open("bob")
	red := memory.Visibility{Team: "red"}
	blue := memory.Visibility{Team: "blue"}
	shared, err := alice.Add(t.Context(), red, memory.Draft{Content: "Staging is reached through bastion-2", Scope: memory.ScopeTeam, Source: "cli"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bob.Add(t.Context(), blue, memory.Draft{Content: "Blue's staging is reached through bastion-9", Scope: memory.ScopeTeam, Source: "cli"}); err != nil {
		t.Fatal(err)
	}

	c := newCheckout(t)
	cfg := c.config()
	vis := memory.Visibility{ProjectKey: c.root, Team: "red"}
	cfg.Toolkit = team.Toolkit{Local: c.ws, Team: alice, Visibility: vis, Refuse: gitsync.RefuseSecret}
	p := serve(t, cfg)
	p.login()

	for _, path := range []string{"/", "/?scope=team", "/?q=" + url.QueryEscape("how is staging reached")} {
		body := p.get(path)
		if !strings.Contains(body, "bastion-2") || !strings.Contains(body, "<dt>author</dt><dd>alice</dd>") {
			t.Errorf("%s: the team memory or its author is missing:\n%s", path, body)
		}
		if strings.Contains(body, "bastion-9") {
			t.Errorf("%s shows another team's memory", path)
		}
	}
	p.formToken(shared.Memory.ID)
	if code, body := p.post("/edit/"+shared.Memory.ID, url.Values{"content": {"Staging is reached through bastion-2; key AKI" + "AQX7NR3JTMB2W5KPL"}}); code != http.StatusUnprocessableEntity || strings.Contains(body, "AQX7NR3JTMB2W5KPL") {
		t.Fatalf("a credential in a team edit: %d", code)
	}
	if code, _ := p.post("/edit/"+shared.Memory.ID, url.Values{"content": {"Staging is reached through bastion-3"}}); code != http.StatusSeeOther {
		t.Fatalf("a team edit: %d", code)
	}
	got, err := alice.Get(t.Context(), red, shared.Memory.ID)
	if err != nil || got.Content != "Staging is reached through bastion-3" {
		t.Fatalf("the team database holds %q (%v) after the edit", got.Content, err)
	}
	// Its globs are edited in the team database too, as a project
	// memory's are in .acolyte/.
	if code, body := p.post("/edit/"+shared.Memory.ID, url.Values{"content": {"Staging is reached through bastion-3"},
		"set_globs": {"1"}, "globs": {"infra/**\ndeploy/*.tf"}}); code != http.StatusSeeOther {
		t.Fatalf("a team memory's globs edited: %d\n%s", code, body)
	}
	got, err = alice.Get(t.Context(), red, shared.Memory.ID)
	if err != nil || !slices.Equal(got.Globs, []string{"deploy/*.tf", "infra/**"}) {
		t.Fatalf("the team database holds globs %q (%v) after the edit", got.Globs, err)
	}
	if body := p.get("/?scope=team"); !strings.Contains(body, "infra/**") {
		t.Errorf("the team memory's card does not show its new globs:\n%s", body)
	}
	// bob's memory cannot be reached by id either.
	others, _ := bob.List(t.Context(), blue, memory.Filter{})
	req, _ := http.NewRequest("GET", p.base+"/edit/"+others[0].ID, nil)
	if code, body := p.do(req); code != http.StatusNotFound || strings.Contains(body, "bastion-9") {
		t.Fatalf("another team's memory by id: %d", code)
	}
}
