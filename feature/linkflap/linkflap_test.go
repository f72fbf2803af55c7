package linkflap_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev/devtest"
	"github.com/cxray/cxray/emu/emuadapter/emutest"
	"github.com/cxray/cxray/emu/fw"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/feature/link"
	"github.com/cxray/cxray/feature/linkflap"
	"github.com/cxray/cxray/prm"
)

const twoKinds = `clock: {mode: manual}
devices:
  - {name: eth, profile: cx7-2p400g, bdf: 0000:03:00.0}
  - {name: ib, profile: cx7-1p-ndr, bdf: 0000:04:00.0}
`

// got is what a test compares of the evidence.
type got struct {
	Recorded              bool
	Blame, Local          string
	LinkDowns             *uint64
	Verdict, Category     string
	HasDBFinding, PerHour bool
}

func read(t *testing.T, em *scenario.Emulation, db *prm.DB, bdf string) got {
	t.Helper()
	ad := emutest.Open(t, em, "emu", db, bdf)[0]
	reps, err := link.Read(context.Background(), ad, link.Options{Ports: []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := linkflap.Read(context.Background(), ad, reps[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(ev.Unavailable) > 0 {
		t.Errorf("%s: unavailable %+v", bdf, ev.Unavailable)
	}
	g := got{Recorded: ev.Recorded, Blame: ev.Blame, Local: ev.LocalReason, LinkDowns: ev.LinkDowns,
		HasDBFinding: len(ev.DatabaseFindings) > 0, PerHour: ev.PerHour != nil}
	if ev.Verdict != nil {
		g.Verdict, g.Category = ev.Verdict.Code, ev.Verdict.Category
	}
	return g
}

func u(v uint64) *uint64 { return &v }

// A flap for a BER reason, a partner that goes away and comes back, and a
// port taken down by command, on an Ethernet and an InfiniBand port, read
// with the built-in database and every revision of the history: the page
// names the reason and the blame; a commanded down is no verdict; the
// InfiniBand link-down counter counts each event; Ethernet's missing
// counter is a database finding.
func TestLinkDownEvidence(t *testing.T) {
	check := func(t *testing.T, db *prm.DB) {
		em := emutest.Build(t, mustParse(t, twoKinds))
		fwOf := func(bdf string) *fw.Firmware {
			f, err := em.Function(bdf)
			if err != nil {
				t.Fatal(err)
			}
			return f.Adapter.Firmware
		}
		eth, ib := "0000:03:00.0", "0000:04:00.0"
		want := got{HasDBFinding: true}
		if d := cmp.Diff(want, read(t, em, db, eth)); d != "" {
			t.Errorf("clean Ethernet port (-want +got):\n%s", d)
		}
		if d := cmp.Diff(got{LinkDowns: u(0)}, read(t, em, db, ib)); d != "" {
			t.Errorf("clean IB port (-want +got):\n%s", d)
		}
		em.Manual.Advance(time.Minute)
		for _, b := range []string{eth, ib} {
			if err := fwOf(b).Flap(1, "Hi_SER_or_Hi_BER"); err != nil {
				t.Fatal(err)
			}
		}
		want = got{Recorded: true, Blame: "Local_phy", Local: "Hi_SER_or_Hi_BER", Verdict: "link_went_down", Category: link.CategorySignal, HasDBFinding: true}
		if d := cmp.Diff(want, read(t, em, db, eth)); d != "" {
			t.Errorf("Ethernet flap (-want +got):\n%s", d)
		}
		want.HasDBFinding, want.LinkDowns, want.PerHour = false, u(1), true
		if d := cmp.Diff(want, read(t, em, db, ib)); d != "" {
			t.Errorf("IB flap (-want +got):\n%s", d)
		}
		// The partner goes away and comes back: the local PHY lost lock
		// and blames the remote side.
		f := fwOf(ib)
		em.Manual.Advance(time.Second)
		f.SetFaults(fw.Faults{LinkDown: []int{1}})
		em.Manual.Advance(time.Second)
		f.SetFaults(fw.Faults{})
		want = got{Recorded: true, Blame: "Remote_phy", Local: "Block_Lock_loss", LinkDowns: u(2), PerHour: true, Verdict: "link_went_down", Category: link.CategoryPartner}
		if d := cmp.Diff(want, read(t, em, db, ib)); d != "" {
			t.Errorf("IB partner gone and back (-want +got):\n%s", d)
		}
		if err := f.Flap(1, "Cable_was_unplugged"); err != nil {
			t.Fatal(err)
		}
		want = got{Recorded: true, Blame: "Local_phy", Local: "Cable_was_unplugged", LinkDowns: u(3), PerHour: true, Verdict: "link_went_down", Category: link.CategoryCable}
		if d := cmp.Diff(want, read(t, em, db, ib)); d != "" {
			t.Errorf("IB unplugged (-want +got):\n%s", d)
		}
		if err := f.Flap(1, "Down_by_outband_command_with_healthy_link"); err != nil {
			t.Fatal(err)
		}
		want = got{Recorded: true, Blame: "Local_phy", Local: "Down_by_outband_command_with_healthy_link", LinkDowns: u(4), PerHour: true}
		if d := cmp.Diff(want, read(t, em, db, ib)); d != "" {
			t.Errorf("IB commanded down (-want +got):\n%s", d)
		}
	}
	t.Run("builtin", func(t *testing.T) { check(t, devtest.DB(t)) })
	devtest.EachRevision(t, check)
}

// Flap refuses a reason PDDR does not define and a port whose link is down.
func TestFlapRefused(t *testing.T) {
	em := emutest.Build(t, mustParse(t, twoKinds))
	f, err := em.Function("0000:03:00.0")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Adapter.Firmware.Flap(1, "Gremlins"); err == nil {
		t.Error("an undefined reason was accepted")
	}
	f.Adapter.Firmware.SetFaults(fw.Faults{LinkDown: []int{1}})
	if err := f.Adapter.Firmware.Flap(1, "Hi_SER_or_Hi_BER"); err == nil {
		t.Error("a down link flapped")
	}
}

func mustParse(t *testing.T, text string) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.Parse([]byte(text), emutest.YAMLName)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// Every port of every function of every example and test scenario, with
// the built-in database, at power-on and after ten minutes: the evidence
// reads (or names what is unavailable) without error, records no event
// where nothing went down, and its JSON is valid.
func TestScenarios(t *testing.T) {
	emutest.EachScenario(t, devtest.DB(t), func(t *testing.T, em *scenario.Emulation, ads []*adapter.Adapter) {
		ctx := context.Background()
		for _, after := range []time.Duration{0, 10 * time.Minute} {
			em.Manual.Advance(after)
			for i, f := range em.Functions() {
				dfl := f.Device.Faults()
				if dfl.GatewaySemaphoreHeld || dfl.ICMDSemaphoreHeld || dfl.ICMDStuckBusy || dfl.Removed {
					continue
				}
				reps, err := link.Read(ctx, ads[i], link.Options{})
				if err != nil {
					t.Fatalf("%s: %v", f.BDF, err)
				}
				for _, r := range reps {
					ev, err := linkflap.Read(ctx, ads[i], r)
					if err != nil {
						t.Fatalf("%s port %d: %v", f.BDF, r.Port, err)
					}
					if ev.Recorded || ev.Verdict != nil {
						t.Errorf("%s port %d: a link-down event nobody caused: %+v", f.BDF, r.Port, ev)
					}
					if _, err := json.Marshal(ev); err != nil {
						t.Errorf("%s port %d: JSON: %v", f.BDF, r.Port, err)
					}
				}
			}
		}
	})
}
