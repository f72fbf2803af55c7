package modules_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/dev/devtest"
	"github.com/cxray/cxray/emu/emuadapter/emutest"
	emuoptics "github.com/cxray/cxray/emu/optics"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/feature/modules"
	"github.com/cxray/cxray/internal/clock"
	"github.com/cxray/cxray/optics"
)

var start = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// The emulated tests open scenarios through emutest: the emulator's
// modules are real module memory maps (SFF-8472, SFF-8636, CMIS) with the
// faults the scenario gives them.

func codes(rs []*modules.Report) map[int][]string {
	out := map[int][]string{}
	for _, r := range rs {
		out[r.Port] = []string{}
		for _, v := range r.Verdicts {
			out[r.Port] = append(out[r.Port], v.Code)
		}
	}
	return out
}

// Each module fault the emulator models comes out as its verdict, on its
// port only, once read, verified and diagnosed.
func TestVerdictsOfEmulatedFaults(t *testing.T) {
	ads, _ := emutest.OpenYAML(t, `clock: {mode: manual}
devices:
  - profile: cx7-2p400g
    modules:
      - {module: 0}
      - {module: 1, type: qsfp28-100g-sr4, faults: [frozen_monitors]}
  - profile: cx7-2p400g
    modules:
      - {module: 0, faults: [low_rx_power]}
      - {module: 1, faults: [checksum_error]}
  - profile: cx7-2p400g
    modules:
      - {module: 0, faults: [stale_firmware_view]}
      - {module: 1, type: sfp28-25g-lr, faults: [no_ddm]}
  - profile: cx7-2p400g
    modules:
      - {module: 0, faults: [unsupported_identifier]}
      - {module: 1, faults: [i2c_hang]}
  - profile: cx7-2p400g
    modules:
      - {module: 0, faults: [firmware_unaware]}
      - {module: 1, type: qsfp28-100g-dac}
`)
	want := []map[int][]string{
		{1: {}, 2: {optics.VerdictFrozen}},
		{1: {optics.VerdictThresholdAlarm}, 2: {optics.VerdictChecksum}},
		// The firmware's copy does not move: the sources disagree too.
		{1: {optics.VerdictSourcesDisagree, optics.VerdictStaleFirmware}, 2: {optics.VerdictNoDDM}},
		{1: {optics.VerdictUnsupported}, 2: {optics.VerdictI2CHang}},
		// A passive copper cable has no diagnostics, and needs none.
		{1: {optics.VerdictFirmwareTooOld}, 2: {}},
	}
	if len(ads) != len(want) {
		t.Fatalf("%d functions", len(ads))
	}
	for i, a := range ads {
		rs, err := modules.Read(context.Background(), a, modules.Options{Verify: true, Interval: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want[i], codes(rs)); d != "" {
			t.Errorf("%s: verdicts by port (-want +got):\n%s", a.Name(), d)
		}
		if n := modules.Verdicts(rs); n != len(want[i][1])+len(want[i][2]) {
			t.Errorf("%s: Verdicts says %d", a.Name(), n)
		}
	}
}

// Verify reads twice, Interval apart on the adapter's clock, and compares
// the EEPROM with the firmware's view.
func TestVerify(t *testing.T) {
	ads, clk := emutest.OpenYAML(t, `clock: {mode: manual}
devices:
  - profile: cx7-2p400g
    modules:
      - {module: 0}
      - {module: 1, type: qsfp28-100g-sr4, faults: [frozen_monitors]}
`)
	before := clk.Now()
	rs, err := modules.Read(context.Background(), ads[0], modules.Options{Verify: true, Interval: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if got := clk.Now().Sub(before); got < 30*time.Second {
		t.Errorf("the clock moved %v between the reads", got)
	}
	type summary struct {
		Agree                      bool
		Interval                   float64
		EEChanged, EEMonitors      int
		FwChanged, FwMonitors      int
		HasComparisons, AllCompare bool
	}
	sum := func(v *modules.Verify) summary {
		s := summary{Agree: v.Agree, Interval: v.IntervalS, EEChanged: v.EEPROMChanged, EEMonitors: v.EEPROMMonitors,
			FwChanged: v.FirmwareChanged, FwMonitors: v.FirmwareMonitors, HasComparisons: len(v.Comparisons) > 0, AllCompare: true}
		for _, c := range v.Comparisons {
			s.AllCompare = s.AllCompare && c.OK
		}
		return s
	}
	got := []summary{sum(rs[0].Verify), sum(rs[1].Verify)}
	want := []summary{
		{Agree: true, Interval: 30, EEChanged: 14, EEMonitors: 14, FwChanged: 14, FwMonitors: 14, HasComparisons: true, AllCompare: true},
		{Agree: true, Interval: 30, EEChanged: 0, EEMonitors: 14, FwChanged: 0, FwMonitors: 14, HasComparisons: true, AllCompare: true},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("verify (-want +got):\n%s", d)
	}
	// Without Verify nothing is compared and there is no second read.
	before = clk.Now()
	rs, err = modules.Read(context.Background(), ads[0], modules.Options{Ports: []int{2}})
	if err != nil || len(rs) != 1 || rs[0].Port != 2 || rs[0].Verify != nil || !clk.Now().Equal(before) {
		t.Errorf("no verify: %+v %v, clock moved %v", rs, err, clk.Now().Sub(before))
	}
	// A frozen module is only seen by verifying.
	if len(rs[0].Verdicts) != 0 {
		t.Errorf("verdicts without verify: %v", codes(rs))
	}
}

func TestWriteText(t *testing.T) {
	ads, _ := emutest.OpenYAML(t, `clock: {mode: manual}
devices:
  - profile: cx7-2p400g
    modules:
      - {module: 0}
      - {module: 1, type: qsfp28-100g-sr4, faults: [frozen_monitors, low_rx_power]}
`)
	rs, err := modules.Read(context.Background(), ads[0], modules.Options{Verify: true, Interval: 10 * time.Second, Raw: true})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	modules.WriteText(&b, rs[0], true)
	out := b.String()
	for _, want := range []string{
		"Port 1 · module 0 · plugged_enabled\n",
		"  Source         EEPROM (MCIA)\n",
		"  Identifier     QSFP+ or later with CMIS (0x1e), CMIS 5.0\n",
		"  Vendor         CXRAY EMULATED  OUI 02:43:58  PN EMU-Q112-DR4",
		"  Application    400GAUI-4-S C2M / 400GBASE-DR4, 4 host lanes, 4 media lanes\n",
		"  Diagnostics    yes (Rx power average)\n",
		"  LANE            1       2       3       4       LOW ALARM  LOW WARN  HIGH WARN  HIGH ALARM\n",
		"  Tx bias (mA)",
		"  Rx power (dBm)",
		"  Rx LOS          no      no      no      no\n",
		"  Flags           none    none    none    none\n",
		"  Firmware view  QSFP+ or later with CMIS (firmware: QSFP CMIS), CXRAY EMULATED EMU-Q112-DR4",
		"  Verify         the EEPROM and the firmware's view agree; after 10s: 14 of 14 EEPROM and 14 of 14 firmware monitors changed\n",
		"    QUANTITY                          EEPROM          FIRMWARE        UNIT  DIFF    TOLERANCE  OK\n",
		"  Raw pages (MCIA)\n",
		"    page 00h lower         0x00: 1e ",
		"    page 11h upper         0x80: ",
		"  Verdict        no problem found\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("port 1 lacks %q:\n%s", want, out)
		}
	}
	// Each page read is printed, 16 bytes a row.
	for _, p := range rs[0].Raw.Pages {
		var hx []string
		for _, c := range p.Data[:16] {
			hx = append(hx, fmt.Sprintf("%02x", c))
		}
		if !strings.Contains(out, fmt.Sprintf("%-22s 0x%02x: %s\n", p.PageAddr.String(), p.Offset, strings.Join(hx, " "))) {
			t.Errorf("raw page %s is not printed", p.PageAddr)
		}
	}
	b.Reset()
	modules.WriteText(&b, rs[1], false)
	out = b.String()
	for _, want := range []string{
		"Port 2 · module 1 · plugged_enabled\n",
		"  Identifier     QSFP28 (0x11), SFF-8636",
		"!", // lane 1's rx power is past its low alarm
		"  (! past an alarm threshold, * past a warning threshold, ~ near a warning threshold)\n",
		"after 10s: 0 of 14 EEPROM and 0 of 14 firmware monitors changed",
		"  Verdicts\n",
		"    [hardware] threshold_alarm: lane 1 rx power",
		"    [hardware] frozen_monitors: the monitors of module 1 have stopped updating\n",
		"        - none of 14 EEPROM monitors changed in 10s\n",
		"        next: reset the module",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("port 2 lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Raw pages") {
		t.Error("raw pages printed without raw")
	}
}

// SFF-8472 (an SFP with A2h diagnostics) and a passive copper cable print
// through the same writer.
func TestWriteTextOtherStandards(t *testing.T) {
	ads, _ := emutest.OpenYAML(t, `clock: {mode: manual}
devices:
  - profile: cx7-2p400g
    modules:
      - {module: 0, type: sfp28-25g-lr}
      - {module: 1, type: qsfp28-100g-dac}
`)
	rs, err := modules.Read(context.Background(), ads[0], modules.Options{Raw: true})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	modules.WriteText(&b, rs[0], true)
	for _, want := range []string{"SFF-8472", "Temperature", "Tx bias (mA)", "A2h lower"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("SFP lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	modules.WriteText(&b, rs[1], false)
	for _, want := range []string{"  Diagnostics    no (passive copper: none expected)\n", "  Verdict        no problem found\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("DAC lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "LANE") {
		t.Errorf("a cable without diagnostics prints a lane table:\n%s", b.String())
	}
}

// The register-side wiring over dev/devtest: an empty cage, a module the
// firmware reports an error for, a firmware without EEPROM access.
func fake(t *testing.T, pmaos ...string) *adapter.Adapter {
	a, _ := fakeWith(t, pmaos...)
	return a
}

func fakeWith(t *testing.T, pmaos ...string) (*adapter.Adapter, *devtest.Fake) {
	db := devtest.DB(t)
	f := devtest.New(db)
	f.Put("MGIR", "hw_info.num_ports=1", "fw_info.extended_major=28", "fw_info.extended_minor=39", "fw_info.extended_sub_minor=1002")
	if len(pmaos) > 0 {
		f.Put("PMAOS", append([]string{"module=0"}, pmaos...)...)
	}
	return adapter.New(adapter.Config{Name: "t", BDF: "0000:03:00.0", Backend: dev.BackendDirect, DB: db,
		Registers: f.Device("t", "0000:03:00.0", dev.BackendDirect), Clock: clock.NewManual(start),
		OSView: osView{}}), f
}

type osView struct{}

func (osView) OS(context.Context) (*adapter.OS, error) {
	return &adapter.OS{Netdevs: []adapter.Netdev{{Name: "eth0"}}}, nil
}
func (osView) RDMACounters(context.Context, int) (map[string]uint64, error) {
	return nil, errors.ErrUnsupported
}

func TestRegisterWiring(t *testing.T) {
	ctx := context.Background()
	t.Run("empty cage", func(t *testing.T) {
		rs, err := modules.Read(ctx, fake(t, "oper_status=unplugged"), modules.Options{Verify: true})
		if err != nil || len(rs) != 1 {
			t.Fatal(rs, err)
		}
		r := rs[0]
		if r.Netdev != "eth0" || r.EEPROM != nil || r.Firmware != nil || r.EEPROMError != "" || cmp.Diff([]string{optics.VerdictNoModule}, codes(rs)[1]) != "" {
			t.Errorf("%+v %v", r, codes(rs))
		}
		var b bytes.Buffer
		modules.WriteText(&b, r, false)
		for _, want := range []string{"Port 1 · eth0 · unplugged\n", "nothing to compare (one of the sources was not read)", "[hardware] no_module: no module in the cage of module 0"} {
			if !strings.Contains(b.String(), want) {
				t.Errorf("lacks %q:\n%s", want, b.String())
			}
		}
		// JSON lists are never null.
		j, _ := json.Marshal(r)
		if !strings.Contains(string(j), `"marks":[]`) || !strings.Contains(string(j), `"eeprom_access":"MCIA"`) {
			t.Errorf("json %s", j)
		}
	})
	t.Run("plugged with an error, no MCIA, no PDDR", func(t *testing.T) {
		rs, err := modules.Read(ctx, fake(t, "oper_status=module_plugged_with_error", "error_type=Power_Budget_Exceeded"), modules.Options{})
		if err != nil {
			t.Fatal(err)
		}
		r := rs[0]
		if r.OperStatus != "module_plugged_with_error" || r.ErrorType != "Power_Budget_Exceeded" || cmp.Diff([]string{optics.VerdictModuleError}, codes(rs)[1]) != "" {
			t.Errorf("%+v %v", r, codes(rs))
		}
		if m, src := r.Shown(); m != nil || src != "" {
			t.Errorf("shown %v %q", m, src)
		}
		var b bytes.Buffer
		modules.WriteText(&b, r, true)
		for _, want := range []string{
			"Port 1 · eth0 · module_plugged_with_error (Power_Budget_Exceeded)\n",
			"  EEPROM: the firmware does not offer MCIA (module EEPROM access); showing its own view only\n",
			"  Firmware view  not read: ",
			"        next: the module needs more power than the cage allows",
		} {
			if !strings.Contains(b.String(), want) {
				t.Errorf("lacks %q:\n%s", want, b.String())
			}
		}
	})
	t.Run("a port the function does not own", func(t *testing.T) {
		_, err := modules.Read(ctx, fake(t), modules.Options{Ports: []int{2}})
		if !modules.IsNoPort(err) || modules.IsNoPort(errors.New("x")) {
			t.Errorf("%v", err)
		}
	})
	t.Run("the wait ends with the context", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		a, f := fakeWith(t, "oper_status=unplugged")
		// The context ends once the module is read, before the wait.
		f.Hook = func(_ dev.Method, reg string) error {
			if reg == "PMAOS" {
				cancel()
			}
			return nil
		}
		_, err := modules.Read(cctx, a, modules.Options{Verify: true, Interval: time.Second})
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "waiting 1s between the two reads") || !strings.Contains(err.Error(), "raise --timeout") {
			t.Errorf("%v", err)
		}
	})
}

// A module pulled between the two reads of a verify is the verdict "the
// module went away", alone (issue 26.9: it said no problem found).
func TestVerifyModulePulled(t *testing.T) {
	sc, err := scenario.Parse([]byte("clock: {mode: manual}\ndevices:\n  - profile: cx7-2p400g\n    modules:\n      - {module: 0}\n      - {module: 1}\n"), emutest.YAMLName)
	if err != nil {
		t.Fatal(err)
	}
	em := emutest.Build(t, sc)
	ads := emutest.Open(t, em, "emu:"+emutest.YAMLName, nil)
	// The interval's sleep: the module of port 1 is pulled during it.
	em.Manual.OnSleep(1, func() {
		if err := em.Adapters[0].Optics.Plug(0, emuoptics.Empty); err != nil {
			t.Error(err)
		}
	})
	rs, err := modules.Read(context.Background(), ads[0], modules.Options{Verify: true, Interval: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(map[int][]string{1: {optics.VerdictModuleGone}, 2: {}}, codes(rs)); d != "" {
		t.Errorf("verdicts by port (-want +got):\n%s", d)
	}
	if v := rs[0].Verdicts; len(v) == 1 && (v[0].Category != optics.Hardware || !strings.Contains(v[0].Summary, "went away between the two reads")) {
		t.Errorf("verdict %+v", v[0])
	}
}

// A device whose time stands still (an emulator on a manual clock, driven
// through its config space while the client waits on the wall clock)
// shows unchanged monitors: that is no frozen module. The device's uptime
// tells the two apart; a device whose time moves still has its frozen
// module found.
func TestDeviceClockStillIsNotFrozen(t *testing.T) {
	ads, devClock := emutest.OpenYAML(t, `clock: {mode: manual}
devices:
  - profile: cx7-2p400g
    modules:
      - {module: 1, faults: [frozen_monitors]}
`)
	ctx := context.Background()
	cmpStart := devClock.Now()
	d, err := ads[0].Registers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The client's own clock: its waits do not move the device's.
	client := adapter.New(adapter.Config{Name: "direct", BDF: ads[0].BDF(), Backend: dev.BackendEmulator, DB: ads[0].DB(),
		Registers: d, Clock: clock.NewManual(start)})
	still, err := modules.Read(ctx, client, modules.Options{Verify: true, Interval: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	want := map[int][]string{1: {}, 2: {}}
	if d := cmp.Diff(want, codes(still)); d != "" {
		t.Errorf("device clock still: verdicts per port (-want +got):\n%s", d)
	}
	for _, r := range still {
		if r.Verify == nil || !r.Verify.DeviceClockStill {
			t.Errorf("port %d: the report does not say the device's clock stood still: %+v", r.Port, r.Verify)
		}
	}
	// The same device read through its own clock, which the wait moves:
	// module 1's monitors are frozen, module 0's are not.
	moving, err := modules.Read(ctx, ads[0], modules.Options{Verify: true, Interval: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	want = map[int][]string{1: {}, 2: {optics.VerdictFrozen}}
	if d := cmp.Diff(want, codes(moving)); d != "" {
		t.Errorf("device clock moving: verdicts per port (-want +got):\n%s", d)
	}
	if moving[0].Verify.DeviceClockStill || !devClock.Now().After(cmpStart) {
		t.Errorf("the moving clock is reported still")
	}
}
