package linkcmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/cli/internal/cmdutil/cmdutiltest"
	"github.com/cxray/cxray/feature/link"
)

// changeJSON decodes the JSON of a change (changeDoc) as a script would.
type changeJSON struct {
	Change struct {
		What  string `json:"what"`
		Steps []struct {
			Register string `json:"register"`
			Changes  []struct {
				Path   string `json:"field"`
				Before string `json:"before"`
				After  string `json:"after"`
			} `json:"changes"`
		} `json:"writes"`
		UndoFlags string           `json:"undo_flags"`
		Before    link.Operational `json:"before"`
	} `json:"change"`
	Written  bool             `json:"written"`
	Verified []string         `json:"verified"`
	After    link.Operational `json:"after"`
	Problem  string           `json:"problem"`
	Note     string           `json:"note"`
	Undo     string           `json:"undo_command"`
}

// state reads the port's admin and oper status through `cxray link`.
func state(t *testing.T, a *cmdutiltest.App, dev string) (admin, oper string) {
	t.Helper()
	a.Output = "json"
	defer func() { a.Output = "table" }()
	if err := linkRun(a, "-d", dev); cmdutiltest.Code(err) > 1 {
		t.Fatalf("link: %v", err)
	}
	d := decode(t, a.Out.String())
	op := d.Links[0].Operational
	return op.AdminStatus, op.OperStatus
}

// Usage errors of a change are exit 2, say what to give, and write
// nothing.
func TestChangeUsage(t *testing.T) {
	a := cmdutiltest.New(t, "table")
	dev := cmdutiltest.Manual(t, "")
	for _, c := range []struct {
		args  []string
		words string
	}{
		{[]string{"-d", dev, "--port_state", "XX"}, `--port_state "XX": give UP, DN (down) or TG (toggle)`},
		{[]string{"-d", dev, "--port_state", "DN", "--all"}, "--all reads; a change"},
		{[]string{"-d", dev, "--port_state", "DN", "--counters"}, "--counters reads"},
		{[]string{"-d", dev, "--port_state", "DN", "--undo"}, "make one change at a time"},
		{[]string{"-d", dev, "--dry-run"}, "go with a change"},
		{[]string{"-d", dev, "--port_state", "DN", "--wait", "0s"}, "--wait 0s"},
		{[]string{"-d", dev, "--undo", "--yes"}, "nothing to undo"},
		{[]string{"-d", dev, "--port_state", "DN"}, "add --yes (or --dry-run"},
		{[]string{"-d", dev, "--port", "3", "--port_state", "DN", "--yes"}, "no local port 3"},
	} {
		err := linkRun(a, c.args...)
		if code := cmdutiltest.Code(err); code != cmdutil.ExitUsage || !strings.Contains(err.Error(), c.words) {
			t.Errorf("%v: exit %d %v; want exit 2 saying %q", c.args, code, err, c.words)
		}
	}
	if admin, oper := state(t, a, dev); admin != "up" || oper != "up" {
		t.Errorf("after refused changes the port is admin %s, oper %s; want up, up", admin, oper)
	}
}

