// Package tracetest records the emulator's trace events (emu.Device.SetTrace)
// so tests of the access layer can count what a client did to the device:
// space selects, semaphore takes, ICMD runs. Only _test.go files import it.
package tracetest

import (
	"sync"

	"github.com/cxray/cxray/emu"
)

// Recorder collects events; pass its Record method to emu.Device.SetTrace.
type Recorder struct {
	mu     sync.Mutex
	events []emu.Event
}

// Record appends e.
func (r *Recorder) Record(e emu.Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// emu.Events returns a copy of the events so far.
func (r *Recorder) Events() []emu.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]emu.Event(nil), r.events...)
}

// Kinds returns the events of the given kinds, in order.
func (r *Recorder) Kinds(kinds ...emu.EventKind) []emu.Event {
	var out []emu.Event
	for _, e := range r.Events() {
		for _, k := range kinds {
			if e.Kind == k {
				out = append(out, e)
				break
			}
		}
	}
	return out
}

// Count returns how many events of kind k were recorded.
func (r *Recorder) Count(k emu.EventKind) int { return len(r.Kinds(k)) }

// Reset forgets all events.
func (r *Recorder) Reset() {
	r.mu.Lock()
	r.events = nil
	r.mu.Unlock()
}
