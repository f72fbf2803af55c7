package health_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cxray/cxray/emu/emuadapter/emutest"
	"github.com/cxray/cxray/emu/fw"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/feature/health"
)

// expectedLink is the link check's verdict the emulated ports call for,
// from the model's own state (port status, link spec, module protocols),
// after health's sampling interval has passed.
func expectedLink(t *testing.T, f *scenario.Function, own []int) (want health.Status) {
	t.Helper()
	a := f.Adapter
	spec := a.Spec.Spec
	want = health.OK
	worse := func(s health.Status) {
		if rank(s) > rank(want) {
			want = s
		}
	}
	if regStatus(a, f, "PPCNT") || regStatus(a, f, "PDDR") {
		worse(health.Warn) // the BER or the firmware's status cannot be read
	}
	ports := a.Firmware.Ports()
	judged := false
	defer func() {
		// Nothing up to judge and nothing wrong: skipped, not a pass.
		if !judged && want == health.OK {
			want = health.Skip
		}
	}()
	for _, p := range own {
		st := ports[p-1]
		ls, err := a.Firmware.Link(p)
		if err != nil {
			t.Fatal(err)
		}
		ms, _ := a.Firmware.ModuleStatus(st.Module)
		switch {
		case !st.AdminUp:
			continue // disabled on purpose: the ports check's business
		case !st.OperUp && !ms.Plugged:
			continue // an empty cage: no link to judge
		case !st.OperUp:
			worse(health.Fail)
			continue
		}
		judged = true
		ps := spec.Ports[p-1]
		if st.LinkType == fw.LinkInfiniBand {
			// A width narrower than the port; link downs and error
			// recoveries the IB counters hold.
			if st.Width < ps.Lanes {
				worse(health.Warn)
			}
			if c, err := a.Firmware.IBCounters(p); err != nil {
				t.Fatal(err)
			} else if c["link_downed"] > 0 || c["link_error_recovery"] > 0 {
				worse(health.Warn)
			}
			if best, _ := emutest.BestIB(a, p); st.Protocol != best {
				worse(health.Warn) // the switch enables a lower speed
			}
		} else if st.SpeedGbps < emutest.BestGbps(a, p) {
			worse(health.Warn) // speed mismatch
		}
		for l := 0; l < ps.Lanes; l++ {
			b := ls.RawBER
			if l < len(ls.LaneBER) && ls.LaneBER[l] > 0 {
				b = ls.LaneBER[l]
			}
			if b >= 1e-5 {
				worse(health.Warn) // a degraded lane, or every lane noisy
			}
		}
		if ls.EffectiveBER > 1e-12 {
			worse(health.Fail)
		} else if ls.EffectiveBER > 0 {
			worse(health.Warn) // the firmware flags uncorrectable blocks
		}
	}
	return want
}

// The link-trouble example, function by function: the link check's
// status and the words it uses.
func TestLinkCheckTrouble(t *testing.T) {
	for _, c := range []struct {
		bdf    string
		status health.Status
		says   string
	}{
		{"0000:03:00.0", health.OK, "raw BER"},
		{"0000:03:00.1", health.Warn, "lane 2"},
		{"0000:04:00.0", health.Fail, "no partner"},
		{"0000:04:00.1", health.Fail, "FEC mismatch"},
		{"0000:05:00.0", health.Warn, "100 Gb/s"},
	} {
		rep := runExample(t, "../../examples/link-trouble.yaml", c.bdf)
		got := check(t, rep, "link")
		text := got.Summary + " " + strings.Join(got.Details, " ")
		if got.Status != c.status || !strings.Contains(text, c.says) {
			t.Errorf("%s: link %s %q; want %s naming %q", c.bdf, got.Status, text, c.status, c.says)
		}
		if got.Status != health.OK && !strings.Contains(got.Next, "cxray link") {
			t.Errorf("%s: next step %q does not point to cxray link", c.bdf, got.Next)
		}
	}
}

// runExample runs health on one function of a scenario file, on a manual
// clock.
func runExample(t *testing.T, file, bdf string) *health.Report {
	t.Helper()
	ads, _ := emutest.OpenFile(t, file, bdf)
	return health.Run(context.Background(), ads[0], health.Options{Interval: 2 * time.Second})
}