// --port_state DN: the dry run shows the PAOS write and changes nothing;
// --yes takes the link down (verified, read back by `cxray link`); --undo
// brings it back; a second --undo has nothing to undo. Both output modes.
func TestPortStateDownAndUndo(t *testing.T) {
	for _, mode := range []string{"table", "json"} {
		t.Run(mode, func(t *testing.T) {
			a := cmdutiltest.New(t, mode)
			dev := cmdutiltest.Manual(t, "")
			err := linkRun(a, "-d", dev, "--port_state", "DN", "--dry-run")
			if err != nil {
				t.Fatalf("dry run: %v", err)
			}
			dry := a.Out.String()
			if mode == "json" {
				var d changeJSON
				cmdutiltest.JSON(t, dry, &d)
				if d.Written || len(d.Change.Steps) != 1 || d.Change.Steps[0].Register != "PAOS" {
					t.Fatalf("dry run: %+v", d)
				}
				var got []string
				for _, c := range d.Change.Steps[0].Changes {
					got = append(got, c.Path+": "+c.Before+" -> "+c.After)
				}
				want := []string{"admin_status: up (1) -> down_by_configuration (2)", "ase: 0 -> 1"}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("dry run changes (-want +got):\n%s", diff)
				}
				if d.Change.UndoFlags != "--port_state UP" {
					t.Errorf("undo flags %q, want --port_state UP", d.Change.UndoFlags)
				}
			} else {
				for _, w := range []string{"PAOS local_port=1 admin_status=2 ase=1", "up (1) -> down_by_configuration (2)", "goes down and stays down", "--port_state UP --yes", "dry run: nothing written"} {
					if !strings.Contains(dry, w) {
						t.Errorf("dry run lacks %q:\n%s", w, dry)
					}
				}
			}
			if admin, oper := state(t, a, dev); admin != "up" || oper != "up" {
				t.Fatalf("after the dry run: admin %s, oper %s; want up, up", admin, oper)
			}
			a.Output = mode
			if err := linkRun(a, "-d", dev, "--port_state", "DN", "--yes"); err != nil {
				t.Fatalf("DN: %v\n%s", err, a.Err)
			}
			if mode == "json" {
				var d changeJSON
				cmdutiltest.JSON(t, a.Out.String(), &d)
				if !d.Written || len(d.Verified) != 1 || d.After.OperStatus != "down" || d.After.State != "Disable" || d.Problem != "" {
					t.Errorf("DN result: written %v verified %v after %s/%s problem %q", d.Written, d.Verified, d.After.OperStatus, d.After.State, d.Problem)
				}
			} else if out := a.Out.String(); !strings.Contains(out, "(read back: verified)") || !strings.Contains(out, "After         Disable") {
				t.Errorf("DN output:\n%s", out)
			}
			if admin, oper := state(t, a, dev); admin != "down_by_configuration" || oper != "down" {
				t.Fatalf("after DN: admin %s, oper %s", admin, oper)
			}
			a.Output = mode
			if err := linkRun(a, "-d", dev, "--undo", "--yes"); err != nil {
				t.Fatalf("undo: %v\n%s", err, a.Err)
			}
			if admin, oper := state(t, a, dev); admin != "up" || oper != "up" {
				t.Errorf("after --undo: admin %s, oper %s; want up, up", admin, oper)
			}
			err = linkRun(a, "-d", dev, "--undo", "--yes")
			if cmdutiltest.Code(err) != cmdutil.ExitUsage || !strings.Contains(err.Error(), "nothing to undo") {
				t.Errorf("second undo: %v; want exit 2, nothing to undo", err)
			}
		})
	}
}

// --port_state TG on an InfiniBand port: down then up, both writes
// verified, the link Active again; the undo record holds the state before
// (up). UP on a port already up writes nothing.
func TestPortStateToggleIB(t *testing.T) {
	a := cmdutiltest.New(t, "json")
	dev := cmdutiltest.Scenario(t, "clock: {mode: manual}\ndevices:\n  - profile: cx7-1p-ndr\n")
	if err := linkRun(a, "-d", dev, "--port_state", "TG", "--yes"); err != nil {
		t.Fatalf("TG: %v\n%s", err, a.Err)
	}
	var d changeJSON
	cmdutiltest.JSON(t, a.Out.String(), &d)
	if len(d.Verified) != 2 || d.After.State != "Active" || d.After.OperStatus != "up" || d.After.IB == nil || d.Change.UndoFlags != "--port_state UP" {
		t.Errorf("TG: verified %v, after %s/%s IB %+v, undo %q", d.Verified, d.After.State, d.After.OperStatus, d.After.IB, d.Change.UndoFlags)
	}
	if err := linkRun(a, "-d", dev, "--port_state", "UP", "--yes"); err != nil {
		t.Fatalf("UP: %v", err)
	}
	cmdutiltest.JSON(t, a.Out.String(), &d)
	if d.Written || !strings.Contains(d.Note, "nothing to change") {
		t.Errorf("UP on an up port: written %v, note %q", d.Written, d.Note)
	}
}

