package fw_test

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/emu"
	"github.com/cxray/cxray/emu/fw"
	"github.com/cxray/cxray/internal/clock"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/builtin"
)

var t0 = time.Date(2024, 5, 1, 8, 0, 0, 0, time.UTC)

func testSpec() fw.Spec {
	protos := []string{"400GAUI-4", "200GAUI-4", "100GAUI-2", "CAUI-4", "25GAUI-1"}
	traffic := fw.Traffic{TxFramesPerSec: 1e6, RxFramesPerSec: 8e5, FrameBytes: 1000,
		MulticastShare: 0.01, BroadcastShare: 0.001, FECCorrectedPerSec: 50, PriorityShare: [8]float64{0.6, 0, 0, 0.4}}
	return fw.Spec{
		Name: "test", PCIDeviceID: 0x1021, HWDevID: 0x218,
		FW: fw.Version{Major: 28, Minor: 39, SubMinor: 1010}, FWBuildTime: time.Date(2023, 10, 5, 17, 43, 12, 0, time.UTC),
		PSID: "MT_0000000834", PartNumber: "EMU-CX7-2P400G", Description: "Emulated ConnectX-7 2x400GbE adapter for tests",
		BaseMAC: 0xb83fd2a1b2c0, Seed: 42, Boot: t0, Secure: true,
		Ports: []fw.PortSpec{
			{Module: 0, Lanes: 4, Protocols: protos, Traffic: traffic},
			{Module: 1, Lanes: 4, Protocols: protos, Traffic: traffic},
		},
		Modules: []fw.ModuleSpec{{}, {Media: "copper"}},
		RoCE:    fw.RoCESpec{Supported: []string{"roce_adp_retrans", "roce_tx_window", "roce_slow_restart"}, Enabled: []string{"roce_adp_retrans"}},
	}
}

type rig struct {
	t   testing.TB
	db  *prm.DB
	clk *clock.Manual
	fw  *fw.Firmware
}

