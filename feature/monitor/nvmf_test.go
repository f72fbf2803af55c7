package monitor_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/adapter/adaptertest"
	"github.com/cxray/cxray/emu/emuadapter/emutest"
	"github.com/cxray/cxray/feature/monitor"
	"github.com/cxray/cxray/feature/nvmf"
)

// --what nvmf: per namespace the counters nvmf.Read gives, under
// xrq<X>.ns<N>.nvmf.<counter>, moving with the emulated traffic; counters
// to the table (rates) and to plot's nvmf group.
func TestNVMFCollector(t *testing.T) {
	ads, clk := emutest.OpenYAML(t, "clock: {mode: manual}\ndevices:\n  - profile: cx7-2p400g\n")
	a := ads[0]
	clk.Advance(time.Hour)
	got, errs := collect(t, a, "nvmf")
	if len(errs) != 0 {
		t.Fatalf("errors %v", errs)
	}
	d, err := a.Registers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rep, err := nvmf.Read(context.Background(), d, nvmf.Options{Clock: clk})
	if err != nil || !rep.Offload || len(rep.Namespaces) == 0 {
		t.Fatalf("the default profile's offload: %+v %v", rep, err)
	}
	want := map[string]float64{"nvmf.offload": 1}
	for _, ns := range rep.Namespaces {
		c := ns.Totals
		for k, v := range map[string]uint64{"read_cmds": c.ReadCmds, "read_blocks": c.ReadBlocks, "write_cmds": c.WriteCmds, "write_blocks": c.WriteBlocks,
			"inline_writes": c.InlineWrites, "flushes": c.Flushes, "errors": c.Errors, "backend_errors": c.BackendErrors} {
			want[monitor.NVMFKey(ns.XRQN, ns.NSID, k)] = float64(v)
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("values (-want +got):\n%s", d)
	}
	k := monitor.NVMFKey(rep.Namespaces[0].XRQN, rep.Namespaces[0].NSID, "read_cmds")
	if got[k] == 0 {
		t.Fatalf("%s is 0 after an hour of traffic", k)
	}
	clk.Advance(time.Minute)
	later, _ := collect(t, a, "nvmf")
	if later[k] <= got[k] {
		t.Errorf("%s did not move: %v then %v", k, got[k], later[k])
	}
	// plot's nvmf group takes the counters and draws them as rates.
	sel, err := monitor.SelectSeries([]monitor.Sample{{Time: clk.Now(), Device: "d", Values: later}}, []string{"nvmf"})
	if err != nil {
		t.Fatal(err)
	}
	if len(sel.Series) != len(later)-1 {
		t.Errorf("plot's nvmf group: %d series of %d keys (all but nvmf.offload)", len(sel.Series), len(later))
	}
	for _, s := range sel.Series {
		if !s.Counter {
			t.Errorf("%s is not drawn as a counter", s.Key)
		}
	}
}

// Without the offload the collector says so, with nvmf.offload 0; without
// a command interface it says that, and reads nothing.
func TestNVMFCollectorWithout(t *testing.T) {
	ads, _ := emutest.OpenYAML(t, "clock: {mode: manual}\ndevices:\n  - profile: cx7-2p400g\n    nvmf: {offload: false}\n")
	a := ads[0]
	got, errs := collect(t, a, "nvmf")
	if d := cmp.Diff(map[string]float64{"nvmf.offload": 0}, got); d != "" || len(errs) != 1 || !strings.Contains(errs[0], "no NVMe-oF target offload") {
		t.Errorf("no offload: values (-want +got):\n%s errors %v", d, errs)
	}
	plain, _, _, _ := function(t) // registers only, no command interface
	got, errs = collect(t, plain, "nvmf")
	if len(got) != 0 || len(errs) != 1 || !strings.Contains(errs[0], "no command interface") {
		t.Errorf("no command interface: %v %v", got, errs)
	}
	got, errs = collect(t, adaptertest.Kernel(t, "kernel:mlx5_0", nil), "nvmf")
	if len(got) != 0 || len(errs) != 1 || !strings.Contains(errs[0], "register access is not available on the kernel backend") {
		t.Errorf("kernel backend: %v %v", got, errs)
	}
}
