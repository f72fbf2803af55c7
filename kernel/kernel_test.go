package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mdlayher/netlink"

	"github.com/cxray/cxray/access/regaccess"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/kernel/kerneltest"
	"github.com/cxray/cxray/optics"
)

const (
	fn0 = "devices/pci0000:c0/0000:c0:01.1/0000:c1:00.0"
	fn1 = "devices/pci0000:c0/0000:c0:01.1/0000:c1:00.1"
)

// fixture is the CX7 tree with the matching fake netlink kernel.
type fixture struct {
	root    string
	kern    *kerneltest.Kernel
	entries []kerneltest.Entry
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	es, err := kerneltest.Entries(kerneltest.CX7)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{root: kerneltest.Tree(t, kerneltest.CX7), kern: kerneltest.CX7Kernel(), entries: es}
}

func (f *fixture) opts() Options {
	return Options{Root: f.root, DialGeneric: f.kern.DialGeneric, DialRoute: f.kern.DialRoute, FirmwareDir: f.kern.FirmwareDir}
}

func (f *fixture) open(t *testing.T, name string) *Device {
	t.Helper()
	d, err := Open(context.Background(), name, f.opts())
	if err != nil {
		t.Fatalf("Open(%s): %v", name, err)
	}
	return d
}

func ctx5(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestOpenByEveryName(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct{ in, bdf, rdma string }{
		{"mlx5_0", "0000:c1:00.0", "mlx5_0"},
		{"kernel:mlx5_1", "0000:c1:00.1", "mlx5_1"},
		{"ens1f0np0", "0000:c1:00.0", "mlx5_0"},
		{"ibp193s0f1", "0000:c1:00.1", "mlx5_1"},
		{"0000:c1:00.1", "0000:c1:00.1", "mlx5_1"},
		{"kernel:c1:00.0", "0000:c1:00.0", "mlx5_0"},
	} {
		d, err := Open(context.Background(), c.in, f.opts())
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if d.BDF != c.bdf || d.RDMA != c.rdma {
			t.Errorf("%s: got %s %s, want %s %s", c.in, d.BDF, d.RDMA, c.bdf, c.rdma)
		}
	}
}

func TestOpenRefusals(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct{ in, want string }{
		{"mlx5_9", "cxray status"},
		{"kernel:", "no device name"},
		{"../../etc", "not a device name"},
		{"0000:c2:00.0", "bound to vfio-pci, not mlx5_core"},
		{"0000:00:1f.0", "not a Mellanox/NVIDIA function"},
		{"eth0", "not on a PCI function"},
		{"lo", "no RDMA device or network interface of that name"},
		{"0000:aa:00.0", "no PCI function 0000:aa:00.0"},
	} {
		_, err := Open(context.Background(), c.in, f.opts())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.in, err, c.want)
		}
	}
	var nf *NotFoundError
	if _, err := Open(context.Background(), "mlx5_9", f.opts()); !errors.As(err, &nf) {
		t.Errorf("unknown name: %T, want *NotFoundError", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Open(ctx, "mlx5_0", f.opts()); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled Open: %v", err)
	}
}

func TestList(t *testing.T) {
	f := newFixture(t)
	got, err := List(context.Background(), f.opts())
	if err != nil || strings.Join(got, ",") != "mlx5_0,mlx5_1" {
		t.Fatalf("List: %v %v", got, err)
	}
}

func TestIdentityReadsEveryAttribute(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct{ name, dir, netdev string }{{"mlx5_0", fn0, "ens1f0np0"}, {"mlx5_1", fn1, "ibp193s0f1"}} {
		d := f.open(t, c.name)
		id, err := d.Identity(ctx5(t))
		if err != nil {
			t.Fatal(err)
		}
		want := kerneltest.Values(f.entries, c.dir+"/infiniband/"+c.name)
		got := map[string]string{
			"fw_ver": id.FirmwareVersion, "board_id": id.BoardID, "hca_type": id.HCAType, "hw_rev": id.HWRev,
			"node_guid": id.NodeGUID, "sys_image_guid": id.SysImageGUID, "node_desc": id.NodeDesc, "node_type": id.NodeType,
		}
		for k, v := range got {
			if want[k] == "" || v != want[k] {
				t.Errorf("%s %s: got %q, tree has %q", c.name, k, v, want[k])
			}
		}
		if id.DeviceID != 0x1021 || id.Model != "ConnectX-7" || id.NUMANode != 1 || id.Driver != "mlx5_core" ||
			len(id.Netdevs) != 1 || id.Netdevs[0] != c.netdev || id.RDMA != c.name || id.VF || len(id.Problems) != 0 {
			t.Errorf("%s: %+v", c.name, id)
		}
	}
}

