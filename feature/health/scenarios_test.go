package health_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev/devtest"
	"github.com/cxray/cxray/emu/emuadapter"
	"github.com/cxray/cxray/emu/emuadapter/emutest"
	"github.com/cxray/cxray/emu/fw"
	"github.com/cxray/cxray/emu/nvstore"
	"github.com/cxray/cxray/emu/rdma"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/feature/health"
	"github.com/cxray/cxray/nvconf"
	"github.com/cxray/cxray/nvconf/nvtest"
	"github.com/cxray/cxray/prm"
)

// TestScenarioVerdicts runs health on every function of every example
// scenario and asserts that each check's verdict is the one the
// emulator's own state calls for: the problems the scenario defines, and
// nothing else. The expectations come from the emulated adapter itself
// (its ports, modules, sensors, NV store, RDMA model and faults), never
// from the health report.
func TestScenarioVerdicts(t *testing.T) {
	checkScenarios(t, devtest.DB(t))
}

// TestScenarioVerdictsAcrossRevisions: the same verdicts when cxray
// decodes with each PRM revision of the history (the emulated firmware
// keeps its own); only the identity check may add the database's age.
func TestScenarioVerdictsAcrossRevisions(t *testing.T) {
	devtest.EachRevision(t, checkScenarios)
}

func checkScenarios(t *testing.T, db *prm.DB) {
	nv := nvtest.NV(t)
	functions := 0
	emutest.EachScenario(t, db, func(t *testing.T, em *scenario.Emulation, ads []*adapter.Adapter) {
		ctx := context.Background()
		for i, f := range em.Functions() {
			functions++
			rep := health.Run(ctx, ads[i], health.Options{Interval: 2 * time.Second, NV: nv})
			got := map[string]health.Status{}
			for _, c := range rep.Checks {
				got[c.Name] = c.Status
			}
			want := expected(t, em, f, db.Revision)
			// A function that does not answer is an error of the report
			// (exit 3), and only it.
			if unreachable := want["access"] == health.Fail; unreachable != (rep.Error != "") {
				t.Errorf("%s: report error %q, want one: %v", f.BDF, rep.Error, unreachable)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("%s: verdicts differ from the scenario's state (-want +got):\n%s\nreport:\n%s", f.BDF, d, describe(rep))
			}
			// The emulator has no kernel driver: said once, with what to do
			// (a function health cannot reach has no driver check).
			if c := checkOf(rep, "driver"); c.Name != "" && (!strings.HasPrefix(c.Summary, "the emulator has no kernel driver:") ||
				strings.Count(c.Summary, "emulator") != 1 || strings.Contains(c.Summary, "not available") || !strings.Contains(c.Next, "host")) {
				t.Errorf("%s: driver check on the emulator: summary %q, next %q", f.BDF, c.Summary, c.Next)
			}
			// A module whose bus hangs has no temperature in the report.
			for _, p := range f.View.Ports() {
				m := f.Adapter.Firmware.Ports()[p-1].Module
				if mf, _ := f.Adapter.Optics.Faults(m); mf.I2CHang {
					if sum := summary(rep, "temperatures"); !strings.Contains(sum, fmt.Sprintf("module %d n/a", m)) {
						t.Errorf("%s: module %d's bus hangs, yet the temperatures check says %q", f.BDF, m, sum)
					}
				}
			}
			ads[i].Close()
		}
	})
	if functions < 30 {
		t.Errorf("only %d functions checked", functions)
	}
}

func checkOf(r *health.Report, check string) health.Check {
	for _, c := range r.Checks {
		if c.Name == check {
			return c
		}
	}
	return health.Check{}
}

func summary(r *health.Report, check string) string {
	for _, c := range r.Checks {
		if c.Name == check {
			return c.Summary
		}
	}
	return ""
}

func describe(r *health.Report) string {
	var b strings.Builder
	for _, c := range r.Checks {
		b.WriteString("  " + string(c.Status) + " " + c.Name + ": " + c.Summary + "\n")
		for _, d := range c.Details {
			b.WriteString("      " + d + "\n")
		}
	}
	return b.String()
}

