package adapter_test

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/dev/devtest"
	"github.com/cxray/cxray/internal/clock"
	"github.com/cxray/cxray/prm"
)

// The register side of the adapter over dev/devtest: each test puts the
// register instances a situation needs and checks what the adapter makes
// of them.

const testBDF = "0000:03:00.1"

func open(f *devtest.Fake, db *prm.DB, c adapter.Config) *adapter.Adapter {
	if c.Name == "" {
		c.Name = "test"
	}
	if c.BDF == "" {
		c.BDF = testBDF
	}
	if c.Backend == "" {
		c.Backend = dev.BackendDirect
	}
	c.DB = db
	if c.Registers == nil && c.Reopen == nil {
		c.Registers = f.Device(c.Name, c.BDF, c.Backend)
	}
	if c.Clock == nil {
		c.Clock = clock.NewManual(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
	}
	return adapter.New(c)
}

// mgir puts an MGIR of a two-port ConnectX-7 running 28.39.1002.
func mgir(f *devtest.Fake, extra ...string) {
	f.Put("MGIR", append([]string{"hw_info.num_ports=2", "hw_info.device_id=0x1021", "fw_info.extended_major=28", "fw_info.extended_minor=39",
		"fw_info.extended_sub_minor=1002", "fw_info.psid=MT_0000000838", "hw_info.manufacturing_base_mac=0xa088c24567e2",
		"fw_info.year=0x2023", "fw_info.month=0x11", "fw_info.day=0x07"}, extra...)...)
}

func fptr(v float64) *float64 { return &v }
func bptr(v bool) *bool       { return &v }

func TestRegisterIdentity(t *testing.T) {
	ctx := context.Background()
	db := devtest.DB(t)
	f := devtest.New(db)
	mgir(f)
	// PGUID's node_guid is 128 bits; the GUID is its low 64.
	f.Put("PGUID", "node_guid[2]=0xa088c203", "node_guid[3]=0x004567e3", "sys_guid[2]=0xa088c203", "sys_guid[3]=0x004567e2")
	f.Put("MCQI", "read_pending_component=1", "info_type=VERSION", "data.mcqi_version_ext.version_string=28.41.1000")
	// The part number in two MQIS chunks.
	f.Put("MQIS", "info_type=MODEL_NAME", "read_offset=0", "info_length=12", "read_length=8", "info_string=MCX75310")
	f.Put("MQIS", "info_type=MODEL_NAME", "read_offset=8", "info_length=12", "read_length=4", "info_string=AAHS")
	a := open(f, db, adapter.Config{})
	id, err := a.Identity(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := &adapter.Identity{Model: "ConnectX-7", DeviceID: 0x1021, HCAType: "MT4129", PSID: "MT_0000000838",
		Firmware: "28.39.1002", FirmwareStored: "28.41.1000", FirmwarePending: "28.41.1000",
		FirmwareBuilt: time.Date(2023, 11, 7, 0, 0, 0, 0, time.UTC), Ports: 2,
		// Function 1: the base MAC plus one.
		BaseMAC: "a0:88:c2:45:67:e2", PermanentMAC: "a0:88:c2:45:67:e3", NodeGUID: "a088:c203:0045:67e3", SysImageGUID: "a088:c203:0045:67e2", PartNumber: "MCX75310AAHS"}
	if d := cmp.Diff(want, id); d != "" {
		t.Errorf("identity (-want +got):\n%s", d)
	}
	// The part number is read once per adapter.
	n := f.Count("MQIS")
	if _, err := a.Identity(ctx); err != nil {
		t.Fatal(err)
	}
	if f.Count("MQIS") != n {
		t.Errorf("MQIS read again: %d accesses after %d", f.Count("MQIS"), n)
	}
}

// A firmware without MCQI, MQIS and PGUID, with a build date that is not
// a date: what is missing stays empty, nothing fails, no firmware is
// pending.
func TestRegisterIdentityMinimal(t *testing.T) {
	db := devtest.DB(t)
	f := devtest.New(db)
	mgir(f, "fw_info.month=0x13")
	id, err := open(f, db, adapter.Config{}).Identity(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := &adapter.Identity{Model: "ConnectX-7", DeviceID: 0x1021, HCAType: "MT4129", PSID: "MT_0000000838", Firmware: "28.39.1002", Ports: 2,
		BaseMAC: "a0:88:c2:45:67:e2", PermanentMAC: "a0:88:c2:45:67:e3"}
	if d := cmp.Diff(want, id); d != "" {
		t.Errorf("identity (-want +got):\n%s", d)
	}
	// The same stored version as running: nothing pending.
	f.Put("MCQI", "read_pending_component=1", "info_type=VERSION", "data.mcqi_version_ext.version_string=28.39.1002")
	id, _ = open(f, db, adapter.Config{}).Identity(context.Background())
	if id.FirmwareStored != "28.39.1002" || id.FirmwarePending != "" {
		t.Errorf("stored %q pending %q", id.FirmwareStored, id.FirmwarePending)
	}
	// Without MGIR there is no identity.
	g := devtest.New(db)
	if id, err := open(g, db, adapter.Config{}).Identity(context.Background()); id != nil || !errors.Is(err, dev.ErrNotSupported) {
		t.Errorf("no MGIR: %+v %v", id, err)
	}
}

// The one topology: local ports 1..MGIR num_ports, less those PMLP answers
// "bad parameter" for (another function's), and, without PMLP, port N on
// module N-1.
func TestRegisterPorts(t *testing.T) {
	cases := []struct {
		name    string
		put     func(f *devtest.Fake)
		want    []adapter.Port
		wantErr string
		is      error
	}{
		{"function 0 owns port 1", func(f *devtest.Fake) {
			mgir(f)
			f.Put("PMLP", "local_port=1", "width=4", "lane_module_mapping[0].module=0")
		}, []adapter.Port{{Local: 1, Module: 0, Lanes: 4, LinkLayer: "Ethernet"}}, "", nil},
		{"function 1 owns port 2 on cage 1", func(f *devtest.Fake) {
			mgir(f)
			f.Put("PMLP", "local_port=2", "width=2", "lane_module_mapping[0].module=1")
		}, []adapter.Port{{Local: 2, Module: 1, Lanes: 2, LinkLayer: "Ethernet"}}, "", nil},
		{"both ports", func(f *devtest.Fake) {
			mgir(f)
			f.Put("PMLP", "local_port=1", "width=4", "lane_module_mapping[0].module=0")
			f.Put("PMLP", "local_port=2", "width=4", "lane_module_mapping[0].module=1")
		}, []adapter.Port{{Local: 1, Module: 0, Lanes: 4, LinkLayer: "Ethernet"}, {Local: 2, Module: 1, Lanes: 4, LinkLayer: "Ethernet"}}, "", nil},
		{"no PMLP: port p on module p-1", func(f *devtest.Fake) { mgir(f) },
			[]adapter.Port{{Local: 1, Module: 0, LinkLayer: "Ethernet"}, {Local: 2, Module: 1, LinkLayer: "Ethernet"}}, "", nil},
		{"num_ports 0 is one port", func(f *devtest.Fake) { mgir(f, "hw_info.num_ports=0") },
			[]adapter.Port{{Local: 1, Module: 0, LinkLayer: "Ethernet"}}, "", nil},
		{"PMLP busy is an error", func(f *devtest.Fake) {
			mgir(f)
			f.Fail("PMLP", dev.StatusBusy, "local_port=1")
		}, nil, "port 1 (PMLP)", dev.ErrBusy},
		{"no port answered", func(f *devtest.Fake) {
			mgir(f)
			f.Put("PMLP", "local_port=9", "width=4")
		}, nil, "reaches no port", nil},
		{"no MGIR", func(f *devtest.Fake) {}, nil, "MGIR", dev.ErrNotSupported},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			db := devtest.DB(t)
			f := devtest.New(db)
			c.put(f)
			got, err := open(f, db, adapter.Config{}).Ports(context.Background())
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) || (c.is != nil && !errors.Is(err, c.is)) {
					t.Fatalf("got %+v, %v; want an error with %q (is %v)", got, err, c.wantErr, c.is)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(c.want, got); d != "" {
				t.Errorf("ports (-want +got):\n%s", d)
			}
		})
	}
}

// Ports are read once; Port names the ports the function has.
func TestPortCachedAndNoPort(t *testing.T) {
	ctx := context.Background()
	db := devtest.DB(t)
	f := devtest.New(db)
	mgir(f)
	f.Put("PMLP", "local_port=1", "width=4", "lane_module_mapping[0].module=0")
	a := open(f, db, adapter.Config{OSView: &osView{os: &adapter.OS{Netdevs: []adapter.Netdev{{Name: "eth3"}}}}})
	if _, err := a.Ports(ctx); err != nil {
		t.Fatal(err)
	}
	n := f.Count("PMLP")
	p, err := a.Port(ctx, 1)
	if err != nil || p.Netdev != "eth3" {
		t.Errorf("port 1: %+v %v", p, err)
	}
	_, err = a.Port(ctx, 2)
	var np *adapter.NoPortError
	if !errors.As(err, &np) || np.Port != 2 || !strings.Contains(err.Error(), "no local port 2 (it owns port 1 (eth3)") {
		t.Errorf("port 2: %v", err)
	}
	if f.Count("PMLP") != n {
		t.Errorf("PMLP read again: %d accesses after %d", f.Count("PMLP"), n)
	}
}

func TestNoPortErrorLists(t *testing.T) {
	for _, c := range []struct {
		have []adapter.Port
		want string
	}{
		{nil, "it owns port none"},
		{[]adapter.Port{{Local: 1}, {Local: 2, Netdev: "eth1"}}, "it owns port 1 and 2 (eth1)"},
		{[]adapter.Port{{Local: 1}, {Local: 2}, {Local: 3}}, "it owns port 1, 2 and 3"},
	} {
		err := &adapter.NoPortError{Port: 4, Have: c.have}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %q lacks %q", c.have, err, c.want)
		}
	}
}

