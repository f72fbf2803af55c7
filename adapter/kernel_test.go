package adapter_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/adapter/adaptertest"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/dev/devname"
	"github.com/cxray/cxray/kernel"
	"github.com/cxray/cxray/kernel/kerneltest"
)

// The kernel backend over kerneltest's two-port ConnectX-7: what sysfs,
// hwmon, devlink and ethtool netlink offer, and "not available on this
// backend" for the rest.

// fn0 is the fixture's first function in its tree.
const fn0 = "devices/pci0000:c0/0000:c0:01.1/0000:c1:00.0"

func TestKernelAdapter(t *testing.T) {
	ctx := context.Background()
	a := adaptertest.Kernel(t, "kernel:mlx5_0", nil)
	if a.Name() != "kernel:mlx5_0" || a.BDF() != "0000:c1:00.0" || a.Backend() != dev.BackendKernel || a.HasRegisters() || a.Kernel() == nil {
		t.Errorf("adapter: %q %q %q registers %v", a.Name(), a.BDF(), a.Backend(), a.HasRegisters())
	}
	id, err := a.Identity(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := &adapter.Identity{Model: "ConnectX-7", DeviceID: 0x1021, HCAType: "MT4129", PSID: "MT_0000000838", Firmware: "28.39.1002",
		FirmwareStored: "28.41.1000", FirmwarePending: "28.41.1000", PermanentMAC: "a0:88:c2:45:67:e2",
		NodeGUID: "a088:c203:0045:67e2", SysImageGUID: "a088:c203:0045:67e2", HWRev: "0x0", NodeDesc: "gpu-node-07 mlx5_0"}
	if d := cmp.Diff(want, id); d != "" {
		t.Errorf("identity (-want +got):\n%s", d)
	}
	os, err := a.OS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantOS := &adapter.OS{Netdevs: []adapter.Netdev{{Name: "ens1f0np0", Address: "02:11:22:33:44:55", PermanentAddress: "a0:88:c2:45:67:e2", OperState: "up"}},
		RDMA: []string{"mlx5_0"}, NUMANode: 1, Driver: "mlx5_core"}
	if d := cmp.Diff(wantOS, os); d != "" {
		t.Errorf("OS (-want +got):\n%s", d)
	}
	ps, err := a.Ports(ctx)
	if d := cmp.Diff([]adapter.Port{{Local: 1, Module: -1, Lanes: 4, Netdev: "ens1f0np0", LinkLayer: "Ethernet"}}, ps); d != "" || err != nil {
		t.Errorf("ports (-want +got):\n%s\nerr %v", d, err)
	}
	ls, err := a.Links(ctx)
	four, five := 4, 5
	wantLinks := []adapter.Link{{Port: 1, AdminUp: bptr(true), OperUp: bptr(true), OperStatus: "LinkUp", SpeedGbps: fptr(400),
		StateID: &four, PhysStateID: &five, State: "ACTIVE", PhysState: "LinkUp", LinkLayer: "Ethernet"}}
	if d := cmp.Diff(wantLinks, ls); d != "" || err != nil {
		t.Errorf("links (-want +got):\n%s\nerr %v", d, err)
	}
	ts, err := a.Temperatures(ctx)
	wantTemps := []adapter.Temperature{
		{Sensor: "asic", Index: -1, Kind: "asic", Module: -1, Celsius: fptr(61.25), Highest: fptr(63.75), High: fptr(105)},
		{Sensor: "sensor64", Index: 64, Kind: "module", Module: 0, Celsius: fptr(44), Highest: fptr(46.125), High: fptr(75)},
	}
	if d := cmp.Diff(wantTemps, ts); d != "" || err != nil {
		t.Errorf("temperatures (-want +got):\n%s\nerr %v", d, err)
	}
	cs, err := a.PortCounters(ctx)
	if err != nil || len(cs) != 1 || cs[0].Port != 1 || cs[0].Kind != "ib" || cs[0].Values["symbol_error"] != 3992 || cs[0].Values["port_rcv_errors"] != 3712 {
		t.Errorf("port counters: %+v %v", cs, err)
	}
	rs, err := a.RDMACounters(ctx)
	if err != nil || len(rs) != 1 || rs[0].Kind != "rdma" || rs[0].Values["rx_write_requests"] != 3999412210 || rs[0].Values["np_cnp_sent"] != 5000000123 {
		t.Errorf("RDMA counters: %+v %v", rs, err)
	}
	// Registers are not: the error says to use direct access to this
	// function.
	_, err = a.Registers(ctx)
	if !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), "not available on the kernel backend") || !strings.Contains(err.Error(), "-d 0000:c1:00.0 as root") {
		t.Errorf("registers: %v", err)
	}
}

