package linkctl_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/emu/emuadapter/emutest"
	"github.com/cxray/cxray/feature/linkctl"
	"github.com/cxray/cxray/prm"
)

// sinceClear reads the physical-layer group's time since its last clear
// (it restarts at 0 when the group is cleared).
func sinceClear(t *testing.T, ad *adapter.Adapter, port int) uint64 {
	t.Helper()
	r, err := ad.ReadRegister(context.Background(), "PPCNT", adapter.LocalPort(port).Group(0x12))
	if err != nil {
		t.Fatal(err)
	}
	v, ok := adapter.FieldOf(r.Decoded, "PPCNT", "counter_set.phys_layer_cntrs_ext.time_since_last_clear")
	if !ok {
		t.Fatal("no time_since_last_clear")
	}
	return v
}

// ClearCounters resets each group it is given, in order, and says what
// it cleared; a group that is no number is an input error, and what was
// cleared before it stays listed.
func TestClearCounters(t *testing.T) {
	ads, clk := emutest.OpenYAML(t, "clock: {mode: manual}\ndevices:\n  - profile: cx7-2p400g\n")
	ad := ads[0]
	clk.Advance(time.Hour)
	before := sinceClear(t, ad, 1)
	if before == 0 {
		t.Fatal("the counters read cleared before the clear")
	}
	cs := linkctl.Clears([]int{1}, []string{"0x12", "0x16"})
	if d := cmp.Diff([]string{"PPCNT local_port=1 grp=0x12 clr=1", "PPCNT local_port=1 grp=0x16 clr=1"}, []string{cs[0].Write(), cs[1].Write()}); d != "" {
		t.Errorf("writes (-want +got):\n%s", d)
	}
	done, err := linkctl.ClearCounters(context.Background(), ad, cs)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"port 1 PPCNT group 0x12", "port 1 PPCNT group 0x16"}, done); d != "" {
		t.Errorf("done (-want +got):\n%s", d)
	}
	if after := sinceClear(t, ad, 1); after >= before {
		t.Errorf("time since clear %d after the clear, %d before", after, before)
	}
	done, err = linkctl.ClearCounters(context.Background(), ad, []linkctl.Clear{{Port: 1, Group: "0x12"}, {Port: 1, Group: "phys"}})
	if !errors.Is(err, prm.ErrInput) || len(done) != 1 {
		t.Errorf("a bad group: done %q, err %v; want the first done and an input error", done, err)
	}
}
