package exporter

import (
	"testing"
	"time"

	"github.com/cxray/cxray/emu/emuadapter/emutest"
)

// The GPU node over registers after ten minutes: its InfiniBand ports
// carry their IB meaning: link layer, logical and physical states, the
// width a degraded link trained to beside the port's lanes, and the IB
// PortCounters under the kernel's names (symbol errors moving on the
// planted port only); the Ethernet front end keeps its PPCNT groups.
func TestInfiniBandMetrics(t *testing.T) {
	ads, clk := emutest.OpenFile(t, "../../examples/gpu-node.yaml")
	clk.Advance(10 * time.Minute)
	var srcs []Source
	for _, a := range ads {
		srcs = append(srcs, FromAdapter(a))
	}
	ex, err := New(srcs, Options{NoRuntimeMetrics: true, Collectors: []string{"port", "counters"}})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := scrape(t, ex.Handler(), "")
	v := func(name string, labels ...string) float64 { return value(t, s, name, labels...) }
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"cxray_port_info", []string{"device", "0000:18:00.0", "port", "1", "link_layer", "InfiniBand"}, 1},
		{"cxray_port_info", []string{"device", "0000:29:00.0", "port", "1", "link_layer", "Ethernet"}, 1},
		{"cxray_port_state", []string{"device", "0000:18:00.0", "port", "1"}, 4},
		{"cxray_port_phys_state", []string{"device", "0000:18:00.0", "port", "1"}, 5},
		{"cxray_port_link_width_lanes", []string{"device", "0000:5e:00.0", "port", "1"}, 2},
		{"cxray_port_lanes", []string{"device", "0000:5e:00.0", "port", "1"}, 4},
		{"cxray_port_speed_bytes_per_second", []string{"device", "0000:5e:00.0", "port", "1"}, 200e9 / 8},
		{"cxray_ib_symbol_error_total", []string{"device", "0000:18:00.0", "port", "1"}, 0},
		{"cxray_ib_link_downed_total", []string{"device", "0000:c0:00.0", "port", "1"}, 0},
		{"cxray_ib_link_error_recovery_total", []string{"device", "0000:c0:00.0", "port", "1"}, 20}, // 120 an hour for ten minutes
	} {
		if got := v(c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	// 4 symbol errors a second for ten minutes, with the model's ±5 %.
	if got := v("cxray_ib_symbol_error_total", "device", "0000:c0:00.0", "port", "1"); got < 2280 || got > 2520 {
		t.Errorf("planted symbol errors %v, want about 2400", got)
	}
	if got := v("cxray_ib_port_xmit_data_bytes_total", "device", "0000:18:00.0", "port", "1"); got == 0 {
		t.Error("no IB data counted in ten minutes")
	}
	if n := len(s.Find("cxray_ppcnt_a_frames_transmitted_ok_total", "device", "0000:18:00.0")); n != 0 {
		t.Error("an InfiniBand port exports Ethernet MAC counters")
	}
	if n := len(s.Find("cxray_ppcnt_a_frames_transmitted_ok_total", "device", "0000:29:00.0")); n != 1 {
		t.Errorf("the Ethernet front end exports %d IEEE 802.3 frame counters, want 1", n)
	}
	if n := len(s.Find("cxray_port_state", "device", "0000:29:00.0")); n != 0 {
		t.Error("an Ethernet port over registers exports an InfiniBand state")
	}
}