func TestRegisterLinks(t *testing.T) {
	db := devtest.DB(t)
	f := devtest.New(db)
	mgir(f, "hw_info.num_ports=4")
	for p := 1; p <= 4; p++ {
		f.Put("PMLP", "local_port="+string(rune('0'+p)), "width=4")
	}
	f.Put("PAOS", "local_port=1", "admin_status=up", "oper_status=up")
	f.Put("PAOS", "local_port=2", "admin_status=down_by_configuration", "oper_status=down")
	f.Put("PAOS", "local_port=3", "admin_status=up_once", "oper_status=down")
	// Port 4: PAOS answers bad parameter (an instance exists for others).
	f.Put("PTYS", "local_port=1", "proto_mask=Ethernet", "data_rate_oper=2000", "max_port_rate=400")
	f.Put("PTYS", "local_port=3", "proto_mask=Ethernet", "data_rate_oper=0", "max_port_rate=0")
	ls, err := open(f, db, adapter.Config{}).Links(context.Background())
	eth := adapter.LinkEthernet // no PDDR: ports without VPI
	want := []adapter.Link{
		{Port: 1, AdminUp: bptr(true), OperUp: bptr(true), AdminStatus: "up", OperStatus: "up", SpeedGbps: fptr(200), MaxSpeedGbps: fptr(400), LinkLayer: eth},
		{Port: 2, AdminUp: bptr(false), OperUp: bptr(false), AdminStatus: "down_by_configuration", OperStatus: "down", LinkLayer: eth},
		{Port: 3, AdminUp: bptr(true), OperUp: bptr(false), AdminStatus: "up_once", OperStatus: "down", SpeedGbps: fptr(0), LinkLayer: eth},
		{Port: 4, LinkLayer: eth},
	}
	if d := cmp.Diff(want, ls); d != "" {
		t.Errorf("links (-want +got):\n%s", d)
	}
	// PTYS of ports 2 and 4 answered "bad parameter": a partial error,
	// as is port 4's PAOS.
	if err == nil || !strings.Contains(err.Error(), "port 4 PAOS") || !strings.Contains(err.Error(), "port 2 PTYS") || !errors.Is(err, dev.ErrNoSuchInstance) {
		t.Errorf("partial error: %v", err)
	}
	// A firmware without PTYS is not a fault.
	g := devtest.New(db)
	mgir(g, "hw_info.num_ports=1")
	g.Put("PAOS", "local_port=1", "admin_status=up_lowest_rate", "oper_status=up")
	ls, err = open(g, db, adapter.Config{}).Links(context.Background())
	if err != nil || len(ls) != 1 || !*ls[0].AdminUp || ls[0].SpeedGbps != nil {
		t.Errorf("no PTYS: %+v %v", ls, err)
	}
}

