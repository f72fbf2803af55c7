package emuadapter

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev/devname"
	"github.com/cxray/cxray/emu/fw"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/emu/state"
	"github.com/cxray/cxray/emu/sysfs"
	"github.com/cxray/cxray/internal/clock"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/builtin"
)

func private(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("XDG_STATE_HOME", dir)
	t.Setenv(EnvState, "")
	return filepath.Join(dir, "cxray", "emu")
}

func openOne(t *testing.T, e *Emulator, name string) *adapter.Adapter {
	t.Helper()
	n, err := devname.Default.Parse(name)
	if err != nil {
		t.Fatal(err)
	}
	db, _ := builtin.Load()
	as, err := e.OpenEmulated(context.Background(), n, false, adapter.Options{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { adapter.CloseAll(as) })
	return as[0]
}

func paosDown(t *testing.T, ad *adapter.Adapter) {
	t.Helper()
	ctx := context.Background()
	d, err := ad.Registers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := d.DB.Register("PAOS")
	p, _ := d.DB.RegisterPlan(r)
	buf := p.NewBuffer()
	if err := p.Encode(buf, []prm.Assignment{{Path: "local_port", Value: "1"}, {Path: "admin_status", Value: "down_by_configuration"}, {Path: "ase", Value: "1"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.SetRaw(ctx, uint16(r.ID), buf); err != nil {
		t.Fatal(err)
	}
}

func operState(t *testing.T, ad *adapter.Adapter) string {
	t.Helper()
	o, err := ad.OS(context.Background())
	if err != nil || len(o.Netdevs) != 1 {
		t.Fatalf("OS: %+v, %v", o, err)
	}
	return o.Netdevs[0].OperState
}

// The zero Emulator keeps the device: a write through one adapter shows in
// another's OS view (read up to date), and after both are closed. Fresh
// and a test's own clock keep nothing.
func TestEmulatorKeepsState(t *testing.T) {
	dir := private(t)
	a := openOne(t, &Emulator{}, "emu")
	b := openOne(t, &Emulator{}, "emu:cx7-2p400g")
	if operState(t, b) != "up" {
		t.Fatal("not up at power-on")
	}
	paosDown(t, a)
	if got := operState(t, b); got != "down" {
		t.Errorf("the other adapter's interface is %s after the write", got)
	}
	a.Close()
	b.Close()
	if got := operState(t, openOne(t, &Emulator{}, "emu")); got != "down" {
		t.Errorf("reopened: %s", got)
	}
	if got := operState(t, openOne(t, &Emulator{Fresh: true}, "emu")); got != "up" {
		t.Errorf("Fresh: %s", got)
	}
	clk := clock.NewManual(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
	own := openOne(t, &Emulator{Build: scenario.Options{Clock: clk}}, "emu")
	if got := operState(t, own); got != "up" {
		t.Errorf("own clock: %s", got)
	}
	paosDown(t, own)
	infos, err := state.List(dir)
	if err != nil || len(infos) != 1 || infos[0].Records != 1 {
		t.Errorf("states: %+v %v", infos, err)
	}
	t.Setenv(EnvState, state.Off)
	if KeepsState() {
		t.Error("KeepsState with the state off")
	}
	if got := operState(t, openOne(t, &Emulator{}, "emu")); got != "up" {
		t.Errorf("state off: %s", got)
	}
}

// What emu run serves as /sys/class: the interface and the RDMA device
// with their attributes, following the device.
func TestSysfsEntries(t *testing.T) {
	clk := clock.NewManual(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
	e, err := scenario.Resolve("emu:../../examples/two-adapters.yaml", scenario.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	entries := SysfsEntries(e, nil)
	if len(entries) != len(e.Functions()) {
		t.Fatalf("%d entries for %d functions", len(entries), len(e.Functions()))
	}
	read := func(a map[string]sysfs.Attr, name string) string {
		t.Helper()
		f := a[name]
		if f == nil {
			t.Fatalf("no attribute %s", name)
		}
		s, err := f()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return strings.TrimSuffix(s, "\n")
	}
	type guids struct{ Node, Sys string }
	gotGUIDs := map[string]guids{}
	for i, f := range e.Functions() {
		en := entries[i]
		if f.RDMA != "" {
			gotGUIDs[f.BDF] = guids{read(en.ClassAttrs[f.RDMA], "node_guid"), read(en.ClassAttrs[f.RDMA], "sys_image_guid")}
		}
		if en.BDF != f.BDF || en.Driver != "mlx5_core" {
			t.Errorf("entry %d: %+v", i, en)
		}
		if f.Netdev != "" {
			na := en.ClassAttrs[f.Netdev]
			if got := read(na, "address"); got != OSMAC(f) {
				t.Errorf("%s address %s, want %s", f.Netdev, got, OSMAC(f))
			}
			wantAssign := "0"
			if OSMAC(f) != PermanentMAC(f) {
				wantAssign = "3"
			}
			if got := read(na, "addr_assign_type"); got != wantAssign {
				t.Errorf("%s addr_assign_type %s", f.Netdev, got)
			}
		}
		if f.RDMA == "" {
			continue
		}
		ra := en.ClassAttrs[f.RDMA]
		spec := f.Adapter.Firmware.Spec()
		if got := read(ra, "fw_ver"); got != fmt.Sprintf("%d.%d.%d", spec.FW.Major, spec.FW.Minor, spec.FW.SubMinor) {
			t.Errorf("%s fw_ver %s", f.RDMA, got)
		}
		if got := read(ra, "board_id"); got != spec.PSID {
			t.Errorf("%s board_id %s", f.RDMA, got)
		}
		st, _ := ownPort(f)
		wantState := "1: DOWN"
		if st.OperUp {
			wantState = "4: ACTIVE"
		}
		if got := read(ra, "ports/1/state"); got != wantState {
			t.Errorf("%s state %s, want %s", f.RDMA, got, wantState)
		}
		before, _ := strconv.ParseUint(read(ra, "ports/1/hw_counters/rx_write_requests"), 10, 64)
		clk.Advance(time.Minute)
		after, _ := strconv.ParseUint(read(ra, "ports/1/hw_counters/rx_write_requests"), 10, 64)
		if st.OperUp && after <= before {
			t.Errorf("%s rx_write_requests %d then %d a minute later", f.RDMA, before, after)
		}
		// One RDMA port per local port the function owns, and no more.
		n := len(f.View.Ports())
		for p := 1; p <= n+1; p++ {
			_, has := ra[fmt.Sprintf("ports/%d/hw_counters/out_of_sequence", p)]
			if has != (p <= n) {
				t.Errorf("%s owns %d ports; ports/%d present: %v", f.RDMA, n, p, has)
			}
		}
	}
	// Each PF has its own node GUID; the system image GUID is the
	// adapter's (examples/two-adapters.yaml gives the first one's base).
	if d := cmp.Diff(guids{"b83f:d203:00a1:b2c0", "b83f:d203:00a1:b2c0"}, gotGUIDs["0000:03:00.0"]); d != "" {
		t.Errorf("0000:03:00.0 GUIDs (-want +got):\n%s", d)
	}
	if d := cmp.Diff(guids{"b83f:d203:00a1:b2c1", "b83f:d203:00a1:b2c0"}, gotGUIDs["0000:03:00.1"]); d != "" {
		t.Errorf("0000:03:00.1 GUIDs (-want +got):\n%s", d)
	}
	nodes := map[string]string{}
	for bdf, g := range gotGUIDs {
		if other, dup := nodes[g.Node]; dup {
			t.Errorf("%s and %s share node GUID %s", bdf, other, g.Node)
		}
		nodes[g.Node] = bdf
	}
	// The state follows the device: take port 1 of the first function down.
	f := e.Functions()[0]
	if err := f.Adapter.Firmware.SetPortAdmin(f.View.Ports()[0], false); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ dev, attr, want string }{
		{f.RDMA, "ports/1/state", "1: DOWN"}, {f.RDMA, "ports/1/phys_state", "3: Disabled"},
		{f.RDMA, "ports/1/rate", "2.5 Gb/sec (1X)"}, {f.Netdev, "operstate", "down"},
	} {
		if c.dev == "" {
			continue
		}
		if got, _ := entries[0].ClassAttrs[c.dev][c.attr](); got != c.want+"\n" {
			t.Errorf("%s %s after admin down: %q, want %q", c.dev, c.attr, got, c.want)
		}
	}
}

func TestRateText(t *testing.T) {
	for proto, want := range map[string]string{
		"400GAUI-4": "400 Gb/sec (4X NDR)", "200GAUI-4": "200 Gb/sec (4X HDR)", "CAUI-4": "100 Gb/sec (4X EDR)",
		"100GAUI-2": "100 Gb/sec (2X HDR)", "25GAUI-1": "25 Gb/sec (1X EDR)", "10GBASE-R": "10 Gb/sec (1X QDR)",
		"40GBASE-R4": "40 Gb/sec (4X QDR)", "1000BASE-X": "2.5 Gb/sec (1X)",
	} {
		if got := rateText(fw.PortStatus{OperUp: true, Protocol: proto}); got != want {
			t.Errorf("%s: %q, want %q", proto, got, want)
		}
	}
	if got := rateText(fw.PortStatus{}); got != "2.5 Gb/sec (1X)" {
		t.Errorf("down: %q", got)
	}
}

// The InfiniBand functions of the GPU node as sysfs shows them: IB
// link layer, logical and physical states, the rate of the width the link
// trained at, the LIDs, PMA counters that move with the planted symbol
// errors, an IPoIB interface, the NUMA node of the slot; the Ethernet
// front end keeps its Ethernet view.
func TestSysfsInfiniBand(t *testing.T) {
	clk := clock.NewManual(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
	e, err := scenario.Resolve("emu:../../examples/gpu-node.yaml", scenario.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	entries := map[string]sysfs.DeviceEntry{}
	for _, en := range SysfsEntries(e, nil) {
		entries[en.BDF] = en
	}
	read := func(bdf, dev, attr string) string {
		t.Helper()
		a := entries[bdf].ClassAttrs[dev][attr]
		if a == nil {
			t.Fatalf("%s %s has no %s", bdf, dev, attr)
		}
		s, err := a()
		if err != nil {
			t.Fatalf("%s %s: %v", dev, attr, err)
		}
		return strings.TrimSuffix(s, "\n")
	}
	got := map[string]string{}
	for _, a := range []string{"link_layer", "state", "phys_state", "rate", "lid", "sm_lid"} {
		got[a] = read("0000:5e:00.0", "mlx5_3", "ports/1/"+a)
	}
	want := map[string]string{"link_layer": "InfiniBand", "state": "4: ACTIVE", "phys_state": "5: LinkUp",
		"rate": "200 Gb/sec (2X NDR)", "lid": "0x24", "sm_lid": "0x1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mlx5_3 port 1 (-want +got):\n%s", diff)
	}
	if got := read("0000:18:00.0", "mlx5_0", "ports/1/rate"); got != "400 Gb/sec (4X NDR)" {
		t.Errorf("mlx5_0 rate %q, want 400 Gb/sec (4X NDR)", got)
	}
	before, _ := strconv.ParseUint(read("0000:c0:00.0", "mlx5_5", "ports/1/counters/symbol_error"), 10, 64)
	clk.Advance(10 * time.Second)
	after, _ := strconv.ParseUint(read("0000:c0:00.0", "mlx5_5", "ports/1/counters/symbol_error"), 10, 64)
	if d := after - before; d < 30 || d > 50 {
		t.Errorf("mlx5_5 symbol_error moved %d in 10 s, want about 40 (4/s)", d)
	}
	if n := read("0000:18:00.0", "mlx5_0", "ports/1/counters/symbol_error"); n != "0" {
		t.Errorf("mlx5_0 symbol_error %s, want 0", n)
	}
	if d, _ := strconv.ParseUint(read("0000:18:00.0", "mlx5_0", "ports/1/counters/port_xmit_data"), 10, 64); d == 0 {
		t.Error("mlx5_0 port_xmit_data is 0 after ten seconds of traffic")
	}
	if typ, addr := read("0000:18:00.0", "ibp24s0", "type"), read("0000:18:00.0", "ibp24s0", "address"); typ != "32" || len(addr) != 59 {
		t.Errorf("ibp24s0: type %s, address %q; want 32 (ARPHRD_INFINIBAND) and a 20-byte address", typ, addr)
	}
	if n := entries["0000:9a:00.0"].NUMANode; n != 1 {
		t.Errorf("0000:9a:00.0 NUMA node %d, want 1", n)
	}
	if l := read("0000:29:00.1", "mlx5_9", "ports/1/link_layer"); l != "Ethernet" {
		t.Errorf("front end link layer %q", l)
	}
}
