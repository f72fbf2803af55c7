package scenario_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cxray/cxray/emu"
	"github.com/cxray/cxray/emu/fw"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/internal/clock"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/builtin"
)

func TestProfiles(t *testing.T) {
	want := map[string][3]uint16{ // PCI device, hardware ID, ports
		"cx7-2p400g":   {0x1021, 0x218, 2},
		"cx6dx-2p100g": {0x101d, 0x212, 2},
		"cx7-1p-ndr":   {0x1021, 0x218, 1},
	}
	for name, w := range want {
		p, err := scenario.LookupProfile(name)
		if err != nil {
			t.Fatal(err)
		}
		if p.Spec.PCIDeviceID != w[0] || p.Spec.HWDevID != w[1] || len(p.Spec.Ports) != int(w[2]) || p.Identity.VendorID != 0x15b3 {
			t.Errorf("%s: %+v", name, p.Spec)
		}
		if err := p.Spec.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := scenario.LookupProfile("cx9"); err == nil || !strings.Contains(err.Error(), "cx7-2p400g") {
		t.Errorf("unknown profile: %v", err)
	}
	// A profile is a copy: changing it does not change the next lookup.
	p, _ := scenario.LookupProfile("cx7-2p400g")
	p.Spec.Ports[0].Lanes = 1
	if q, _ := scenario.LookupProfile("cx7-2p400g"); q.Spec.Ports[0].Lanes != 4 {
		t.Error("profiles share state")
	}
}

func TestParseExamples(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.yaml")
	if len(files) < 3 {
		t.Fatalf("examples: %v", files)
	}
	for _, f := range files {
		sc, err := scenario.Load(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if _, err := scenario.Build(sc, scenario.Options{Strict: true}); err != nil {
			t.Errorf("%s: build: %v", f, err)
		}
	}
}

func TestTwoAdapters(t *testing.T) {
	sc, err := scenario.Load("testdata/two-adapters.yaml")
	if err != nil {
		t.Fatal(err)
	}
	e, err := scenario.Build(sc, scenario.Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	if e.Manual == nil || !e.Manual.Now().Equal(time.Date(2024, 5, 1, 8, 0, 0, 0, time.UTC)) {
		t.Fatalf("manual clock: %v", e.Manual)
	}
	var got []string
	for _, f := range e.Functions() {
		got = append(got, f.BDF+" "+f.Netdev+" "+f.RDMA)
	}
	want := []string{"0000:03:00.0 ens1f0np0 mlx5_0", "0000:03:00.1 ens1f1np1 mlx5_1",
		"0000:04:00.0 ens2f0np0 mlx5_2", "0000:04:00.1 ens2f1np1 mlx5_3"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("functions:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Both functions of an adapter share its firmware.
	a := e.Adapters[0]
	if a.Functions[0].Adapter.Firmware != a.Functions[1].Adapter.Firmware {
		t.Error("functions do not share firmware")
	}
	s := a.Firmware.Spec()
	if s.PendingFW == nil || s.PendingFW.String() != "28.40.1000" || s.BaseMAC != 0xb83fd2a1b2c0 || s.BaseGUID != 0xb83fd20300a1b2c0 {
		t.Errorf("overrides: pending %v mac %x guid %x", s.PendingFW, s.BaseMAC, s.BaseGUID)
	}
	if s.Ports[1].Traffic.FrameBytes != 4096 || s.Ports[1].Traffic.RxFramesPerSec == 0 {
		t.Errorf("port 2 traffic not merged over the profile's: %+v", s.Ports[1].Traffic)
	}
	f, err := e.Function("04:00.1")
	if err != nil || f.Adapter.Profile != "cx6dx-2p100g" {
		t.Fatalf("Function(04:00.1): %v", err)
	}
	if id := f.Device.Identity(); id.DeviceID != 0x101d || id.HardwareID != 0x212 || id.FWMajor != 22 {
		t.Errorf("cx6dx identity %+v", id)
	}
	if ms, _ := f.Adapter.Firmware.ModuleStatus(1); ms.Error != "High_Temperature" {
		t.Errorf("module 1: %+v", ms)
	}
	ports := f.Adapter.Firmware.Ports()
	if ports[0].OperUp || ports[1].OperUp {
		t.Errorf("cx6dx port 1 (link_down) and 2 (module error) should be down: %+v", ports)
	}
	if fl := f.Device.Faults(); fl.RegisterStatus[0x9014] != fw.StatusResourceNotAvail {
		t.Errorf("device faults %+v", fl)
	}
	if f, err := e.Function("mlx5_1"); err != nil || !slices.Equal(f.View.Ports(), []int{2}) {
		t.Errorf("mlx5_1: %v", err)
	}
	if f, _ := e.Function("mlx5_0"); !slices.Equal(f.View.Ports(), []int{1}) {
		t.Errorf("mlx5_0 reaches %v", f.View.Ports())
	}
	// A lone function reaches every port: its own first.
	single, _ := scenario.Resolve("emu", scenario.Options{})
	if ps := single.Functions()[0].View.Ports(); !slices.Equal(ps, []int{1, 2}) {
		t.Errorf("single function reaches %v", ps)
	}
	if _, err := e.Function("05:00.0"); err == nil || !strings.Contains(err.Error(), "0000:03:00.0") {
		t.Errorf("unknown function: %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, want string
		line             int
	}{
		{"unknown key", "devices:\n  - profile: cx7-2p400g\n    prfile: x\n", `unknown key "prfile" in devices[0]; did you mean "profile"?`, 3},
		{"unknown top key", "device: []\n", `unknown key "device" in the scenario; did you mean "devices"?`, 1},
		{"no devices", "seed: 3\n", "no devices", 1},
		{"empty devices", "devices: []\n", "devices is empty", 1},
		{"bad profile", "devices:\n  - profile: cx5\n", `unknown emulator profile "cx5"`, 2},
		{"bad version", "devices:\n  - firmware:\n      version: 28.39\n", "major.minor.sub_minor", 3},
		{"bad psid", "devices:\n  - firmware: {psid: MT_00000000000000834}\n", "at most 16", 2},
		{"bad mac", "devices:\n  - base_mac: b8:3f:d2\n", "base_mac", 2},
		{"bad bdf", "devices:\n  - bdf: 03:20.0\n", "device \"20\" is not hex 00..1f", 2},
		{"dup bdf", "devices:\n  - bdf: 03:00.0\n  - bdf: 03:00.0\n", "BDF 0000:03:00.0 is used by", 3},
		{"too many functions", "devices:\n  - bdf: 03:00.6\n    functions: 3\n", "past function 7", 2},
		{"bad port", "devices:\n  - ports:\n      - port: 3\n", "must be a whole number 1..2", 3},
		{"port without number", "devices:\n  - ports:\n      - admin: down\n", "port: N", 3},
		{"bad admin", "devices:\n  - ports:\n      - {port: 1, admin: sideways}\n", "admin must be up or down", 3},
		{"bad protocol", "devices:\n  - ports:\n      - {port: 1, protocols: [800GAUI-8]}\n", "unknown Ethernet protocol", 3},
		{"protocol too wide", "devices:\n  - ports:\n      - {port: 1, protocols: [400GAUI-8]}\n", "needs 8 lanes", 2},
		{"bad share", "devices:\n  - ports:\n      - {port: 1, traffic: {multicast_share: 2}}\n", "must be a number 0..1", 3},
		{"bad module error", "devices:\n  - modules:\n      - {module: 0, error: on_fire}\n", "not a PMAOS error_type; use one of Power_Budget_Exceeded", 3},
		{"error in empty cage", "devices:\n  - modules:\n      - {module: 0, plugged: false, error: bad_cable}\n", "empty cage", 3},
		{"bad register", "devices:\n  - faults:\n      unsupported: [PAOZ]\n", `no register "PAOZ"`, 3},
		{"bad status", "devices:\n  - faults:\n      register_status: {PAOS: nope}\n", "not an access-register status", 3},
		{"bad method", "devices:\n  - faults:\n      status: [{register: PAOS, method: put, status: 7}]\n", "method must be get, set or any", 3},
		{"incomplete status", "devices:\n  - faults:\n      status: [{register: PAOS}]\n", "needs register: and status:", 3},
		{"bad duration", "devices:\n  - faults: {slow_icmd: fast}\n", "must be a duration", 2},
		{"bad bool", "devices:\n  - faults: {removed: maybe}\n", "must be true or false", 2},
		{"link down port", "devices:\n  - faults: {link_down: [0]}\n", "must be a whole number 1..2", 2},
		{"bad clock", "clock: {mode: warp}\ndevices: [{}]\n", "clock.mode must be real", 1},
		{"bad time", "clock: {start: yesterday}\ndevices: [{}]\n", "clock.start must be a time", 1},
		{"duplicate key", "devices:\n  - profile: cx7-2p400g\n    profile: cx6dx-2p100g\n", "given twice", 3},
		{"alias", "x: &a 1\ndevices:\n  - seed: *a\n", "aliases", 3},
		{"not yaml", "devices: [\n", "not valid YAML", 0},
		{"two docs", "devices: [{}]\n---\ndevices: [{}]\n", "second YAML document", 0},
		{"wrong kind", "devices: {profile: cx7-2p400g}\n", "devices must be a list", 1},
		{"bad netdev", "devices:\n  - functions: [{netdev: a/b}]\n", "without '/'", 2},
		{"dup netdev", "devices:\n  - functions: [{netdev: eth0}, {netdev: eth0}]\n", "netdev eth0 is used by", 2},
		{"bad roce", "devices:\n  - roce: {supported: [warp]}\n", `"warp" is not a ROCE_ACCL feature`, 2},
		{"roce not supported", "devices:\n  - roce: {supported: [roce_tx_window], enabled: [roce_adp_retrans]}\n", "enabled but not supported", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := scenario.Parse([]byte(tc.yaml), "s.yaml")
			if err == nil {
				t.Fatalf("accepted:\n%s", tc.yaml)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not say %q", err, tc.want)
			}
			var es scenario.Errors
			if tc.line > 0 {
				if !errors.As(err, &es) {
					t.Fatalf("not an Errors list: %T", err)
				}
				found := false
				for _, e := range es {
					if strings.Contains(e.Error(), tc.want) {
						found = true
						if e.Line != tc.line {
							t.Errorf("line %d, want %d: %v", e.Line, tc.line, e)
						}
						if !strings.HasPrefix(e.Error(), "s.yaml:") {
							t.Errorf("error does not name the file: %v", e)
						}
					}
				}
				if !found {
					t.Errorf("no single error says %q: %v", tc.want, err)
				}
			}
		})
	}
}

func TestDefaultsAndSeeds(t *testing.T) {
	a, _ := scenario.Parse([]byte("seed: 5\ndevices: [{}, {profile: cx6dx-2p100g}]\n"), "a.yaml")
	b, _ := scenario.Parse([]byte("devices: [{}, {profile: cx6dx-2p100g}]\nseed: 5\n"), "b.yaml")
	c, _ := scenario.Parse([]byte("seed: 6\ndevices: [{}, {profile: cx6dx-2p100g}]\n"), "c.yaml")
	if a == nil || b == nil || c == nil {
		t.Fatal("parse failed")
	}
	for i := range a.Devices {
		da, db := a.Devices[i].Spec, b.Devices[i].Spec
		if da.Seed != db.Seed || da.BaseMAC != db.BaseMAC || da.SerialNumber != db.SerialNumber {
			t.Errorf("device %d: seed order changes defaults: %x/%x", i, da.BaseMAC, db.BaseMAC)
		}
		if da.BaseMAC == c.Devices[i].Spec.BaseMAC {
			t.Errorf("device %d: another seed gives the same MAC", i)
		}
		if da.BaseMAC>>24 != 0xb83fd2 || da.BaseMAC&7 != 0 {
			t.Errorf("device %d: MAC %x", i, da.BaseMAC)
		}
		if !strings.HasPrefix(da.SerialNumber, "MT") || len(da.SerialNumber) != 12 {
			t.Errorf("serial %q", da.SerialNumber)
		}
	}
	if a.Devices[0].Spec.BaseMAC == a.Devices[1].Spec.BaseMAC {
		t.Error("two devices share a MAC")
	}
	if f := a.Devices[1].Functions[0]; f.BDF != "0000:04:00.0" || f.Netdev != "ens2f0np0" || f.RDMA != "mlx5_1" {
		t.Errorf("second device defaults: %+v", f)
	}
}

func TestResolve(t *testing.T) {
	e, err := scenario.Resolve("emu", scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fs := e.Functions()
	if len(fs) != 1 || fs[0].BDF != "0000:03:00.0" || fs[0].Adapter.Profile != scenario.DefaultProfile || e.Manual != nil {
		t.Fatalf("emu: %+v", fs)
	}
	if e, err := scenario.Resolve("emu:cx6dx-2p100g", scenario.Options{}); err != nil || e.Adapters[0].Firmware.Spec().HWDevID != 0x212 {
		t.Fatalf("emu:cx6dx-2p100g: %v", err)
	}
	if e, err := scenario.Resolve("emu:testdata/two-adapters.yaml", scenario.Options{}); err != nil || len(e.Functions()) != 4 {
		t.Fatalf("emu:FILE: %v", err)
	}
	for name, want := range map[string]string{
		"emu:":               "names nothing",
		"emu:cx99":           "unknown emulator profile",
		"emu:missing.yaml":   "no such file",
		"pciconf-03:00.0":    "not an emulator name",
		"emu:testdata/x.yml": "no such file",
	} {
		if _, err := scenario.Resolve(name, scenario.Options{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v (want %q)", name, err, want)
		}
	}
	if !scenario.IsEmulatorName("emu") || !scenario.IsEmulatorName("emu:x.yaml") || scenario.IsEmulatorName("emulex0") {
		t.Error("IsEmulatorName")
	}
	// A scenario file found by name without a .yaml extension.
	dir := t.TempDir()
	p := filepath.Join(dir, "lab.scn")
	os.WriteFile(p, []byte("devices: [{profile: cx6dx-2p100g}]\n"), 0o644)
	if _, err := scenario.Resolve("emu:"+p, scenario.Options{}); err != nil {
		t.Errorf("path with a separator: %v", err)
	}
}

func TestRealClockRuns(t *testing.T) {
	e, err := scenario.Resolve("emu", scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a := e.Clock.Now()
	time.Sleep(2 * time.Millisecond)
	if !e.Clock.Now().After(a) {
		t.Error("real clock does not move")
	}
}

// The same scenario and seed give byte-identical register replies.
func TestDeterministicBuild(t *testing.T) {
	run := func() []byte {
		clk := clock.NewManual(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
		dev, f, err := scenario.NewDevice("cx7-2p400g", scenario.Options{Clock: clk})
		if err != nil || dev == nil {
			t.Fatal(err)
		}
		db, _ := builtin.Load()
		var out []byte
		for i := 0; i < 10; i++ {
			clk.Advance(13 * time.Second)
			for _, q := range []struct {
				reg string
				as  []prm.Assignment
			}{
				{"MGIR", nil},
				{"MTMP", []prm.Assignment{{Path: "sensor_index", Value: "0"}}},
				{"PPCNT", []prm.Assignment{{Path: "local_port", Value: "2"}, {Path: "grp", Value: "Physical_Layer_Counters"}}},
			} {
				r, _ := db.Register(q.reg)
				p, _ := db.RegisterPlan(r)
				buf := p.NewBuffer()
				p.Encode(buf, q.as)
				reply, st := f.AccessRegister(uint16(r.ID), emu.MethodGet, buf)
				if st != 0 {
					t.Fatalf("%s: status %d", q.reg, st)
				}
				out = append(out, reply...)
			}
		}
		return out
	}
	if !bytes.Equal(run(), run()) {
		t.Error("two builds of the same profile answer differently")
	}
}

// The reference scenario in testdata is the example of the package
// documentation, line for line, so the documented example always parses.
func TestReferenceMatchesDoc(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, l := range strings.Split(string(doc), "\n") {
		if s, ok := strings.CutPrefix(l, "//\t"); ok {
			want = append(want, s)
		}
	}
	ref, err := os.ReadFile("testdata/reference.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimRight(string(ref), "\n"), "\n") {
		if !strings.HasPrefix(l, "# ") {
			got = append(got, l)
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Error("testdata/reference.yaml differs from the example in doc.go; copy the example over")
	}
}
