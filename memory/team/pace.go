package team

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Pace is how long the team side of a search or listing that also
// reads local memory may take, learned from how long the team database
// has taken to answer. A fixed wait must choose between a healthy but
// distant server, which needs hundreds of milliseconds to connect and
// answer, and a local search of ten, which a stalled server should not
// hold up by more than a few times that. So the wait is learned as TCP
// learns its retransmission timeout (RFC 6298): a smoothed answer time
// and its variation, waiting SRTT + 4·RTTVar, doubled after each time the
// team was left out, and never below PaceFloor nor above PaceMax. Until
// PaceSamples answers are known the wait is PaceMax, as before any was.
//
// After a wait that ran out, the searches of the next PaceSlowFor wait
// only PaceWhenSlow: a team database that is down costs one full wait a
// minute, not one per search. Waits that ran out while slow do not
// extend that minute, so a server that comes back is tried again.
type Pace struct {
	SRTT      time.Duration // smoothed time to answer
	RTTVar    time.Duration // its mean deviation
	Samples   int           // answers measured, capped at PaceSamples
	Backoff   int           // waits that ran out since the last answer
	SlowUntil time.Time     // until when to wait only PaceWhenSlow
}

const (
	// PaceMax is the longest a search waits for the team database: a
	// wedged server costs a search this, not the bound of a team call.
	PaceMax = time.Second
	// PaceFloor is the shortest learned wait: below it, a busy machine's
	// scheduling and a collector's pauses alone would leave a healthy
	// team's answers out, as a loaded 2-core machine showed a loopback
	// team that answers in tens of milliseconds taking over 100 (Linux
	// keeps TCP's own timeout at 200 ms or more for the same reason).
	PaceFloor = 250 * time.Millisecond
	// PaceSamples is how many answers are measured before the learned
	// wait is trusted; fewer say little of the variation.
	PaceSamples = 3
	// PaceWhenSlow and PaceSlowFor are the short wait after a wait that
	// ran out, and for how long it holds.
	PaceWhenSlow = 20 * time.Millisecond
	PaceSlowFor  = time.Minute
)

// Wait is how long a search starting at now waits for the team.
func (p Pace) Wait(now time.Time) time.Duration {
	if now.Before(p.SlowUntil) {
		return PaceWhenSlow
	}
	if p.Samples < PaceSamples {
		return PaceMax
	}
	wait := max(p.SRTT+4*p.RTTVar, PaceFloor)
	for range min(p.Backoff, 8) {
		wait *= 2
	}
	return min(wait, PaceMax)
}

// Answered learns from a team side that answered after took.
func (p *Pace) Answered(took time.Duration) {
	p.Backoff, p.SlowUntil = 0, time.Time{}
	if p.Samples == 0 {
		p.SRTT, p.RTTVar = took, took/2
	} else {
		p.RTTVar = (3*p.RTTVar + (p.SRTT - took).Abs()) / 4
		p.SRTT = (7*p.SRTT + took) / 8
	}
	p.Samples = min(p.Samples+1, PaceSamples)
}

// LeftOut learns from a team side left out at now after waiting waited.
func (p *Pace) LeftOut(now time.Time, waited time.Duration) {
	if waited <= PaceWhenSlow {
		// A wait cut short while slow says nothing new.
		return
	}
	p.Backoff++
	p.SlowUntil = now.Add(PaceSlowFor)
}

// String is the form Pace is kept in, ParsePace's input.
func (p Pace) String() string {
	slow := int64(0)
	if !p.SlowUntil.IsZero() {
		slow = p.SlowUntil.UnixMilli()
	}
	return fmt.Sprintf("v1 %d %d %d %d %d", p.SRTT.Microseconds(), p.RTTVar.Microseconds(), p.Samples, p.Backoff, slow)
}

// ParsePace reads what String wrote; anything else, including "", is
// a pace that knows nothing yet.
func ParsePace(s string) Pace {
	f := strings.Fields(s)
	if len(f) != 6 || f[0] != "v1" {
		return Pace{}
	}
	var n [5]int64
	for i := range n {
		v, err := strconv.ParseInt(f[i+1], 10, 64)
		if err != nil || v < 0 {
			return Pace{}
		}
		n[i] = v
	}
	p := Pace{SRTT: time.Duration(n[0]) * time.Microsecond, RTTVar: time.Duration(n[1]) * time.Microsecond,
		Samples: int(min(n[2], PaceSamples)), Backoff: int(min(n[3], 64))}
	if n[4] > 0 {
		p.SlowUntil = time.UnixMilli(n[4])
	}
	return p
}
