package driverhealth_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/adapter/adaptertest"
	"github.com/cxray/cxray/feature/driverhealth"
	"github.com/cxray/cxray/kernel/kerneltest"
)

type finding struct{ Code, Severity string }

func findings(r *driverhealth.Report) []finding {
	out := []finding{}
	for _, f := range r.Findings {
		out = append(out, finding{f.Code, f.Severity})
	}
	return out
}

// backends opens the fixture's first function on the kernel backend and
// as direct access composed with the kernel's view: the driver's health
// reads the same on both.
func backends(t *testing.T, mod func(string, *kerneltest.Kernel)) map[string]*adapter.Adapter {
	return map[string]*adapter.Adapter{
		"kernel": adaptertest.Kernel(t, "kernel:mlx5_0", mod),
		"direct": adaptertest.Direct(t, nil, mod),
	}
}

func TestHealthy(t *testing.T) {
	for name, a := range backends(t, nil) {
		t.Run(name, func(t *testing.T) {
			r, err := driverhealth.Read(context.Background(), a, time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff([]finding{}, findings(r)); d != "" {
				t.Errorf("findings (-want +got):\n%s", d)
			}
			if len(r.Reporters) != 5 || r.Stats["ens1f0np0.rx_discards_phy"] != 12 || r.Stats["ens1f0np0.rx_prio3_pause"] != 1200 {
				t.Errorf("reporters %d, stats %v", len(r.Reporters), r.Stats)
			}
			if _, ok := r.Stats["ens1f0np0.rx_packets"]; ok {
				t.Error("an unwatched statistic is kept")
			}
			if s, _, ok := r.Reporters[0].Syndrome(); !ok || s != 0 {
				t.Errorf("fw diagnose: %+v", r.Reporters[0])
			}
			if len(r.Unavailable) != 0 {
				t.Errorf("unavailable: %v", r.Unavailable)
			}
		})
	}
}

// Each finding from the state of the fake kernel that calls for it.
func TestFindings(t *testing.T) {
	for _, c := range []struct {
		name    string
		mod     func(string, *kerneltest.Kernel)
		want    []finding
		summary string
	}{
		{"discards growing", func(_ string, k *kerneltest.Kernel) {
			k.Step = map[string]map[string]uint64{"ens1f0np0": {"rx_out_of_buffer": 50, "rx_prio3_pause": 1000}}
		}, []finding{{"driver_discards", "warn"}}, "ens1f0np0.rx_out_of_buffer"},
		{"pcie signal integrity", func(_ string, k *kerneltest.Kernel) {
			k.Step = map[string]map[string]uint64{"ens1f0np0": {"rx_pci_signal_integrity": 3, "outbound_pci_stalled_wr_events": 1}}
		}, []finding{{"driver_pcie", "warn"}}, "ens1f0np0.outbound_pci_stalled_wr_events"},
		{"reporter in error", func(_ string, k *kerneltest.Kernel) {
			r := &k.Health["pci/0000:c1:00.0"][1]
			r.State, r.Errors = 1, 1
		}, []finding{{"reporter_error", "fail"}}, "fw_fatal is in error"},
		{"firmware syndrome", func(_ string, k *kerneltest.Kernel) {
			k.Health["pci/0000:c1:00.0"][0].Diagnose = []kerneltest.Pair{{Name: "Syndrome", Value: uint8(0x8)}, {Name: "Description", Value: "unrecoverable hardware error"}}
			k.Health["pci/0000:c1:00.0"][0].Errors, k.Health["pci/0000:c1:00.0"][0].Recoveries = 1, 1
		}, []finding{{"firmware_syndrome", "fail"}}, "syndrome 0x8 (unrecoverable hardware error)"},
		{"unrecovered", func(_ string, k *kerneltest.Kernel) {
			k.Health["pci/0000:c1:00.0"][3].Errors = 3
		}, []finding{{"reporter_unrecovered", "warn"}}, "tx (port 65535) counted 3 error(s) and 2 recoveries"},
		{"no CAP_NET_ADMIN", func(_ string, k *kerneltest.Kernel) { k.NoCapNetAdmin = true }, []finding{}, ""},
	} {
		for name, a := range backends(t, c.mod) {
			t.Run(c.name+"/"+name, func(t *testing.T) {
				r, err := driverhealth.Read(context.Background(), a, 10*time.Millisecond)
				if err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(c.want, findings(r)); d != "" {
					t.Fatalf("findings (-want +got):\n%s", d)
				}
				if c.summary != "" && !strings.Contains(r.Findings[0].Summary, c.summary) {
					t.Errorf("summary %q lacks %q", r.Findings[0].Summary, c.summary)
				}
			})
		}
	}
}

// Pause frames are flow control: shown as rates, never a finding.
func TestPauseIsNotAFinding(t *testing.T) {
	a := adaptertest.Kernel(t, "kernel:mlx5_0", func(_ string, k *kerneltest.Kernel) {
		k.Step = map[string]map[string]uint64{"ens1f0np0": {"tx_prio3_pause": 10}}
	})
	r, err := driverhealth.Read(context.Background(), a, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Findings) != 0 || len(driverhealth.Pausing(r)) != 1 || !strings.HasPrefix(driverhealth.Pausing(r)[0], "ens1f0np0.tx_prio3_pause") {
		t.Errorf("findings %+v, pausing %v", r.Findings, driverhealth.Pausing(r))
	}
}

func TestKindOf(t *testing.T) {
	for name, want := range map[string]string{"rx_discards_phy": driverhealth.KindDiscard, "rx_prio7_cong_discard": driverhealth.KindDiscard,
		"tx_prio0_pause": driverhealth.KindPause, "rx_prio8_pause": "", "outbound_pci_stalled_rd_events": driverhealth.KindPCIe,
		"outbound_pci_stalled_rd": "", "rx0_packets": "", "rx_crc_errors_phy": driverhealth.KindLink} {
		if got := driverhealth.KindOf(name); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
}