func TestRegisterTemperatures(t *testing.T) {
	db := devtest.DB(t)
	f := devtest.New(db)
	mgir(f)
	f.Put("PMLP", "local_port=1", "width=4", "lane_module_mapping[0].module=0")
	f.Put("PMLP", "local_port=2", "width=4", "lane_module_mapping[0].module=1")
	f.Put("MTCAP", "sensor_map=0x5") // sensors 0 and 2
	// 60.5 °C (1/8 °C units), highest 62, warning at 105.
	f.Put("MTMP", "sensor_index=0", "temperature=484", "max_temperature=496", "mte=1", "temperature_threshold_hi=840")
	// The "no reading" pattern, with a name of its own.
	f.Put("MTMP", "sensor_index=2", "temperature=0x8000", "max_temperature=0x8000", "mte=1", "sensor_name=ambient")
	// Module 0 reads zero: an empty cage, not 0 °C.
	f.Put("MTMP", "sensor_index=64", "temperature=0", "mte=1")
	// Module 1's sensor answers a status: the cage is empty; left out.
	f.Fail("MTMP", dev.StatusResourceNotAvailable, "sensor_index=65")
	ts, err := open(f, db, adapter.Config{}).Temperatures(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []adapter.Temperature{
		{Sensor: "sensor0", Index: 0, Kind: "asic", Module: -1, Celsius: fptr(60.5), Highest: fptr(62), High: fptr(105)},
		{Sensor: "ambient", Index: 2, Kind: "asic", Module: -1, Invalid: "the sensor reads 0x8000, the pattern of no reading"},
		{Sensor: "sensor64", Index: 64, Kind: "module", Module: 0, Invalid: "the module sensor reads 0: an empty cage, or a module without a temperature monitor"},
	}
	if d := cmp.Diff(want, ts); d != "" {
		t.Errorf("temperatures (-want +got):\n%s", d)
	}
	// mte clear: the highest reading is not kept.
	g := devtest.New(db)
	mgir(g, "hw_info.num_ports=1")
	g.Put("MTMP", "sensor_index=0", "temperature=400", "max_temperature=480", "mte=0")
	g.Fail("MTMP", dev.StatusBadParameter, "sensor_index=64")
	ts, err = open(g, db, adapter.Config{}).Temperatures(context.Background())
	// No MTCAP: sensor 0 alone; module 0's sensor answering "bad
	// parameter" is an empty cage, not an error.
	want = []adapter.Temperature{{Sensor: "sensor0", Index: 0, Kind: "asic", Module: -1, Celsius: fptr(50)}}
	if d := cmp.Diff(want, ts); d != "" || err != nil {
		t.Errorf("no MTCAP (-want +got):\n%s\nerr %v", d, err)
	}
	// An ASIC sensor answering a status is an error of that sensor.
	h := devtest.New(db)
	mgir(h, "hw_info.num_ports=1")
	h.Put("MTCAP", "sensor_map=0x3")
	h.Put("MTMP", "sensor_index=0", "temperature=400")
	h.Fail("MTMP", dev.StatusBusy, "sensor_index=1")
	ts, err = open(h, db, adapter.Config{}).Temperatures(context.Background())
	if len(ts) != 1 || err == nil || !strings.Contains(err.Error(), "sensor 1") || !errors.Is(err, dev.ErrBusy) {
		t.Errorf("busy sensor: %+v %v", ts, err)
	}
}

func TestRegisterCounters(t *testing.T) {
	db := devtest.DB(t)
	f := devtest.New(db)
	mgir(f)
	f.Put("PMLP", "local_port=1", "width=4", "lane_module_mapping[0].module=0")
	f.Put("PPCNT", "local_port=1", "grp=0", "counter_set.eth_802_3_cntrs_grp_data_layout_ext.a_frames_transmitted_ok=0x100000002",
		"counter_set.eth_802_3_cntrs_grp_data_layout_ext.a_frame_check_sequence_errors=7")
	f.Put("PPCNT", "local_port=1", "grp=18", "counter_set.phys_layer_cntrs_ext.symbol_errors=11",
		"counter_set.phys_layer_cntrs_ext.rs_fec_uncorrectable_blocks=3")
	// Group 1 (RFC 2863) answers bad parameter: a partial error.
	cs, err := open(f, db, adapter.Config{}).PortCounters(context.Background())
	if len(cs) != 1 || cs[0].Port != 1 || cs[0].Kind != "ppcnt" {
		t.Fatalf("%+v %v", cs, err)
	}
	for name, want := range map[string]uint64{"a_frames_transmitted_ok": 0x100000002, "a_frame_check_sequence_errors": 7, "symbol_errors": 11,
		"rs_fec_uncorrectable_blocks": 3, "a_frames_received_ok": 0} {
		if got, ok := cs[0].Values[name]; !ok || got != want {
			t.Errorf("%s = %d (%v), want %d", name, got, ok, want)
		}
	}
	for name := range cs[0].Values {
		if strings.HasSuffix(name, "_high") || strings.HasSuffix(name, "_low") {
			t.Errorf("a half of a joined counter is listed: %s", name)
		}
	}
	if err == nil || !strings.Contains(err.Error(), "port 1 PPCNT group 1") {
		t.Errorf("partial error: %v", err)
	}
	// No group answers: an error and no set.
	g := devtest.New(db)
	mgir(g, "hw_info.num_ports=1")
	cs, err = open(g, db, adapter.Config{}).PortCounters(context.Background())
	if cs != nil || !errors.Is(err, dev.ErrNotSupported) {
		t.Errorf("no PPCNT: %+v %v", cs, err)
	}
}

// A transport failure drops the register path, and the next read opens
// it again; a firmware status does not.
func TestReopenAfterTransportFailure(t *testing.T) {
	ctx := context.Background()
	db := devtest.DB(t)
	f := devtest.New(db)
	mgir(f)
	gone := errors.New("config space reads all ones")
	fail := false
	f.Hook = func(dev.Method, string) error {
		if fail {
			return gone
		}
		return nil
	}
	opens, closes := 0, 0
	reopen := func(context.Context) (*dev.Device, error) {
		opens++
		return dev.New("test", testBDF, dev.BackendDirect, db, f, func() error { closes++; return nil }), nil
	}
	a := open(f, db, adapter.Config{Reopen: reopen})
	if !a.HasRegisters() {
		t.Fatal("an adapter that can reopen has registers")
	}
	if _, err := a.Identity(ctx); err != nil || opens != 1 {
		t.Fatalf("first read: %v, %d opens", err, opens)
	}
	// A firmware status keeps the path.
	if _, err := a.Temperatures(ctx); err == nil || opens != 1 || closes != 0 {
		t.Fatalf("status: %v, %d opens %d closes", err, opens, closes)
	}
	held, err := a.Registers(ctx) // as an NV session holds it
	if err != nil {
		t.Fatal(err)
	}
	fail = true
	// A read (Identity is kept from the first one).
	if _, err := a.ReadRegister(ctx, "MGIR", nil); !errors.Is(err, gone) || closes != 1 {
		t.Fatalf("transport failure: %v, %d closes", err, closes)
	}
	fail = false
	// Whoever held the dropped path learns why it went (issue 26.10).
	var ge *dev.GoneError
	if _, err := held.Get(ctx, "MGIR", nil, nil, 0); !errors.As(err, &ge) || !errors.Is(err, gone) {
		t.Errorf("the dropped path, still held: %v", err)
	}
	if _, err := a.Identity(ctx); err != nil || opens != 2 {
		t.Fatalf("after the failure: %v, %d opens", err, opens)
	}
	// Closing releases the reopened path.
	if err := a.Close(); err != nil || closes != 2 {
		t.Errorf("close: %v, %d closes", err, closes)
	}
	// A reopen that fails says why.
	broken := errors.New("no such device")
	a2 := open(f, db, adapter.Config{Reopen: func(context.Context) (*dev.Device, error) { return nil, broken }})
	if _, err := a2.Registers(ctx); !errors.Is(err, broken) {
		t.Errorf("reopen error: %v", err)
	}
}

// Identity is read once: a second call makes no register transaction,
// and returns a copy the caller may change.
func TestIdentityReadOnce(t *testing.T) {
	ctx := context.Background()
	db := devtest.DB(t)
	f := devtest.New(db)
	mgir(f)
	reads := map[string]int{}
	f.Hook = func(_ dev.Method, reg string) error { reads[reg]++; return nil }
	a := open(f, db, adapter.Config{})
	first, err := a.Identity(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if reads["MGIR"] != 1 {
		t.Errorf("the first identity read MGIR %d times, want once (its build date comes from the same reading)", reads["MGIR"])
	}
	before := maps.Clone(reads)
	first.PSID = "changed by the caller"
	second, err := a.Identity(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(before, reads); d != "" {
		t.Errorf("the second identity read registers (-before +after):\n%s", d)
	}
	if second.PSID == first.PSID {
		t.Error("the caller's change reached the kept identity")
	}
	// Ports takes the port count from the same MGIR reading.
	if _, err := a.Ports(ctx); err != nil {
		t.Fatal(err)
	}
	if reads["MGIR"] != 1 {
		t.Errorf("Ports read MGIR again (%d reads)", reads["MGIR"])
	}
}

func TestCloseRunsBoth(t *testing.T) {
	db := devtest.DB(t)
	f := devtest.New(db)
	var order []string
	d := dev.New("t", testBDF, dev.BackendDirect, db, f, func() error { order = append(order, "registers"); return nil })
	bad := errors.New("cleanup failed")
	a := open(f, db, adapter.Config{Registers: d, Close: func() error { order = append(order, "backend"); return bad }})
	if err := a.Close(); !errors.Is(err, bad) {
		t.Errorf("close: %v", err)
	}
	if d := cmp.Diff([]string{"registers", "backend"}, order); d != "" {
		t.Errorf("close order (-want +got):\n%s", d)
	}
}

// osView is an injected OS view (what the emulator provides).
type osView struct {
	os      *adapter.OS
	osErr   error
	rdma    map[int]map[string]uint64
	rdmaErr map[int]error
}

func (v *osView) OS(context.Context) (*adapter.OS, error) { return v.os, v.osErr }

func (v *osView) RDMACounters(_ context.Context, port int) (map[string]uint64, error) {
	if err := v.rdmaErr[port]; err != nil {
		return nil, err
	}
	return v.rdma[port], nil
}

func TestRDMACounters(t *testing.T) {
	ctx := context.Background()
	db := devtest.DB(t)
	f := devtest.New(db)
	mgir(f)
	f.Put("PMLP", "local_port=1", "width=4")
	f.Put("PMLP", "local_port=2", "width=4", "lane_module_mapping[0].module=1")
	// Without an OS view there are no RDMA counters.
	_, err := open(f, db, adapter.Config{}).RDMACounters(ctx)
	if !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), "RDMA hw_counters is not available on the direct backend") {
		t.Errorf("no OS view: %v", err)
	}
	down := errors.New("port 2 has no RDMA port")
	v := &osView{os: &adapter.OS{}, rdma: map[int]map[string]uint64{1: {"out_of_sequence": 5}}, rdmaErr: map[int]error{2: down}}
	cs, err := open(f, db, adapter.Config{OSView: v}).RDMACounters(ctx)
	want := []adapter.CounterSet{{Port: 1, Kind: "rdma", Values: map[string]uint64{"out_of_sequence": 5}}}
	if d := cmp.Diff(want, cs); d != "" {
		t.Errorf("rdma (-want +got):\n%s", d)
	}
	if !errors.Is(err, down) || !strings.Contains(err.Error(), "port 2:") {
		t.Errorf("partial: %v", err)
	}
	// Every port failing is an error without sets.
	v.rdmaErr[1] = down
	if cs, err := open(f, db, adapter.Config{OSView: v}).RDMACounters(ctx); cs != nil || !errors.Is(err, down) {
		t.Errorf("all failing: %+v %v", cs, err)
	}
}

// The ports' interfaces come from the OS view: one port takes its one
// uplink, several ports the uplinks in order when there are as many;
// representors are never a port's interface.
func TestNetdevNaming(t *testing.T) {
	ctx := context.Background()
	db := devtest.DB(t)
	two := devtest.New(db)
	mgir(two)
	one := devtest.New(db)
	mgir(one, "hw_info.num_ports=1")
	cases := []struct {
		name string
		f    *devtest.Fake
		nds  []adapter.Netdev
		want []string
	}{
		{"one port, uplink and representor", one, []adapter.Netdev{{Name: "pf0hpf", Representor: true}, {Name: "ens1f0np0"}}, []string{"ens1f0np0"}},
		{"two ports in order", two, []adapter.Netdev{{Name: "ens1f1"}, {Name: "ens1f0"}}, []string{"ens1f0", "ens1f1"}},
		{"two ports, one interface: unnamed", two, []adapter.Netdev{{Name: "ens1f0"}}, []string{"", ""}},
		{"only a representor", one, []adapter.Netdev{{Name: "pf0vf0", Representor: true}}, []string{""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ps, err := open(c.f, db, adapter.Config{OSView: &osView{os: &adapter.OS{Netdevs: c.nds}}}).Ports(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range ps {
				got = append(got, p.Netdev)
			}
			if d := cmp.Diff(c.want, got); d != "" {
				t.Errorf("netdevs (-want +got):\n%s", d)
			}
		})
	}
	// An OS view that fails leaves the ports unnamed, not failing.
	ps, err := open(one, db, adapter.Config{OSView: &osView{osErr: errors.New("sysfs gone")}}).Ports(ctx)
	if err != nil || len(ps) != 1 || ps[0].Netdev != "" {
		t.Errorf("failing OS view: %+v %v", ps, err)
	}
}

func TestAccessorsAndErrors(t *testing.T) {
	ctx := context.Background()
	db := devtest.DB(t)
	f := devtest.New(db)
	clk := clock.NewManual(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	a := open(f, db, adapter.Config{Name: "emu:lab.yaml", BDF: "0000:04:00.0", Backend: dev.BackendEmulator, Clock: clk, Notes: []string{"through fwctl"}})
	if a.Name() != "emu:lab.yaml" || a.BDF() != "0000:04:00.0" || a.Backend() != dev.BackendEmulator || a.DB() != db || a.Kernel() != nil ||
		a.Clock() != clock.Clock(clk) || cmp.Diff([]string{"through fwctl"}, a.Notes()) != "" {
		t.Errorf("accessors: %v %v %v %v", a.Name(), a.BDF(), a.Backend(), a.Notes())
	}
	// Sleep runs on the adapter's clock.
	if err := a.Sleep(ctx, 90*time.Second); err != nil || !clk.Now().Equal(time.Date(2025, 1, 1, 0, 1, 30, 0, time.UTC)) {
		t.Errorf("sleep: %v, now %v", err, clk.Now())
	}
	// No OS view: the OS is not available.
	if _, err := a.OS(ctx); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("OS: %v", err)
	}
	// A wall clock by default.
	if _, ok := adapter.New(adapter.Config{DB: db}).Clock().(clock.Real); !ok {
		t.Error("the default clock is not the wall clock")
	}
	// Without registers: an UnsupportedError that names direct access.
	k := adapter.New(adapter.Config{Name: "kernel:mlx5_0", Backend: dev.BackendKernel, DB: db})
	_, err := k.Registers(ctx)
	var ue *adapter.UnsupportedError
	if !errors.As(err, &ue) || !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), "register access is not available on the kernel backend") ||
		!strings.Contains(err.Error(), "-d 0000:03:00.0 as root") {
		t.Errorf("registers on the kernel backend: %v", err)
	}
	if (&adapter.UnsupportedError{What: "x", Backend: "fwctl"}).Error() != "x is not available on the fwctl backend" {
		t.Error("an UnsupportedError without a reason")
	}
	timeout := errors.New("devlink timed out")
	pe := &adapter.PartialError{What: "the stored firmware version", Err: timeout}
	if !adapter.IsPartial(pe) || !adapter.IsPartial(errors.Join(errors.New("x"), pe)) || adapter.IsPartial(errors.New("x")) || adapter.IsPartial(nil) ||
		!errors.Is(pe, timeout) || !strings.HasPrefix(pe.Error(), "the stored firmware version is unknown: ") {
		t.Errorf("PartialError: %v", pe)
	}
}

// A module sensor the firmware is busy with is not an empty cage: the
// reading failed, and the caller should hear of it as it does for an ASIC
// sensor.
func TestBusyModuleSensorIsAnError(t *testing.T) {
	db := devtest.DB(t)
	f := devtest.New(db)
	mgir(f, "hw_info.num_ports=1")
	f.Put("MTMP", "sensor_index=0", "temperature=400")
	f.Fail("MTMP", dev.StatusBusy, "sensor_index=64")
	ts, err := open(f, db, adapter.Config{}).Temperatures(context.Background())
	if len(ts) != 1 || !errors.Is(err, dev.ErrBusy) || !strings.Contains(err.Error(), "sensor 64") {
		t.Errorf("%+v %v", ts, err)
	}
}