// The module EEPROM comes through ethtool netlink, byte for byte; the
// firmware's own view is named as unavailable.
func TestKernelModule(t *testing.T) {
	ctx := context.Background()
	a := adaptertest.Kernel(t, "kernel:mlx5_0", nil)
	ms, err := a.Modules(ctx, adapter.ModuleOptions{Firmware: true, Full: true})
	if err != nil || len(ms) != 1 {
		t.Fatal(ms, err)
	}
	m := ms[0]
	if m.Port != 1 || m.Module != -1 || m.Netdev != "ens1f0np0" || m.Access != "ethtool" || m.Present == nil || !*m.Present {
		t.Errorf("reading: %+v", m)
	}
	if d := cmp.Diff(kerneltest.CMISModule(), halves(m.Image)); d != "" {
		t.Errorf("EEPROM image (-module +read):\n%s", d)
	}
	if m.EEPROM == nil || m.EEPROM.Vendor.Name != "NVIDIA" || m.Best() != m.EEPROM {
		t.Errorf("decode: %+v", m.EEPROM)
	}
	if !errors.Is(m.FirmwareErr, errors.ErrUnsupported) || !strings.Contains(m.FirmwareErr.Error(), "PDDR") {
		t.Errorf("firmware view: %v", m.FirmwareErr)
	}
}

func TestKernelModuleFailures(t *testing.T) {
	ctx := context.Background()
	// Without CAP_NET_ADMIN the read fails with the kernel's permission
	// error, not a module verdict.
	a := adaptertest.Kernel(t, "kernel:mlx5_0", func(_ string, k *kerneltest.Kernel) { k.NoCapNetAdmin = true })
	_, err := a.Module(ctx, 1, adapter.ModuleOptions{})
	var pe *kernel.PermissionError
	if !errors.As(err, &pe) {
		t.Errorf("no CAP_NET_ADMIN: %v", err)
	}
	// The interface has no module memory: the reason is in the reading.
	a = adaptertest.Kernel(t, "kernel:mlx5_0", func(_ string, k *kerneltest.Kernel) { delete(k.Modules, "ens1f0np0") })
	m, err := a.Module(ctx, 1, adapter.ModuleOptions{})
	if err != nil || m.EEPROMErr == nil || m.Present != nil {
		t.Errorf("no module memory: %+v %v", m, err)
	}
}

// The InfiniBand function, on a kernel without devlink: sysfs still
// names PSID and firmware; only the stored version is missing, a partial
// error. Its hwmon has the ASIC sensor only.
func TestKernelIBWithoutDevlink(t *testing.T) {
	ctx := context.Background()
	a := adaptertest.Kernel(t, "kernel:mlx5_1", func(_ string, k *kerneltest.Kernel) { k.NoDevlink = true })
	id, err := a.Identity(ctx)
	if id == nil || id.PSID != "MT_0000000838" || id.Firmware != "28.39.1002" || id.FirmwareStored != "" || id.FirmwarePending != "" {
		t.Fatalf("identity %+v %v", id, err)
	}
	if !adapter.IsPartial(err) || !strings.Contains(err.Error(), "the stored firmware version is unknown") {
		t.Errorf("partial error: %v", err)
	}
	// IPoIB addresses are not Ethernet MACs.
	if id.PermanentMAC != "" {
		t.Errorf("permanent MAC %q from an IPoIB interface", id.PermanentMAC)
	}
	ps, _ := a.Ports(ctx)
	if len(ps) != 1 || ps[0].LinkLayer != "InfiniBand" || ps[0].Netdev != "ibp193s0f1" {
		t.Errorf("ports %+v", ps)
	}
	ts, err := a.Temperatures(ctx)
	if err != nil || len(ts) != 1 || ts[0].Kind != "asic" || *ts[0].Celsius != 60.875 {
		t.Errorf("temperatures %+v %v", ts, err)
	}
	// The IB port's link: logical and physical state, the speed and width
	// of its rate, the LIDs; its PMA counters under their sysfs names.
	ls, err := a.Links(ctx)
	four, five := 4, 5
	lid, sm := uint32(0x1a), uint32(1)
	want := []adapter.Link{{Port: 1, AdminUp: bptr(true), OperUp: bptr(true), OperStatus: "LinkUp", SpeedGbps: fptr(400),
		StateID: &four, PhysStateID: &five, State: "ACTIVE", PhysState: "LinkUp", LinkLayer: "InfiniBand",
		IBSpeed: "NDR", Width: 4, LID: &lid, SMLID: &sm}}
	if d := cmp.Diff(want, ls); d != "" || err != nil {
		t.Errorf("links (-want +got):\n%s\nerr %v", d, err)
	}
	cs, err := a.PortCounters(ctx)
	if err != nil || len(cs) != 1 || cs[0].Kind != "ib" || cs[0].Values["symbol_error"] != 4787 || cs[0].Values["link_downed"] != 2570 {
		t.Errorf("port counters %+v %v", cs, err)
	}
}

