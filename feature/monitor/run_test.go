package monitor_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/emu/emuadapter/emutest"
	"github.com/cxray/cxray/feature/monitor"
	"github.com/cxray/cxray/internal/clock"
	"github.com/cxray/cxray/prm"
)

const gpuNode = "../../examples/gpu-node.yaml"

// gpuTargets opens every function of the GPU node scenario as targets.
func gpuTargets(t *testing.T) ([]*monitor.Target, *clock.Manual) {
	t.Helper()
	ads, clk := emutest.OpenFile(t, gpuNode)
	var ts []*monitor.Target
	for _, a := range ads {
		ts = append(ts, &monitor.Target{Name: a.BDF(), Adapter: a})
	}
	if len(ts) < 10 {
		t.Fatalf("%s opens %d functions; a GPU node has 10", gpuNode, len(ts))
	}
	return ts, clk
}

// Run on the real clock, at a GPU node's scale: every sample has every
// function, the samples are at least an interval apart, and the run
// ends after Count samples.
func TestRunRealTime(t *testing.T) {
	ts, _ := gpuTargets(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const interval = 150 * time.Millisecond
	var batches [][]monitor.Sample
	res, err := monitor.Run(ctx, ts, monitor.Options{Collectors: collectors(t, "temp", "counters"), Clock: clock.Real{}, Interval: interval, Count: 3, Timeout: time.Minute},
		func(s []monitor.Sample) error { batches = append(batches, s); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(monitor.Result{Taken: 3, Answered: true}, res); d != "" {
		t.Errorf("result (-want +got):\n%s", d)
	}
	if len(batches) != 3 {
		t.Fatalf("%d batches, want 3", len(batches))
	}
	for i, b := range batches {
		var devs []string
		for j, s := range b {
			devs = append(devs, s.Device)
			if len(s.Values) == 0 {
				t.Errorf("sample %d of %s: no values (errors %v)", i, s.Device, s.Errors)
			}
			if i > 0 && s.Time.Sub(batches[i-1][j].Time) < interval {
				t.Errorf("sample %d of %s at %v, %v after the one before; want at least %v", i, s.Device, s.Time, s.Time.Sub(batches[i-1][j].Time), interval)
			}
		}
		var want []string
		for _, tg := range ts {
			want = append(want, tg.Name)
		}
		if d := cmp.Diff(want, devs); d != "" {
			t.Errorf("batch %d devices (-want +got):\n%s", i, d)
		}
	}
}

// Count 0 samples until the context ends; the run then ends cleanly with
// what it took.
func TestRunUntilCancelled(t *testing.T) {
	ts, _ := gpuTargets(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	n := 0
	res, err := monitor.Run(ctx, ts[:2], monitor.Options{Collectors: collectors(t, "temp"), Clock: clock.Real{}, Interval: 50 * time.Millisecond},
		func([]monitor.Sample) error {
			if n++; n == 4 {
				cancel()
			}
			return nil
		})
	if err != nil || res.Taken != 4 {
		t.Errorf("Run = %+v, %v; want 4 samples and no error", res, err)
	}
}

// On the scenario's manual clock each sample advances it by the interval,
// and a frozen or alerting reading makes the run a problem.
func TestRunManualClock(t *testing.T) {
	ts, clk := gpuTargets(t)
	t0 := clk.Now()
	var times []time.Time
	res, err := monitor.Run(context.Background(), ts[:1], monitor.Options{Collectors: collectors(t, "temp"), Clock: clk, Interval: time.Minute, Count: 3,
		Alerts: alerts(t, "temp.asic_c > 0")},
		func(s []monitor.Sample) error { times = append(times, s[0].Time); return nil })
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Time{t0.UTC(), t0.Add(time.Minute).UTC(), t0.Add(2 * time.Minute).UTC()}
	if d := cmp.Diff(want, times); d != "" {
		t.Errorf("sample times (-want +got):\n%s", d)
	}
	if !res.Problems || res.Taken != 3 {
		t.Errorf("result %+v: want 3 samples with a problem (the alert fired)", res)
	}
}

// An alert no target can ever match is the caller's input: refused at
// the first sample, before the sink sees anything.
func TestRunRefusesAlert(t *testing.T) {
	ts, clk := gpuTargets(t)
	called := false
	_, err := monitor.Run(context.Background(), ts, monitor.Options{Collectors: collectors(t, "temp"), Clock: clk, Interval: time.Second, Count: 2,
		Alerts: alerts(t, "no.such.key > 1")},
		func([]monitor.Sample) error { called = true; return nil })
	var ie *monitor.InputError
	if !errors.As(err, &ie) || !errors.Is(err, prm.ErrInput) {
		t.Errorf("Run = %v; want an *InputError that is prm.ErrInput", err)
	}
	if called {
		t.Error("the sink was called for a refused run")
	}
}

// A first sample past its deadline reads nothing: the run ends there
// (one sample, nothing answered) without waiting an interval, and the
// sink's error ends a run with that error.
func TestRunFirstDeadlineAndSinkError(t *testing.T) {
	ts, _ := gpuTargets(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := monitor.Run(ctx, ts, monitor.Options{Collectors: collectors(t, "temp"), Clock: clock.Real{}, Interval: time.Hour, Count: 5,
		FirstDeadline: time.Now().Add(-time.Second)}, func([]monitor.Sample) error { return nil })
	if err != nil || res.Taken != 1 || res.Answered || res.FirstError == "" {
		t.Errorf("Run = %+v, %v; want 1 sample, none answered, the first error named", res, err)
	}
	boom := errors.New("disk full")
	res, err = monitor.Run(ctx, ts, monitor.Options{Collectors: collectors(t, "temp"), Clock: clock.Real{}, Interval: time.Hour, Count: 5},
		func([]monitor.Sample) error { return boom })
	if !errors.Is(err, boom) || res.Taken != 1 {
		t.Errorf("Run = %+v, %v; want the sink's error after 1 sample", res, err)
	}
}
