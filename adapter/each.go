package adapter

import (
	"context"
	"runtime"
	"slices"
	"sync"

	"github.com/cxray/cxray/internal/clock"
)

// MaxParallel is how many functions a command reads at once: twice the
// CPUs, from 4 to 16. A function's reads are short on hardware (the
// firmware's latency) but cost the CPU on the emulator, where every
// config-space cycle is a FUSE request; its --interval waits cost
// nothing, and do not count (Adapter.Sleep gives the turn back while it
// waits). An 8-GPU server's 9 to 12 functions then read in one or three
// turns and wait their interval together.
func MaxParallel() int {
	return min(max(2*runtime.NumCPU(), 4), 16)
}

// Each calls fn(ctx, i) for every i in [0, n), up to MaxParallel at a
// time, and returns when every call has returned. Calls not yet started
// when ctx ends are not started: the caller checks ctx.Err().
func Each(ctx context.Context, n int, fn func(ctx context.Context, i int)) {
	EachLimit(ctx, n, MaxParallel(), fn)
}

// EachLimit is Each with at most limit calls reading at a time (1: in
// order, one after the other). A call holds its turn while it reads; an
// Adapter.Sleep in it gives the turn to another call and takes one back
// first when it wakes, so waits overlap and a call that already began
// finishes before new ones start.
func EachLimit(ctx context.Context, n, limit int, fn func(ctx context.Context, i int)) {
	if limit < 1 {
		limit = 1
	}
	if limit == 1 || n <= 1 {
		for i := 0; i < n && ctx.Err() == nil; i++ {
			fn(ctx, i)
		}
		return
	}
	p := &turns{free: limit}
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		if p.take(ctx, false) != nil {
			break
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			t := &turn{p: p, held: true}
			fn(context.WithValue(ctx, turnKey{}, t), i)
			if t.held {
				p.give()
			}
		}(i)
	}
	wg.Wait()
}

// turns hands out the turns of EachLimit: first to calls waking from a
// wait, then to new calls, each in the order they asked.
type turns struct {
	mu    sync.Mutex
	free  int
	queue []chan struct{}
}

// take waits for a turn; first puts the caller before those not yet
// started.
func (p *turns) take(ctx context.Context, first bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p.mu.Lock()
	if p.free > 0 && (first || len(p.queue) == 0) {
		p.free--
		p.mu.Unlock()
		return nil
	}
	w := make(chan struct{})
	if first {
		p.queue = append([]chan struct{}{w}, p.queue...)
	} else {
		p.queue = append(p.queue, w)
	}
	p.mu.Unlock()
	select {
	case <-w:
		return nil
	case <-ctx.Done():
		p.mu.Lock()
		if i := slices.Index(p.queue, w); i >= 0 {
			p.queue = slices.Delete(p.queue, i, i+1)
			p.mu.Unlock()
			return ctx.Err()
		}
		p.mu.Unlock()
		p.give() // handed over as ctx ended: pass it on
		return ctx.Err()
	}
}

func (p *turns) give() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.queue) > 0 {
		w := p.queue[0]
		p.queue = p.queue[1:]
		close(w)
		return
	}
	p.free++
}

// turn is one EachLimit call's turn, in its context.
type turn struct {
	p    *turns
	held bool
}

type turnKey struct{}

// pause gives ctx's turn back for the length of wait, if ctx holds one.
func pause(ctx context.Context, wait func() error) error {
	t, _ := ctx.Value(turnKey{}).(*turn)
	if t == nil || !t.held {
		return wait()
	}
	t.p.give()
	t.held = false
	err := wait()
	if terr := t.p.take(ctx, true); terr != nil {
		if err == nil {
			err = terr
		}
		return err
	}
	t.held = true
	return err
}

// Parallel is how many of as a command reads at once: one at a time when
// they share a manual clock (the emulator's), where waits cost nothing and
// one after the other keeps every reading the same from run to run;
// MaxParallel otherwise.
func Parallel(as []*Adapter) int {
	for _, a := range as {
		if _, manual := a.Clock().(*clock.Manual); manual {
			return 1
		}
	}
	return MaxParallel()
}
