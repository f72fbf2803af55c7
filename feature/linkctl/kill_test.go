package linkctl_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/emu/emuadapter/emutest"
	"github.com/cxray/cxray/feature/link"
	"github.com/cxray/cxray/feature/linkctl"
	"github.com/cxray/cxray/optics"
)

// config is what a change may touch of a port: its administrative state,
// speeds and auto-negotiation, loopback, FEC overrides, and module byte
// 26 (CMIS module controls).
type config struct {
	Admin, AN, Loopback, Speeds string
	FEC                         []string
	Byte26                      byte
}

func configOf(t *testing.T, ad *adapter.Adapter) config {
	t.Helper()
	rs, err := link.Read(context.Background(), ad, link.Options{Ports: []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	op := rs[0].Operational
	c := config{Admin: op.AdminStatus, AN: op.AutoNegotiation, Loopback: op.Loopback}
	if op.Enabled != nil {
		c.Speeds = op.Enabled.Mask
	}
	if op.IB != nil {
		c.Speeds = fmt.Sprint(op.IB.EnabledWidths, op.Speed)
	}
	if rs[0].FEC != nil {
		for _, s := range rs[0].FEC.PerSpeed {
			c.FEC = append(c.FEC, s.Speed+"="+s.Admin)
		}
	}
	if op.IB == nil {
		c.Byte26 = moduleBytes(t, ad, 1, optics.PageAddr{I2C: 0x50, Offset: 26}, 1)[0]
	}
	return c
}

// A command killed at each step of each change (after saving its undo
// record and before any write, and after each write) leaves a pending
// record; the next command's Recover puts the configuration the port had
// before back, whole, and removes the record. A change that completes
// leaves exactly one record for the port, replaced by the next. The kill
// is the goroutine stopping (runtime.Goexit) where the process would:
// nothing after that point of Apply runs, so no rollback of its own.
func TestKillAtEachStep(t *testing.T) {
	type mk func(ctx context.Context, ad *adapter.Adapter) (*linkctl.Change, error)
	changes := map[string]struct {
		yaml string
		plan mk
	}{
		"toggle Ethernet": {"clock: {mode: manual}\ndevices:\n  - profile: cx7-2p400g\n",
			func(ctx context.Context, ad *adapter.Adapter) (*linkctl.Change, error) {
				return linkctl.PortState(ctx, ad, 1, "TG")
			}},
		"toggle InfiniBand": {"clock: {mode: manual}\ndevices:\n  - profile: cx7-1p-ndr\n",
			func(ctx context.Context, ad *adapter.Adapter) (*linkctl.Change, error) {
				return linkctl.PortState(ctx, ad, 1, "TG")
			}},
		"down": {"clock: {mode: manual}\ndevices:\n  - profile: cx7-2p400g\n",
			func(ctx context.Context, ad *adapter.Adapter) (*linkctl.Change, error) {
				return linkctl.PortState(ctx, ad, 1, "DN")
			}},
		"speeds forced": {"clock: {mode: manual}\ndevices:\n  - profile: cx7-2p400g\n",
			func(ctx context.Context, ad *adapter.Adapter) (*linkctl.Change, error) {
				return linkctl.Speeds(ctx, ad, 1, []string{"200G_2X"}, true)
			}},
		"loopback": {"clock: {mode: manual}\ndevices:\n  - profile: cx7-2p400g\n",
			func(ctx context.Context, ad *adapter.Adapter) (*linkctl.Change, error) {
				return linkctl.Loopback(ctx, ad, 1, "PH")
			}},
		"module write": {"clock: {mode: manual}\ndevices:\n  - profile: cx7-2p400g\n",
			func(ctx context.Context, ad *adapter.Adapter) (*linkctl.Change, error) {
				return linkctl.PlanModuleWrite(ctx, ad, 1, optics.PageAddr{I2C: 0x50, Offset: 26}, []byte{0x10})
			}},
	}
	t.Cleanup(func() { linkctl.SetAfterWrite(nil) })
	for name, ch := range changes {
		t.Run(name, func(t *testing.T) {
			ads, _ := emutest.OpenYAML(t, ch.yaml)
			ad := ads[0]
			ctx := context.Background()
			store := linkctl.Store{Dir: t.TempDir()}
			old := configOf(t, ad)
			probe, err := ch.plan(ctx, ad)
			if err != nil {
				t.Fatal(err)
			}
			for kill := -1; kill < len(probe.Steps); kill++ {
				c, err := ch.plan(ctx, ad)
				if err != nil {
					t.Fatal(err)
				}
				linkctl.SetAfterWrite(func(step int) {
					if step == kill {
						runtime.Goexit()
					}
				})
				saves := 0
				save := func(c *linkctl.Change) error {
					saves++
					if err := store.Save(c); err != nil {
						return err
					}
					if kill == -1 && saves == 1 {
						runtime.Goexit()
					}
					return nil
				}
				finished := make(chan bool)
				go func() {
					ok := false
					defer func() { finished <- ok }()
					_, _ = linkctl.Apply(ctx, ad, c, linkctl.Options{}, save)
					ok = true
				}()
				if <-finished {
					t.Fatalf("kill after write %d: Apply ran to its end", kill)
				}
				linkctl.SetAfterWrite(nil)
				rec, err := linkctl.Recover(ctx, ad, store, 1)
				if err != nil || rec == nil {
					t.Fatalf("kill after write %d: recover %v, %v", kill, rec, err)
				}
				if d := cmp.Diff(old, configOf(t, ad)); d != "" {
					t.Errorf("kill after write %d: not the old configuration (-old +got):\n%s", kill, d)
				}
				if n := records(t, store.Dir); n != 0 {
					t.Errorf("kill after write %d: %d records after recovery", kill, n)
				}
				if again, err := linkctl.Recover(ctx, ad, store, 1); err != nil || again != nil {
					t.Errorf("a second recover: %v, %v", again, err)
				}
			}
			// Two completed changes: one record for the port, not pending.
			for i := 0; i < 2; i++ {
				c, err := ch.plan(ctx, ad)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := linkctl.Apply(ctx, ad, c, linkctl.Options{}, store.Save); err != nil {
					t.Fatal(err)
				}
			}
			if n := records(t, store.Dir); n != 1 {
				t.Errorf("%d records after two changes of one port, want 1", n)
			}
			if rec, err := linkctl.Recover(ctx, ad, store, 1); err != nil || rec != nil {
				t.Errorf("a completed change was recovered: %v, %v", rec, err)
			}
		})
	}
}

func records(t *testing.T, dir string) int {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return len(es)
}