// TestPortsReadEveryValue checks each port attribute and every counter file
// of the tree against what Ports returns.
func TestPortsReadEveryValue(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct {
		name, dir, linkLayer, netdev string
		lid, smlid                   uint32
	}{
		{"mlx5_0", fn0, "Ethernet", "ens1f0np0", 0, 0},
		{"mlx5_1", fn1, "InfiniBand", "", 0x1a, 1},
	} {
		d := f.open(t, c.name)
		ports, err := d.Ports(ctx5(t))
		if err != nil {
			t.Fatal(err)
		}
		if len(ports) != 1 {
			t.Fatalf("%s: %d ports", c.name, len(ports))
		}
		p := ports[0]
		if p.Number != 1 || p.State != "ACTIVE" || p.StateID != 4 || p.PhysState != "LinkUp" || p.PhysStateID != 5 ||
			p.RateText != "400 Gb/sec (4X NDR)" || p.Rate == nil || *p.Rate != (Rate{Gbps: 400, Width: 4, Speed: "NDR"}) ||
			p.LinkLayer != c.linkLayer || p.Netdev != c.netdev || p.LID == nil || *p.LID != c.lid || p.SMLID == nil || *p.SMLID != c.smlid ||
			p.HWCountersLifespanMS == nil || *p.HWCountersLifespanMS != 10 {
			t.Errorf("%s: %+v", c.name, p)
		}
		if len(p.Problems) != 0 {
			t.Errorf("%s: problems %v", c.name, p.Problems)
		}
		portDir := c.dir + "/infiniband/" + c.name + "/ports/1"
		for _, g := range []struct {
			sub string
			got map[string]uint64
		}{{"counters", p.Counters}, {"hw_counters", p.HWCounters}} {
			want := kerneltest.Values(f.entries, portDir+"/"+g.sub)
			delete(want, "lifespan")
			if len(want) < 20 {
				t.Fatalf("%s %s: the tree has only %d counters", c.name, g.sub, len(want))
			}
			checkCounters(t, c.name+" "+g.sub, want, g.got)
		}
		tx, rx, ok := p.DataBytes()
		if !ok || tx != p.Counters["port_xmit_data"]*4 || rx != p.Counters["port_rcv_data"]*4 {
			t.Errorf("%s: DataBytes %d %d %v", c.name, tx, rx, ok)
		}
	}
	// The RoCE port has the whole retransmission group, with the values
	// the tree holds, and the 64-bit congestion counters beyond 2^32.
	p, err := f.open(t, "mlx5_0").Port(ctx5(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]uint64{
		"duplicate_request": 117, "out_of_sequence": 1892, "local_ack_timeout_err": 9, "packet_seq_err": 31,
		"rnr_nak_retry_err": 4, "implied_nak_seq_err": 12, "roce_adp_retrans": 2231, "roce_adp_retrans_to": 3,
		"roce_slow_restart": 1, "roce_slow_restart_cnps": 77, "roce_slow_restart_trans": 2,
		"np_cnp_sent": 5000000123, "rp_cnp_handled": 4999998012,
	} {
		if got, ok := p.HWCounters[name]; !ok || got != want {
			t.Errorf("mlx5_0 hw_counters/%s = %d (present %v), want %d", name, got, ok, want)
		}
	}
	for _, name := range RoCERetransmission {
		if _, ok := p.HWCounters[name]; !ok {
			t.Errorf("mlx5_0 lacks %s", name)
		}
	}
	if p.Counters["port_xmit_data"] != 8849230125613 {
		t.Errorf("port_xmit_data %d", p.Counters["port_xmit_data"])
	}
	if _, err := f.open(t, "mlx5_0").Port(ctx5(t), 2); err == nil || !strings.Contains(err.Error(), "no port 2") {
		t.Errorf("port 2: %v", err)
	}
}

func checkCounters(t *testing.T, what string, want map[string]string, got map[string]uint64) {
	t.Helper()
	for name, text := range want {
		v, err := strconv.ParseUint(text, 10, 64)
		if err != nil {
			t.Fatalf("%s/%s: tree value %q", what, name, text)
		}
		if g, ok := got[name]; !ok || g != v {
			t.Errorf("%s/%s: got %d (present %v), tree has %d", what, name, g, ok, v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%s: read %d counters, the tree has %d", what, len(got), len(want))
	}
}

func TestDeviceHWCounters(t *testing.T) {
	f := newFixture(t)
	got, probs, err := f.open(t, "mlx5_0").DeviceHWCounters(ctx5(t))
	if err != nil || len(probs) != 0 {
		t.Fatal(err, probs)
	}
	want := kerneltest.Values(f.entries, fn0+"/infiniband/mlx5_0/hw_counters")
	delete(want, "lifespan")
	checkCounters(t, "mlx5_0 device hw_counters", want, got)
}

// TestCountersTolerateBadFiles: a missing directory, a driver's "N/A", a
// garbled value and a subdirectory are tolerated and reported.
func TestCountersTolerateBadFiles(t *testing.T) {
	f := newFixture(t)
	port := filepath.Join(f.root, fn0, "infiniband/mlx5_0/ports/1")
	os.Remove(filepath.Join(port, "counters/VL15_dropped"))
	os.WriteFile(filepath.Join(port, "counters/VL15_dropped"), []byte("N/A (no PMA)\n"), 0o644)
	os.Remove(filepath.Join(port, "hw_counters/out_of_buffer"))
	os.WriteFile(filepath.Join(port, "hw_counters/out_of_buffer"), []byte("-1\n"), 0o644)
	os.Mkdir(filepath.Join(port, "hw_counters/subdir"), 0o755)
	os.Remove(filepath.Join(port, "rate"))
	os.Remove(filepath.Join(port, "hw_counters/duplicate_request"))
	p, err := f.open(t, "mlx5_0").Port(ctx5(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.Counters["VL15_dropped"]; ok || !strings.Contains(p.Problems["counters/VL15_dropped"], "no PMA") {
		t.Errorf("N/A counter: %v", p.Problems)
	}
	if _, ok := p.HWCounters["out_of_buffer"]; ok || !strings.Contains(p.Problems["hw_counters/out_of_buffer"], "unsigned") {
		t.Errorf("bad counter: %v", p.Problems)
	}
	if _, ok := p.HWCounters["duplicate_request"]; ok || p.Rate != nil || p.RateText != "" {
		t.Errorf("missing files should be absent: %+v", p)
	}
	if _, ok := p.Problems["rate"]; ok {
		t.Errorf("a missing file is not a problem: %v", p.Problems)
	}
	if p.HWCounters["roce_adp_retrans"] != 2231 {
		t.Error("the rest of the counters should still be read")
	}
}

func TestTemperatures(t *testing.T) {
	f := newFixture(t)
	th, err := f.open(t, "mlx5_0").Temperatures(ctx5(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(th.Temps) != 2 || !strings.HasSuffix(th.Dir, "hwmon/hwmon2") {
		t.Fatalf("%+v", th)
	}
	want := []struct {
		label, kind          string
		input, highest, crit float64
	}{{"asic", "asic", 61.25, 63.75, 105}, {"sensor64", "module", 44, 46.125, 75}}
	for i, w := range want {
		g := th.Temps[i]
		if g.Channel != i+1 || g.Label != w.label || g.Kind != w.kind || g.Celsius == nil || *g.Celsius != w.input ||
			g.HighestCelsius == nil || *g.HighestCelsius != w.highest || g.CritCelsius == nil || *g.CritCelsius != w.crit || len(g.Problems) != 0 {
			t.Errorf("channel %d: %+v", i+1, g)
		}
	}
	th, err = f.open(t, "mlx5_1").Temperatures(ctx5(t))
	if err != nil || len(th.Temps) != 1 || th.Temps[0].Kind != "asic" || *th.Temps[0].Celsius != 60.875 {
		t.Fatalf("mlx5_1: %+v %v", th, err)
	}
	// Without hwmon (kernel before 6.6): a note, no error.
	os.RemoveAll(filepath.Join(f.root, fn1, "hwmon"))
	os.Remove(filepath.Join(f.root, "class/hwmon/hwmon3"))
	th, err = f.open(t, "mlx5_1").Temperatures(ctx5(t))
	if err != nil || len(th.Temps) != 0 || !strings.Contains(th.Note, "Linux 6.6") {
		t.Fatalf("no hwmon: %+v %v", th, err)
	}
}

// TestTemperaturesViaClassHwmon: a layout where the hwmon device is found
// only through /sys/class/hwmon and its device link.
func TestTemperaturesViaClassHwmon(t *testing.T) {
	f := newFixture(t)
	src := filepath.Join(f.root, fn0, "hwmon/hwmon2")
	dst := filepath.Join(f.root, "devices/virtual/hwmon/hwmon9")
	os.MkdirAll(filepath.Dir(dst), 0o755)
	if err := os.Rename(src, dst); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dst, "device"))
	os.Symlink("../../../"+filepath.Join("..", fn0), filepath.Join(dst, "device"))
	os.Remove(filepath.Join(f.root, "class/hwmon/hwmon2"))
	os.Symlink("../../devices/virtual/hwmon/hwmon9", filepath.Join(f.root, "class/hwmon/hwmon9"))
	th, err := f.open(t, "mlx5_0").Temperatures(ctx5(t))
	if err != nil || len(th.Temps) != 2 {
		t.Fatalf("%+v %v", th, err)
	}
}

func TestNetdevsPermanentAndCurrentMAC(t *testing.T) {
	f := newFixture(t)
	nds, err := f.open(t, "mlx5_0").Netdevs(ctx5(t))
	if err != nil || len(nds) != 1 {
		t.Fatal(nds, err)
	}
	n := nds[0]
	if n.Name != "ens1f0np0" || n.Address != "02:11:22:33:44:55" || n.PermanentAddress != "a0:88:c2:45:67:e2" ||
		!n.MACDrift || n.AddrAssignType != 3 || n.AddrAssignTypeName != "set" || n.Ifindex != 6 || n.OperState != "up" || len(n.Problems) != 0 {
		t.Errorf("%+v", n)
	}
	nds, err = f.open(t, "mlx5_1").Netdevs(ctx5(t))
	if err != nil || len(nds) != 1 {
		t.Fatal(nds, err)
	}
	n = nds[0]
	if n.Name != "ibp193s0f1" || n.MACDrift || n.AddrAssignTypeName != "permanent" ||
		n.Address != "00:00:10:49:fe:80:00:00:00:00:00:00:a0:88:c2:03:00:45:67:e3" || n.PermanentAddress != n.Address {
		t.Errorf("IPoIB: %+v", n)
	}
	// Without netlink the sysfs half is still there, and the reason is kept.
	o := f.opts()
	o.DialRoute = func() (*netlink.Conn, error) { return nil, errors.New("socket: address family not supported") }
	d, _ := Open(context.Background(), "mlx5_0", o)
	nds, err = d.Netdevs(ctx5(t))
	if err != nil || nds[0].Address != "02:11:22:33:44:55" || nds[0].PermanentAddress != "" || nds[0].MACDrift ||
		!strings.Contains(nds[0].Problems["netlink"], "rtnetlink") {
		t.Errorf("no netlink: %+v %v", nds, err)
	}
}

func TestDevlinkInfo(t *testing.T) {
	f := newFixture(t)
	info, err := f.open(t, "mlx5_0").DevlinkInfo(ctx5(t))
	if err != nil {
		t.Fatal(err)
	}
	if info.Handle != "pci/0000:c1:00.0" || info.Driver != "mlx5_core" || info.PSID() != "MT_0000000838" ||
		info.FirmwareRunning() != "28.39.1002" || info.FirmwareStored() != "28.41.1000" || !info.FirmwarePending() ||
		info.SerialNumber != "a0-88-c2-ff-ff-45-67-e2" || info.BoardSerialNumber != "MT2314X12345" || info.Running["fw"] != "28.39.1002" {
		t.Errorf("%+v", info)
	}
	delete(f.kern.Devlink, "pci/0000:c1:00.1")
	var nf *NotFoundError
	if _, err := f.open(t, "mlx5_1").DevlinkInfo(ctx5(t)); !errors.As(err, &nf) || !strings.Contains(err.Error(), "devlink info of pci/0000:c1:00.1") {
		t.Errorf("unknown instance: %v", err)
	}
	f.kern.NoDevlink = true
	var ue *UnsupportedError
	if _, err := f.open(t, "mlx5_0").DevlinkInfo(ctx5(t)); !errors.As(err, &ue) || !strings.Contains(err.Error(), "CONFIG_NET_DEVLINK") {
		t.Errorf("no devlink: %v", err)
	}
}

func TestModuleCMIS(t *testing.T) {
	f := newFixture(t)
	d := f.open(t, "mlx5_0")
	mr, err := d.Module(ctx5(t), "")
	if err != nil {
		t.Fatal(err)
	}
	if mr.Netdev != "ens1f0np0" || mr.Error != "" || mr.Module == nil || mr.Module.Standard != optics.CMIS ||
		mr.Module.Identifier.Value != 0x19 || mr.Module.Vendor.Name != "NVIDIA" {
		t.Fatalf("%+v %+v", mr, mr.Module)
	}
	// optics chooses the pages and how much of each it needs; each one
	// read is the start of the fake module's page, and at least the lower
	// page and pages 00h, 01h, 02h and 11h are there.
	mod := kerneltest.CMISModule()
	var got []string
	for _, p := range mr.Image.Pages {
		upper := p.Offset >= 128
		got = append(got, pageName(p.I2C, p.Bank, p.Page, upper))
		src := mod[kerneltest.PageKey{I2C: p.I2C, Bank: p.Bank, Page: p.Page, Upper: upper}]
		if len(p.Data) == 0 || len(p.Data) > len(src) || string(src[:len(p.Data)]) != string(p.Data) {
			t.Errorf("%s: data differs", pageName(p.I2C, p.Bank, p.Page, upper))
		}
	}
	for _, want := range []string{"50/0/00/lower", "50/0/00/upper", "50/0/01/upper", "50/0/02/upper", "50/0/11/upper"} {
		if !strings.Contains(strings.Join(got, " "), want) {
			t.Errorf("pages %v lack %s", got, want)
		}
	}
	// Every request carried all attributes the kernel requires, as one
	// connection's worth of reads.
	for _, r := range f.kern.Requests() {
		if !r.HasI2C || !r.HasPage || !r.HasBank || r.Length < 1 || r.Length > 128 || r.Netdev != "ens1f0np0" {
			t.Errorf("request %+v", r)
		}
	}
	if len(f.kern.Requests()) != len(mr.Image.Pages) {
		t.Errorf("%d requests for %d pages", len(f.kern.Requests()), len(mr.Image.Pages))
	}
}

func pageName(i2c, bank, page uint8, upper bool) string {
	half := "lower"
	if upper {
		half = "upper"
	}
	return strconv.FormatUint(uint64(i2c), 16) + "/" + strconv.Itoa(int(bank)) + "/" + hex2(page) + "/" + half
}

func hex2(b uint8) string {
	s := strconv.FormatUint(uint64(b), 16)
	if len(s) == 1 {
		s = "0" + s
	}
	return s
}

// moduleWith puts a module built from halves on ens1f0np0.
func moduleWith(f *fixture, halves map[kerneltest.PageKey][]byte) {
	f.kern.Modules["ens1f0np0"] = halves
}

func half(fill byte, set map[int]byte) []byte {
	b := make([]byte, 128)
	for i := range b {
		b[i] = fill
	}
	for i, v := range set {
		b[i] = v
	}
	return b
}

// TestModuleKinds: the adapter carries what optics asks for, for each
// memory map, and optics' verdict on the bytes lands in the reading.
func TestModuleKinds(t *testing.T) {
	type K = kerneltest.PageKey
	for _, c := range []struct {
		name     string
		halves   map[K][]byte
		standard string
		read     []string // pages that must have been read
		errKind  string
	}{
		{"SFP28 with DDM", map[K][]byte{
			{I2C: 0x50}: half(0x20, map[int]byte{0: 0x03, 92: 0x68}), {I2C: 0x50, Upper: true}: half(0, nil),
			{I2C: 0x51}: half(0, nil), {I2C: 0x51, Upper: true}: half(0, nil),
		}, optics.SFF8472, []string{"50/0/00/lower", "51/0/00/lower"}, ""},
		{"QSFP28 paged", map[K][]byte{
			{I2C: 0x50}: half(0, map[int]byte{0: 0x11, 1: 0x07, 2: 0x00}), {I2C: 0x50, Upper: true}: half(0x20, map[int]byte{0: 0x11}),
			{I2C: 0x50, Page: 3, Upper: true}: half(0, nil),
		}, optics.SFF8636, []string{"50/0/00/lower", "50/0/00/upper", "50/0/03/upper"}, ""},
		{"QSFP28 copper, flat", map[K][]byte{
			{I2C: 0x50}: half(0, map[int]byte{0: 0x11, 1: 0x07, 2: 0x04}), {I2C: 0x50, Upper: true}: half(0x20, map[int]byte{0: 0x11}),
		}, optics.SFF8636, []string{"50/0/00/lower", "50/0/00/upper"}, ""},
		{"all zeros (mlx5 before d1c94bc5b90c)", map[K][]byte{
			{I2C: 0x50}: make([]byte, 128), {I2C: 0x50, Upper: true}: make([]byte, 128),
		}, "", []string{"50/0/00/lower"}, optics.KindAllZeros},
		{"hung I2C bus", map[K][]byte{
			{I2C: 0x50}: half(0xff, nil), {I2C: 0x50, Upper: true}: half(0xff, nil),
		}, "", []string{"50/0/00/lower"}, optics.KindAllOnes},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			moduleWith(f, c.halves)
			mr, err := f.open(t, "mlx5_0").Module(ctx5(t), "ens1f0np0")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range mr.Image.Pages {
				got = append(got, pageName(p.I2C, p.Bank, p.Page, p.Offset >= 128))
			}
			for _, w := range c.read {
				if !strings.Contains(strings.Join(got, " "), w) {
					t.Errorf("pages %v lack %s", got, w)
				}
			}
			if mr.ErrorKind != c.errKind {
				t.Errorf("error kind %q (%s), want %q", mr.ErrorKind, mr.Error, c.errKind)
			}
			if c.errKind == "" && (mr.Module == nil || mr.Module.Standard != c.standard) {
				t.Errorf("decode: %+v", mr.Module)
			}
			if c.errKind == optics.KindAllZeros && !strings.Contains(mr.Error, "d1c94bc5b90c") {
				t.Errorf("zero page message: %s", mr.Error)
			}
		})
	}
}

func TestModuleErrors(t *testing.T) {
	f := newFixture(t)
	d := f.open(t, "mlx5_0")
	// Without CAP_NET_ADMIN: the message names the capability and both ways
	// to get it.
	f.kern.NoCapNetAdmin = true
	_, err := d.Module(ctx5(t), "ens1f0np0")
	var pe *PermissionError
	if !errors.As(err, &pe) || !errors.Is(err, os.ErrPermission) {
		t.Fatalf("no CAP_NET_ADMIN: %T %v", err, err)
	}
	for _, want := range []string{"module EEPROM of ens1f0np0", "CAP_NET_ADMIN", "run as root", "setcap cap_net_admin+ep"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message lacks %q: %v", want, err)
		}
	}
	if !strings.HasPrefix(err.Error(), "kernel: reading the module EEPROM") {
		t.Errorf("the permission error should come out whole: %v", err)
	}
	_, err = d.ReadModuleEEPROM(ctx5(t), "ens1f0np0", PageRequest{I2CAddress: 0x50, Length: 1})
	if !errors.As(err, &pe) {
		t.Errorf("raw read without CAP_NET_ADMIN: %v", err)
	}
	f.kern.NoCapNetAdmin = false
	// No module answering at all.
	moduleWith(f, map[kerneltest.PageKey][]byte{})
	if _, err := d.Module(ctx5(t), "ens1f0np0"); err == nil || !strings.Contains(err.Error(), "is a module plugged in") {
		t.Errorf("no module: %v", err)
	}
	// An interface whose driver has no module EEPROM (the fake knows lo).
	var ue *UnsupportedError
	if _, err := d.ReadModuleEEPROM(ctx5(t), "lo", PageRequest{I2CAddress: 0x50, Length: 1}); !errors.As(err, &ue) {
		t.Errorf("lo: %v", err)
	}
	var nf *NotFoundError
	if _, err := d.ReadModuleEEPROM(ctx5(t), "eth9", PageRequest{I2CAddress: 0x50, Length: 1}); !errors.As(err, &nf) {
		t.Errorf("eth9: %v", err)
	}
	// The adapter checks requests before the kernel sees them.
	r, err := d.OpenModuleReader(ctx5(t), "ens1f0np0")
	if err != nil {
		t.Fatal(err)
	}
	var re *RequestError
	if _, err := r.ReadPage(ctx5(t), optics.PageAddr{I2C: 0x50, Page: 2, Offset: 0}, 128); !errors.As(err, &re) {
		t.Errorf("lower half of page 2: %v", err)
	}
	r.Close()
	f.kern.NoEthtool = true
	if _, err := d.Module(ctx5(t), "ens1f0np0"); !errors.As(err, &ue) || !strings.Contains(err.Error(), "5.13") {
		t.Errorf("no ethtool netlink: %v", err)
	}
}

func TestPageRequestValidate(t *testing.T) {
	for _, c := range []struct {
		r    PageRequest
		want string
	}{
		{PageRequest{I2CAddress: 0x50, Length: 128}, ""},
		{PageRequest{I2CAddress: 0x50, Page: 3, Offset: 128, Length: 128}, ""},
		{PageRequest{I2CAddress: 0x51, Offset: 96, Length: 10}, ""},
		{PageRequest{I2CAddress: 0x50, Length: 0}, "1 to 128"},
		{PageRequest{I2CAddress: 0x50, Length: 129}, "1 to 128"},
		{PageRequest{I2CAddress: 0x50, Offset: 256, Length: 1}, "256 bytes"},
		{PageRequest{I2CAddress: 0x50, Offset: 200, Length: 100}, "past byte 255"},
		{PageRequest{I2CAddress: 0x50, Offset: 100, Length: 40}, "crosses byte 128"},
		{PageRequest{I2CAddress: 0x50, Page: 1, Offset: 0, Length: 16}, "page 0"},
		{PageRequest{I2CAddress: 0xa0, Length: 16}, "7-bit"},
	} {
		err := c.r.Validate()
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: %v, want %q", c.r, err, c.want)
		}
	}
	// The fake kernel applies the kernel's own rules; a valid request
	// reaches it and returns exactly the bytes asked for.
	f := newFixture(t)
	b, err := f.open(t, "mlx5_0").ReadModuleEEPROM(ctx5(t), "ens1f0np0", PageRequest{I2CAddress: 0x50, Page: 1, Offset: 142, Length: 1})
	if err != nil || len(b) != 1 || b[0] != 0x01 {
		t.Errorf("page 01h byte 142: %x %v", b, err)
	}
}

func TestReadOnly(t *testing.T) {
	f := newFixture(t)
	d := f.open(t, "mlx5_0")
	err := d.Write(context.Background(), "PAOS")
	if !errors.Is(err, ErrReadOnly) {
		t.Fatalf("%v", err)
	}
	if !strings.HasPrefix(err.Error(), "kernel: the kernel backend is read-only; use direct access (-d 0000:c1:00.0 as root) to write registers") {
		t.Errorf("message: %v", err)
	}
	if ErrReadOnly.Error() != "kernel: the kernel backend is read-only; use direct access (-d 0000:03:00.0 as root) to write registers" {
		t.Errorf("ErrReadOnly: %v", ErrReadOnly)
	}
	// Through the dev package, the way `cxray reg` reaches a backend.
	dv := dev.New("kernel:mlx5_0", d.BDF, "kernel", nil, d, d.Close)
	if _, err := dv.SetRaw(context.Background(), 0x5006, make([]byte, 16)); !errors.Is(err, ErrReadOnly) {
		t.Errorf("SetRaw: %v", err)
	}
	if _, err := dv.GetRaw(context.Background(), 0x9042, make([]byte, 160)); !errors.Is(err, ErrNoRegisters) ||
		!strings.Contains(err.Error(), "use direct access (-d 0000:c1:00.0 as root) for registers") {
		t.Errorf("GetRaw: %v", err)
	}
	if _, err := d.Access(context.Background(), regaccess.Set, 1, nil); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Access: %v", err)
	}
}

