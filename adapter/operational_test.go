package adapter_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev/devtest"
	"github.com/cxray/cxray/emu/emuadapter/emutest"
	"github.com/cxray/cxray/internal/clock"
)

// The PDDR operational page Ports reads for the link layer is handed to
// the first OperationalPage within a second of it, and never again: a
// second call, or a first one after the page has aged, asks the firmware.
func TestOperationalPageReusesPortsReadOnce(t *testing.T) {
	db := devtest.DB(t)
	pddr, err := db.Register("PDDR")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		age   time.Duration // between Ports and the first call
		calls int
		want  int // PDDR reads, Ports' one among them
	}{
		{"one call at once", 0, 1, 1},
		{"two calls", 0, 2, 2},
		{"within a second", time.Second, 1, 1},
		{"two seconds on", 2 * time.Second, 1, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			logs := emutest.Transactions(t, "../emu/scenario/testdata/infiniband.yaml", func(t *testing.T, a *adapter.Adapter) {
				ctx := context.Background()
				if _, err := a.Ports(ctx); err != nil {
					t.Fatal(err)
				}
				m, ok := a.Clock().(*clock.Manual)
				if !ok {
					t.Fatalf("the scenario's clock is %T, not manual", a.Clock())
				}
				m.Advance(c.age)
				for i := 0; i < c.calls; i++ {
					r, err := a.OperationalPage(ctx, 1)
					if err != nil || r == nil || r.Decoded == nil {
						t.Fatalf("call %d: %v", i, err)
					}
				}
			})
			if len(logs) == 0 {
				t.Fatal("the scenario has no function")
			}
			for bdf, log := range logs {
				n := 0
				for _, x := range log {
					if uint32(x.ID) == pddr.ID {
						n++
					}
				}
				if diff := cmp.Diff(c.want, n); diff != "" {
					t.Errorf("%s: PDDR reads (-want +got):\n%s", bdf, diff)
				}
			}
		})
	}
}

// On the wall clock (an emulator that runs in real time, as hardware
// does) the page Ports read moments before is handed out too.
func TestOperationalPageRealTime(t *testing.T) {
	db := devtest.DB(t)
	pddr, err := db.Register("PDDR")
	if err != nil {
		t.Fatal(err)
	}
	var gap time.Duration
	logs := emutest.RealTimeTransactions(t, "../emu/scenario/testdata/infiniband.yaml", func(t *testing.T, a *adapter.Adapter) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, ok := a.Clock().(*clock.Manual); ok {
			t.Fatal("the adapter runs on a manual clock")
		}
		t0 := time.Now()
		if _, err := a.Ports(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := a.OperationalPage(ctx, 1); err != nil {
			t.Fatal(err)
		}
		gap = max(gap, time.Since(t0))
	}, "0000:81:00.0")
	n := 0
	for _, x := range logs["0000:81:00.0"] {
		if uint32(x.ID) == pddr.ID {
			n++
		}
	}
	// A machine so loaded that Ports took over a second reads afresh,
	// rightly.
	if want := 1; n != want && gap < time.Second {
		t.Errorf("PDDR read %d times, want %d (Ports and the page within %v)", n, want, gap)
	}
}
