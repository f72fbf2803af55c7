package monitor

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/cxray/cxray/internal/clock"
	"github.com/cxray/cxray/prm"
)

// Options is one monitoring run: what Monitor judges each sample by, and
// how often and how long Run samples.
type Options struct {
	Collectors  []Collector
	Alerts      []*Alert
	FrozenAfter int
	FrozenFor   time.Duration
	// Timeout bounds each target's reads in a sample, and the check of the
	// alerts against the first sample (Monitor.Timeout).
	Timeout time.Duration
	// Clock tells the samples' time and waits the interval: the targets'
	// clock, so an emulated manual clock advances by Interval each sample.
	// nil: the wall clock.
	Clock clock.Clock
	// Interval is the time between samples; Count stops after that many
	// (0: until ctx ends).
	Interval time.Duration
	Count    int
	// FirstDeadline, when set, bounds the first sample instead of Timeout
	// alone: the command's --timeout covers opening and the first sample
	// together.
	FirstDeadline time.Time
}

// Result is how a run went, for its exit code: the samples taken, whether
// any device answered with a value, whether an alert fired or a value
// froze, and the first device error of a sample without a value.
type Result struct {
	Taken      int
	Answered   bool
	Problems   bool
	FirstError string
}

// InputError is a run refused for what it was asked: a --what register
// the firmware refuses, or an alert whose key can never match. It is the
// caller's input (errors.Is prm.ErrInput), found at the first sample.
type InputError struct{ Err error }

func (e *InputError) Error() string        { return e.Err.Error() }
func (e *InputError) Unwrap() error        { return e.Err }
func (e *InputError) Is(target error) bool { return target == prm.ErrInput }

// Run samples targets every Interval until Count samples are taken or ctx
// ends, and hands each sample batch to sink. The first sample decides
// what the run may go on with: a refused register or an alert that can
// never match ends it with an *InputError before sink sees anything, and
// a first sample in which no target answered ends it without waiting an
// interval. An error from sink ends the run with that error. Targets that
// stop answering later are marked (Target.Gone, Target.Missed) and
// retried each sample.
func Run(ctx context.Context, targets []*Target, o Options, sink func([]Sample) error) (Result, error) {
	clk := o.Clock
	if clk == nil {
		clk = clock.Real{}
	}
	m := &Monitor{Collectors: o.Collectors, Alerts: o.Alerts, FrozenAfter: o.FrozenAfter, FrozenFor: o.FrozenFor, Now: clk.Now, Timeout: o.Timeout}
	first := ctx
	if !o.FirstDeadline.IsZero() {
		var cancel context.CancelFunc
		first, cancel = context.WithDeadline(ctx, o.FirstDeadline)
		defer cancel()
	}
	var res Result
	for i := 0; o.Count == 0 || i < o.Count; i++ {
		if i > 0 {
			if err := clk.Sleep(ctx, o.Interval); err != nil {
				break
			}
		}
		if ctx.Err() != nil {
			break
		}
		sctx := ctx
		if i == 0 {
			sctx = first
		}
		samples := m.Sample(sctx, targets)
		if i == 0 {
			if err := m.checkFirst(ctx, targets, samples); err != nil {
				return res, err
			}
		}
		res.Taken++
		res.note(samples)
		if err := sink(samples); err != nil {
			return res, err
		}
		if i == 0 && !res.Answered {
			// Nothing answered within the first deadline: no interval is
			// waited for another sample of a device that never answered.
			break
		}
	}
	return res, nil
}

// checkFirst refuses the run after its first sample: registers the
// firmware refused, alerts whose keys no target can have.
func (m *Monitor) checkFirst(ctx context.Context, targets []*Target, samples []Sample) error {
	if r := m.Refused(); len(r) > 0 {
		msgs := make([]string, len(r))
		for j, e := range r {
			msgs[j] = e.Error()
		}
		return &InputError{errors.New(strings.Join(msgs, "\n"))}
	}
	actx := ctx
	if m.Timeout > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, m.Timeout)
		defer cancel()
	}
	if err := m.CheckAlerts(actx, targets, samples); err != nil {
		return &InputError{err}
	}
	return nil
}

// note adds one batch of samples to the result.
func (r *Result) note(samples []Sample) {
	for _, s := range samples {
		if len(s.Alerts)+len(s.Frozen) > 0 {
			r.Problems = true
		}
		if len(s.Values) > 0 || len(s.Errors) == 0 {
			r.Answered = true
		} else if r.FirstError == "" {
			r.FirstError = s.Device + ": " + strings.Join(s.Errors, "; ")
		}
	}
}
