package team_test

import (
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/memory/team"
)

// A pace that knows nothing waits the longest; once it has measured a
// healthy team it waits a few times its answer time, which a stalled
// server costs a search instead of PaceMax; after a wait ran out it waits
// briefly for a minute, then tries again with a doubled wait.
func TestTeamPaceLearnsTheWait(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	var p team.Pace
	if got := p.Wait(now); got != team.PaceMax {
		t.Fatalf("a pace that knows nothing waits %v, want %v", got, team.PaceMax)
	}
	for range team.PaceSamples - 1 {
		p.Answered(20 * time.Millisecond)
		if got := p.Wait(now); got != team.PaceMax {
			t.Fatalf("after %d answers the pace waits %v; it should not trust so few", p.Samples, got)
		}
	}
	p.Answered(20 * time.Millisecond)
	healthy := p.Wait(now)
	if healthy != team.PaceFloor {
		t.Fatalf("after steady 20 ms answers the pace waits %v, want the floor %v", healthy, team.PaceFloor)
	}

	// A distant server that answers in about 300 ms, give or take 100.
	var far team.Pace
	for _, ms := range []int{300, 200, 400, 300, 250, 350} {
		far.Answered(time.Duration(ms) * time.Millisecond)
	}
	if got := far.Wait(now); got <= 400*time.Millisecond || got >= team.PaceMax {
		t.Errorf("a server answering in 200-400 ms gets a wait of %v; want above its slowest answer and below %v", got, team.PaceMax)
	}

	p.LeftOut(now, healthy)
	if got := p.Wait(now.Add(time.Second)); got != team.PaceWhenSlow {
		t.Errorf("right after a wait ran out the pace waits %v, want %v", got, team.PaceWhenSlow)
	}
	// Brief waits that run out while slow do not keep it slow for ever.
	p.LeftOut(now.Add(50*time.Second), team.PaceWhenSlow)
	later := now.Add(team.PaceSlowFor + time.Second)
	if got, want := p.Wait(later), 2*healthy; got != want {
		t.Errorf("a minute after a wait ran out the pace waits %v, want the doubled %v", got, want)
	}
	for i := range 10 {
		p.LeftOut(later.Add(time.Duration(i)*2*team.PaceSlowFor), team.PaceMax)
	}
	if got := p.Wait(later.Add(30 * team.PaceSlowFor)); got != team.PaceMax {
		t.Errorf("after many waits ran out the pace waits %v, want at most %v", got, team.PaceMax)
	}
	p.Answered(20 * time.Millisecond)
	if got := p.Wait(later); got != team.PaceFloor {
		t.Errorf("an answer ends the backoff and the slow spell; the pace waits %v, want %v", got, team.PaceFloor)
	}
}

// The pace survives its text form, and a damaged or foreign text is a
// pace that knows nothing rather than an error or a wait of zero.
func TestTeamPaceRoundTrips(t *testing.T) {
	p := team.Pace{SRTT: 12345 * time.Microsecond, RTTVar: 678 * time.Microsecond, Samples: 3, Backoff: 2,
		SlowUntil: time.UnixMilli(1_800_000_000_123)}
	if got := team.ParsePace(p.String()); got != p {
		t.Errorf("round trip: %+v, want %+v", got, p)
	}
	for _, bad := range []string{"", "v1", "v1 1 2 3 4", "v2 1 2 3 4 5", "v1 -1 2 3 4 5", "v1 a b c d e", "2026-12-02T10:00:00Z"} {
		if got := team.ParsePace(bad); got != (team.Pace{}) {
			t.Errorf("ParseTeamPace(%q) = %+v, want a pace that knows nothing", bad, got)
		}
	}
}