// A function without an RDMA device (mlx5_ib not loaded): one port per
// uplink interface, its operstate for the link, no port or RDMA counters.
// Without hwmon, no temperatures.
func TestKernelWithoutRDMADevice(t *testing.T) {
	ctx := context.Background()
	a := adaptertest.Kernel(t, "kernel:ens1f0np0", func(tree string, _ *kerneltest.Kernel) {
		for _, p := range []string{fn0 + "/infiniband", "class/infiniband/mlx5_0", fn0 + "/hwmon", "class/hwmon/hwmon2"} {
			if err := os.RemoveAll(filepath.Join(tree, p)); err != nil {
				t.Fatal(err)
			}
		}
	})
	ps, err := a.Ports(ctx)
	if d := cmp.Diff([]adapter.Port{{Local: 1, Module: -1, Netdev: "ens1f0np0", LinkLayer: "Ethernet"}}, ps); d != "" || err != nil {
		t.Errorf("ports (-want +got):\n%s\nerr %v", d, err)
	}
	ls, err := a.Links(ctx)
	if d := cmp.Diff([]adapter.Link{{Port: 1, OperUp: bptr(true), OperStatus: "up"}}, ls); d != "" || err != nil {
		t.Errorf("links (-want +got):\n%s\nerr %v", d, err)
	}
	for what, err := range map[string]error{
		"port counters": second(a.PortCounters(ctx)),
		"RDMA counters": second(a.RDMACounters(ctx)),
		"temperatures":  second(a.Temperatures(ctx)),
	} {
		if !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("%s: %v, want not available", what, err)
		}
	}
	if _, err := a.RDMACounters(ctx); !strings.Contains(err.Error(), "mlx5_ib") {
		t.Errorf("RDMA counters: %v", err)
	}
	id, _ := a.Identity(ctx)
	if id == nil || id.PermanentMAC != "a0:88:c2:45:67:e2" || id.PSID != "MT_0000000838" {
		t.Errorf("identity without RDMA: %+v", id)
	}
}

func second[T any](_ T, err error) error { return err }

// Open refuses what it cannot open with the error class the commands map
// to exit codes: usage (2) or not found (3).
func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	tree := kerneltest.Tree(t, kerneltest.CX7)
	o := adaptertest.KernelOptions(t, tree, kerneltest.CX7Kernel())
	var ue *adapter.UsageError
	var nf *adapter.NotFoundError
	if _, err := adapter.Open(ctx, "  ", o); !errors.As(err, &ue) || !strings.Contains(err.Error(), "add -d DEV") {
		t.Errorf("no name: %v", err)
	}
	if _, err := adapter.Open(ctx, "kernel:mlx5_7", o); !errors.As(err, &nf) {
		t.Errorf("unknown RDMA device: %v", err)
	}
	if _, err := adapter.Open(ctx, "0000:99:00.0", o); !errors.As(err, &nf) {
		t.Errorf("unknown PCI address: %v", err)
	}
	if _, err := adapter.Open(ctx, "emu", o); !errors.As(err, &ue) || !strings.Contains(err.Error(), "emulator is not available") {
		t.Errorf("emu without an emulator: %v", err)
	}
	if _, err := adapter.OpenAll(ctx, "kernel:mlx5_0", o); !errors.As(err, &ue) || !strings.Contains(err.Error(), "--all with -d") {
		t.Errorf("--all with a kernel name: %v", err)
	}
	if _, err := adapter.OpenAll(ctx, "emu", o); !errors.As(err, &ue) {
		t.Errorf("--all emu without an emulator: %v", err)
	}
	empty := t.TempDir()
	if _, err := adapter.OpenAll(ctx, "", adapter.Options{Sys: devname.Sys{Root: empty}}); !errors.As(err, &nf) || !strings.Contains(err.Error(), "no ConnectX adapters") {
		t.Errorf("no adapters: %v", err)
	}
}