// A port that carries the host's default route is not changed without
// --force (exit 2, nothing written); with --force it is.
func TestChangeManagementInterface(t *testing.T) {
	a := cmdutiltest.New(t, "table")
	dev := "emu:../../../examples/gpu-node.yaml@0000:29:00.0"
	route := filepath.Join(t.TempDir(), "route")
	body := "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n" +
		"ens9f0np0\t00000000\t0100000A\t0003\t0\t0\t0\t00000000\t0\t0\t0\n"
	if err := os.WriteFile(route, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	old := routeFiles
	routeFiles = []string{route}
	t.Cleanup(func() { routeFiles = old })
	err := linkRun(a, "-d", dev, "--port_state", "DN", "--yes")
	if cmdutiltest.Code(err) != cmdutil.ExitUsage || !strings.Contains(err.Error(), "carries ens9f0np0") || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("DN of the management port: %v; want exit 2 naming ens9f0np0 and --force", err)
	}
	if admin, _ := state(t, a, dev); admin != "up" {
		t.Fatalf("refused change left admin %s", admin)
	}
	if err := linkRun(a, "-d", dev, "--port_state", "DN", "--yes", "--force"); err != nil {
		t.Fatalf("DN --force: %v", err)
	}
	if admin, _ := state(t, a, dev); admin != "down_by_configuration" {
		t.Errorf("after DN --force admin %s", admin)
	}
}

// enabled reads the port's enabled speeds, auto-negotiation and speed.
func enabled(t *testing.T, a *cmdutiltest.App, dev string) (mask, an, speed string) {
	t.Helper()
	a.Output = "json"
	defer func() { a.Output = "table" }()
	if err := linkRun(a, "-d", dev); cmdutiltest.Code(err) > 1 {
		t.Fatalf("link: %v", err)
	}
	op := decode(t, a.Out.String()).Links[0].Operational
	if op.Enabled == nil {
		t.Fatal("no enabled speeds")
	}
	return op.Enabled.Mask, op.AutoNegotiation, op.Speed
}

// Speeds that the protocol, the port or the cable cannot run, and a
// forced mode with two speeds, are exit 2 with the reason, and nothing is
// written.
func TestSpeedsRefused(t *testing.T) {
	a := cmdutiltest.New(t, "table")
	dev := cmdutiltest.Manual(t, "    modules:\n      - {module: 0, type: qsfp28-100g-sr4}\n")
	mask, _, _ := enabled(t, a, dev)
	for _, c := range []struct {
		args  []string
		words string
	}{
		{[]string{"--speeds", "FOO"}, "--speeds FOO: not a speed name; port 1 (Ethernet) can run 1G,10G"},
		{[]string{"--speeds", "NDR"}, "port 1 runs Ethernet, and NDR is not an Ethernet speed"},
		{[]string{"--speeds", "800G_8X"}, "--speeds 800G_8X: port 1 cannot run it (capability 0x13ff2"},
		{[]string{"--speeds", "400G_4X"}, "--speeds 400G_4X: the cable in port 1 cannot carry it (it carries 100G_4X)"},
		{[]string{"--speeds", "100G_4X,25G", "--link_mode_force"}, "give one speed in --speeds, not 2"},
		{[]string{"--speeds", ","}, "give one or more speeds"},
		{[]string{"--link_mode_force"}, "--link_mode_force goes with --speeds"},
		{[]string{"--speeds", "25G", "--port_state", "UP"}, "make one change at a time"},
	} {
		err := linkRun(a, append([]string{"-d", dev, "--yes"}, c.args...)...)
		if code := cmdutiltest.Code(err); code != cmdutil.ExitUsage || !strings.Contains(err.Error(), c.words) {
			t.Errorf("%v: exit %d %v; want exit 2 saying %q", c.args, code, err, c.words)
		}
	}
	if after, _, _ := enabled(t, a, dev); after != mask {
		t.Errorf("refused changes moved the enabled speeds from %s to %s", mask, after)
	}
}

