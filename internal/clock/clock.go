// Package clock is the time source shared by the device-access code and the
// emulator. Production code uses Real; tests use Manual, whose Sleep advances
// virtual time instantly, so retry and timeout paths run deterministically and
// fast without real sleeping.
package clock

import (
	"context"
	"runtime"
	"sync"
	"time"
)

// Clock tells the time and waits. Sleep returns early with ctx.Err() when the
// context ends first.
type Clock interface {
	Now() time.Time
	Sleep(ctx context.Context, d time.Duration) error
}

// Real is the wall clock.
type Real struct{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// Sleep waits for d or until ctx ends.
func (Real) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Or returns c, or Real when c is nil.
func Or(c Clock) Clock {
	if c == nil {
		return Real{}
	}
	return c
}

// Manual is a virtual clock for tests. Time moves only through Advance and
// Sleep; Sleep moves it forward by d and returns at once. Safe for concurrent use.
type Manual struct {
	mu     sync.Mutex
	now    time.Time
	hookIn int    // sleeps left before hook runs
	hook   func() // set by OnSleep
}

// NewManual returns a manual clock reading start.
func NewManual(start time.Time) *Manual { return &Manual{now: start} }

// Now returns the current virtual time.
func (m *Manual) Now() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.now
}

// Advance moves the clock forward by d.
func (m *Manual) Advance(d time.Duration) {
	m.mu.Lock()
	m.now = m.now.Add(d)
	m.mu.Unlock()
}

// Sleep advances the clock by d unless ctx has already ended. It yields the
// processor so that a goroutine spinning on a virtual clock lets the one it
// waits for run.
func (m *Manual) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.Advance(d)
	m.mu.Lock()
	var fire func()
	if m.hook != nil {
		if m.hookIn--; m.hookIn <= 0 {
			fire, m.hook = m.hook, nil
		}
	}
	m.mu.Unlock()
	if fire != nil {
		fire()
	}
	runtime.Gosched()
	return nil
}

// OnSleep runs fn once, during the n-th Sleep from now (after the clock has
// advanced). Tests use it to end a context at an exact point of a wait.
func (m *Manual) OnSleep(n int, fn func()) {
	m.mu.Lock()
	m.hookIn, m.hook = n, fn
	m.mu.Unlock()
}
