package linkctl_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/emu/emuadapter/emutest"
	"github.com/cxray/cxray/feature/link"
	"github.com/cxray/cxray/feature/linkctl"
)

func adminOf(t *testing.T, ad *adapter.Adapter) string {
	t.Helper()
	rs, err := link.Read(context.Background(), ad, link.Options{Ports: []int{1}, Brief: true})
	if err != nil {
		t.Fatal(err)
	}
	return rs[0].Operational.AdminStatus
}

// A toggle stopped between its down and its up (the context cancelled
// while it waits, as a signal does) puts the port back up: the port is in
// its old configuration, not half-way; the error says so. The undo record
// was saved before the first write.
func TestToggleInterrupted(t *testing.T) {
	ads, clk := emutest.OpenYAML(t, "clock: {mode: manual}\ndevices:\n  - profile: cx7-1p-ndr\n")
	ad := ads[0]
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := linkctl.PortState(ctx, ad, 1, "TG")
	if err != nil {
		t.Fatal(err)
	}
	var saved *linkctl.Change
	clk.OnSleep(1, func() {
		if got := adminOf(t, ad); got != "down_by_configuration" {
			t.Errorf("during the toggle's wait the port is %s, want down", got)
		}
		cancel()
	})
	res, err := linkctl.Apply(ctx, ad, c, linkctl.Options{}, func(c *linkctl.Change) error { saved = c; return nil })
	if err == nil || !strings.Contains(err.Error(), "the previous configuration was put back") {
		t.Fatalf("interrupted toggle: %v; want the rollback named", err)
	}
	if len(res.Verified) != 1 || saved == nil {
		t.Errorf("verified %v, saved %v", res.Verified, saved != nil)
	}
	if got := adminOf(t, ad); got != "up" {
		t.Errorf("after the interrupted toggle the port is %s, want up (its old configuration)", got)
	}
}
