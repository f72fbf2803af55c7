package nvmf

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/emu/cmdif/cmdiftest"
)

// The default ConnectX-7 has one offload XRQ with two namespaces; probing
// finds them, and counts follow the scenario's rates on the clock.
func TestProbeTotalsAndRates(t *testing.T) {
	r := cmdiftest.Profile(t, "cx7-2p400g")
	r.Clock.Advance(100 * time.Second)
	ctx := context.Background()
	rep, err := Read(ctx, r.Devices[0], Options{Interval: 10 * time.Second, Clock: r.Clock})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Offload || len(rep.Namespaces) != 2 || rep.Probed != "XRQ numbers 1..64, namespace IDs 1..32" || rep.IntervalSeconds != 10 {
		t.Fatalf("report %+v", rep)
	}
	ns1 := rep.Namespaces[0]
	// 110 s of emulated time at the cx7-2p400g default rates (emu/scenario NVMFDefaults).
	want := Counters{ReadCmds: 120000 * 110, ReadBlocks: 960000 * 110, WriteCmds: 40000 * 110, WriteBlocks: 320000 * 110,
		InlineWrites: 12000 * 110, Flushes: 20 * 110}
	if d := cmp.Diff(want, ns1.Totals); d != "" || ns1.XRQN != 1 || ns1.NSID != 1 {
		t.Errorf("namespace 1 totals (-want +got):\n%s", d)
	}
	wantRates := &Rates{ReadCmds: 120000, ReadBlocks: 960000, WriteCmds: 40000, WriteBlocks: 320000, InlineWrites: 12000, Flushes: 20}
	if d := cmp.Diff(wantRates, ns1.Rates); d != "" {
		t.Errorf("namespace 1 rates (-want +got):\n%s", d)
	}
	if ns2 := rep.Namespaces[1]; ns2.Rates.Errors != 0.5 || ns2.Rates.BackendErrors != 0.1 || ns2.Totals.Errors != 55 {
		t.Errorf("namespace 2: %+v %+v", ns2.Totals, ns2.Rates)
	}
	rows := rep.Rows()
	if len(rows) != 3 || !strings.Contains(rows[1][2], "(1.2e+05/s)") {
		t.Errorf("rows %q", rows)
	}
	// Named numbers skip the probe; one that does not exist is an error.
	one, err := Read(ctx, r.Devices[0], Options{XRQs: []uint32{1}, Namespaces: []uint32{2}})
	if err != nil || len(one.Namespaces) != 1 || one.Namespaces[0].NSID != 2 || one.Probed != "" || one.Namespaces[0].Rates != nil {
		t.Errorf("named: %+v %v", one, err)
	}
	if _, err := Read(ctx, r.Devices[0], Options{XRQs: []uint32{1}, Namespaces: []uint32{9}}); err == nil || !strings.Contains(err.Error(), "status 0x3") {
		t.Errorf("missing namespace: %v", err)
	}
}

// No offload is said from the capabilities; no namespaces found is said too.
func TestNoOffload(t *testing.T) {
	r := cmdiftest.YAML(t, "devices:\n  - profile: cx6dx-2p100g\n  - profile: cx7-2p400g\n    nvmf: {xrqs: []}\n")
	rep, err := Read(context.Background(), r.Devices[0], Options{})
	if err != nil || rep.Offload || !strings.Contains(rep.Reason, "nvmf_target_offload is 0") || len(rep.Namespaces) != 0 {
		t.Errorf("cx6dx: %+v %v", rep, err)
	}
	rep, err = Read(context.Background(), r.Devices[1], Options{ProbeXRQs: 8})
	if err != nil || !rep.Offload || !strings.Contains(rep.Reason, "XRQ numbers 1..8") {
		t.Errorf("offload without XRQs: %+v %v", rep, err)
	}
}

func TestRatesReset(t *testing.T) {
	r := rates(Counters{ReadCmds: 10}, Counters{ReadCmds: 5}, time.Second)
	if !r.Reset || r.ReadCmds != 0 {
		t.Errorf("%+v", r)
	}
}
