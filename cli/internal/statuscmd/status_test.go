package statuscmd

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/cli/internal/cmdutil/cmdutiltest"
)

func opts(name string) *statusOptions {
	return &statusOptions{df: cmdutil.DeviceFlags{Name: name, Timeout: 10 * time.Second}}
}

func entries(t *testing.T, s string) []Entry {
	t.Helper()
	var d struct {
		Devices []Entry `json:"devices"`
	}
	cmdutiltest.JSON(t, s, &d)
	return d.Devices
}

// A machine without adapters: exit 0, an empty list in JSON, and the
// table says to try the emulator.
func TestStatusNoAdapters(t *testing.T) {
	a := cmdutiltest.New(t, "json")
	if err := (&app{a.App}).runStatus(a.Ctx, opts("")); err != nil {
		t.Fatal(err)
	}
	if got := entries(t, a.Out.String()); got == nil || len(got) != 0 {
		t.Errorf("devices %v, want []", got)
	}
	a.Reset()
	a.Output = "table"
	if err := (&app{a.App}).runStatus(a.Ctx, opts("")); err != nil {
		t.Fatal(err)
	}
	if want := "no ConnectX adapters found on this machine; try the emulator: cxray status -d emu\n"; a.Out.String() != want {
		t.Errorf("table %q, want %q", a.Out, want)
	}
}

// -d of an emulated scenario lists every function of it (one with @BDF),
// with the scenario's identity.
func TestStatusScenario(t *testing.T) {
	a := cmdutiltest.New(t, "json")
	two := cmdutiltest.Scenario(t, "clock: {mode: manual}\ndevices:\n  - profile: cx7-2p400g\n    bdf: 0000:03:00.0\n    firmware: {version: 28.39.1010, psid: MT_0000000834}\n  - profile: cx6dx-2p100g\n    bdf: 0000:81:00.0\n")
	if err := (&app{a.App}).runStatus(a.Ctx, opts(two)); err != nil {
		t.Fatalf("%v\n%s", err, a.Out)
	}
	type row struct{ BDF, Firmware, PSID string }
	var got []row
	for _, e := range entries(t, a.Out.String()) {
		got = append(got, row{e.BDF, e.Firmware, e.PSID})
		if e.MACDrift || e.Error != "" || e.Model == "" || e.PermanentMAC == "" {
			t.Errorf("%s: drift %v error %q model %q MAC %q", e.BDF, e.MACDrift, e.Error, e.Model, e.PermanentMAC)
		}
	}
	if len(got) != 2 || got[0].BDF != "0000:03:00.0" || got[0].Firmware != "28.39.1010" || got[0].PSID != "MT_0000000834" || got[1].BDF != "0000:81:00.0" {
		t.Errorf("entries %+v", got)
	}
	a.Reset()
	if err := (&app{a.App}).runStatus(a.Ctx, opts(two+"@0000:81:00.0")); err != nil {
		t.Fatal(err)
	}
	var bdfs []string
	for _, e := range entries(t, a.Out.String()) {
		bdfs = append(bdfs, e.BDF)
	}
	if diff := cmp.Diff([]string{"0000:81:00.0"}, bdfs); diff != "" {
		t.Errorf("@BDF picks one function (-want +got):\n%s", diff)
	}
}

// MAC drift is exit 1, and the table names the interface and both
// addresses.
func TestStatusMACDrift(t *testing.T) {
	a := cmdutiltest.New(t, "table")
	dev := cmdutiltest.Manual(t, "    functions:\n      - {mac: \"02:11:22:33:44:55\"}\n")
	err := (&app{a.App}).runStatus(a.Ctx, opts(dev))
	if !errors.Is(err, cmdutil.ErrProblem) {
		t.Fatalf("drift: %v, want exit 1\n%s", err, a.Out)
	}
	if !strings.Contains(a.Out.String(), ": MAC drift: ") || !strings.Contains(a.Out.String(), " uses 02:11:22:33:44:55, the permanent MAC is b8:3f:d2:a1:b2:c0") {
		t.Errorf("table:\n%s", a.Out)
	}
	a.Reset()
	a.Output = "json"
	if err := (&app{a.App}).runStatus(a.Ctx, opts(dev)); !errors.Is(err, cmdutil.ErrProblem) {
		t.Errorf("JSON: %v, want exit 1 as in the table", err)
	}
	if es := entries(t, a.Out.String()); len(es) != 1 || !es[0].MACDrift || len(es[0].Drift) != 1 || es[0].Drift[0].Address != "02:11:22:33:44:55" {
		t.Errorf("entries %+v", es)
	}
}

// A -d device that cannot be read: the report says why, then exit 3 with
// the reason on standard error and no second JSON document
// (cmdutil.ReportedError).
func TestStatusRemoved(t *testing.T) {
	for _, mode := range []string{"table", "json"} {
		a := cmdutiltest.New(t, mode)
		err := (&app{a.App}).runStatus(a.Ctx, opts(cmdutiltest.Manual(t, "    faults: {removed: true}\n")))
		var re *cmdutil.ReportedError
		if cmdutiltest.Code(err) != cmdutil.ExitDevice || !errors.As(err, &re) || !strings.Contains(err.Error(), "1 of 1 function(s) could not be read: 0000:03:00.0") {
			t.Fatalf("%s: %v, want exit 3 after the report, saying why", mode, err)
		}
		if !strings.Contains(a.Out.String(), "0xFFFFFFFF") {
			t.Errorf("%s: the report does not say why:\n%s", mode, a.Out)
		}
	}
}

// Bad names are exit 2 (a name that is no device form) or 3 (a form
// that names nothing here).
func TestStatusBadNames(t *testing.T) {
	a := cmdutiltest.New(t, "table")
	if err := (&app{a.App}).runStatus(a.Ctx, opts("emu:no-such-profile")); cmdutiltest.Code(err) != cmdutil.ExitUsage || !strings.Contains(err.Error(), "no-such-profile") {
		t.Errorf("unknown profile: %v, want exit 2", err)
	}
	if err := (&app{a.App}).runStatus(a.Ctx, opts("0000:42:00.0")); cmdutiltest.Code(err) != cmdutil.ExitDevice {
		t.Errorf("a PCI address that is not here: %v, want exit 3", err)
	}
	if a.Out.Len() != 0 {
		t.Errorf("printed %q", a.Out)
	}
}
