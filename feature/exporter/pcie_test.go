package exporter

import (
	"testing"
	"time"

	"github.com/cxray/cxray/adapter/adaptertest"
	"github.com/cxray/cxray/emu/emuadapter/emutest"
	"github.com/cxray/cxray/kernel/kerneltest"
)

// The pcie collector on the degraded example: each card's trained,
// capable and slot link, the degraded flag, the AER counts as they grow.
func TestPCIeCollector(t *testing.T) {
	ads, clk := emutest.OpenFile(t, "../../examples/pcie-degraded.yaml")
	clk.Advance(50 * time.Second) // nic1: BadTLP at 0.2/s
	var srcs []Source
	for _, a := range ads {
		srcs = append(srcs, FromAdapter(a))
	}
	ex, err := New(srcs, Options{NoRuntimeMetrics: true, Collectors: []string{"pcie", "driver"}})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := scrape(t, ex.Handler(), "")
	v := func(name string, labels ...string) float64 { return value(t, s, name, labels...) }
	for _, c := range []struct {
		dev          string
		width, speed float64
	}{{"0000:03:00.0", 8, 32}, {"0000:04:00.0", 16, 16}} {
		if got := v("cxray_pcie_link_width", "device", c.dev, "state", "current"); got != c.width {
			t.Errorf("%s width %v, want %v", c.dev, got, c.width)
		}
		if got := v("cxray_pcie_link_speed_gts", "device", c.dev, "state", "current"); got != c.speed {
			t.Errorf("%s speed %v, want %v", c.dev, got, c.speed)
		}
		if got := v("cxray_pcie_link_width", "device", c.dev, "state", "slot"); got != 16 {
			t.Errorf("%s slot width %v", c.dev, got)
		}
		if got := v("cxray_pcie_link_degraded", "device", c.dev); got != 1 {
			t.Errorf("%s degraded %v", c.dev, got)
		}
		if got := v("cxray_pcie_verdicts", "device", c.dev, "category", "bandwidth"); got != 1 {
			t.Errorf("%s bandwidth verdicts %v", c.dev, got)
		}
	}
	if got := v("cxray_pcie_aer_errors_total", "device", "0000:04:00.0", "severity", "correctable"); got != 10 {
		t.Errorf("nic1 correctable AER %v after 50 s at 0.2/s, want 10", got)
	}
	if got := v("cxray_pcie_mpcnt_total", "device", "0000:04:00.0", "counter", "crc_error_tlp"); got != 10 {
		t.Errorf("nic1 MPCNT crc_error_tlp %v", got)
	}
	if got := v("cxray_pcie_device_status", "device", "0000:04:00.0", "bit", "CorrErr"); got != 1 {
		t.Errorf("nic1 CorrErr %v", got)
	}
	// The emulator has no kernel driver: the driver collector is left out.
	if n := len(s.Find("cxray_driver_health_reporter_healthy")); n != 0 {
		t.Errorf("driver metrics on the emulator: %d", n)
	}
}

// The driver collector through the kernel fakes, on both backends.
func TestDriverCollector(t *testing.T) {
	mod := func(_ string, k *kerneltest.Kernel) {
		k.Health["pci/0000:c1:00.0"][1].State, k.Health["pci/0000:c1:00.0"][1].Errors = 1, 1
	}
	for name, src := range map[string]Source{
		"kernel": FromAdapter(adaptertest.Kernel(t, "kernel:mlx5_0", mod)),
		"direct": FromAdapter(adaptertest.Direct(t, nil, mod)),
	} {
		t.Run(name, func(t *testing.T) {
			ex, err := New([]Source{src}, Options{NoRuntimeMetrics: true, Collectors: []string{"driver", "pcie"}})
			if err != nil {
				t.Fatal(err)
			}
			s, _ := scrape(t, ex.Handler(), "")
			v := func(name string, labels ...string) float64 { return value(t, s, name, labels...) }
			dev := "0000:c1:00.0"
			if got := v("cxray_driver_health_reporter_healthy", "device", dev, "reporter", "fw_fatal"); got != 0 {
				t.Errorf("fw_fatal healthy %v", got)
			}
			if got := v("cxray_driver_health_reporter_recoveries_total", "device", dev, "reporter", "tx:port65535"); got != 2 {
				t.Errorf("tx recoveries %v", got)
			}
			if got := v("cxray_driver_stat_total", "device", dev, "netdev", "ens1f0np0", "stat", "rx_prio3_pause", "kind", "pause"); got != 1200 {
				t.Errorf("rx_prio3_pause %v", got)
			}
			if n := len(s.Find("cxray_driver_stat_total", "stat", "rx_packets")); n != 0 {
				t.Error("an unwatched statistic is exported")
			}
			if got := v("cxray_pcie_aer_errors_total", "device", dev, "severity", "correctable"); got != 3 {
				t.Errorf("AER correctable %v", got)
			}
			if got := v("cxray_scrape_collector_success", "device", dev, "collector", "driver"); got != 1 {
				t.Errorf("driver collector success %v", got)
			}
		})
	}
}