// TestNeverWrites: a whole snapshot leaves every file of the tree as it
// was (contents and modification times).
func TestNeverWrites(t *testing.T) {
	f := newFixture(t)
	before := treeState(t, f.root)
	for _, n := range []string{"mlx5_0", "mlx5_1"} {
		if _, err := f.open(t, n).Snapshot(ctx5(t), AllParts); err != nil {
			t.Fatal(err)
		}
	}
	after := treeState(t, f.root)
	if len(before) != len(after) {
		t.Fatalf("files: %d before, %d after", len(before), len(after))
	}
	for p, s := range before {
		if after[p] != s {
			t.Errorf("%s changed", p)
		}
	}
}

func treeState(t *testing.T, root string) map[string]string {
	out := map[string]string{}
	filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			out[p] = fi.ModTime().String() + "|" + string(b)
		}
		return nil
	})
	return out
}

func TestSnapshot(t *testing.T) {
	f := newFixture(t)
	s, err := f.open(t, "mlx5_0").Snapshot(ctx5(t), AllParts)
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "mlx5_0" || s.BDF != "0000:c1:00.0" || s.Identity.BoardID != "MT_0000000838" || s.Devlink.PSID() != "MT_0000000838" ||
		len(s.Ports) != 1 || len(s.Ports[0].HWCounters) != 31 || len(s.DeviceHWCounters) != 31 || len(s.Thermal.Temps) != 2 ||
		len(s.Netdevs) != 1 || !s.Netdevs[0].MACDrift || len(s.Modules) != 1 || s.Modules[0].Module == nil || s.Modules[0].Module.Standard != optics.CMIS || len(s.Errors) != 0 || len(s.Problems) != 0 {
		b, _ := json.MarshalIndent(s, "", " ")
		t.Errorf("%s", b)
	}
	if _, err := json.Marshal(s); err != nil {
		t.Error(err)
	}
	// No CAP_NET_ADMIN and no devlink: those parts say why; the rest is
	// all there.
	f.kern.NoCapNetAdmin, f.kern.NoDevlink = true, true
	s, err = f.open(t, "mlx5_0").Snapshot(ctx5(t), AllParts)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(s.Errors["module ens1f0np0"], "CAP_NET_ADMIN") || !strings.Contains(s.Errors["devlink"], "devlink") ||
		s.Devlink != nil || len(s.Modules) != 0 || len(s.Ports[0].HWCounters) != 31 || len(s.Thermal.Temps) != 2 {
		t.Errorf("%+v", s.Errors)
	}
	// Sysfs only.
	sent := len(f.kern.Requests())
	s, err = f.open(t, "mlx5_1").Snapshot(ctx5(t), SnapshotOptions{})
	if err != nil || s.Devlink != nil || s.Netdevs[0].PermanentAddress != "" || s.Modules != nil || len(s.Errors) != 0 {
		t.Errorf("sysfs only: %+v %v", s, err)
	}
	if n := len(f.kern.Requests()) - sent; n != 0 {
		t.Errorf("sysfs-only snapshot sent %d module requests", n)
	}
}