// A forced speed on Ethernet: the link runs it with auto-negotiation off,
// read back by `cxray link`; --undo restores the speeds and AN.
func TestSpeedsForceAndUndo(t *testing.T) {
	a := cmdutiltest.New(t, "table")
	dev := cmdutiltest.Manual(t, "")
	mask, an, speed := enabled(t, a, dev)
	if err := linkRun(a, "-d", dev, "--speeds", "100g_2x", "--link_mode_force", "--yes"); err != nil {
		t.Fatalf("force: %v\n%s", err, a.Err)
	}
	for _, w := range []string{"ext_eth_proto_admin          0x00013ff2 (81906) -> 0x00000400 (1024)", "an_disable_admin             0 -> 1", "After         Active; 100G over 2 lanes"} {
		if !strings.Contains(a.Out.String(), w) {
			t.Errorf("output lacks %q:\n%s", w, a.Out)
		}
	}
	got := [3]string{}
	got[0], got[1], got[2] = enabled(t, a, dev)
	if diff := cmp.Diff([3]string{"0x00000400", "FORCE", "100G"}, got); diff != "" {
		t.Errorf("after --speeds 100G_2X --link_mode_force (-want +got):\n%s", diff)
	}
	if err := linkRun(a, "-d", dev, "--undo", "--yes"); err != nil {
		t.Fatalf("undo: %v", err)
	}
	got[0], got[1], got[2] = enabled(t, a, dev)
	if diff := cmp.Diff([3]string{mask, an, speed}, got); diff != "" {
		t.Errorf("after --undo (-want +got):\n%s", diff)
	}
}

// On an InfiniBand port --speeds HDR enables HDR and SDR (as mlxlink) and
// the link comes up at HDR; with a partner that stops at HDR, forcing NDR
// keeps the link down: exit 1, the write verified.
func TestSpeedsIB(t *testing.T) {
	a := cmdutiltest.New(t, "json")
	dev := cmdutiltest.Scenario(t, "clock: {mode: manual}\ndevices:\n  - profile: cx7-1p-ndr\n")
	if err := linkRun(a, "-d", dev, "--speeds", "IB-HDR", "--yes"); err != nil {
		t.Fatalf("HDR: %v\n%s", err, a.Err)
	}
	var d changeJSON
	cmdutiltest.JSON(t, a.Out.String(), &d)
	if d.After.Speed != "IB-HDR" || d.After.Enabled == nil || d.After.Enabled.Mask != "0x0041" {
		t.Errorf("after --speeds HDR: speed %q, enabled %+v; want IB-HDR, 0x0041 (HDR, SDR)", d.After.Speed, d.After.Enabled)
	}
	if !strings.HasPrefix(d.Change.UndoFlags, "--speeds NDR,HDR,EDR") {
		t.Errorf("undo flags %q", d.Change.UndoFlags)
	}
	slow := cmdutiltest.Scenario(t, "clock: {mode: manual}\ndevices:\n  - profile: cx7-1p-ndr\n    ports:\n      - port: 1\n        ib: {partner_speeds: [HDR, EDR]}\n")
	err := linkRun(a, "-d", slow, "--speeds", "NDR", "--link_mode_force", "--yes", "--wait", "2s")
	cmdutiltest.JSON(t, a.Out.String(), &d)
	if cmdutiltest.Code(err) != cmdutil.ExitProblem || len(d.Verified) != 1 || !strings.Contains(d.Problem, "the link is not up") {
		t.Errorf("NDR forced against an HDR partner: %v, verified %v, problem %q; want exit 1, verified, the link not up", err, d.Verified, d.Problem)
	}
}

// fecAdmin reads PPLM's override of a speed group through `cxray link
// --counters`.
func fecAdmin(t *testing.T, a *cmdutiltest.App, dev, group string) string {
	t.Helper()
	a.Output = "json"
	defer func() { a.Output = "table" }()
	if err := linkRun(a, "-d", dev, "--counters"); cmdutiltest.Code(err) > 1 {
		t.Fatalf("link: %v", err)
	}
	l := decode(t, a.Out.String()).Links[0]
	if l.FEC != nil {
		for _, s := range l.FEC.PerSpeed {
			if s.Speed == group {
				return s.Admin
			}
		}
	}
	t.Fatalf("no FEC per speed for %s", group)
	return ""
}

