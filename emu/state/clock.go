package state

import (
	"sync"
	"time"

	"github.com/cxray/cxray/internal/clock"
)

// Clock is the emulated clock of a kept state, the same in every process:
// a real-time scenario's time runs with the wall clock from the state's
// origin; a manual one is a clock.Manual that sleeps and control sockets
// advance, moved forward to the latest time any process recorded. It
// never reads earlier than a record already seen, so the log's times
// only grow. While a record is replayed it reads the record's time.
type Clock struct {
	mu       sync.Mutex
	manual   *clock.Manual
	origin   time.Time
	wallBase time.Time
	floor    time.Time
	pinned   bool
	pin      time.Time
}

func newClock(h Header) *Clock {
	c := &Clock{origin: h.Origin, wallBase: h.WallBase, floor: h.Origin}
	if h.Manual {
		c.manual = clock.NewManual(h.Origin)
	}
	return c
}

// Now implements emu.Clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pinned {
		return c.pin
	}
	return c.live()
}

func (c *Clock) live() time.Time {
	var t time.Time
	if c.manual != nil {
		t = c.manual.Now()
	} else {
		t = c.origin.Add(time.Now().Round(0).Sub(c.wallBase))
	}
	if t.Before(c.floor) {
		return c.floor
	}
	return t
}

// Manual is the manual clock underneath (nil when the scenario's clock
// runs in real time); scenario.Build hands it to the emulation.
func (c *Clock) Manual() *clock.Manual { return c.manual }

// setPin makes the clock read t (a record being replayed, the power-on
// while the scenario is built).
func (c *Clock) setPin(t time.Time) {
	c.mu.Lock()
	c.pinned, c.pin = true, t
	c.mu.Unlock()
}

func (c *Clock) unpin() {
	c.mu.Lock()
	c.pinned = false
	c.mu.Unlock()
}

// raise moves the clock to at least t: the time another process has seen.
func (c *Clock) raise(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.floor) {
		c.floor = t
	}
	if c.manual != nil {
		if now := c.manual.Now(); t.After(now) {
			c.manual.Advance(t.Sub(now))
		}
	}
}