// expected works out each check's verdict from the emulated function's
// state, as a person reading the scenario would.
func expected(t *testing.T, em *scenario.Emulation, f *scenario.Function, revision string) map[string]health.Status {
	a := f.Adapter
	spec := a.Spec.Spec
	dfl := f.Device.Faults()
	want := map[string]health.Status{"identity": health.OK, "access": health.OK}
	// A device that does not answer: identity fails, nothing else runs.
	if dfl.GatewaySemaphoreHeld || dfl.ICMDSemaphoreHeld || dfl.ICMDStuckBusy || dfl.Removed {
		want["identity"], want["access"] = health.Fail, health.Fail
		return want
	}
	if spec.PendingFW != nil && *spec.PendingFW != spec.FW {
		want["identity"] = health.Warn
	}
	if rd, ok := health.RevisionDate(revision); ok && !spec.FWBuildTime.IsZero() && spec.FWBuildTime.Sub(rd) > health.MaxDatabaseLag {
		want["identity"] = health.Warn
	}

	// Ports: the adapter ports this function reaches.
	ports := a.Firmware.Ports()
	own := f.View.Ports()
	want["ports"] = health.OK
	up, empty := 0, 0
	for _, p := range own {
		st := ports[p-1]
		ms, _ := a.Firmware.ModuleStatus(st.Module)
		switch {
		case st.AdminUp && !st.OperUp && !ms.Plugged:
			empty++ // information with a next step, not a failure
		case st.AdminUp && !st.OperUp:
			want["ports"] = health.Fail
		case st.OperUp && st.LinkType == fw.LinkInfiniBand:
			up++
			// Not Active (no subnet manager, or armed only), or a link
			// narrower than its port: warned.
			_, best := emutest.BestIB(a, p)
			if (st.IBState != "Active" || st.Width < spec.Ports[p-1].Lanes || float64(st.SpeedGbps) < best) && want["ports"] == health.OK {
				want["ports"] = health.Warn
			}
		case st.OperUp:
			up++
			if st.SpeedGbps < maxGbps(spec.Ports[p-1]) && want["ports"] == health.OK {
				want["ports"] = health.Warn
			}
		}
	}
	if empty > 0 && want["ports"] == health.OK {
		want["ports"] = health.Info
	}
	if up == 0 && len(own) > empty && rank(want["ports"]) < rank(health.Warn) {
		want["ports"] = health.Warn // no port up is never ok (empty cages aside)
	}

	// Modules, by what the scenario put in the cages.
	want["modules"] = health.OK
	worse := func(check string, s health.Status) {
		if rank(s) > rank(want[check]) {
			want[check] = s
		}
	}
	for _, p := range own {
		m := ports[p-1].Module
		ms, _ := a.Firmware.ModuleStatus(m)
		mf, _ := a.Optics.Faults(m)
		switch {
		case !ms.Plugged:
			continue // an empty cage: shown, the ports check has the next step
		case ms.Error != "":
			worse("modules", health.Fail) // module_error
		}
		if mf.I2CHang || mf.FrozenMonitors || mf.ChecksumError || mf.UnsupportedIdentifier || mf.LowRxPower {
			worse("modules", health.Fail)
		}
		if mf.NoDDM || mf.StaleFirmwareView || mf.FirmwareUnaware {
			worse("modules", health.Warn)
		}
		if _, held := a.Spec.RegisterStatus["MCIA"]; held {
			worse("modules", health.Warn) // the EEPROM cannot be read
		}
		// A firmware without MCIA at all is no fault: the module report
		// shows the firmware's own view (PDDR page 3) and says so.
	}

	// Temperatures against the sensors' own thresholds.
	want["temperatures"] = health.OK
	sensors := []int{0}
	for _, p := range own {
		sensors = append(sensors, 64+ports[p-1].Module)
	}
	for _, i := range sensors {
		c, ok := a.Firmware.Temperature(i)
		hi, _, _ := a.Firmware.Thresholds(i)
		if !ok || (i >= 64 && c == 0) || hi == 0 {
			continue
		}
		switch {
		case c >= hi:
			worse("temperatures", health.Fail)
		case c >= hi-10:
			worse("temperatures", health.Warn)
		}
	}

	// NV configuration: a parameter whose Next Boot differs from Current.
	want["configuration"] = health.OK
	if s, ok := nvstore.Lookup(a.Firmware); ok && pendingNV(s) {
		want["configuration"] = health.Warn
	}

	// Counters: errors the traffic makes, retransmissions the RoCE path
	// makes.
	want["counters"] = health.OK
	if regStatus(a, f, "PPCNT") {
		want["counters"] = health.Warn // counters cannot be sampled
	}
	model, err := rdma.New(a, em.Clock, rdmaConfig(a.Spec.RDMA))
	if err != nil {
		t.Fatal(err)
	}
	for port, ps := range a.Spec.PortRDMA {
		c := rdmaConfig(ps)
		if c.LogWindow == 0 {
			c.LogWindow = a.Spec.RDMA.LogWindow
		}
		model.SetPortConfig(port, c)
	}
	for _, p := range own {
		st, tr := ports[p-1], spec.Ports[p-1].Traffic
		if !st.OperUp {
			continue
		}
		if tr.FECUncorrPerSec > 0 {
			worse("counters", health.Fail)
		}
		if tr.RxErrorsPerSec > 0 || tr.SymbolErrorsPerSec > 0 || tr.RxDiscardsPerSec > 0 {
			worse("counters", health.Warn)
		}
		if f.RDMA != "" {
			rates, _ := model.PortRates(p)
			for _, n := range []string{"duplicate_request", "out_of_sequence", "packet_seq_err", "local_ack_timeout_err", "roce_adp_retrans"} {
				if rates[n] > 0 {
					worse("counters", health.Warn)
				}
			}
		}
	}

	// MAC drift: the OS address the scenario gives against the permanent.
	switch {
	case f.Netdev == "", emuadapter.InfiniBand(f):
		want["mac"] = health.Skip // no interface, or IPoIB: no MAC
	case emuadapter.OSMAC(f) != emuadapter.PermanentMAC(f):
		want["mac"] = health.Warn
	default:
		want["mac"] = health.OK
	}
	want["link"] = expectedLink(t, f, own)
	want["pcie"] = expectedPCIe(a, own)
	want["driver"] = health.Skip // the emulator has no kernel driver
	// Bandwidth: a cause is supported when the PCIe link cannot carry the
	// fastest port, or error, discard or retransmission counters move.
	want["bandwidth"] = health.OK
	if pcieShort(a, own) || (want["counters"] != health.OK && !regStatus(a, f, "PPCNT")) {
		want["bandwidth"] = health.Warn
	}
	return want
}

