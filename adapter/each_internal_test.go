package adapter

import (
	"context"
	"testing"
	"time"
)

// A call waking from a wait takes the next turn before calls that have
// not started, so a function already begun finishes within its deadline.
func TestTurnsWakingFirst(t *testing.T) {
	p := &turns{free: 1}
	ctx := context.Background()
	if err := p.take(ctx, false); err != nil {
		t.Fatal(err)
	}
	order := make(chan string, 2)
	queued := func() int { p.mu.Lock(); defer p.mu.Unlock(); return len(p.queue) }
	go func() { p.take(ctx, false); order <- "new"; p.give() }()
	for queued() < 1 {
		time.Sleep(time.Millisecond)
	}
	go func() { p.take(ctx, true); order <- "woken"; p.give() }()
	for queued() < 2 {
		time.Sleep(time.Millisecond)
	}
	p.give()
	if a, b := <-order, <-order; a != "woken" || b != "new" {
		t.Errorf("turns went to %s then %s, want the woken call first", a, b)
	}
	// A wait given up when its context ends leaves the queue.
	cctx, cancel := context.WithCancel(ctx)
	p.take(ctx, false)
	errc := make(chan error)
	go func() { errc <- p.take(cctx, false) }()
	for queued() < 1 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-errc; err == nil || queued() != 0 {
		t.Errorf("cancelled take: %v, %d left queued", err, queued())
	}
	p.give()
	if p.free != 1 {
		t.Errorf("%d turns free after all were given back, want 1", p.free)
	}
}