// Direct access to a function of this machine when kernel lockdown blocks
// config-space writes (or without root): refused with the ways out, or,
// with Fallback, read through the kernel with a note that says why. The
// fake tree has no config file, so no PCI device is ever opened.
func TestOpenPCIBlocked(t *testing.T) {
	ctx := context.Background()
	tree := kerneltest.Tree(t, kerneltest.CX7)
	if err := os.MkdirAll(filepath.Join(tree, "kernel/security"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tree, "kernel/security/lockdown"), []byte("none [integrity] confidentiality\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := adaptertest.KernelOptions(t, tree, kerneltest.CX7Kernel())
	why := o.DirectBlocked()
	if os.Geteuid() == 0 && why != "kernel lockdown (integrity) blocks PCI config-space writes" || os.Geteuid() != 0 && why != "direct register access needs root" {
		t.Errorf("blocked: %q", why)
	}
	_, err := adapter.Open(ctx, "0000:c1:00.0", o)
	if err == nil || !strings.Contains(err.Error(), why) || !strings.Contains(err.Error(), "-d kernel:0000:c1:00.0") {
		t.Errorf("blocked without fallback: %v", err)
	}
	o.Fallback = true
	a, err := adapter.Open(ctx, "0000:c1:00.0", o)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if a.Backend() != dev.BackendKernel || a.HasRegisters() || len(a.Notes()) != 1 || a.Notes()[0] != why+": reading through the kernel backend" {
		t.Errorf("fallback: %s %v", a.Backend(), a.Notes())
	}
}

// OpenAll opens this machine's ConnectX functions that mlx5_core drives.
// The fixture also holds a ConnectX-7 function bound to vfio-pci (passed
// through to a virtual machine, "to check that only mlx5_core functions
// are taken"): direct access to it would drive the gateway of a device
// a guest owns, and through the kernel it cannot be read at all, so with
// Fallback the whole call fails because of it.
func TestOpenAllTakesMlx5Functions(t *testing.T) {
	ctx := context.Background()
	tree := kerneltest.Tree(t, kerneltest.CX7)
	os.MkdirAll(filepath.Join(tree, "kernel/security"), 0o755)
	os.WriteFile(filepath.Join(tree, "kernel/security/lockdown"), []byte("none [integrity] confidentiality\n"), 0o644)
	o := adaptertest.KernelOptions(t, tree, kerneltest.CX7Kernel())
	o.Fallback = true
	as, err := adapter.OpenAll(ctx, "", o)
	if err != nil {
		t.Fatal(err)
	}
	defer adapter.CloseAll(as)
	var got []string
	for _, a := range as {
		got = append(got, a.BDF())
	}
	if d := cmp.Diff([]string{"0000:c1:00.0", "0000:c1:00.1"}, got); d != "" {
		t.Errorf("functions opened (-want +got):\n%s", d)
	}
}

// Lockdown "none" does not block; as root the direct path is then tried,
// and fails here because the fake tree has no config space.
func TestOpenPCIDirect(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: direct access is refused before the config space is opened")
	}
	tree := kerneltest.Tree(t, kerneltest.CX7)
	os.MkdirAll(filepath.Join(tree, "kernel/security"), 0o755)
	os.WriteFile(filepath.Join(tree, "kernel/security/lockdown"), []byte("[none] integrity confidentiality\n"), 0o644)
	o := adaptertest.KernelOptions(t, tree, kerneltest.CX7Kernel())
	if why := o.DirectBlocked(); why != "" {
		t.Fatalf("blocked: %s", why)
	}
	_, err := adapter.Open(context.Background(), "0000:c1:00.0", o)
	var oe *dev.OpenError
	if !errors.As(err, &oe) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("no config space: %v", err)
	}
}