// A FEC the port does not support at the speed, a speed without FEC
// choice or unknown, an InfiniBand port and a down port without
// --fec_speed are exit 2 with the reason, and nothing is written.
func TestFECRefused(t *testing.T) {
	a := cmdutiltest.New(t, "table")
	dev := cmdutiltest.Manual(t, "    faults:\n      link_down: [2]\n")
	ib := cmdutiltest.Scenario(t, "clock: {mode: manual}\ndevices:\n  - profile: cx7-1p-ndr\n")
	before := fecAdmin(t, a, dev, "400g_4x")
	for _, c := range []struct {
		dev   string
		args  []string
		words string
	}{
		{dev, []string{"--fec", "FC"}, "--fec FC: port 1 does not support it at 400g_4x (PPLM capability 0x80: AU, RS)"},
		{dev, []string{"--fec", "XX", "--fec_speed", "25g"}, "--fec XX: not a FEC; give one of AU, NF, FC, RS"},
		{dev, []string{"--fec", "RS", "--fec_speed", "800g_8x"}, "--fec_speed 800g_8x: port 1 has no FEC choice at that speed"},
		{dev, []string{"--fec", "RS", "--fec_speed", "7g"}, "--fec_speed 7g: not a speed PPLM configures FEC for; give one of 100g"},
		{dev, []string{"--port", "2", "--fec", "RS"}, "port 2 is down; say which speed the FEC is for with --fec_speed"},
		{dev, []string{"--fec_speed", "25g"}, "--fec_speed goes with --fec"},
		{ib, []string{"--fec", "RS"}, "port 1 runs InfiniBand, whose FEC follows its speed"},
	} {
		err := linkRun(a, append([]string{"-d", c.dev, "--yes"}, c.args...)...)
		if code := cmdutiltest.Code(err); code != cmdutil.ExitUsage || !strings.Contains(err.Error(), c.words) {
			t.Errorf("%v: exit %d %v; want exit 2 saying %q", c.args, code, err, c.words)
		}
	}
	if after := fecAdmin(t, a, dev, "400g_4x"); after != before {
		t.Errorf("refused changes moved the 400g_4x override from %q to %q", before, after)
	}
}

// A partner that forces no FEC keeps a 100G link down (FEC mismatch):
// --fec NF at 100g brings it up, read back by `cxray link` (no verdict,
// FEC none); --undo puts the mismatch back (exit 1, fec_mismatch).
func TestFECMismatchFixed(t *testing.T) {
	a := cmdutiltest.New(t, "json")
	dev := "emu:../../../examples/link-trouble.yaml@0000:04:00.1"
	if err := linkRun(a, "-d", dev); cmdutiltest.Code(err) != cmdutil.ExitProblem {
		t.Fatalf("the planted FEC mismatch: %v", err)
	}
	if err := linkRun(a, "-d", dev, "--fec", "nf", "--fec_speed", "100G", "--yes"); err != nil {
		t.Fatalf("--fec NF: %v\n%s", err, a.Err)
	}
	var d changeJSON
	cmdutiltest.JSON(t, a.Out.String(), &d)
	if d.After.OperStatus != "up" || d.Change.UndoFlags != "--fec AU --fec_speed 100g" {
		t.Errorf("after --fec NF: oper %q, undo %q", d.After.OperStatus, d.Change.UndoFlags)
	}
	if err := linkRun(a, "-d", dev); err != nil {
		t.Errorf("link after the fix: %v", err)
	}
	l := decode(t, a.Out.String()).Links[0]
	if l.FEC == nil || l.FEC.Active != "No FEC" || len(l.Verdicts) != 0 {
		t.Errorf("after the fix: FEC %+v, verdicts %+v", l.FEC, l.Verdicts)
	}
	if err := linkRun(a, "-d", dev, "--undo", "--yes"); err != nil {
		t.Fatalf("undo: %v", err)
	}
	err := linkRun(a, "-d", dev)
	if v := verdicts(decode(t, a.Out.String())); cmdutiltest.Code(err) != cmdutil.ExitProblem || !strings.Contains(strings.Join(v[1], ","), "fec_mismatch") {
		t.Errorf("after --undo: %v, verdicts %v; want exit 1, fec_mismatch", err, v)
	}
}