// expectedPCIe: a link trained below the card, or too slow for the
// fastest port, warns; steady correctable errors warn when the 2 s the
// check watches see at least one.
func expectedPCIe(a *scenario.Adapter, own []int) health.Status {
	l := a.Link.Spec()
	st := health.OK
	if l.Trained.Speed < l.Card.Speed || l.Trained.Width < l.Card.Width {
		st = health.Warn
	}
	if pcieShort(a, own) {
		st = health.Warn
	}
	for _, r := range l.CorrectablePerSec {
		if r*2 >= 1 {
			st = health.Warn
		}
	}
	return st
}

// pcieShort: the trained link carries less than the fastest port needs.
func pcieShort(a *scenario.Adapter, own []int) bool {
	need := 0
	for _, p := range own {
		ps := a.Firmware.Ports()[p-1]
		g := maxGbps(a.Spec.Spec.Ports[p-1])
		if ps.OperUp {
			g = ps.SpeedGbps
		}
		need = max(need, g)
	}
	return a.Link.Spec().Trained.UsableGbps() < float64(need)
}

func rank(s health.Status) int {
	switch s {
	case health.Warn:
		return 1
	case health.Fail:
		return 2
	}
	return 0
}

func maxGbps(p fw.PortSpec) int {
	best := 0
	for _, n := range p.Protocols {
		if pr, err := fw.LookupEthProtocol(n); err == nil && pr.Gbps > best {
			best = pr.Gbps
		}
	}
	return best
}

func unsupported(a *scenario.Adapter, reg string) bool {
	for _, r := range a.Firmware.Faults().Unsupported {
		if strings.EqualFold(r, reg) {
			return true
		}
	}
	return false
}

// regStatus says a register answers a status instead of working, for
// this function (device level) or the adapter (firmware level).
func regStatus(a *scenario.Adapter, f *scenario.Function, reg string) bool {
	if _, ok := a.Spec.RegisterStatus[reg]; ok {
		return true
	}
	for _, s := range a.Firmware.Faults().Status {
		if strings.EqualFold(s.Register, reg) && s.Method == 0 {
			return true
		}
	}
	return unsupported(a, reg)
}

func rdmaConfig(s scenario.RDMASpec) rdma.Config {
	return rdma.Config{Loss: s.Loss, RTT: s.RTT, LogWindow: s.LogWindow, Share: s.Share, Priority: s.Priority}
}

// pendingNV says whether any user parameter's Next Boot value differs
// from its Current one in the emulated store.
func pendingNV(s *nvstore.Store) bool {
	db, layout := s.DB(), s.Layout()
	for _, tl := range db.TLVs {
		if tl.Cap {
			continue
		}
		for _, in := range layout.Instances(tl) {
			for _, p := range tl.Params {
				if p.MlxName == "" {
					continue
				}
				name := p.MlxName + in.Suffix()
				if p.IsArray() {
					name += "[0]"
				}
				next, err1 := s.Get(name, nvconf.ModeNext)
				cur, err2 := s.Get(name, nvconf.ModeCurrent)
				if err1 == nil && err2 == nil && next != cur {
					return true
				}
			}
		}
	}
	return false
}
