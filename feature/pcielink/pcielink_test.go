package pcielink_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev/devtest"
	"github.com/cxray/cxray/emu/emuadapter/emutest"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/feature/pcielink"
	"github.com/cxray/cxray/pcie"
	"github.com/cxray/cxray/prm"
)

type verdict struct{ Code, Category, Severity string }

func verdicts(r *pcielink.Report) []verdict {
	out := []verdict{}
	for _, v := range r.Verdicts {
		out = append(out, verdict{v.Code, v.Category, v.Severity})
	}
	return out
}

// The scenario table: each link a scenario can give, the verdicts and the
// numbers the report must carry.
func TestScenarios(t *testing.T) {
	for _, c := range []struct {
		name     string
		pcie     string // the device's pcie: value
		profile  string
		text     string
		verdicts []verdict
		summary  []string // in the first verdict's summary
	}{
		{name: "healthy", pcie: "{}", text: "Gen5 x16", verdicts: []verdict{}},
		{name: "healthy 100G on Gen4", profile: "cx6dx-2p100g", pcie: "{}", text: "Gen4 x16", verdicts: []verdict{}},
		{name: "x8 slot", pcie: "{slot_width: 8}", text: "Gen5 x8 (capable Gen5 x16)",
			verdicts: []verdict{{"pcie_width_degraded", pcielink.CategorySlot, "warn"}, {"pcie_bandwidth_short", pcielink.CategoryBW, "warn"}},
			summary:  []string{"x8 of the card's x16", "the slot's port is x8"}},
		{name: "trained x8 in an x16 slot", pcie: "{slot_width: 16, width: 8}", text: "Gen5 x8 (capable Gen5 x16)",
			verdicts: []verdict{{"pcie_width_degraded", pcielink.CategoryCard, "warn"}, {"pcie_bandwidth_short", pcielink.CategoryBW, "warn"}},
			summary:  []string{"trained x8 although the card and the slot are x16"}},
		{name: "trained Gen4 in a Gen5 slot", pcie: "{slot_speed: gen5, speed: gen4}", text: "Gen4 x16 (capable Gen5 x16)",
			verdicts: []verdict{{"pcie_speed_degraded", pcielink.CategoryCard, "warn"}, {"pcie_bandwidth_short", pcielink.CategoryBW, "warn"}},
			summary:  []string{"trained at Gen4 although the card and the slot can do Gen5"}},
		{name: "Gen4 slot", pcie: "{slot_speed: gen4}", text: "Gen4 x16 (capable Gen5 x16)",
			verdicts: []verdict{{"pcie_speed_degraded", pcielink.CategorySlot, "warn"}, {"pcie_bandwidth_short", pcielink.CategoryBW, "warn"}},
			summary:  []string{"runs Gen4 of the card's Gen5", "the slot's port is Gen4"}},
		{name: "target speed", pcie: "{target_speed: gen4, speed: gen4}", text: "Gen4 x16 (capable Gen5 x16)",
			verdicts: []verdict{{"pcie_speed_degraded", pcielink.CategoryConfig, "warn"}, {"pcie_bandwidth_short", pcielink.CategoryBW, "warn"}},
			summary:  []string{"set to train at most Gen4"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			profile := c.profile
			if profile == "" {
				profile = "cx7-2p400g"
			}
			ads, _ := emutest.OpenYAML(t, "devices:\n  - profile: "+profile+"\n    pcie: "+c.pcie+"\n")
			r, err := pcielink.Read(context.Background(), ads[0], pcielink.Options{Interval: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if r.Text != c.text {
				t.Errorf("text %q, want %q", r.Text, c.text)
			}
			if d := cmp.Diff(c.verdicts, verdicts(r)); d != "" {
				t.Errorf("verdicts (-want +got):\n%s", d)
			}
			for _, s := range c.summary {
				if !strings.Contains(r.Verdicts[0].Summary, s) {
					t.Errorf("summary %q lacks %q", r.Verdicts[0].Summary, s)
				}
			}
			if len(r.Unavailable) != 0 {
				t.Errorf("unavailable on the emulator: %+v", r.Unavailable)
			}
		})
	}
}

// The numbers of the half-bandwidth case: Gen5 x8 for a 400G port.
func TestBandwidthNumbers(t *testing.T) {
	ads, _ := emutest.OpenYAML(t, "devices:\n  - profile: cx7-2p400g\n    pcie: {slot_width: 8}\n")
	r, err := pcielink.Read(context.Background(), ads[0], pcielink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.PortGbps != 400 || r.CurrentGbps != 252.056 || r.CapableGbps != 504.112 {
		t.Errorf("port %v, current %v, capable %v", r.PortGbps, r.CurrentGbps, r.CapableGbps)
	}
	bw := r.Verdicts[1]
	for _, s := range []string{"Gen5 x8 carries 252 Gb/s", "about 214", "the port runs 400 Gb/s"} {
		if !strings.Contains(bw.Summary, s) {
			t.Errorf("bandwidth verdict %q lacks %q", bw.Summary, s)
		}
	}
	if d := cmp.Diff([]string{"per lane 31507 Mb/s after line encoding at 32.0 GT/s PCIe (as the kernel's 'available PCIe bandwidth' line computes it)",
		"400 Gb/s needs Gen5 x16"}, bw.Evidence); d != "" {
		t.Errorf("evidence (-want +got):\n%s", d)
	}
	if got := pcielink.Needed(200, pcie.Link{Speed: pcie.Gen5, Width: 16}); got != (pcie.Link{Speed: pcie.Gen4, Width: 16}) {
		t.Errorf("200G needs %v", got)
	}
}

// AER errors injected while the report watches are counted as rates; a
// fatal one fails; the status stays until cleared.
func TestInjectedErrorsAsRates(t *testing.T) {
	sc, err := scenario.Parse([]byte("devices:\n  - profile: cx7-2p400g\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	em := emutest.Build(t, sc)
	ad := emutest.Open(t, em, "emu:t.yaml", nil)[0]
	link := em.Adapters[0].Link
	ctx := context.Background()
	first, err := ad.PCIe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := link.Inject(0, "BadTLP", 10); err != nil {
		t.Fatal(err)
	}
	if err := link.Inject(0, "RxErr", 2); err != nil {
		t.Fatal(err)
	}
	em.Manual.Advance(2 * time.Second)
	second, err := ad.PCIe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r := pcielink.Build(pcielink.Info{Device: "t", PortGbps: 400}, first, second, 2*time.Second, pcielink.Thresholds{})
	want := map[string]float64{"aer_correctable": 6, "aer_nonfatal": 0, "aer_fatal": 0, "mpcnt_rx_errors": 1, "mpcnt_crc_error_tlp": 5,
		"mpcnt_tx_errors": 0, "mpcnt_crc_error_dllp": 0, "mpcnt_outbound_stalled_reads_events": 0, "mpcnt_outbound_stalled_writes_events": 0}
	if d := cmp.Diff(want, r.Rates); d != "" {
		t.Errorf("rates (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]verdict{{"pcie_correctable_errors", pcielink.CategoryErrors, "warn"}}, verdicts(r)); d != "" {
		t.Errorf("verdicts (-want +got):\n%s", d)
	}
	if !strings.Contains(r.Verdicts[0].Summary, "aer_correctable 6/s") {
		t.Errorf("summary: %s", r.Verdicts[0].Summary)
	}
	// A rate below the threshold is no verdict.
	if r := pcielink.Build(pcielink.Info{}, first, second, 2*time.Second, pcielink.Thresholds{CorrectablePerSec: 10}); len(r.Verdicts) != 0 {
		t.Errorf("under the threshold: %+v", r.Verdicts)
	}
	// One read after the errors, no interval: the counts and the status,
	// no rate, so no correctable verdict; a fatal error fails.
	if err := link.Inject(0, "MalfTLP", 1); err != nil {
		t.Fatal(err)
	}
	third, _ := ad.PCIe(ctx)
	r = pcielink.Build(pcielink.Info{}, third, nil, 0, pcielink.Thresholds{})
	if d := cmp.Diff([]verdict{{"pcie_fatal_error", pcielink.CategoryErrors, "fail"}}, verdicts(r)); d != "" {
		t.Errorf("fatal (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"RxErr", "BadTLP"}, r.Errors.Correctable); d != "" || r.Errors.Counts["correctable"] != 12 || r.Errors.Counts["fatal"] != 1 {
		t.Errorf("errors: %+v (%s)", r.Errors, d)
	}
	// Cleared: the status goes, the count stays: counted, not failing.
	link.Clear(0)
	fourth, _ := ad.PCIe(ctx)
	r = pcielink.Build(pcielink.Info{}, fourth, nil, 0, pcielink.Thresholds{})
	if d := cmp.Diff([]verdict{{"pcie_fatal_error_counted", pcielink.CategoryErrors, "warn"}}, verdicts(r)); d != "" {
		t.Errorf("after clear (-want +got):\n%s", d)
	}
}

// On the kernel backend: sysfs only, the rest said to be unavailable.
func TestKernelBackend(t *testing.T) {
	ad := kernelAdapter(t)
	r, err := pcielink.Read(context.Background(), ad, pcielink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Text != "Gen5 x16" || r.Sources["current"] != "sysfs current_link_*" || r.Slot != (pcie.Link{Speed: pcie.Gen5, Width: 16}) {
		t.Errorf("kernel: %q %v slot %v", r.Text, r.Sources, r.Slot)
	}
	var what []string
	for _, u := range r.Unavailable {
		what = append(what, u.What)
	}
	if d := cmp.Diff([]string{"config space", "MPEIN", "MPCNT"}, what); d != "" {
		t.Errorf("unavailable (-want +got):\n%s", d)
	}
	if r.Errors.Counts["correctable"] != 3 || len(r.Verdicts) != 0 {
		t.Errorf("errors %+v, verdicts %+v", r.Errors, r.Verdicts)
	}
}

// Every revision of the PRM history decodes MPEIN and MPCNT the same way
// (fields found by their built-in paths: Rev 0.51, which lacks
// link_peer_max_speed, still reads what the firmware answers).
func TestEveryRevision(t *testing.T) {
	devtest.EachRevision(t, func(t *testing.T, db *prm.DB) {
		sc, err := scenario.Parse([]byte("devices:\n  - profile: cx7-2p400g\n    pcie: {slot_speed: gen4, width: 8}\n"), "t.yaml")
		if err != nil {
			t.Fatal(err)
		}
		em := emutest.Build(t, sc)
		ad := emutest.Open(t, em, "emu:t.yaml", db)[0]
		p, err := ad.PCIe(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if p.FirmwareErr != nil || p.CountersErr != nil {
			t.Fatalf("MPEIN %v, MPCNT %v", p.FirmwareErr, p.CountersErr)
		}
		want := &adapter.PCIeFirmware{Enabled: pcie.Link{Speed: pcie.Gen5, Width: 16}, Active: pcie.Link{Speed: pcie.Gen4, Width: 8},
			PeerMax: pcie.Gen4, PowerStatus: "sufficient", MaxPayload: 256, MaxReadRequest: 4096}
		if d := cmp.Diff(want, p.Firmware); d != "" {
			t.Errorf("MPEIN (-want +got):\n%s", d)
		}
		if _, ok := p.Counters["crc_error_tlp"]; !ok {
			t.Errorf("MPCNT: %v", p.Counters)
		}
	})
}
