package ui

import (
	"fmt"
	"html"
	"html/template"
	"slices"
	"strings"
	"time"

	"github.com/acolyte-dev/acolyte/internal/termtext"
	"github.com/acolyte-dev/acolyte/memory"
)

// The charts are plain SVG drawn here: a few bars need no charting
// library, and an inline <svg> runs no script and loads nothing.

type bar struct {
	Label string
	Count int
}

type chartsPage struct {
	ByKind, ByScope, ByWeek template.HTML
	// Recent and Oldest are the memories recalled most recently and
	// longest ago (or never): the store keeps when a memory was last
	// found by a search, not how often.
	Recent, Oldest []card
	Total          int
}

// weeks is how many weeks the "added per week" chart covers.
const weeks = 12

func buildCharts(mems []memory.Memory, now time.Time) chartsPage {
	page := chartsPage{Total: len(mems)}
	var kinds, scopes []bar
	for _, k := range memory.Kinds {
		kinds = append(kinds, bar{string(k), 0})
	}
	for _, sc := range memory.Scopes {
		scopes = append(scopes, bar{string(sc), 0})
	}
	week := make([]bar, weeks)
	start := startOfWeek(now).AddDate(0, 0, -7*(weeks-1))
	for i := range week {
		week[i].Label = start.AddDate(0, 0, 7*i).Format("Jan 2")
	}
	for _, m := range mems {
		if i := slices.Index(memory.Kinds, m.Kind); i >= 0 {
			kinds[i].Count++
		}
		if i := slices.Index(memory.Scopes, m.Scope); i >= 0 {
			scopes[i].Count++
		}
		if !m.CreatedAt.Before(start) {
			if i := int(m.CreatedAt.Sub(start) / (7 * 24 * time.Hour)); i < weeks {
				week[i].Count++
			}
		}
	}
	page.ByKind = barChart("Memories by kind", kinds)
	page.ByScope = barChart("Memories by scope", scopes)
	page.ByWeek = columnChart("Memories added per week", week)

	recalled := slices.Clone(mems)
	slices.SortStableFunc(recalled, func(a, b memory.Memory) int { return b.RecalledAt.Compare(a.RecalledAt) })
	for _, m := range recalled[:min(5, len(recalled))] {
		if !m.RecalledAt.IsZero() {
			page.Recent = append(page.Recent, card{Memory: m, Text: termtext.EscapeText(m.Content)})
		}
	}
	for i := len(recalled) - 1; i >= max(0, len(recalled)-5); i-- {
		page.Oldest = append(page.Oldest, card{Memory: recalled[i], Text: termtext.EscapeText(recalled[i].Content)})
	}
	return page
}

func startOfWeek(t time.Time) time.Time {
	t = t.UTC()
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	return day.AddDate(0, 0, -((int(day.Weekday()) + 6) % 7)) // Monday
}

// barChart draws horizontal bars, one per label.
func barChart(title string, bars []bar) template.HTML {
	const width, row, labelW = 420, 26, 110
	most := 1
	for _, b := range bars {
		most = max(most, b.Count)
	}
	var sb strings.Builder
	h := row*len(bars) + 10
	fmt.Fprintf(&sb, `<svg class="chart" role="img" viewBox="0 0 %d %d" width="%d" height="%d"><title>%s</title>`, width, h, width, h, html.EscapeString(title))
	for i, b := range bars {
		y := 5 + i*row
		w := (width - labelW - 50) * b.Count / most
		fmt.Fprintf(&sb, `<text x="0" y="%d" class="label">%s</text>`, y+16, html.EscapeString(b.Label))
		fmt.Fprintf(&sb, `<rect x="%d" y="%d" width="%d" height="18" class="bar"/>`, labelW, y+2, max(w, 1))
		fmt.Fprintf(&sb, `<text x="%d" y="%d" class="count">%d</text>`, labelW+max(w, 1)+6, y+16, b.Count)
	}
	sb.WriteString(`</svg>`)
	return template.HTML(sb.String()) // every text in it went through html.EscapeString
}

// columnChart draws vertical columns, for a series over time.
func columnChart(title string, bars []bar) template.HTML {
	const height, col, top = 160, 44, 20
	most := 1
	for _, b := range bars {
		most = max(most, b.Count)
	}
	width := col * len(bars)
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg class="chart" role="img" viewBox="0 0 %d %d" width="%d" height="%d"><title>%s</title>`, width, height+40, width, height+40, html.EscapeString(title))
	for i, b := range bars {
		x := i * col
		h := (height - top) * b.Count / most
		fmt.Fprintf(&sb, `<rect x="%d" y="%d" width="%d" height="%d" class="bar"/>`, x+6, height-h, col-12, max(h, 1))
		fmt.Fprintf(&sb, `<text x="%d" y="%d" class="count" text-anchor="middle">%d</text>`, x+col/2, height-h-4, b.Count)
		fmt.Fprintf(&sb, `<text x="%d" y="%d" class="label" text-anchor="middle">%s</text>`, x+col/2, height+18, html.EscapeString(b.Label))
	}
	sb.WriteString(`</svg>`)
	return template.HTML(sb.String())
}
