package adapter_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev"
)

// gate is a clock whose Sleep waits until the test opens the gate.
type gate struct{ open chan struct{} }

func (g gate) Now() time.Time { return time.Unix(0, 0) }
func (g gate) Sleep(ctx context.Context, _ time.Duration) error {
	select {
	case <-g.open:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// EachLimit reads at most limit functions at a time, and a function
// waiting its interval (Adapter.Sleep) gives its turn to the next: all of
// them wait their interval together, which a plain bound of limit
// goroutines would not allow (only two could ever be asleep).
func TestEachLimitOverlapsWaits(t *testing.T) {
	const n, limit = 6, 2
	g := gate{open: make(chan struct{})}
	a := adapter.New(adapter.Config{Name: "t", Clock: g})
	var active, most, asleep, done atomic.Int32
	read := func() {
		v := active.Add(1)
		for {
			m := most.Load()
			if v <= m || most.CompareAndSwap(m, v) {
				break
			}
		}
		time.Sleep(time.Millisecond)
		active.Add(-1)
	}
	finished := make(chan struct{})
	go func() {
		adapter.EachLimit(context.Background(), n, limit, func(ctx context.Context, i int) {
			read()
			asleep.Add(1)
			if err := a.Sleep(ctx, time.Second); err != nil {
				t.Errorf("call %d: %v", i, err)
			}
			read()
			done.Add(1)
		})
		close(finished)
	}()
	deadline := time.After(time.Minute)
	for asleep.Load() < n {
		select {
		case <-deadline:
			t.Fatalf("%d of %d calls reached their wait: the waiting ones kept their turns", asleep.Load(), n)
		case <-time.After(time.Millisecond):
		}
	}
	close(g.open)
	<-finished
	if done.Load() != n || most.Load() > limit {
		t.Errorf("%d of %d calls done, at most %d reading at once (limit %d)", done.Load(), n, most.Load(), limit)
	}
}

// Calls not started when the context ends are not started; the ones
// running return.
func TestEachLimitStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var started atomic.Int32
	var mu sync.Mutex
	adapter.EachLimit(ctx, 10, 2, func(ctx context.Context, i int) {
		mu.Lock()
		defer mu.Unlock()
		if started.Add(1) == 2 {
			cancel()
		}
	})
	if n := started.Load(); n > 3 {
		t.Errorf("%d calls started after the context ended at the second", n)
	}
}

// A function whose register path did not open (a held semaphore) waits
// for it without its turn: with two turns and two stuck functions, the
// healthy one reads while they wait, not after their deadline.
func TestEachLimitStuckOpenGivesItsTurn(t *testing.T) {
	healthyRead := make(chan struct{})
	stillHeld := errors.New("semaphore still held")
	stuck := func() *adapter.Adapter {
		return adapter.New(adapter.Config{Name: "stuck", Reopen: func(ctx context.Context) (*dev.Device, error) {
			select {
			case <-healthyRead:
				return nil, stillHeld
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}})
	}
	as := []*adapter.Adapter{stuck(), stuck()}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	errs := make([]error, len(as))
	adapter.EachLimit(ctx, len(as)+1, len(as), func(ctx context.Context, i int) {
		if i < len(as) {
			_, errs[i] = as[i].Registers(ctx)
			return
		}
		close(healthyRead)
	})
	for i, err := range errs {
		if !errors.Is(err, stillHeld) {
			t.Errorf("stuck function %d: %v, want %v (the healthy one read while it waited)", i, err, stillHeld)
		}
	}
}
