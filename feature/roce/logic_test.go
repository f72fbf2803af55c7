package roce_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/adapter/adaptertest"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/dev/devtest"
	"github.com/cxray/cxray/emu/emuadapter/emutest"
	"github.com/cxray/cxray/feature/roce"
	"github.com/cxray/cxray/internal/clock"
	"github.com/cxray/cxray/nvconf/nvtest"
)

var start = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// counters is an OS view whose RDMA counters the test moves.
type counters struct {
	port map[int]map[string]uint64
}

func (c *counters) OS(context.Context) (*adapter.OS, error) { return &adapter.OS{}, nil }

func (c *counters) RDMACounters(_ context.Context, port int) (map[string]uint64, error) {
	m, ok := c.port[port]
	if !ok {
		return nil, errors.New("no such RDMA port")
	}
	out := map[string]uint64{}
	for k, v := range m {
		out[k] = v
	}
	return out, nil
}

// function is a one-port function (port 1 up at 400G) over dev/devtest.
func function(t *testing.T, os adapter.OSView) (*adapter.Adapter, *devtest.Fake, *clock.Manual) {
	db := devtest.DB(t)
	f := devtest.New(db)
	f.Put("MGIR", "hw_info.num_ports=1")
	f.Put("PAOS", "local_port=1", "admin_status=up", "oper_status=up")
	f.Put("PTYS", "local_port=1", "proto_mask=Ethernet", "data_rate_oper=4000", "max_port_rate=400")
	clk := clock.NewManual(start)
	c := adapter.Config{Name: "t", BDF: "0000:03:00.0", Backend: dev.BackendDirect, DB: db, Registers: f.Device("t", "0000:03:00.0", dev.BackendDirect), Clock: clk}
	if os != nil {
		c.OSView = os
	}
	return adapter.New(c), f, clk
}