func newRig(t testing.TB, mod ...func(*fw.Spec)) *rig {
	t.Helper()
	db, err := builtin.Load()
	if err != nil {
		t.Fatal(err)
	}
	spec := testSpec()
	for _, m := range mod {
		m(&spec)
	}
	clk := clock.NewManual(t0)
	f, err := fw.New(fw.Config{DB: db, Spec: spec, Clock: clk, Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	return &rig{t: t, db: db, clk: clk, fw: f}
}

// image builds a register image through the codec.
func (r *rig) image(reg string, kv ...string) (*prm.Register, *prm.Plan, []byte) {
	r.t.Helper()
	rg, err := r.db.Register(reg)
	if err != nil {
		r.t.Fatal(err)
	}
	p, err := r.db.RegisterPlan(rg)
	if err != nil {
		r.t.Fatal(err)
	}
	buf := p.NewBuffer()
	var as []prm.Assignment
	for i := 0; i+1 < len(kv); i += 2 {
		as = append(as, prm.Assignment{Path: kv[i], Value: kv[i+1]})
	}
	if err := p.Encode(buf, as); err != nil {
		r.t.Fatal(err)
	}
	return rg, p, buf
}

// access sends a request and decodes the answer.
func (r *rig) access(m emu.Method, reg string, kv ...string) (*prm.Decoded, uint8) {
	r.t.Helper()
	rg, p, buf := r.image(reg, kv...)
	out, st := r.fw.AccessRegister(uint16(rg.ID), m, buf)
	if st != fw.StatusOK {
		return nil, st
	}
	if len(out) != len(buf) {
		r.t.Fatalf("%s: reply is %d bytes, request %d", reg, len(out), len(buf))
	}
	d, err := p.Decode(out)
	if err != nil {
		r.t.Fatal(err)
	}
	return d, st
}

func (r *rig) get(reg string, kv ...string) *prm.Decoded {
	r.t.Helper()
	d, st := r.access(emu.MethodGet, reg, kv...)
	if st != fw.StatusOK {
		r.t.Fatalf("GET %s %v: status %d (%s); last error %v", reg, kv, st, fw.StatusName(st), r.fw.LastError())
	}
	return d
}

func (r *rig) set(reg string, kv ...string) *prm.Decoded {
	r.t.Helper()
	d, st := r.access(emu.MethodSet, reg, kv...)
	if st != fw.StatusOK {
		r.t.Fatalf("SET %s %v: status %d (%s)", reg, kv, st, fw.StatusName(st))
	}
	return d
}

func u(t *testing.T, d *prm.Decoded, path string) uint64 {
	t.Helper()
	v, err := d.Get(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v.Uint()
}

func text(t *testing.T, d *prm.Decoded, path string) string {
	t.Helper()
	v, err := d.Get(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v.TextString()
}

func enum(t *testing.T, d *prm.Decoded, path string) string {
	t.Helper()
	v, err := d.Get(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	n, ok := v.EnumName()
	if !ok {
		return fmt.Sprint(v.Uint())
	}
	return n
}

func TestMGIR(t *testing.T) {
	r := newRig(t)
	r.clk.Advance(90 * time.Second)
	d := r.get("MGIR")
	for path, want := range map[string]uint64{
		"hw_info.device_id": 0x1021, "hw_info.hw_dev_id": 0x218, "hw_info.num_ports": 2, "hw_info.uptime": 90,
		"hw_info.manufacturing_base_mac": 0xb83fd2a1b2c0,
		"fw_info.major":                  28, "fw_info.minor": 39, "fw_info.sub_minor": 1010 & 0xFF,
		"fw_info.extended_major": 28, "fw_info.extended_minor": 39, "fw_info.extended_sub_minor": 1010,
		"fw_info.year": 0x2023, "fw_info.month": 0x10, "fw_info.day": 0x05, "fw_info.hour": 0x1743,
		"fw_info.secured": 1, "fw_info.signed_fw": 1,
	} {
		if got := u(t, d, path); got != want {
			t.Errorf("%s = %#x, want %#x", path, got, want)
		}
	}
	if got := text(t, d, "fw_info.psid"); got != "MT_0000000834" {
		t.Errorf("psid = %q", got)
	}
}

func TestUnknownRegisterAndLength(t *testing.T) {
	r := newRig(t)
	if _, st := r.fw.AccessRegister(0x9FFE, emu.MethodGet, make([]byte, 16)); st != fw.StatusRegNotSupported {
		t.Errorf("unknown register: status %d, want 4", st)
	}
	rg, _, buf := r.image("PAOS", "local_port", "1")
	if _, st := r.fw.AccessRegister(uint16(rg.ID), emu.MethodGet, buf[:8]); st != 7 {
		t.Errorf("short PAOS: status %d, want 7", st)
	}
	// A longer request (a newer database's layout) is answered with the
	// firmware's own layout, the bytes past it zero.
	long := append(append([]byte(nil), buf...), 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0)
	out, st := r.fw.AccessRegister(uint16(rg.ID), emu.MethodGet, long)
	if st != fw.StatusOK || len(out) != len(long) || !bytes.Equal(out[len(buf):], make([]byte, 8)) {
		t.Errorf("long PAOS: status %d, %x", st, out)
	}
	if _, st := r.fw.AccessRegister(uint16(rg.ID), emu.MethodGet, make([]byte, 0x340)); st != fw.StatusBadLength {
		t.Errorf("PAOS beyond one access: status %d, want 7", st)
	}
	// A register whose layout ends in a VARIABLE array may be longer
	// (modelled here by the store, for the test).
	if err := r.fw.SetBehaviour("DCBX_APPLICATION", fw.Behaviour{Access: func(c *fw.Call) uint8 { return c.Generic() }}); err != nil {
		t.Fatal(err)
	}
	vr, _, vbuf := r.image("DCBX_APPLICATION")
	if _, st := r.fw.AccessRegister(uint16(vr.ID), emu.MethodGet, append(vbuf, make([]byte, 8)...)); st != fw.StatusOK {
		t.Errorf("long DCBX_APPLICATION: status %d, want 0", st)
	}
	if _, st := r.fw.AccessRegister(uint16(rg.ID), emu.Method(3), buf); st != fw.StatusMethodNotSupp {
		t.Errorf("method 3: status %d, want 6", st)
	}
}

func TestPAOSRoundTripAndASE(t *testing.T) {
	r := newRig(t)
	d := r.get("PAOS", "local_port", "1")
	if enum(t, d, "admin_status") != "up" || enum(t, d, "oper_status") != "up" {
		t.Fatalf("port 1 at power-on: admin %s oper %s", enum(t, d, "admin_status"), enum(t, d, "oper_status"))
	}
	// Without ase the admin state is not touched.
	r.set("PAOS", "local_port", "1", "admin_status", "down_by_configuration")
	if d := r.get("PAOS", "local_port", "1"); enum(t, d, "admin_status") != "up" {
		t.Errorf("SET without ase changed admin_status to %s", enum(t, d, "admin_status"))
	}
	r.set("PAOS", "local_port", "1", "admin_status", "down_by_configuration", "ase", "1", "e", "Generate_Event", "ee", "1")
	d = r.get("PAOS", "local_port", "1")
	if enum(t, d, "admin_status") != "down_by_configuration" || enum(t, d, "oper_status") != "down" || enum(t, d, "e") != "Generate_Event" {
		t.Errorf("after SET: admin %s oper %s e %s", enum(t, d, "admin_status"), enum(t, d, "oper_status"), enum(t, d, "e"))
	}
	if u(t, d, "ase") != 0 || u(t, d, "ee") != 0 {
		t.Errorf("write-only ase/ee read back as %d/%d", u(t, d, "ase"), u(t, d, "ee"))
	}
	// The other port is untouched; an unknown port is a bad parameter.
	if d := r.get("PAOS", "local_port", "2"); enum(t, d, "oper_status") != "up" {
		t.Errorf("port 2 went %s", enum(t, d, "oper_status"))
	}
	if _, st := r.access(emu.MethodGet, "PAOS", "local_port", "9"); st != fw.StatusBadParam {
		t.Errorf("port 9: status %d, want 7", st)
	}
	// RO oper_status in a SET is ignored.
	r.set("PAOS", "local_port", "1", "admin_status", "up", "ase", "1", "oper_status", "down_by_port_failure")
	if d := r.get("PAOS", "local_port", "1"); enum(t, d, "oper_status") != "up" {
		t.Errorf("oper_status after SET with RO bits: %s", enum(t, d, "oper_status"))
	}
}

func TestPMAOSRoundTripAndModuleStatus(t *testing.T) {
	r := newRig(t)
	d := r.get("PMAOS", "module", "1")
	if enum(t, d, "oper_status") != "plugged_enabled" || enum(t, d, "admin_status") != "enabled" {
		t.Fatalf("module 1: oper %s admin %s", enum(t, d, "oper_status"), enum(t, d, "admin_status"))
	}
	// A module cannot be disabled while its port is up.
	if _, st := r.access(emu.MethodSet, "PMAOS", "module", "1", "admin_status", "disabled_by_configuration", "ase", "1"); st != fw.StatusBadParam {
		t.Errorf("disable module under an up port: status %d, want 7", st)
	}
	r.set("PAOS", "local_port", "2", "admin_status", "down_by_configuration", "ase", "1")
	r.set("PMAOS", "module", "1", "admin_status", "disabled_by_configuration", "ase", "1", "oper_status", "unplugged")
	d = r.get("PMAOS", "module", "1")
	if enum(t, d, "admin_status") != "disabled_by_configuration" || enum(t, d, "oper_status") != "plugged_disabled" {
		t.Errorf("after disable: admin %s oper %s", enum(t, d, "admin_status"), enum(t, d, "oper_status"))
	}
	// The optics model reports plug state and errors.
	if err := r.fw.SetModuleStatus(0, fw.ModuleStatus{Plugged: true, Error: "High_Temperature"}); err != nil {
		t.Fatal(err)
	}
	d = r.get("PMAOS", "module", "0")
	if enum(t, d, "oper_status") != "module_plugged_with_error" || enum(t, d, "error_type") != "High_Temperature" {
		t.Errorf("module 0 with error: oper %s error %s", enum(t, d, "oper_status"), enum(t, d, "error_type"))
	}
	if d := r.get("PAOS", "local_port", "1"); enum(t, d, "oper_status") != "down_by_port_failure" {
		t.Errorf("port 1 over a failed module: %s", enum(t, d, "oper_status"))
	}
	if err := r.fw.SetModuleStatus(0, fw.ModuleStatus{}); err != nil {
		t.Fatal(err)
	}
	if d := r.get("PMAOS", "module", "0"); enum(t, d, "oper_status") != "unplugged" {
		t.Errorf("unplugged module: %s", enum(t, d, "oper_status"))
	}
	if err := r.fw.SetModuleStatus(0, fw.ModuleStatus{Plugged: true, Error: "melted"}); err == nil || !strings.Contains(err.Error(), "bad_cable") {
		t.Errorf("unknown error type: %v", err)
	}
	// A reset takes the module through initialisation.
	r.fw.SetModuleStatus(0, fw.ModuleStatus{Plugged: true})
	r.set("PMAOS", "module", "0", "rst", "1")
	if d := r.get("PMAOS", "module", "0"); enum(t, d, "oper_status") != "initializing" {
		t.Errorf("after rst: %s", enum(t, d, "oper_status"))
	}
	r.clk.Advance(3 * time.Second)
	if d := r.get("PMAOS", "module", "0"); enum(t, d, "oper_status") != "plugged_enabled" {
		t.Errorf("3 s after rst: %s", enum(t, d, "oper_status"))
	}
}

func TestGenericStore(t *testing.T) {
	r := newRig(t)
	// PMPT is kept by the store: per module, RW fields only.
	r.set("PMPT", "module", "1", "e", "1", "status", "3")
	d := r.get("PMPT", "module", "1")
	if u(t, d, "e") != 1 || u(t, d, "status") != 0 || u(t, d, "module") != 1 {
		t.Errorf("PMPT module 1: e %d status %d", u(t, d, "e"), u(t, d, "status"))
	}
	if d := r.get("PMPT", "module", "2"); u(t, d, "e") != 0 || u(t, d, "module") != 2 {
		t.Errorf("PMPT module 2 shares module 1's instance")
	}
}

// A register of the database the firmware does not model is refused as
// firmware refuses a register it lacks (status 4), for GET and SET, and
// is not advertised: the store no longer answers it with zeros (PMTU
// read max_mtu 0). What is answered is what has a behaviour or is kept
// by the store; NVIDIA's tools' reads are among them.
func TestUnmodelledRegisterRefused(t *testing.T) {
	r := newRig(t)
	for _, m := range []emu.Method{emu.MethodGet, emu.MethodSet} {
		if _, st := r.access(m, "PMTU", "local_port", "1"); st != fw.StatusRegNotSupported {
			t.Errorf("PMTU %v: status %d, want 4 (register not supported)", m, st)
		}
	}
	if n := 0x5003 - 0x5000; u(t, r.get("PCAM"), fmt.Sprintf("port_access_reg_cap_mask[%d]", 3-n/32))>>(n%32)&1 != 0 {
		t.Error("PCAM advertises PMTU, which this firmware does not model")
	}
	answered := map[string]bool{}
	for _, rg := range r.fw.Supported() {
		answered[rg.Name] = true
	}
	for _, name := range []string{"PMTU", "PFCC", "MCDD"} {
		if answered[name] {
			t.Errorf("%s is listed as supported without a model", name)
		}
	}
	for _, name := range append(r.fw.Handled(), "MCC", "MCDA", "MFSV", "PMPT", "PPHCR") {
		if !answered[name] {
			t.Errorf("%s has a model but is not listed as supported", name)
		}
	}
	// A behaviour removed: the register is refused again.
	if err := r.fw.SetBehaviour("PGUID", fw.Behaviour{}); err != nil {
		t.Fatal(err)
	}
	if _, st := r.access(emu.MethodGet, "PGUID", "local_port", "1"); st != fw.StatusRegNotSupported {
		t.Errorf("PGUID without its behaviour: status %d", st)
	}
}

// MCAM, PCAM and QCAM advertise exactly the registers of their groups
// the firmware answers (PCAM and QCAM answered all zeros, so 'reg list'
// said PAOS, PPCNT and PCAM itself were not advertised).
func TestMCAMMatchesAnswers(t *testing.T) {
	r := newRig(t, func(s *fw.Spec) { s.Unsupported = []string{"MCDD", "PMTU"} })
	type group struct {
		cam, mask string
		n, base   int
	}
	for _, g := range []group{{"MCAM", "mng_access_reg_cap_mask", 0, 0x9000}, {"MCAM", "mng_access_reg_cap_mask", 1, 0x9080},
		{"MCAM", "mng_access_reg_cap_mask", 2, 0x9100}, {"PCAM", "port_access_reg_cap_mask", 0, 0x5000}, {"QCAM", "qos_access_reg_cap_mask", 0, 0x4000}} {
		group, base := g.n, g.base
		d := r.get(g.cam, "access_reg_group", fmt.Sprint(group))
		var words [4]uint64
		for i := range words {
			words[i] = u(t, d, fmt.Sprintf("%s[%d]", g.mask, i))
		}
		for n := 0; n < 128; n++ {
			id := uint16(base + n)
			bit := words[3-n/32]>>(n%32)&1 == 1
			size := 16
			if rg, ok := r.db.RegisterByID(uint32(id)); ok {
				size = rg.Size
			}
			_, st := r.fw.AccessRegister(id, emu.MethodGet, make([]byte, size))
			if answered := st != fw.StatusRegNotSupported; answered != bit {
				t.Errorf("register 0x%04x: %s bit %v, answered %v (status %d)", id, g.cam, bit, answered, st)
			}
		}
	}
	d := r.get("MCAM")
	// What mstflint needs for its MCC path: MCQS..MQIS and MGIR, not MCDD.
	for _, id := range []int{0x9060, 0x9061, 0x9062, 0x9063, 0x9064, 0x9020, 0x907F} {
		n := id - 0x9000
		if u(t, d, fmt.Sprintf("mng_access_reg_cap_mask[%d]", 3-n/32))>>(n%32)&1 != 1 {
			t.Errorf("MCAM does not advertise 0x%04x", id)
		}
	}
	if _, st := r.access(emu.MethodGet, "MCDD"); st != fw.StatusRegNotSupported {
		t.Errorf("MCDD (unsupported): status %d", st)
	}
	if _, st := r.access(emu.MethodGet, "MCAM", "access_reg_group", "3"); st != fw.StatusBadParam {
		t.Errorf("MCAM group 3: status %d", st)
	}
	p := r.get("PCAM")
	for _, id := range []int{0x5006, 0x5008, 0x5031, 0x507F} { // PAOS, PPCNT, PDDR, PCAM
		n := id - 0x5000
		if u(t, p, fmt.Sprintf("port_access_reg_cap_mask[%d]", 3-n/32))>>(n%32)&1 != 1 {
			t.Errorf("PCAM does not advertise 0x%04x", id)
		}
	}
	if n := 0x5003 - 0x5000; u(t, p, fmt.Sprintf("port_access_reg_cap_mask[%d]", 3-n/32))>>(n%32)&1 != 0 {
		t.Error("PCAM advertises PMTU, which this firmware does not support")
	}
	if _, st := r.access(emu.MethodGet, "PCAM", "access_reg_group", "1"); st != fw.StatusBadParam {
		t.Errorf("PCAM group 1: status %d", st)
	}
}

func TestComponents(t *testing.T) {
	r := newRig(t, func(s *fw.Spec) { s.PendingFW = &fw.Version{Major: 28, Minor: 40, SubMinor: 1000} })
	var ids []string
	for i := 0; i < 16; i++ {
		d := r.get("MCQS", "component_index", fmt.Sprint(i))
		ids = append(ids, enum(t, d, "identifier"))
		if u(t, d, "last_index_flag") == 1 {
			break
		}
	}
	if len(ids) < 2 || ids[0] != "BOOT_IMG" {
		t.Fatalf("components %v", ids)
	}
	d := r.get("MCQI", "info_type", "CAPABILITIES", "data_size", "0x14")
	if got := u(t, d, "data.mcqi_cap_ext.supported_info_bitmask"); got&2 == 0 {
		t.Errorf("supported_info_bitmask %#x lacks VERSION", got)
	}
	for _, tc := range []struct {
		pending bool
		want    string
	}{{false, "28.39.1010"}, {true, "28.40.1000"}} {
		d := r.get("MCQI", "info_type", "VERSION", "read_pending_component", fmt.Sprint(b2i(tc.pending)))
		p := "data.mcqi_version_ext."
		if got := text(t, d, p+"version_string"); got != tc.want {
			t.Errorf("pending=%v: version_string %q, want %q", tc.pending, got, tc.want)
		}
		v := u(t, d, p+"version")
		if got := fmt.Sprintf("%d.%d.%04d", v>>24, v>>16&0xFF, v&0xFFFF); got != tc.want {
			t.Errorf("pending=%v: version %#x", tc.pending, v)
		}
		if u(t, d, p+"build_time_valid") != 1 || u(t, d, p+"version_string_length") != uint64(len(tc.want)) {
			t.Errorf("build_time_valid/version_string_length wrong")
		}
		// build_time: BCD date in the low dword (year, month, day).
		if bt := u(t, d, p+"build_time"); bt&0xFFFFFFFF != 0x20231005 {
			t.Errorf("build_time %#x", bt)
		}
		if u(t, d, "info_size") == 0 || u(t, d, "data_size") != u(t, d, "info_size") {
			t.Errorf("info_size %d data_size %d", u(t, d, "info_size"), u(t, d, "data_size"))
		}
	}
	// A window: offset 0x20 moves version_string to the start of data.
	d = r.get("MCQI", "info_type", "VERSION", "offset", "0x20", "data_size", "8")
	raw := d.Raw[0x18 : 0x18+8]
	if !bytes.Equal(raw[:8], []byte("28.39.10")) || u(t, d, "data_size") != 8 {
		t.Errorf("window at 0x20: % x (data_size %d)", raw, u(t, d, "data_size"))
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestMQISChunks(t *testing.T) {
	r := newRig(t)
	want := testSpec().Description
	var got []byte
	for off := 0; off < 4096; {
		d := r.get("MQIS", "info_type", "MODEL_DESCRIPTION", "read_offset", fmt.Sprint(off), "read_length", "8")
		n := int(u(t, d, "read_length"))
		if int(u(t, d, "info_length")) != len(want) {
			t.Fatalf("info_length %d", u(t, d, "info_length"))
		}
		if n == 0 {
			break
		}
		v, _ := d.Get("info_string")
		got = append(got, d.Raw[v.Bit()/8:v.Bit()/8+n]...)
		off += n
	}
	if string(got) != want {
		t.Errorf("description %q, want %q", got, want)
	}
	if d := r.get("MQIS", "info_type", "MODEL_NAME"); text(t, d, "info_string") != "EMU-CX7-" {
		t.Errorf("model name chunk %q", text(t, d, "info_string"))
	}
}

func TestPTYSAndPDDR(t *testing.T) {
	r := newRig(t)
	d := r.get("PTYS", "local_port", "1", "proto_mask", "Ethernet")
	capExt := u(t, d, "ext_eth_proto_capability")
	if capExt != 1<<16|1<<12|1<<10|1<<9|1<<6 {
		t.Errorf("ext capability %#x", capExt)
	}
	if u(t, d, "ext_eth_proto_oper") != 1<<16 || u(t, d, "data_rate_oper") != 4000 || u(t, d, "max_port_rate") != 400 {
		t.Errorf("oper %#x rate %d max %d", u(t, d, "ext_eth_proto_oper"), u(t, d, "data_rate_oper"), u(t, d, "max_port_rate"))
	}
	if u(t, d, "eth_proto_capability")&(1<<20) == 0 || enum(t, d, "connector_type") != "PORT_FIBRE" {
		t.Errorf("legacy cap %#x connector %s", u(t, d, "eth_proto_capability"), enum(t, d, "connector_type"))
	}
	// Restrict to 100G: the link re-trains at CAUI-4 (100G over 4 lanes).
	r.set("PTYS", "local_port", "1", "proto_mask", "Ethernet", "ext_eth_proto_admin", fmt.Sprint(1<<9|1<<10))
	d = r.get("PTYS", "local_port", "1", "proto_mask", "Ethernet")
	if u(t, d, "ext_eth_proto_oper") != 1<<9 || u(t, d, "eth_proto_oper") != 1<<21 || u(t, d, "ext_eth_proto_admin") != 1<<9|1<<10 {
		t.Errorf("after SET: oper %#x legacy %#x admin %#x", u(t, d, "ext_eth_proto_oper"), u(t, d, "eth_proto_oper"), u(t, d, "ext_eth_proto_admin"))
	}
	if _, st := r.access(emu.MethodSet, "PTYS", "local_port", "1", "proto_mask", "Ethernet", "ext_eth_proto_admin", fmt.Sprint(1<<15)); st != fw.StatusBadParam {
		t.Errorf("SET of an unsupported protocol: status %d", st)
	}

	pre := "page_data.pddr_operation_info_page_ext."
	d = r.get("PDDR", "local_port", "1", "page_select", "Operational_info_page")
	if u(t, d, pre+"proto_active") != 4 || enum(t, d, pre+"phy_mngr_fsm_state") != "Active_or_Linkup" ||
		u(t, d, pre+"link_active.pddr_link_active_eth_ext.link_eth_active") != 1<<9 || enum(t, d, pre+"fec_mode_active") != "Standard_RS_FEC" {
		t.Errorf("PDDR page 0: proto %d fsm %s active %#x fec %s", u(t, d, pre+"proto_active"), enum(t, d, pre+"phy_mngr_fsm_state"),
			u(t, d, pre+"link_active.pddr_link_active_eth_ext.link_eth_active"), enum(t, d, pre+"fec_mode_active"))
	}
	tp := "page_data.pddr_troubleshooting_page_ext."
	d = r.get("PDDR", "local_port", "1", "page_select", "Troubleshooting_info_page", tp+"group_opcode", "Advanced_debug_opcodes")
	if u(t, d, tp+"status_opcode.pddr_advanced_opcode_ext.advanced_opcode") != 0 || !strings.HasPrefix(statusMessage(t, d), "No issue") {
		t.Errorf("troubleshooting of an up port: %d %q", u(t, d, tp+"status_opcode.pddr_advanced_opcode_ext.advanced_opcode"), statusMessage(t, d))
	}
	r.fw.SetModuleStatus(0, fw.ModuleStatus{})
	d = r.get("PDDR", "local_port", "1", "page_select", "Troubleshooting_info_page")
	if u(t, d, tp+"status_opcode.pddr_monitor_opcode_ext.monitor_opcode") != 1024 || statusMessage(t, d) != "Cable is unplugged" {
		t.Errorf("unplugged: %d %q", u(t, d, tp+"status_opcode.pddr_monitor_opcode_ext.monitor_opcode"), statusMessage(t, d))
	}
	d = r.get("PDDR", "local_port", "1", "page_select", "Operational_info_page")
	if enum(t, d, pre+"phy_mngr_fsm_state") != "Polling" {
		t.Errorf("unplugged fsm %s", enum(t, d, pre+"phy_mngr_fsm_state"))
	}
	// A page without behaviour answers from the generic store.
	if _, st := r.access(emu.MethodGet, "PDDR", "local_port", "1", "page_select", "Module_info_page"); st != fw.StatusOK {
		t.Errorf("page 3: status %d", st)
	}
}

func statusMessage(t *testing.T, d *prm.Decoded) string {
	var b []byte
	for i := 0; i < 59; i++ {
		w := u(t, d, fmt.Sprintf("page_data.pddr_troubleshooting_page_ext.status_message[%d]", i))
		for s := 24; s >= 0; s -= 8 {
			if c := byte(w >> s); c != 0 {
				b = append(b, c)
			} else {
				return string(b)
			}
		}
	}
	return string(b)
}

func TestPMLP(t *testing.T) {
	r := newRig(t)
	d := r.get("PMLP", "local_port", "2")
	if enum(t, d, "width") != "x4" || u(t, d, "lane_module_mapping[3].module") != 1 || u(t, d, "lane_module_mapping[3].tx_lane") != 3 {
		t.Errorf("port 2 mapping: width %s lane3 module %d tx %d", enum(t, d, "width"), u(t, d, "lane_module_mapping[3].module"), u(t, d, "lane_module_mapping[3].tx_lane"))
	}
	if _, st := r.access(emu.MethodSet, "PMLP", "local_port", "2", "width", "x2"); st != fw.StatusBadParam {
		t.Errorf("PMLP SET on an up port: status %d", st)
	}
	r.set("PAOS", "local_port", "2", "admin_status", "down_by_configuration", "ase", "1")
	r.set("PMLP", "local_port", "2", "width", "x2", "lane_module_mapping[0].module", "1", "lane_module_mapping[1].module", "1",
		"lane_module_mapping[1].tx_lane", "1", "lane_module_mapping[1].rx_lane", "1")
	r.set("PAOS", "local_port", "2", "admin_status", "up", "ase", "1")
	for _, ps := range r.fw.Ports() {
		if ps.LocalPort == 2 && (ps.Lanes != 2 || ps.Protocol != "200GAUI-2" && ps.Protocol != "100GAUI-2") {
			t.Errorf("port 2 at width 2: %+v", ps)
		}
	}
}

func TestTemperatureFollowsClock(t *testing.T) {
	r := newRig(t)
	read := func() (int64, uint64) {
		d := r.get("MTMP", "sensor_index", "0")
		return int64(int16(u(t, d, "temperature"))), u(t, d, "max_temperature")
	}
	a, _ := read()
	b, _ := read()
	if a != b {
		t.Errorf("temperature moved without the clock: %d -> %d", a, b)
	}
	if a < 40*8 || a > 70*8 {
		t.Errorf("ASIC at power-on reads %.3f °C", float64(a)/8)
	}
	prev, moved := a, false
	var hi int64
	for i := 0; i < 200; i++ {
		r.clk.Advance(5 * time.Second)
		v, mx := read()
		if d := v - prev; d > 3*8 || d < -3*8 {
			t.Fatalf("temperature jumped %d -> %d in 5 s", prev, v)
		}
		moved = moved || v != prev
		hi = max(hi, v)
		if int64(mx) < hi {
			t.Fatalf("max_temperature %d below a reading %d", mx, hi)
		}
		prev = v
	}
	if !moved {
		t.Error("temperature never moved in 1000 s")
	}
	if d := r.get("MTCAP"); u(t, d, "sensor_count") != 1 || u(t, d, "sensor_map") != 1 {
		t.Errorf("MTCAP count %d map %#x", u(t, d, "sensor_count"), u(t, d, "sensor_map"))
	}
	d := r.get("MTMP", "sensor_index", "65")
	if v := int16(u(t, d, "temperature")); v < 20*8 || v > 60*8 {
		t.Errorf("module 1 reads %.3f °C", float64(v)/8)
	}
	if _, st := r.access(emu.MethodGet, "MTMP", "sensor_index", "5"); st != fw.StatusBadParam {
		t.Errorf("sensor 5: status %d", st)
	}
	// Thresholds are RW; mtr resets the maximum to the current reading.
	r.set("MTMP", "sensor_index", "0", "mte", "1", "mtr", "1", "temperature_threshold_hi", "800", "temperature_threshold_lo", "760")
	d = r.get("MTMP", "sensor_index", "0")
	if u(t, d, "temperature_threshold_hi") != 800 || u(t, d, "max_temperature") != u(t, d, "temperature") {
		t.Errorf("after SET: hi %d max %d temp %d", u(t, d, "temperature_threshold_hi"), u(t, d, "max_temperature"), u(t, d, "temperature"))
	}
	// Faults: frozen sensors stop moving; an offset heats the ASIC.
	if err := r.fw.SetFaults(fw.Faults{FreezeTemperatures: true}); err != nil {
		t.Fatal(err)
	}
	f1, _ := read()
	r.clk.Advance(time.Hour)
	if f2, _ := read(); f1 != f2 {
		t.Errorf("frozen sensor moved %d -> %d", f1, f2)
	}
	r.fw.SetFaults(fw.Faults{FreezeTemperatures: true, ASICTemperatureOffsetC: 40})
	if f3, _ := read(); f3 != f1+40*8 {
		t.Errorf("offset 40 °C: %d -> %d", f1, f3)
	}
}

func TestPPCNTGrowAndClear(t *testing.T) {
	r := newRig(t)
	const p8023 = "counter_set.eth_802_3_cntrs_grp_data_layout_ext."
	get := func(kv ...string) *prm.Decoded {
		return r.get("PPCNT", append([]string{"local_port", "1"}, kv...)...)
	}
	d := get("grp", "IEEE_802_3_Counters")
	if u(t, d, p8023+"a_frames_transmitted_ok") != 0 {
		t.Errorf("counters at power-on: %d", u(t, d, p8023+"a_frames_transmitted_ok"))
	}
	r.clk.Advance(10 * time.Second)
	d = get("grp", "IEEE_802_3_Counters")
	tx := u(t, d, p8023+"a_frames_transmitted_ok")
	if tx < 9.5e6 || tx > 10.5e6 {
		t.Errorf("10 s at ~1 Mpps: %d frames", tx)
	}
	if oct := u(t, d, p8023+"a_octets_transmitted_ok"); oct < tx*999 || oct > tx*1001 {
		t.Errorf("octets %d for %d frames of 1000 bytes", oct, tx)
	}
	// The halves and the joined value agree.
	if hi, lo := u(t, d, p8023+"a_frames_transmitted_ok_high"), u(t, d, p8023+"a_frames_transmitted_ok_low"); hi<<32|lo != tx {
		t.Errorf("halves %d/%d vs %d", hi, lo, tx)
	}
	// Read and clear: the GET returns the values, the next one starts over.
	r.clk.Advance(time.Second)
	d = get("grp", "IEEE_802_3_Counters", "clr", "1")
	if u(t, d, p8023+"a_frames_transmitted_ok") <= tx {
		t.Error("counters did not grow")
	}
	if d := get("grp", "IEEE_802_3_Counters"); u(t, d, p8023+"a_frames_transmitted_ok") != 0 {
		t.Errorf("after clr: %d", u(t, d, p8023+"a_frames_transmitted_ok"))
	}
	// Other groups keep counting; clr is per group.
	d = get("grp", "RFC_2863_Counters")
	if u(t, d, "counter_set.eth_2863_cntrs_grp_data_layout_ext.if_out_ucast_pkts") == 0 {
		t.Error("RFC 2863 cleared with IEEE 802.3")
	}
	// Per priority: 60 % on prio 0, 40 % on prio 3, none on prio 1.
	p0 := u(t, get("grp", "Per_Priority_Counters", "prio_tc", "0"), "counter_set.eth_per_prio_grp_data_layout_ext.tx_frames")
	p1 := u(t, get("grp", "Per_Priority_Counters", "prio_tc", "1"), "counter_set.eth_per_prio_grp_data_layout_ext.tx_frames")
	p3 := u(t, get("grp", "Per_Priority_Counters", "prio_tc", "3"), "counter_set.eth_per_prio_grp_data_layout_ext.tx_frames")
	if p1 != 0 || p0 == 0 || p3 == 0 || p0*2 < p3*3-p3/100 || p0*2 > p3*3+p3/100 {
		t.Errorf("per-priority tx frames %d / %d / %d", p0, p1, p3)
	}
	// Physical layer: time since clear in ms, FEC counts.
	d = get("grp", "Physical_Layer_Counters")
	if u(t, d, "counter_set.phys_layer_cntrs_ext.time_since_last_clear") != 11000 {
		t.Errorf("time_since_last_clear %d ms", u(t, d, "counter_set.phys_layer_cntrs_ext.time_since_last_clear"))
	}
	if c := u(t, d, "counter_set.phys_layer_cntrs_ext.rs_fec_corrected_blocks"); c < 500 || c > 600 {
		t.Errorf("corrected blocks %d in 11 s at ~50/s", c)
	}
	d = get("grp", "Physical_Layer_Statistical_Counters")
	sp := "counter_set.phys_layer_stat_cntrs_ext."
	if bits := u(t, d, sp+"phy_received_bits"); bits < 4e11*11*0.99 || bits > 4e11*11*1.01 {
		t.Errorf("received bits %d in 11 s at 400G", bits)
	}
	// ~50 corrected blocks/s × 1.3 symbols × 2 bits over 4e11 bits/s: about 3E-10.
	if c, m := u(t, d, sp+"raw_ber_coef"), u(t, d, sp+"raw_ber_magnitude"); m != 10 || c < 2 || c > 4 {
		t.Errorf("raw BER %dE-%d", c, m)
	}
	if c, m := u(t, d, sp+"effective_ber_coef"), u(t, d, sp+"effective_ber_magnitude"); c != 15 || m != 255 {
		t.Errorf("effective BER of a clean link %dE-%d", c, m)
	}
	// A down link does not count.
	r.set("PAOS", "local_port", "1", "admin_status", "down_by_configuration", "ase", "1")
	before := u(t, get("grp", "RFC_2863_Counters"), "counter_set.eth_2863_cntrs_grp_data_layout_ext.if_out_octets")
	r.clk.Advance(time.Minute)
	if after := u(t, get("grp", "RFC_2863_Counters"), "counter_set.eth_2863_cntrs_grp_data_layout_ext.if_out_octets"); after != before {
		t.Errorf("a down port counted %d -> %d", before, after)
	}
	// SET with clr clears and answers zeros.
	if d, st := r.access(emu.MethodSet, "PPCNT", "local_port", "2", "grp", "RFC_2863_Counters", "clr", "1"); st != fw.StatusOK ||
		u(t, d, "counter_set.eth_2863_cntrs_grp_data_layout_ext.if_out_octets") != 0 {
		t.Errorf("SET clr: status %d", st)
	}
	if v, err := r.fw.Counter(2, "RFC_2863_Counters", "counter_set.eth_2863_cntrs_grp_data_layout_ext.if_out_octets"); err != nil || v != 0 {
		t.Errorf("Counter after clr: %d %v", v, err)
	}
}

func TestROCEACCL(t *testing.T) {
	r := newRig(t)
	d := r.get("ROCE_ACCL")
	if u(t, d, "roce_adp_retrans_field_select") != 1 || u(t, d, "roce_adp_retrans_en") != 1 ||
		u(t, d, "roce_tx_window_field_select") != 1 || u(t, d, "roce_tx_window_en") != 0 ||
		u(t, d, "selective_repeat_forced_en_field_select") != 0 {
		t.Errorf("ROCE_ACCL query: %v", d.Assignments())
	}
	r.set("ROCE_ACCL", "roce_tx_window_field_select", "1", "roce_tx_window_en", "1", "roce_adp_retrans_en", "0")
	d = r.get("ROCE_ACCL")
	if u(t, d, "roce_tx_window_en") != 1 || u(t, d, "roce_adp_retrans_en") != 1 {
		t.Errorf("after SET: tx_window %d adp_retrans %d (not selected, must stay)", u(t, d, "roce_tx_window_en"), u(t, d, "roce_adp_retrans_en"))
	}
	if _, st := r.access(emu.MethodSet, "ROCE_ACCL", "selective_repeat_forced_en_field_select", "1", "selective_repeat_forced_en", "1"); st != fw.StatusBadParam {
		t.Errorf("SET of an unsupported feature: status %d", st)
	}
}

func TestFaults(t *testing.T) {
	r := newRig(t)
	var seen []fw.Result
	var mu sync.Mutex
	r.fw.SetObserver(func(res fw.Result) { mu.Lock(); seen = append(seen, res); mu.Unlock() })
	if err := r.fw.SetFaults(fw.Faults{Status: []fw.StatusFault{{Register: "PTYS", Method: emu.MethodSet, Status: fw.StatusResourceNotAvail}}, Busy: 1, LinkDown: []int{2}}); err != nil {
		t.Fatal(err)
	}
	if _, st := r.access(emu.MethodGet, "MGIR"); st != fw.StatusBusy {
		t.Errorf("busy fault: status %d", st)
	}
	r.get("MGIR")
	r.get("PTYS", "local_port", "1", "proto_mask", "Ethernet")
	if _, st := r.access(emu.MethodSet, "PTYS", "local_port", "1", "proto_mask", "Ethernet", "ext_eth_proto_admin", "0x10000"); st != fw.StatusResourceNotAvail {
		t.Errorf("status fault: %d", st)
	}
	if d := r.get("PAOS", "local_port", "2"); enum(t, d, "oper_status") != "down" {
		t.Errorf("link-down fault: port 2 %s", enum(t, d, "oper_status"))
	}
	if err := r.fw.SetFaults(fw.Faults{Unsupported: []string{"NOPE"}}); err == nil {
		t.Error("unknown register accepted")
	}
	if err := r.fw.SetFaults(fw.Faults{LinkDown: []int{7}}); err == nil {
		t.Error("unknown port accepted")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) < 4 || seen[0].Status != fw.StatusBusy || seen[0].Register != "MGIR" || seen[0].Reason == "" {
		t.Errorf("observer saw %+v", seen)
	}
}

func TestDeterminism(t *testing.T) {
	run := func(seed uint64) []byte {
		r := newRig(t, func(s *fw.Spec) { s.Seed = seed })
		var all []byte
		for i := 0; i < 20; i++ {
			r.clk.Advance(7 * time.Second)
			for _, q := range [][]string{{"MTMP", "sensor_index", "0"}, {"MTMP", "sensor_index", "64"},
				{"PPCNT", "local_port", "1", "grp", "Physical_Layer_Counters"}, {"PPCNT", "local_port", "2", "grp", "IEEE_802_3_Counters"}} {
				all = append(all, r.get(q[0], q[1:]...).Raw...)
			}
		}
		return all
	}
	a, b, c := run(7), run(7), run(8)
	if !bytes.Equal(a, b) {
		t.Error("same seed, different replies")
	}
	if bytes.Equal(a, c) {
		t.Error("different seeds, same replies")
	}
}

func TestConcurrentUse(t *testing.T) {
	r := newRig(t)
	rg, _, buf := r.image("PPCNT", "local_port", "1", "grp", "IEEE_802_3_Counters")
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				if _, st := r.fw.AccessRegister(uint16(rg.ID), emu.MethodGet, buf); st != 0 {
					t.Errorf("status %d", st)
					return
				}
				r.fw.Ports()
				r.fw.Temperature(0)
			}
		}()
	}
	for i := 0; i < 100; i++ {
		r.fw.SetModuleStatus(1, fw.ModuleStatus{Plugged: i%2 == 0})
		r.clk.Advance(time.Millisecond)
	}
	wg.Wait()
}

func TestSetBehaviourExtension(t *testing.T) {
	r := newRig(t)
	calls := 0
	err := r.fw.SetBehaviour("MCIA", fw.Behaviour{Access: func(c *fw.Call) uint8 {
		calls++
		if c.Req("module") > 1 {
			return c.Fail(fw.StatusBadParam, "no module %d", c.Req("module"))
		}
		c.Put("status", 0)
		return fw.StatusOK
	}})
	if err != nil {
		t.Fatal(err)
	}
	r.get("MCIA", "module", "1")
	if _, st := r.access(emu.MethodGet, "MCIA", "module", "3"); st != fw.StatusBadParam || calls != 2 {
		t.Errorf("extension: status %d after %d calls", st, calls)
	}
	if err := r.fw.SetBehaviour("NOPE", fw.Behaviour{}); err == nil {
		t.Error("behaviour for an unknown register accepted")
	}
	pageCalls := 0
	r.fw.SetPDDRPage(3, func(c *fw.Call) uint8 {
		pageCalls++
		p, ok := c.Port(int(c.Req("local_port")))
		if !ok || p.Module != 0 {
			t.Errorf("port view %+v", p)
		}
		return fw.StatusOK
	})
	r.get("PDDR", "local_port", "1", "page_select", "Module_info_page")
	if pageCalls != 1 {
		t.Errorf("page 3 handler called %d times", pageCalls)
	}
}

func TestSpecValidation(t *testing.T) {
	db, _ := builtin.Load()
	for name, mod := range map[string]func(*fw.Spec){
		"psid too long": func(s *fw.Spec) { s.PSID = strings.Repeat("X", 17) },
		"no ports":      func(s *fw.Spec) { s.Ports = nil },
		"bad module":    func(s *fw.Spec) { s.Ports[0].Module = 5 },
		"bad protocol":  func(s *fw.Spec) { s.Ports[0].Protocols = []string{"900G"} },
		"lanes":         func(s *fw.Spec) { s.Ports[0].Lanes = 3 },
		"protocol lanes": func(s *fw.Spec) {
			s.Ports[0].Protocols = []string{"400GAUI-8"}
		},
		"roce":        func(s *fw.Spec) { s.RoCE.Supported = []string{"warp_drive"} },
		"unsupported": func(s *fw.Spec) { s.Unsupported = []string{"XYZZY"} },
		"nan rate": func(s *fw.Spec) {
			s.Ports[0].Traffic.TxFramesPerSec = -1
		},
	} {
		spec := testSpec()
		mod(&spec)
		if _, err := fw.New(fw.Config{DB: db, Spec: spec}); err == nil {
			t.Errorf("%s: accepted", name)
		} else if !strings.Contains(err.Error(), "fw:") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestFunctionViews(t *testing.T) {
	r := newRig(t)
	pf0, err := r.fw.View([]int{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	pf1, err := r.fw.View([]int{2})
	if err != nil {
		t.Fatal(err)
	}
	r.set("PAOS", "local_port", "2", "admin_status", "down_by_configuration", "ase", "1")
	rg, p, buf := r.image("PAOS", "local_port", "1")
	status := func(v emu.Firmware, b []byte) string {
		out, st := v.AccessRegister(uint16(rg.ID), emu.MethodGet, b)
		if st != 0 {
			return fmt.Sprintf("status %d", st)
		}
		d, _ := p.Decode(out)
		return enum(t, d, "oper_status")
	}
	if got := status(pf0, buf); got != "up" {
		t.Errorf("PF0 local port 1: %s", got)
	}
	if got := status(pf1, buf); got != "down" {
		t.Errorf("PF1 local port 1 (adapter port 2): %s", got)
	}
	_, _, buf2 := r.image("PAOS", "local_port", "2")
	if got := status(pf0, buf2); got != "down" {
		t.Errorf("PF0 local port 2: %s", got)
	}
	if got := status(pf1, buf2); got != "status 7" {
		t.Errorf("PF1 local port 2: %s", got)
	}
	// PMLP through PF1 shows module 1: modules keep adapter-wide numbers.
	prg, pp, pbuf := r.image("PMLP", "local_port", "1")
	out, _ := pf1.AccessRegister(uint16(prg.ID), emu.MethodGet, pbuf)
	if d, _ := pp.Decode(out); u(t, d, "lane_module_mapping[0].module") != 1 {
		t.Errorf("PF1 PMLP module %d", u(t, d, "lane_module_mapping[0].module"))
	}
	for _, bad := range [][]int{nil, {3}, {1, 1}} {
		if _, err := r.fw.View(bad); err == nil {
			t.Errorf("view %v accepted", bad)
		}
	}
}

// Each PF's RDMA device has its own node GUID, the base GUID plus the
// PF's port (as the MACs are the base MAC plus the PF), and a port GUID
// equal to it (one integral port per node); only the system image GUID
// is the adapter's base, shared by its PFs.
func TestPGUIDPerFunction(t *testing.T) {
	r := newRig(t, func(s *fw.Spec) { s.BaseGUID = 0xb83fd20300a1b2c0 })
	pf0, err := r.fw.View([]int{1})
	if err != nil {
		t.Fatal(err)
	}
	pf1, err := r.fw.View([]int{2})
	if err != nil {
		t.Fatal(err)
	}
	type guids struct{ Sys, Node, Port uint64 }
	read := func(v emu.Firmware) guids {
		rg, p, buf := r.image("PGUID", "local_port", "1")
		out, st := v.AccessRegister(uint16(rg.ID), emu.MethodGet, buf)
		if st != fw.StatusOK {
			t.Fatalf("PGUID: status %d", st)
		}
		d, err := p.Decode(out)
		if err != nil {
			t.Fatal(err)
		}
		g := func(f string) uint64 { return u(t, d, f+"[2]")<<32 | u(t, d, f+"[3]") }
		return guids{g("sys_guid"), g("node_guid"), g("port_guid")}
	}
	got := []guids{read(pf0), read(pf1)}
	want := []guids{
		{0xb83fd20300a1b2c0, 0xb83fd20300a1b2c0, 0xb83fd20300a1b2c0},
		{0xb83fd20300a1b2c0, 0xb83fd20300a1b2c1, 0xb83fd20300a1b2c1},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("PGUID through PF0 and PF1 (-want +got):\n%s", d)
	}
	if g := r.fw.Spec().NodeGUID(2); g != 0xb83fd20300a1b2c1 {
		t.Errorf("Spec.NodeGUID(2) = %x", g)
	}
}

// A module the firmware cannot reach over its management interface (a
// stuck I2C bus, an EEPROM that does not answer) has no temperature: its
// sensor (MTMP 64+N) reads 0 with no maximum, as for an empty cage (the
// drivers read 0 as "no reading"), while a module with another error (too
// hot) still reads. Clearing the error brings the reading back.
func TestModuleSensorOfUnreadableModule(t *testing.T) {
	r := newRig(t)
	read := func() [2]uint64 {
		d := r.get("MTMP", "sensor_index", "64")
		return [2]uint64{u(t, d, "temperature"), u(t, d, "max_temperature")}
	}
	if v := read(); v[0] == 0 || v[1] == 0 {
		t.Fatalf("a healthy module reads %v", v)
	}
	for _, c := range []struct {
		err      string
		readable bool
	}{{"Bus_stuck", false}, {"bad_or_unsupported_EEPROM", false}, {"High_Temperature", true}, {"", true}} {
		if err := r.fw.SetModuleStatus(0, fw.ModuleStatus{Plugged: true, Error: c.err}); err != nil {
			t.Fatal(err)
		}
		r.clk.Advance(time.Second)
		v := read()
		if got := v != [2]uint64{}; got != c.readable {
			t.Errorf("module error %q: MTMP 64 reads temperature %d, maximum %d; want a reading: %v", c.err, v[0], v[1], c.readable)
		}
		if _, ok := r.fw.Temperature(64); ok != c.readable {
			t.Errorf("module error %q: Temperature(64) ok %v", c.err, ok)
		}
	}
}