// TestGone: a device that disappears after Open is reported as gone, not
// as empty data.
func TestGone(t *testing.T) {
	f := newFixture(t)
	d := f.open(t, "mlx5_0")
	os.RemoveAll(filepath.Join(f.root, fn0))
	var gone *GoneError
	if _, err := d.Snapshot(ctx5(t), AllParts); !errors.As(err, &gone) || !strings.Contains(err.Error(), "mlx5_0 is gone") {
		t.Errorf("snapshot: %v", err)
	}
	if _, err := d.Ports(ctx5(t)); !errors.As(err, &gone) {
		t.Errorf("ports: %v", err)
	}
	if _, err := d.Temperatures(ctx5(t)); !errors.As(err, &gone) {
		t.Errorf("temperatures: %v", err)
	}
}

// TestBoundedByContext: a counter whose read blocks (as a firmware command
// that never completes does) gives the context's error at its deadline.
func TestBoundedByContext(t *testing.T) {
	f := newFixture(t)
	release := make(chan struct{})
	blocked := make(chan struct{}, 1)
	orig := readFileHook
	readFileHook = func(path string) (string, error) {
		if strings.HasSuffix(path, "hw_counters/out_of_sequence") {
			blocked <- struct{}{}
			<-release
		}
		return orig(path)
	}
	t.Cleanup(func() { close(release); readFileHook = orig })
	d := f.open(t, "mlx5_0")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := d.Snapshot(ctx, SnapshotOptions{})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "still waiting for the adapter's firmware") {
		t.Fatalf("got %v, want the deadline", err)
	}
	// The read it waits for never ends (until the test does): any
	// return shows the deadline was kept. The bound only keeps a
	// regression from hanging; it is generous for a loaded machine.
	if el := time.Since(start); el > 30*time.Second {
		t.Errorf("took %v past a 200 ms deadline", el)
	}
	select {
	case <-blocked:
	default:
		t.Error("the blocking read was never reached")
	}
	// A cancelled context stops every call before it reads anything.
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	calls := map[string]error{}
	_, calls["identity"] = d.Identity(ctx)
	_, calls["ports"] = d.Ports(ctx)
	_, _, calls["device_hw_counters"] = d.DeviceHWCounters(ctx)
	_, calls["temperatures"] = d.Temperatures(ctx)
	_, calls["netdevs"] = d.Netdevs(ctx)
	_, calls["devlink"] = d.DevlinkInfo(ctx)
	_, calls["module"] = d.Module(ctx, "ens1f0np0")
	_, calls["module read"] = d.ReadModuleEEPROM(ctx, "ens1f0np0", PageRequest{I2CAddress: 0x50, Length: 1})
	_, calls["link"] = d.Link(ctx, "ens1f0np0")
	var names []string
	for n := range calls {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if !errors.Is(calls[n], context.Canceled) {
			t.Errorf("%s with a cancelled context: %v", n, calls[n])
		}
	}
}