func TestFeatures(t *testing.T) {
	a, f, _ := function(t, nil)
	f.Put("ROCE_ACCL", "roce_adp_retrans_field_select=1", "roce_adp_retrans_en=1", "roce_tx_window_field_select=1",
		"selective_repeat_forced_en_field_select=1", "selective_repeat_forced_en=1", "min_ack_timeout_limit_disabled=1")
	d, _ := a.Registers(context.Background())
	got, err := roce.Features(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	type fe struct {
		Name               string
		Supported, Enabled bool
	}
	var sum []fe
	for _, x := range got {
		if x.Meaning == "" {
			t.Errorf("%s has no meaning", x.Name)
		}
		sum = append(sum, fe{x.Name, x.Supported, x.Enabled})
	}
	want := []fe{
		{"roce_adp_retrans", true, true}, {"roce_tx_window", true, false}, {"roce_slow_restart", false, false},
		{"roce_slow_restart_idle", false, false}, {"min_ack_timeout_limit_disabled", false, true},
		{"adaptive_routing_forced_en", false, false}, {"selective_repeat_forced_en", true, true},
	}
	if d := cmp.Diff(want, sum); d != "" {
		t.Errorf("features (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"roce_adp_retrans", "roce_tx_window", "roce_slow_restart", "roce_slow_restart_idle",
		"min_ack_timeout_limit_disabled", "adaptive_routing_forced_en", "selective_repeat_forced_en"}, roce.FeatureNames()); d != "" {
		t.Errorf("feature names (-want +got):\n%s", d)
	}
}

// Every feature `roce set` accepts is written through the same
// read-modify-write as `reg set`, and reads back as set.
func TestSetEveryFeature(t *testing.T) {
	ctx := context.Background()
	a, f, _ := function(t, nil)
	f.Put("ROCE_ACCL")
	d, _ := a.Registers(ctx)
	for _, name := range roce.FeatureNames() {
		for _, on := range []bool{true, false} {
			as, err := roce.SetAssignments(name, on)
			if err != nil {
				t.Fatal(err)
			}
			wp, err := d.PrepareSet(ctx, "ROCE_ACCL", nil, as)
			if err != nil {
				t.Fatalf("%s=%v: %v", name, on, err)
			}
			if _, err := d.ApplySet(ctx, wp, nil); err != nil {
				t.Fatalf("%s=%v: %v", name, on, err)
			}
			fs, _ := roce.Features(ctx, d)
			for _, x := range fs {
				if x.Name == name && (x.Enabled != on || !x.Supported) {
					t.Errorf("%s set %v reads enabled=%v supported=%v", name, on, x.Enabled, x.Supported)
				}
			}
		}
	}
}

// A rate over no time is refused, never +Inf.
func TestRatesNeedAnInterval(t *testing.T) {
	c := &counters{port: map[int]map[string]uint64{1: {"out_of_sequence": 100}}}
	a, _, _ := function(t, c)
	for _, iv := range []time.Duration{0, -time.Second} {
		got, err := roce.Rates(context.Background(), a, iv)
		if err == nil || got != nil {
			t.Errorf("interval %v: %v %v", iv, got, err)
		}
	}
}

// Rates samples twice, the interval apart on the adapter's clock, and
// keeps the retransmission counters that moved, per second.
func TestRates(t *testing.T) {
	c := &counters{port: map[int]map[string]uint64{1: {"out_of_sequence": 100, "packet_seq_err": 7, "rx_write_requests": 1, "roce_adp_retrans": 50}}}
	a, _, clk := function(t, c)
	clk.OnSleep(1, func() {
		c.port[1] = map[string]uint64{"out_of_sequence": 130, "packet_seq_err": 7, "rx_write_requests": 99, "roce_adp_retrans": 10}
	})
	got, err := roce.Rates(context.Background(), a, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// packet_seq_err did not move; roce_adp_retrans went down (cleared);
	// rx_write_requests is no retransmission counter.
	if d := cmp.Diff(map[string]float64{"port1.out_of_sequence": 3}, got); d != "" {
		t.Errorf("rates (-want +got):\n%s", d)
	}
	if !clk.Now().Equal(start.Add(10 * time.Second)) {
		t.Errorf("clock at %v", clk.Now())
	}
	if d := cmp.Diff([]string{"a", "b", "c"}, roce.SortedRates(map[string]float64{"c": 1, "a": 2, "b": 3})); d != "" {
		t.Errorf("sorted (-want +got):\n%s", d)
	}
	// Without RDMA counters: the reason.
	a, _, _ = function(t, nil)
	if _, err := roce.Rates(context.Background(), a, time.Second); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("no RDMA counters: %v", err)
	}
}

func TestPortRate(t *testing.T) {
	a, f, _ := function(t, nil)
	if r, err := roce.PortRate(context.Background(), a); err != nil || r != 400e9 {
		t.Errorf("%v %v", r, err)
	}
	f.Put("PAOS", "local_port=1", "admin_status=up", "oper_status=down")
	f.Put("PTYS", "local_port=1", "proto_mask=Ethernet", "data_rate_oper=0")
	// A new adapter over the same registers (links are read each time,
	// but keep the test independent of caching).
	down := adapter.New(adapter.Config{Name: "t", Backend: dev.BackendDirect, DB: devtest.DB(t), Registers: f.Device("t", "", dev.BackendDirect)})
	if _, err := roce.PortRate(context.Background(), down); err == nil || !strings.Contains(err.Error(), "port 1 reports no speed (is it up?)") {
		t.Errorf("down: %v", err)
	}
}

func TestStatusOverRegisters(t *testing.T) {
	ctx := context.Background()
	t.Run("no ROCE_ACCL, no RDMA counters", func(t *testing.T) {
		a, _, _ := function(t, nil)
		r, err := roce.Status(ctx, a, roce.StatusOptions{Interval: time.Second, RTT: 8 * time.Microsecond})
		if err != nil {
			t.Fatal(err)
		}
		if r.Device != "t" || len(r.Features) != 0 || !strings.Contains(r.FeaturesErr, "not supported") || r.Window != (roce.WindowReport{NextBoot: -1, Current: -1}) {
			t.Errorf("%+v", r)
		}
		if !strings.Contains(r.RatesErr, "not available on the direct backend") || r.Rates != nil {
			t.Errorf("rates %v %q", r.Rates, r.RatesErr)
		}
		// The advice from the port's 400G and 8 µs.
		if r.Advice == nil || r.Advice.RateGbps != 400 || r.Advice.BDPBytes != 400e9/8*8e-6 || r.Advice.Current != -1 {
			t.Errorf("advice %+v", r.Advice)
		}
	})
	t.Run("ROCE_ACCL busy fails", func(t *testing.T) {
		a, f, _ := function(t, nil)
		f.Fail("ROCE_ACCL", dev.StatusBusy)
		if _, err := roce.Status(ctx, a, roce.StatusOptions{}); !errors.Is(err, dev.ErrBusy) {
			t.Errorf("%v", err)
		}
	})
	t.Run("no NV access: the window's error", func(t *testing.T) {
		a, f, _ := function(t, &counters{port: map[int]map[string]uint64{1: {}}})
		f.Put("ROCE_ACCL", "roce_tx_window_field_select=1", "roce_tx_window_en=1")
		r, err := roce.Status(ctx, a, roce.StatusOptions{NV: nvtest.NV(t), Interval: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Features) != 7 || r.FeaturesErr != "" || r.Window.NextBoot != -1 || !strings.Contains(r.Window.Error, "MNVQC") || r.RatesErr != "" || len(r.Rates) != 0 {
			t.Errorf("%+v", r)
		}
	})
}

// LOG_TX_PSN_WINDOW through the emulated NV store: 12 written, waiting
// for a firmware reset.
func TestWindowOnEmulator(t *testing.T) {
	ads, _ := emutest.OpenFile(t, "../../examples/troubled.yaml", "0000:03:00.0")
	d, err := ads[0].Registers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	next, cur, err := roce.Window(context.Background(), d, nvtest.NV(t))
	if err != nil || next != 12 || cur == 12 || cur < 0 {
		t.Errorf("next %d current %d: %v", next, cur, err)
	}
	r, err := roce.Status(context.Background(), ads[0], roce.StatusOptions{NV: nvtest.NV(t), Interval: 10 * time.Second, RTT: 20 * time.Microsecond})
	if err != nil {
		t.Fatal(err)
	}
	if r.Window.NextBoot != 12 || r.Window.Current != cur || r.Window.Error != "" || len(r.Features) == 0 || r.Advice == nil || r.Advice.Current != cur {
		t.Errorf("status %+v advice %+v", r, r.Advice)
	}
}

// `roce status -d kernel:mlx5_0`: the RDMA counters and the link rate
// from the kernel; ROCE_ACCL and the NV window are registers, not
// available on this backend, and say so instead of failing.
func TestStatusOnKernelBackend(t *testing.T) {
	a := adaptertest.Kernel(t, "kernel:mlx5_0", nil)
	r, err := roce.Status(context.Background(), a, roce.StatusOptions{NV: nvtest.NV(t), Interval: time.Millisecond, RTT: 8 * time.Microsecond})
	if err != nil {
		t.Fatal(err)
	}
	for what, msg := range map[string]string{"features": r.FeaturesErr, "window": r.Window.Error} {
		if !strings.Contains(msg, "not available on the kernel backend") {
			t.Errorf("%s: %q", what, msg)
		}
	}
	// The fixture's counters do not move between the two reads.
	if r.RatesErr != "" || r.Rates == nil || len(r.Rates) != 0 {
		t.Errorf("rates %v %q", r.Rates, r.RatesErr)
	}
	if r.Advice == nil || r.Advice.RateGbps != 400 || r.Advice.Current != -1 || r.Window.NextBoot != -1 {
		t.Errorf("advice %+v window %+v", r.Advice, r.Window)
	}
}

func TestAdviceNotes(t *testing.T) {
	note := func(a *roce.Advice, sub string) bool {
		for _, n := range a.Notes {
			if strings.Contains(n, sub) {
				return true
			}
		}
		return false
	}
	a, _ := roce.Advise(400e9, 8e-6, 4096, 0, 0, nil)
	if a.Limiting != nil || !note(a, "LOG_TX_PSN_WINDOW is 0: the device default") {
		t.Errorf("default window: %+v", a)
	}
	a, _ = roce.Advise(400e9, 8e-6, 4096, 0, 63, nil)
	if a.Limiting == nil || *a.Limiting || !note(a, "the device maximum") {
		t.Errorf("maximum window: %+v", a)
	}
	a, _ = roce.Advise(400e9, 8e-6, 4096, 0, 4, nil)
	if a.Limiting == nil || !*a.Limiting || !note(a, "'cxray roce set log_tx_psn_window=7'") {
		t.Errorf("small window: %+v", a.Notes)
	}
	a, _ = roce.Advise(400e9, 8e-6, 4096, 0, 10, nil)
	if *a.Limiting || *a.MaxRateGbps != 400 || !note(a, "covers the BDP") {
		t.Errorf("large window: %+v", a)
	}
	// With loss, go-back-N resends the window in flight: the BDP, or the
	// smaller window.
	a, _ = roce.Advise(400e9, 8e-6, 4096, 1e-5, -1, nil)
	if a.ExpectedResends != a.BDPPackets || !note(a, "selective repeat") {
		t.Errorf("loss: %+v", a)
	}
	a, _ = roce.Advise(400e9, 8e-6, 4096, 1e-5, 4, nil)
	if a.ExpectedResends != 16 {
		t.Errorf("loss with window 2^4: resends %v", a.ExpectedResends)
	}
}

// A deadline during the interval between the two counter samples says
// what was being waited for, not only "context deadline exceeded"
// (issue 26.10).
func TestRatesDeadlineSaysWhat(t *testing.T) {
	a := adaptertest.Kernel(t, "kernel:mlx5_0", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := roce.Rates(ctx, a, time.Minute)
	if err == nil || err.Error() == context.DeadlineExceeded.Error() {
		t.Fatalf("rates at the deadline: %v", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "between the two samples") {
		t.Errorf("%v: want the wait named, unwrapping to the deadline", err)
	}
}
