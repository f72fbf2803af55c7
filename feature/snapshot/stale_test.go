package snapshot_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/emu/emuadapter/emutest"
	"github.com/cxray/cxray/feature/snapshot"
)

// staleOf lists the stale findings as register and path.
func staleOf(r *snapshot.Report) []string {
	out := []string{}
	for _, c := range r.Stale {
		out = append(out, c.Device+" "+c.Register+" "+c.Path)
	}
	return out
}

// A multi-sample snapshot of a module whose monitors froze: the diff
// flags that module's monitors, once, and not the healthy module's
// (whose lanes may each hold still for a while, but not all together).
func TestDiffFlagsFrozenModuleMonitors(t *testing.T) {
	ads, _ := emutest.OpenYAML(t, `clock: {mode: manual}
devices:
  - profile: cx7-2p400g
    functions: 2
    modules:
      - {module: 1, faults: [frozen_monitors]}
`)
	ctx := context.Background()
	f := &snapshot.File{Format: snapshot.Format, Version: snapshot.Version, Created: start, Host: "h", PRMRevision: "Rev 0.57", Samples: 4}
	for _, a := range ads {
		d, err := snapshot.Take(ctx, a, profile(t, "full"), snapshot.Options{Samples: 4, Interval: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		f.Devices = append(f.Devices, *d)
	}
	r := snapshot.Diff(f, f, nil)
	want := []string{"0000:03:00.1 PDDR[page_select=3,local_port=1] module monitors"}
	if d := cmp.Diff(want, staleOf(r)); d != "" {
		t.Errorf("stale findings (-want +got):\n%s", d)
	}
	if !r.Problems() || len(r.Stale) == 1 && !strings.Contains(r.Stale[0].Note, "none of its") {
		t.Errorf("problems %v, stale %+v", r.Problems(), r.Stale)
	}

	// A snapshot written before the rule existed (no motion recorded) is
	// judged by the rules in use.
	old := *f
	old.Devices = nil
	for _, d := range f.Devices {
		d.Registers = append([]snapshot.Register(nil), d.Registers...)
		for i := range d.Registers {
			fs := append([]snapshot.Field(nil), d.Registers[i].Fields...)
			for j := range fs {
				if strings.HasPrefix(fs[j].Path, "page_data.pddr_module_info_ext.") {
					fs[j].ExpectMotion, fs[j].MotionGroup = false, ""
				}
			}
			d.Registers[i].Fields = fs
		}
		old.Devices = append(old.Devices, d)
	}
	if d := cmp.Diff(want, staleOf(snapshot.Diff(&old, &old, nil))); d != "" {
		t.Errorf("an older snapshot: stale findings (-want +got):\n%s", d)
	}

	// The device's clock stood still (its uptime unchanged): only that is
	// flagged, never the modules it could not move.
	still := old
	still.Devices = nil
	for _, d := range f.Devices {
		d.Registers = append([]snapshot.Register(nil), d.Registers...)
		for i := range d.Registers {
			if d.Registers[i].Register != "MGIR" {
				continue
			}
			fs := append([]snapshot.Field(nil), d.Registers[i].Fields...)
			for j := range fs {
				if fs[j].Path == "hw_info.uptime" {
					fs[j].Values = []snapshot.Val{fs[j].Values[0], fs[j].Values[0], fs[j].Values[0], fs[j].Values[0]}
				}
			}
			d.Registers[i].Fields = fs
		}
		still.Devices = append(still.Devices, d)
	}
	got := staleOf(snapshot.Diff(&still, &still, nil))
	if d := cmp.Diff([]string{"0000:03:00.0 MGIR hw_info.uptime", "0000:03:00.1 MGIR hw_info.uptime"}, got); d != "" {
		t.Errorf("a device clock that stood still: stale findings (-want +got):\n%s", d)
	}
}