// --loopback PH on a port whose partner is gone brings the link up by
// itself (the host side is sound) and `cxray link` says the port is in
// loopback (exit 1, loopback_active); --loopback NO puts it back down
// (link_down). A mode PPLR does not list, or an unknown name, is exit 2.
func TestLoopback(t *testing.T) {
	a := cmdutiltest.New(t, "json")
	dev := cmdutiltest.Manual(t, "    faults:\n      link_down: [1]\n")
	for _, c := range []struct{ mode, words string }{
		{"LL", "--loopback LL: port 1 does not support it (PPLR lb_cap 0x7: NO, RM, PH, EX)"},
		{"XX", `--loopback "XX": give NO, RM (PHY remote), PH (PHY local), EX (external) or LL`},
	} {
		err := linkRun(a, "-d", dev, "--loopback", c.mode, "--yes")
		if cmdutiltest.Code(err) != cmdutil.ExitUsage || !strings.Contains(err.Error(), c.words) {
			t.Errorf("--loopback %s: %v; want exit 2 saying %q", c.mode, err, c.words)
		}
	}
	if err := linkRun(a, "-d", dev, "--loopback", "ph", "--yes"); err != nil {
		t.Fatalf("PH: %v\n%s", err, a.Err)
	}
	var d changeJSON
	cmdutiltest.JSON(t, a.Out.String(), &d)
	if d.After.OperStatus != "up" || d.After.Loopback != "PHY Local Loopback" || d.Change.UndoFlags != "--loopback NO" {
		t.Errorf("after PH: oper %q, loopback %q, undo %q", d.After.OperStatus, d.After.Loopback, d.Change.UndoFlags)
	}
	check := func(want string) {
		t.Helper()
		err := linkRun(a, "-d", dev)
		if v := verdicts(decode(t, a.Out.String())); cmdutiltest.Code(err) != cmdutil.ExitProblem || !strings.Contains(strings.Join(v[1], ","), want) {
			t.Errorf("link: %v, verdicts %v; want exit 1 with %s", err, v, want)
		}
	}
	check("loopback_active")
	if err := linkRun(a, "-d", dev, "--loopback", "NO", "--yes"); err != nil {
		t.Fatalf("NO: %v", err)
	}
	check("link_down")
}

// --cable --read reads the module's bytes (the vendor name of a CMIS
// module at page 0 bytes 129..144) in hex and ASCII, the same in JSON;
// --cable --dump prints the pages; bad ranges and mixed flags are exit 2.
func TestCable(t *testing.T) {
	a := cmdutiltest.New(t, "table")
	dev := cmdutiltest.Manual(t, "")
	if err := linkRun(a, "-d", dev, "--cable", "--read", "--offset", "129", "--length", "16"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(a.Out.String(), "CXRAY EMULATED") || !strings.Contains(a.Out.String(), "0x81: 43 58 52 41 59") {
		t.Errorf("--cable --read:\n%s", a.Out)
	}
	a.Output = "json"
	if err := linkRun(a, "-d", dev, "--cable", "--read", "--offset", "129", "--length", "16"); err != nil {
		t.Fatal(err)
	}
	var d struct {
		Bytes []string `json:"bytes"`
		ASCII string   `json:"ascii"`
	}
	cmdutiltest.JSON(t, a.Out.String(), &d)
	if len(d.Bytes) != 16 || d.Bytes[0] != "0x43" || d.ASCII != "CXRAY EMULATED  " {
		t.Errorf("JSON read: %+v", d)
	}
	a.Output = "table"
	if err := linkRun(a, "-d", dev, "--cable", "--dump"); err != nil || !strings.Contains(a.Out.String(), "page 00h lower") {
		t.Errorf("--cable --dump: %v\n%.300s", err, a.Out)
	}
	for _, c := range []struct {
		args  []string
		words string
	}{
		{[]string{"--cable"}, "give --dump, --read or --write"},
		{[]string{"--dump"}, "go with --cable"},
		{[]string{"--cable", "--dump", "--page", "1"}, "--dump reads every page"},
		{[]string{"--cable", "--read", "--offset", "250", "--length", "10"}, "give 1..6 bytes"},
		{[]string{"--cable", "--read", "--page", "256"}, "each is 0..255"},
		{[]string{"--cable", "--read", "--all"}, "--all is not for --cable"},
	} {
		err := linkRun(a, append([]string{"-d", dev}, c.args...)...)
		if cmdutiltest.Code(err) != cmdutil.ExitUsage || !strings.Contains(err.Error(), c.words) {
			t.Errorf("%v: %v; want exit 2 saying %q", c.args, err, c.words)
		}
	}
}
