package throughput_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/feature/pcielink"
	"github.com/cxray/cxray/feature/throughput"
	"github.com/cxray/cxray/pcie"
)

func codes(cs []throughput.Cause) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.Code)
	}
	return out
}

// short is the PCIe report of a 400G port on a card trained Gen5 x8.
func short() *pcielink.Report {
	r := &pcielink.Report{Current: pcie.Link{Speed: pcie.Gen5, Width: 8}, Capable: pcie.Link{Speed: pcie.Gen5, Width: 16}, PortGbps: 400,
		Text: "Gen5 x8 (capable Gen5 x16)"}
	r.Verdicts = []pcielink.Verdict{
		{Code: "pcie_width_degraded", Summary: "the PCIe link trained x8 although the card and the slot are x16", NextStep: "reseat"},
		{Code: "pcie_bandwidth_short", Summary: "...", NextStep: "restore"},
	}
	return r
}

func TestExplain(t *testing.T) {
	for _, c := range []struct {
		name string
		e    throughput.Evidence
		want []string
	}{
		{"nothing", throughput.Evidence{PCIe: &pcielink.Report{Text: "Gen5 x16", PortGbps: 400}}, []string{}},
		{"pcie", throughput.Evidence{PCIe: short()}, []string{throughput.CausePCIe}},
		{"window", throughput.Evidence{Window: &throughput.Window{LogWindow: 8, BDPPackets: 977, MaxGbps: 104.9, Limiting: true}}, []string{throughput.CauseWindow}},
		{"window covers", throughput.Evidence{Window: &throughput.Window{LogWindow: 12, BDPPackets: 977, Limiting: false}}, []string{}},
		{"errors", throughput.Evidence{Errors: []string{"port1.symbol_errors 3/s"}}, []string{throughput.CauseErrors}},
		{"retransmissions", throughput.Evidence{Retransmissions: []string{"port1.out_of_sequence 9/s"}}, []string{throughput.CauseErrors}},
		{"pause", throughput.Evidence{Pause: []string{"ens1f0np0.rx_prio3_pause 1000/s"}}, []string{throughput.CauseFlowCtrl}},
		{"all, decisive first", throughput.Evidence{PCIe: short(), Window: &throughput.Window{LogWindow: 8, Limiting: true},
			Discards: []string{"x 1/s"}, Errors: []string{"y 1/s"}},
			[]string{throughput.CausePCIe, throughput.CauseWindow, throughput.CauseErrors, throughput.CauseFlowCtrl}},
	} {
		got := throughput.Explain(c.e)
		if d := cmp.Diff(c.want, codes(got)); d != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, d)
		}
	}
	c := throughput.Explain(throughput.Evidence{PCIe: short()})[0]
	for _, s := range []string{"Gen5 x8", "about 214 Gb/s", "54% of the port's 400 Gb/s"} {
		if !strings.Contains(c.Summary, s) {
			t.Errorf("summary %q lacks %q", c.Summary, s)
		}
	}
	if c.NextStep != "reseat" || !strings.Contains(strings.Join(c.Evidence, "|"), "400 Gb/s needs Gen5 x16") {
		t.Errorf("next %q, evidence %v", c.NextStep, c.Evidence)
	}
	if u := throughput.Unjudged(throughput.Evidence{}); len(u) != 2 || !strings.Contains(u[1], "--rtt") {
		t.Errorf("unjudged: %v", u)
	}
}

// The loss cause says only what the counters show: symbol errors on an
// InfiniBand port are not a RoCE resend, and resends without errors are
// loss in the fabric, not on this link.
func TestLossSummary(t *testing.T) {
	for _, c := range []struct {
		errs, resends []string
		want          string
	}{
		{[]string{"port1.symbol_error 4/s"}, nil, "the link loses data: port1.symbol_error 4/s"},
		{nil, []string{"roce.out_of_sequence 2/s"}, "the transport resends lost packets: roce.out_of_sequence 2/s"},
		{[]string{"port1.symbol_error 4/s"}, []string{"roce.out_of_sequence 2/s"}, "the link loses data and the transport resends it: port1.symbol_error 4/s, roce.out_of_sequence 2/s"},
	} {
		got := throughput.Explain(throughput.Evidence{Errors: c.errs, Retransmissions: c.resends})
		if len(got) != 1 || got[0].Code != throughput.CauseErrors {
			t.Fatalf("errors %v resends %v: causes %+v", c.errs, c.resends, got)
		}
		if diff := cmp.Diff(c.want, got[0].Summary); diff != "" {
			t.Errorf("errors %v resends %v: summary (-want +got):\n%s", c.errs, c.resends, diff)
		}
	}
}