func TestBindContext(t *testing.T) {
	var mu sync.Mutex
	var got []time.Time
	set := func(tm time.Time) error { mu.Lock(); got = append(got, tm); mu.Unlock(); return nil }
	seen := func() []time.Time { mu.Lock(); defer mu.Unlock(); return append([]time.Time(nil), got...) }
	dl := time.Now().Add(time.Hour)
	ctx, cancel := context.WithDeadline(context.Background(), dl)
	stop := bindContext(ctx, set)
	cancel()
	for i := 0; i < 100 && len(seen()) < 2; i++ {
		time.Sleep(5 * time.Millisecond)
	}
	stop()
	if g := seen(); len(g) != 2 || !g[0].Equal(dl) || !g[1].Before(time.Now()) {
		t.Errorf("deadlines set: %v", g)
	}
	mu.Lock()
	got = nil
	mu.Unlock()
	// After stop, a cancellation no longer reaches the socket.
	ctx, cancel = context.WithCancel(context.Background())
	stop = bindContext(ctx, set)
	stop()
	cancel()
	time.Sleep(10 * time.Millisecond)
	if g := seen(); len(g) != 0 {
		t.Errorf("after stop: %v", g)
	}
}

// TestSnapshotSkipsRepresentors: in switchdev mode the PF carries a
// representor netdev per VF; the module is read through the uplink only.
func TestSnapshotSkipsRepresentors(t *testing.T) {
	f := newFixture(t)
	pf := filepath.Join(f.root, fn0)
	os.WriteFile(filepath.Join(pf, "net/ens1f0np0/phys_port_name"), []byte("p0\n"), 0o444)
	for _, vf := range []string{"pf0vf0", "pf0vf1"} {
		dir := filepath.Join(pf, "net", "eth_"+vf)
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "phys_port_name"), []byte(vf+"\n"), 0o444)
		os.WriteFile(filepath.Join(dir, "address"), []byte("0a:00:00:00:00:01\n"), 0o444)
		os.Symlink("../../"+fn0+"/net/eth_"+vf, filepath.Join(f.root, "class/net/eth_"+vf))
	}
	s, err := f.open(t, "mlx5_0").Snapshot(ctx5(t), AllParts)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Netdevs) != 3 || len(s.Modules) != 1 || s.Modules[0].Netdev != "ens1f0np0" {
		t.Errorf("netdevs %d, modules %+v", len(s.Netdevs), s.Modules)
	}
	for _, n := range s.Netdevs {
		if n.Representor() != strings.HasPrefix(n.Name, "eth_pf0vf") {
			t.Errorf("%s: representor %v (phys_port_name %q)", n.Name, n.Representor(), n.PhysPortName)
		}
	}
	// The representors are unknown to the fake rtnetlink: that is noted
	// per interface, not fatal.
	if !strings.Contains(s.Netdevs[1].Problems["netlink"], "no such device") {
		t.Errorf("%+v", s.Netdevs[1])
	}
}
