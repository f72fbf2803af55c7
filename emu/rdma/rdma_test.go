package rdma

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/cxray/cxray/emu/fw"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/internal/clock"
)

func build(t *testing.T, profile string) (*scenario.Adapter, *clock.Manual) {
	t.Helper()
	sc, err := scenario.FromProfile(profile)
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.NewManual(time.Date(2024, 5, 1, 8, 0, 0, 0, time.UTC))
	e, err := scenario.Build(sc, scenario.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	return e.Adapters[0], clk
}

var retrans = []string{"out_of_sequence", "packet_seq_err", "local_ack_timeout_err", "duplicate_request", "roce_adp_retrans"}

// TestCleanPathHasNoRetransmission: no loss and a window that covers the
// BDP: requests grow with traffic, retransmission counters stay 0.
func TestCleanPathHasNoRetransmission(t *testing.T) {
	a, clk := build(t, "cx7-2p400g")
	m, err := New(a, clk, Config{})
	if err != nil {
		t.Fatal(err)
	}
	c0, err := m.Counters(1, clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(c0) != len(Names()) || c0["rx_write_requests"] != 0 {
		t.Fatalf("at boot: %v", c0)
	}
	clk.Advance(10 * time.Second)
	c, _ := m.Counters(1, clk.Now())
	// Profile traffic: 1.8e6 Rx frames/s, 30 % on the RoCE priority (3).
	if want := uint64(1.8e6 * 0.3 * 10); c["rx_write_requests"] != want {
		t.Errorf("rx_write_requests %d, want %d", c["rx_write_requests"], want)
	}
	for _, n := range retrans {
		if c[n] != 0 {
			t.Errorf("%s = %d on a clean path", n, c[n])
		}
	}
	// The same time asked twice gives the same numbers.
	again, _ := m.Counters(1, clk.Now())
	for k, v := range c {
		if again[k] != v {
			t.Errorf("%s: %d then %d", k, v, again[k])
		}
	}
}

// TestLossAndSmallWindowRetransmit: loss makes sequence errors and
// timeouts; a window smaller than the BDP makes timeouts and duplicates
// even without loss; more of either makes more.
func TestLossAndSmallWindowRetransmit(t *testing.T) {
	at := func(cfg Config) map[string]uint64 {
		a, clk := build(t, "cx7-2p400g")
		m, err := New(a, clk, cfg)
		if err != nil {
			t.Fatal(err)
		}
		clk.Advance(10 * time.Minute)
		c, err := m.Counters(1, clk.Now())
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	// 600000 RoCE packets a second; 390 in flight (the BDP: 400G, 8 µs,
	// 1024 bytes), so one loss in 390 is a tail loss the timer finds.
	loss := at(Config{Loss: 1e-4})
	if loss["packet_seq_err"] == 0 || loss["out_of_sequence"] == 0 || loss["local_ack_timeout_err"] == 0 || loss["duplicate_request"] != 0 {
		t.Errorf("loss 1e-4: %v", loss)
	}
	more := at(Config{Loss: 1e-3})
	for _, n := range []string{"packet_seq_err", "out_of_sequence", "local_ack_timeout_err"} {
		if more[n] <= loss[n] {
			t.Errorf("%s: %d at 1e-3, %d at 1e-4", n, more[n], loss[n])
		}
	}
	// 400G, 50 µs, 1024-byte frames: BDP about 2441 packets > 2^9.
	small := at(Config{RTT: 50 * time.Microsecond})
	if small["local_ack_timeout_err"] == 0 || small["duplicate_request"] == 0 || small["roce_adp_retrans"] != small["local_ack_timeout_err"] || small["packet_seq_err"] != 0 {
		t.Errorf("small window: %v", small)
	}
	smaller := at(Config{RTT: 50 * time.Microsecond, LogWindow: 6})
	if smaller["local_ack_timeout_err"] <= small["local_ack_timeout_err"] {
		t.Errorf("window 2^6: %d timeouts, 2^9: %d", smaller["local_ack_timeout_err"], small["local_ack_timeout_err"])
	}
	big := at(Config{RTT: 50 * time.Microsecond, LogWindow: 12})
	if big["local_ack_timeout_err"] != 0 {
		t.Errorf("window 2^12 covers the BDP, yet %d timeouts", big["local_ack_timeout_err"])
	}
}

// TestNoAdaptiveRetransmission: with roce_adp_retrans off the window
// stalls time out nothing and the adaptive counters stay 0.
func TestNoAdaptiveRetransmission(t *testing.T) {
	sc, _ := scenario.FromProfile("cx7-2p400g")
	sc.Devices[0].Spec.RoCE.Enabled = nil
	clk := clock.NewManual(time.Date(2024, 5, 1, 8, 0, 0, 0, time.UTC))
	e, err := scenario.Build(sc, scenario.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := New(e.Adapters[0], clk, Config{RTT: 50 * time.Microsecond, Loss: 1e-3})
	clk.Advance(time.Minute)
	c, _ := m.Counters(2, clk.Now())
	if c["roce_adp_retrans"] != 0 || c["duplicate_request"] != 0 || c["local_ack_timeout_err"] == 0 {
		t.Errorf("%v", c)
	}
}

// TestMonotonicAcrossChangesAndDownTime: changing the path keeps the counts,
// and a link that is down adds nothing.
func TestMonotonicAcrossChangesAndDownTime(t *testing.T) {
	a, clk := build(t, "cx7-2p400g")
	m, _ := New(a, clk, Config{Loss: 1e-4})
	clk.Advance(30 * time.Second)
	before, _ := m.Counters(1, clk.Now())
	if err := m.SetPortConfig(1, Config{}); err != nil {
		t.Fatal(err)
	}
	after, _ := m.Counters(1, clk.Now())
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s changed with the config: %d -> %d", k, v, after[k])
		}
	}
	clk.Advance(30 * time.Second)
	later, _ := m.Counters(1, clk.Now())
	if later["packet_seq_err"] != before["packet_seq_err"] || later["rx_write_requests"] <= before["rx_write_requests"] {
		t.Errorf("after the loss stopped: %v", later)
	}
	if err := a.Firmware.SetFaults(fw.Faults{LinkDown: []int{1}}); err != nil {
		t.Fatal(err)
	}
	down, _ := m.Counters(1, clk.Now())
	clk.Advance(time.Minute)
	still, _ := m.Counters(1, clk.Now())
	if still["rx_write_requests"] != down["rx_write_requests"] {
		t.Errorf("counting while down: %d -> %d", down["rx_write_requests"], still["rx_write_requests"])
	}
	// now (the caller's read time) ahead of the clock moves an up link's time.
	p2, _ := m.Counters(2, clk.Now())
	ahead, _ := m.Counters(2, clk.Now().Add(time.Second))
	if ahead["rx_write_requests"] <= p2["rx_write_requests"] {
		t.Errorf("now ahead of the clock: %d vs %d", ahead["rx_write_requests"], p2["rx_write_requests"])
	}
}

func TestQCountersWrapAt32Bits(t *testing.T) {
	a, clk := build(t, "cx7-2p400g")
	m, _ := New(a, clk, Config{Share: 1})
	rates, _ := m.PortRates(1)
	// rx_write_requests at full share grows ~1.8e6/s: past 2^32 after
	// about 40 minutes.
	clk.Advance(time.Hour)
	c, _ := m.Counters(1, clk.Now())
	up := a.Firmware.Ports()[0].UpTime.Seconds()
	full := uint64(math.Floor(rates["rx_write_requests"] * up))
	if full < 1<<32 || c["rx_write_requests"] != full&math.MaxUint32 {
		t.Errorf("rx_write_requests %d, full count %d", c["rx_write_requests"], full)
	}
	if Is64Bit("rx_write_requests") || !Is64Bit("np_cnp_sent") {
		t.Error("widths")
	}
}

func TestWindowFromNV(t *testing.T) {
	cx7, clk := build(t, "cx7-2p400g")
	m, _ := New(cx7, clk, Config{})
	if w := m.logWindow(Config{}); w != 9 {
		t.Errorf("cx7 window 2^%d, want 2^9 (its factory LOG_TX_PSN_WINDOW)", w)
	}
	cx6, clk6 := build(t, "cx6dx-2p100g")
	m6, _ := New(cx6, clk6, Config{})
	if w := m6.logWindow(Config{}); w != 7 {
		t.Errorf("cx6dx window 2^%d, want 2^7", w)
	}
	if w := m6.logWindow(Config{LogWindow: 3}); w != 3 {
		t.Errorf("explicit window 2^%d", w)
	}
}

func TestConfigAndPortErrors(t *testing.T) {
	for _, c := range []Config{{Loss: -1}, {Loss: 0.9}, {RTT: -time.Second}, {RTT: 2 * time.Second}, {LogWindow: 16}, {Share: 2}, {Priority: 8}, {Loss: math.NaN()}} {
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "give") {
			t.Errorf("%+v: %v", c, err)
		}
	}
	a, clk := build(t, "cx7-2p400g")
	m, _ := New(a, clk, Config{})
	if _, err := m.Counters(3, clk.Now()); err == nil || !strings.Contains(err.Error(), "ports 1..2") {
		t.Errorf("port 3: %v", err)
	}
	if _, err := New(nil, clk, Config{}); err == nil {
		t.Error("nil adapter")
	}
}
