package dev_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/dev/devname"
	"github.com/cxray/cxray/dev/devtest"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/internal/clock"
	"github.com/cxray/cxray/internal/prmhistory"
	"github.com/cxray/cxray/internal/prmhistory/prmhistorytest"
	"github.com/cxray/cxray/kernel/kerneltest"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/adb"
)

// dev's own logic over dev/devtest: request building (index defaults,
// short field names, request fields), writes and their verification,
// the firmware status vocabulary, capabilities and identity.

func as(t testing.TB, s ...string) []prm.Assignment {
	t.Helper()
	a, err := prm.ParseAssignments(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func fake(t testing.TB) (*dev.Device, *devtest.Fake) {
	db := devtest.DB(t)
	f := devtest.New(db)
	return f.Device("t", "0000:03:00.1", dev.BackendDirect), f
}

// databases are the built-in one and every revision of the PRM history.
func databases(t *testing.T) map[string]*prm.DB {
	out := map[string]*prm.DB{"builtin": devtest.DB(t)}
	dir, ok := prmhistorytest.Dir()
	if !ok {
		t.Logf("the PRM history is not here (%s): only the built-in database is checked", prmhistory.Env)
		return out
	}
	files, _ := filepath.Glob(filepath.Join(dir, "hca-ext-rev*.adb"))
	for _, f := range files {
		db, err := adb.LoadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[db.Revision] = db
	}
	return out
}

// In every PRM revision, the registers cxray reads without an index get
// their index fields from the defaults: DefaultIndex, and RegisterIndex
// for names too generic to default everywhere (MTMP's asic_index, ig, i
// from Rev 0.59). plane_ind, added in Rev 0.59, defaults to 0, the
// aggregated port.
func TestIndexDefaultsEveryRevision(t *testing.T) {
	dbs := databases(t)
	planes := 0
	for rev, db := range dbs {
		f := devtest.New(db)
		d := f.Device("t", "", dev.BackendDirect)
		// The index fields that have no obvious value, as the snapshot
		// profiles give them.
		for reg, given := range map[string][]string{"PAOS": nil, "PMLP": nil, "PPCNT": {"grp=0"}, "PTYS": {"proto_mask=4"}, "PDDR": {"page_select=0"},
			"MTMP": {"sensor_index=0"}, "MGIR": nil, "PGUID": nil, "MTCAP": nil, "ROCE_ACCL": nil,
			"MCAM": {"access_reg_group=0", "feature_group=0"}, "PCAM": {"access_reg_group=0", "feature_group=0"},
			"MPEIN": nil, "MPIR": nil, "MPCNT": {"grp=0"}} {
			r0, err := db.Register(reg)
			if err != nil {
				continue
			}
			f.Put(reg)
			r, err := d.Get(context.Background(), reg, as(t, given...), nil, 0)
			if err != nil {
				t.Errorf("%s %s: %v", rev, reg, err)
				continue
			}
			got := map[string]string{}
			for _, x := range r.Defaulted {
				k, v, _ := strings.Cut(x, "=")
				got[k] = v
				name := k[strings.LastIndexByte(k, '.')+1:]
				want, ok := dev.DefaultIndex[name]
				if rv, rok := dev.RegisterIndex[r0.Name][name]; rok {
					want, ok = rv, true
				}
				if !ok || v != want {
					t.Errorf("%s %s: %s defaulted to %s, want %q (known %v)", rev, reg, k, v, want, ok)
				}
				// The request carries what was defaulted.
				req, _ := r.Plan.Decode(r.Request)
				if rv, err := req.Get(k); err != nil || fmt.Sprint(rv.Uint()) != v {
					t.Errorf("%s %s: request %s = %v %v", rev, reg, k, rv, err)
				}
			}
			probe := r.Plan.NewBuffer()
			if st, err := r.Plan.Resolve("plane_ind", probe); err == nil && st.Step.Access == prm.AccessIndex {
				planes++
				if got["plane_ind"] != "0" {
					t.Errorf("%s %s: plane_ind not defaulted: %v", rev, reg, r.Defaulted)
				}
			}
			if reg == "MTMP" {
				for _, k := range []string{"asic_index", "ig", "i"} {
					if _, err := r.Plan.Resolve(k, probe); err == nil && got[k] != "0" {
						t.Errorf("%s MTMP: %s not defaulted: %v", rev, k, r.Defaulted)
					}
				}
			}
		}
		// A module index has no obvious value, in every revision.
		if _, err := d.Get(context.Background(), "PMAOS", nil, nil, 0); !isIndexError(err, "module") {
			t.Errorf("%s PMAOS without a module: %v", rev, err)
		}
	}
	if len(dbs) > 1 && planes == 0 {
		t.Error("no revision has plane_ind: the history lacks Rev 0.59 and later")
	}
}

func isIndexError(err error, field string) bool {
	var ie *dev.IndexError
	return errors.As(err, &ie) && len(ie.Missing) == 1 && ie.Missing[0] == field
}

// A given index field is not overridden by its default; an index field
// inside a union is not required.
func TestIndexGivenWins(t *testing.T) {
	d, f := fake(t)
	f.Put("PAOS", "local_port=3", "admin_status=up")
	r, err := d.Get(context.Background(), "PAOS", as(t, "local_port=3"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"lp_msb=0", "swid=0"}, r.Defaulted); d != "" {
		t.Errorf("defaulted (-want +got):\n%s", d)
	}
	if v, _ := r.Decoded.Get("admin_status"); v.Uint() != 1 {
		t.Errorf("admin_status %d", v.Uint())
	}
	ie := &dev.IndexError{Register: "PMAOS", Missing: []string{"module"}, Hints: []string{"module=N"}}
	if ie.Error() != "PMAOS needs index field(s) module; give them with --index module=N" {
		t.Errorf("%q", ie.Error())
	}
}

// Nested index fields can be named by their own name when exactly one
// field has it, as mstreg allows.
func TestShortFieldNames(t *testing.T) {
	d, f := fake(t)
	f.Put("PDDR", "local_port=1", "page_select=Troubleshooting_info_page", "page_data.pddr_troubleshooting_page_ext.group_opcode=1")
	r, err := d.Get(context.Background(), "PDDR", as(t, "page_select=Troubleshooting_info_page", "group_opcode=1"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := r.Plan.Decode(r.Request)
	if v, err := req.Get("page_data.pddr_troubleshooting_page_ext.group_opcode"); err != nil || v.Uint() != 1 {
		t.Errorf("group_opcode in the request: %v %v", v, err)
	}
	// A name no field has is refused before anything is sent.
	n := len(f.Calls())
	if err := d.CheckRequest("PDDR", as(t, "no_such_field=1"), nil); err == nil {
		t.Error("unknown field accepted")
	}
	if len(f.Calls()) != n {
		t.Error("CheckRequest touched the device")
	}
}

// GetFields: fields that are INDEX fields in this database select the
// instance; the others are written into the request as given.
func TestGetFieldsSplitsIndexFields(t *testing.T) {
	d, f := fake(t)
	f.Put("MCQI", "read_pending_component=1", "info_type=VERSION", "data.mcqi_version_ext.version_string=28.41.1000")
	r, err := d.GetFields(context.Background(), "MCQI", as(t, "component_index=0", "device_index=0", "device_type=0"),
		as(t, "read_pending_component=1", "info_type=VERSION", "data_size=0x7c"))
	if err != nil {
		t.Fatal(err)
	}
	c := f.Calls()[len(f.Calls())-1]
	if c.Index["read_pending_component"] != 1 || c.Method != dev.Get {
		t.Errorf("call %+v", c)
	}
	req, _ := r.Plan.Decode(r.Request)
	for path, want := range map[string]uint64{"info_type": 1, "data_size": 0x7c, "read_pending_component": 1} {
		if v, err := req.Get(path); err != nil || v.Uint() != want {
			t.Errorf("request %s = %v %v, want %d", path, v, err, want)
		}
	}
	if v, _ := r.Decoded.Get("data.mcqi_version_ext.version_string"); v.TextString() != "28.41.1000" {
		t.Errorf("version %q", v.TextString())
	}
	// A request field that does not fit is an error, not a truncation.
	if _, err := d.GetFields(context.Background(), "MCQI", as(t, "device_index=0", "device_type=0"), as(t, "data_size=0x1ffff")); err == nil {
		t.Error("data_size=0x1ffff accepted")
	}
}

func TestCheckRequest(t *testing.T) {
	d, f := fake(t)
	var nf *prm.NotFoundError
	if err := d.CheckRequest("NOSUCH", nil, nil); !errors.As(err, &nf) {
		t.Errorf("unknown register: %v", err)
	}
	if err := d.CheckRequest("PMAOS", nil, nil); !isIndexError(err, "module") {
		t.Errorf("missing index: %v", err)
	}
	if err := d.CheckRequest("PAOS", as(t, "admin_status=1"), nil); err == nil || !strings.Contains(err.Error(), "is RW, not INDEX; --index takes only INDEX fields") {
		t.Errorf("RW as index: %v", err)
	}
	mtmp := as(t, "sensor_index=64")
	if err := d.CheckRequest("MTMP", mtmp, as(t, "mtr=1")); err != nil {
		t.Errorf("an OP field: %v", err)
	}
	if err := d.CheckRequest("MTMP", mtmp, as(t, "temperature=1")); err == nil || !strings.Contains(err.Error(), "--op takes only OP fields") {
		t.Errorf("RO as op: %v", err)
	}
	if err := d.CheckRequest("MTMP", mtmp, nil); err != nil {
		t.Errorf("MTMP: %v", err)
	}
	if err := d.CheckRequest("MTMP", nil, nil); !isIndexError(err, "sensor_index") || !strings.Contains(err.Error(), "--index sensor_index=0 (sensor_index: 0 is the ASIC, 64+N the module in cage N") {
		t.Errorf("MTMP without a sensor: %v", err)
	}
	if len(f.Calls()) != 0 {
		t.Errorf("CheckRequest touched the device: %v", f.Calls())
	}
}

// The statuses callers above dev act on match their sentinels through
// every wrapping dev adds; others match none.
func TestStatusSentinels(t *testing.T) {
	sentinels := []error{dev.ErrNoSuchInstance, dev.ErrNotSupported, dev.ErrBusy, dev.ErrResourceNotAvailable}
	for _, c := range []struct {
		status dev.Status
		want   error
	}{
		{dev.StatusBadParameter, dev.ErrNoSuchInstance},
		{dev.StatusRegisterNotSupported, dev.ErrNotSupported},
		{dev.StatusBusy, dev.ErrBusy},
		{dev.StatusResourceNotAvailable, dev.ErrResourceNotAvailable},
		{dev.StatusBadConfig, nil},
		{dev.StatusInternalError, nil},
	} {
		d, f := fake(t)
		f.Fail("PAOS", c.status, "local_port=1")
		_, err := d.Get(context.Background(), "PAOS", nil, nil, 0)
		st, ok := dev.StatusOf(fmt.Errorf("wrapped: %w", err))
		if !ok || st != c.status {
			t.Errorf("status 0x%x: StatusOf %v %v", c.status, st, ok)
		}
		for _, s := range sentinels {
			if got := errors.Is(err, s); got != (s == c.want) {
				t.Errorf("status 0x%x: errors.Is(%v) = %v", c.status, s, got)
			}
		}
		if dev.IsNotSupported(err) != (c.want == dev.ErrNotSupported) {
			t.Errorf("status 0x%x: IsNotSupported", c.status)
		}
		var ae *dev.AccessError
		if !errors.As(err, &ae) || ae.Register != "PAOS" || ae.Op != "read" || !strings.HasPrefix(err.Error(), "read PAOS: ") {
			t.Errorf("status 0x%x: %v", c.status, err)
		}
	}
	if _, ok := dev.StatusOf(errors.New("timeout")); ok {
		t.Error("a plain error has a status")
	}
	if errors.Is(&dev.AccessError{Register: "X", Op: "read", Err: errors.New("gone")}, dev.ErrBusy) {
		t.Error("a transport error matched a status sentinel")
	}
}

// A write is worked out from what the register holds, refuses fields it
// must not change, and is verified by reading back.
func TestPrepareAndApplySet(t *testing.T) {
	ctx := context.Background()
	d, f := fake(t)
	f.Put("PAOS", "local_port=1", "admin_status=up", "oper_status=up", "e=Generate_Event")
	wp, err := d.PrepareSet(ctx, "PAOS", nil, as(t, "admin_status=down_by_configuration", "ase=1"))
	if err != nil {
		t.Fatal(err)
	}
	want := []dev.Change{{Path: "admin_status", Before: "up (1)", After: "down_by_configuration (2)"}, {Path: "ase", Before: "0", After: "1"}}
	if d := cmp.Diff(want, wp.Changes); d != "" {
		t.Errorf("changes (-want +got):\n%s", d)
	}
	// The write keeps the other fields as they are.
	if v, _ := wp.After.Get("e"); v.Uint() != 1 {
		t.Errorf("e = %d in the write", v.Uint())
	}
	if f.Count("PAOS") != 1 {
		t.Errorf("%d PAOS accesses before applying", f.Count("PAOS"))
	}
	back, err := d.ApplySet(ctx, wp, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := back.Decoded.Get("admin_status"); v.Uint() != 2 {
		t.Errorf("read back admin_status %d", v.Uint())
	}
	calls := f.Calls()
	if calls[len(calls)-2].Method != dev.Set || calls[len(calls)-1].Method != dev.Get {
		t.Errorf("calls %v", calls)
	}
	// Refused: RO fields, INDEX fields, nothing at all.
	if _, err := d.PrepareSet(ctx, "PAOS", nil, as(t, "oper_status=up")); err == nil ||
		err.Error() != "PAOS: oper_status is read-only (RO); the firmware owns it and cxray will not write it; see the RW fields with 'cxray prm show PAOS'" {
		t.Errorf("RO: %v", err)
	}
	var ro *dev.ROError
	if _, err := d.PrepareSet(ctx, "MTMP", nil, as(t, "temperature=1", "max_temperature=2")); !errors.As(err, &ro) || !strings.Contains(err.Error(), "are read-only (RO); the firmware owns them") {
		t.Errorf("two RO: %v", err)
	}
	if _, err := d.PrepareSet(ctx, "PAOS", nil, as(t, "local_port=2")); err == nil || !strings.Contains(err.Error(), "is an INDEX field; give it with --index") {
		t.Errorf("INDEX: %v", err)
	}
	if _, err := d.PrepareSet(ctx, "PAOS", nil, nil); err == nil || !strings.Contains(err.Error(), "nothing to set") {
		t.Errorf("nothing: %v", err)
	}
	if _, err := d.PrepareSet(ctx, "NOSUCH", nil, as(t, "x=1")); err == nil {
		t.Error("unknown register accepted")
	}
	if _, err := d.PrepareSet(ctx, "PAOS", nil, as(t, "nosuch=1")); err == nil {
		t.Error("unknown field accepted")
	}
}

// deaf takes writes without storing them: the firmware refused or
// adjusted the value.
type deaf struct{ *devtest.Fake }

func (d deaf) Access(ctx context.Context, m dev.Method, id uint16, data []byte) ([]byte, error) {
	if m == dev.Set {
		return data, nil
	}
	return d.Fake.Access(ctx, m, id, data)
}

type refusing struct{ *devtest.Fake }

func (r refusing) Access(ctx context.Context, m dev.Method, id uint16, data []byte) ([]byte, error) {
	if m == dev.Set {
		return nil, errors.New("ICMD timed out")
	}
	return r.Fake.Access(ctx, m, id, data)
}

func TestApplySetVerifies(t *testing.T) {
	ctx := context.Background()
	db := devtest.DB(t)
	f := devtest.New(db)
	f.Put("PAOS", "local_port=1", "admin_status=up")
	d := dev.New("t", "", dev.BackendDirect, db, deaf{f}, nil)
	wp, err := d.PrepareSet(ctx, "PAOS", nil, as(t, "admin_status=down_by_configuration", "ase=1"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.ApplySet(ctx, wp, nil)
	var ve *dev.VerifyError
	// ase is write-only: it does not read back, and is not a mismatch.
	if !errors.As(err, &ve) || cmp.Diff([]dev.Change{{Path: "admin_status", Before: "down_by_configuration (2)", After: "up (1)"}}, ve.Mismatches) != "" ||
		!strings.Contains(err.Error(), "admin_status wrote down_by_configuration (2), reads up (1)") {
		t.Errorf("verify: %v", err)
	}
	d = dev.New("t", "", dev.BackendDirect, db, refusing{f}, nil)
	if _, err := d.ApplySet(ctx, wp, nil); err == nil || !strings.HasPrefix(err.Error(), "write PAOS: ICMD timed out") {
		t.Errorf("write failure: %v", err)
	}
	// The read-back failing is said as such: the write was sent.
	g := devtest.New(db)
	g.Put("PAOS", "local_port=1", "admin_status=up")
	sets := 0
	g.Hook = func(m dev.Method, _ string) error {
		if m == dev.Set {
			sets++
		} else if sets > 0 {
			return errors.New("gone")
		}
		return nil
	}
	d = g.Device("t", "", dev.BackendDirect)
	wp, _ = d.PrepareSet(ctx, "PAOS", nil, as(t, "admin_status=down_by_configuration", "ase=1"))
	if _, err := d.ApplySet(ctx, wp, nil); err == nil || !strings.HasPrefix(err.Error(), "the write was sent, but reading it back failed") {
		t.Errorf("read-back failure: %v", err)
	}
}

// Capabilities: bit n of MCAM group g is register 0x9000 + 128*g + n, the
// mask big-endian; a capability register the firmware lacks leaves its
// range uncovered.
func TestCapabilities(t *testing.T) {
	d, f := fake(t)
	f.Put("MCAM", "access_reg_group=0", "mng_access_reg_cap_mask[3]=0x1", "mng_access_reg_cap_mask[2]=0x1") // 0x9000, 0x9020
	f.Put("MCAM", "access_reg_group=1", "mng_access_reg_cap_mask[3]=0x2")                                   // 0x9081
	f.Put("MCAM", "access_reg_group=2")
	f.Put("PCAM", "access_reg_group=0", "port_access_reg_cap_mask[3]=0x40") // 0x5006 PAOS
	c, err := d.Capabilities(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	type sup struct{ Supported, Covered bool }
	got := map[uint32]sup{}
	for _, id := range []uint32{0x9000, 0x9020, 0x9021, 0x9081, 0x9080, 0x917f, 0x9180, 0x5006, 0x5007, 0x4000} {
		s, cov := c.Supports(id)
		got[id] = sup{s, cov}
	}
	want := map[uint32]sup{
		0x9000: {true, true}, 0x9020: {true, true}, 0x9021: {false, true}, 0x9081: {true, true}, 0x9080: {false, true},
		0x917f: {false, true}, 0x9180: {false, false}, 0x5006: {true, true}, 0x5007: {false, true},
		0x4000: {false, false}, // no QCAM
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("capabilities (-want +got):\n%s", d)
	}
	// A device error is an error.
	f.Fail("PCAM", dev.StatusBusy, "access_reg_group=0")
	if _, err := d.Capabilities(context.Background()); !errors.Is(err, dev.ErrBusy) {
		t.Errorf("busy: %v", err)
	}
}

// A firmware that answers MCAM for the first groups and "bad parameter"
// for a later one (its register IDs do not exist there).
func TestCapabilitiesMissingGroup(t *testing.T) {
	d, f := fake(t)
	f.Put("MCAM", "access_reg_group=0", "mng_access_reg_cap_mask[3]=0x1")
	f.Put("MCAM", "access_reg_group=1")
	c, err := d.Capabilities(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s, cov := c.Supports(0x9000); !s || !cov {
		t.Errorf("0x9000: %v %v", s, cov)
	}
	if _, cov := c.Supports(0x9100); cov {
		t.Error("group 2 covered")
	}
}

func TestIdentity(t *testing.T) {
	d, f := fake(t)
	f.Put("MGIR", "hw_info.num_ports=2", "hw_info.device_id=0x101d", "fw_info.extended_major=22", "fw_info.extended_minor=41",
		"fw_info.extended_sub_minor=1000", "fw_info.psid=MT_0000000359", "hw_info.manufacturing_base_mac=0xb83fd2a1b2c0")
	f.Put("PGUID", "node_guid[2]=0xb83fd203", "node_guid[3]=0x00a1b2c1", "sys_guid[2]=0xb83fd203", "sys_guid[3]=0x00a1b2c0")
	id, err := d.Identity(context.Background())
	want := dev.Identity{Firmware: "22.41.1000", PSID: "MT_0000000359", Ports: 2, BaseMAC: "b8:3f:d2:a1:b2:c0", PermanentMAC: "b8:3f:d2:a1:b2:c1",
		NodeGUID: "b83f:d203:00a1:b2c1", SysImageGUID: "b83f:d203:00a1:b2c0", DeviceID: 0x101d}
	if d := cmp.Diff(want, id); d != "" || err != nil {
		t.Errorf("identity (-want +got):\n%s\n%v", d, err)
	}
	// No PGUID, no base MAC: left empty, not failed.
	f2 := devtest.New(devtest.DB(t))
	f2.Put("MGIR", "fw_info.extended_major=22")
	id, err = f2.Device("t", "0000:03:00.0", dev.BackendDirect).Identity(context.Background())
	if err != nil || id.NodeGUID != "" || id.BaseMAC != "" || id.Firmware != "22.0.0000" {
		t.Errorf("%+v %v", id, err)
	}
	for bdf, want := range map[string]int{"0000:03:00.1": 1, "0000:03:00.7": 7, "0000:03:00.0": 0, "": 0, "mlx5_0": 0} {
		if got := dev.PCIFunction(bdf); got != want {
			t.Errorf("PCIFunction(%q) = %d", bdf, got)
		}
	}
}

func TestTransferAndRaw(t *testing.T) {
	ctx := context.Background()
	d, f := fake(t)
	f.Put("MNVDA")
	out, err := d.Transfer(ctx, dev.Get, "MNVDA", make([]byte, 268), 12, 0)
	if err != nil || len(out) != 268 || f.Count("MNVDA") != 1 {
		t.Errorf("transfer: %d bytes %v", len(out), err)
	}
	if _, err := d.Transfer(ctx, dev.Set, "MNVDI", make([]byte, 16), 0, 0); err == nil || !strings.HasPrefix(err.Error(), "write MNVDI: ") || !dev.IsNotSupported(err) {
		t.Errorf("unsupported: %v", err)
	}
	if _, err := d.Transfer(ctx, dev.Get, "NOSUCH", nil, 0, 0); err == nil {
		t.Error("unknown register accepted")
	}
	if _, err := d.GetRaw(ctx, 0x1234, make([]byte, 16)); err == nil || !strings.HasPrefix(err.Error(), "read 0x1234: ") || !dev.IsNotSupported(err) {
		t.Errorf("raw get: %v", err)
	}
	if _, err := d.SetRaw(ctx, 0x1234, make([]byte, 16)); err == nil || !strings.HasPrefix(err.Error(), "write 0x1234: ") {
		t.Errorf("raw set: %v", err)
	}
	paos, _ := devtest.DB(t).Register("PAOS")
	f.Put("PAOS", "local_port=1", "admin_status=up")
	req := make([]byte, 16)
	req[1] = 1 // local_port 1
	if b, err := d.GetRaw(ctx, uint16(paos.ID), req); err != nil || b[2]&0x0f != 1 {
		t.Errorf("raw PAOS: %x %v", b, err)
	}
	if _, err := d.SetRaw(ctx, uint16(paos.ID), req); err != nil {
		t.Errorf("raw PAOS set: %v", err)
	}
}

func TestClose(t *testing.T) {
	db := devtest.DB(t)
	n := 0
	d := dev.New("t", "", dev.BackendDirect, db, devtest.New(db), func() error { n++; return errors.New("x") })
	if err := d.Close(); err == nil || n != 1 {
		t.Errorf("close %v %d", err, n)
	}
	if err := dev.New("t", "", dev.BackendDirect, db, nil, nil).Close(); err != nil {
		t.Errorf("no close function: %v", err)
	}
}

// The access stack over the emulator's config space: the same code as
// hardware.
func TestOpenConfigSpace(t *testing.T) {
	db := devtest.DB(t)
	sc, err := scenario.Parse([]byte("devices:\n  - profile: cx7-2p400g\n"), "t")
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.NewManual(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	em, err := scenario.Build(sc, scenario.Options{DB: db, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	fn := em.Functions()[0]
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d, st, err := dev.OpenConfigSpace(ctx, "emu", fn.BDF, dev.BackendEmulator, db, fn.Device, dev.StackOptions{Clock: clk, SemaphoreTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if st.Gateway == nil || st.ICMD == nil || st.Regs == nil || d.Backend != dev.BackendEmulator || d.BDF != fn.BDF {
		t.Errorf("stack %+v device %+v", st, d)
	}
	id, err := d.Identity(ctx)
	if err != nil || id.Ports != 2 || id.Firmware == "" || id.DeviceID != 0x1021 {
		t.Errorf("identity %+v %v", id, err)
	}
	// A device that is gone does not open, and says which.
	fl := fn.Device.Faults()
	fl.Removed = true
	fn.Device.SetFaults(fl)
	_, _, err = dev.OpenConfigSpace(ctx, "emu", fn.BDF, dev.BackendEmulator, db, fn.Device, dev.StackOptions{Clock: clk, SemaphoreTimeout: 50 * time.Millisecond})
	var oe *dev.OpenError
	if !errors.As(err, &oe) || oe.Name != "emu" || !strings.HasPrefix(err.Error(), "device emu: ") || errors.Unwrap(err) == nil {
		t.Errorf("removed: %v", err)
	}
}

// OpenPCI checks the function before touching it: a name that is not a
// Mellanox function, then a config space that is not there (the fake
// sysfs tree has none, so no PCI device is ever opened).
func TestOpenPCIChecks(t *testing.T) {
	tree := kerneltest.Tree(t, kerneltest.CX7)
	sys := devname.Sys{Root: tree}
	db := devtest.DB(t)
	_, _, err := dev.OpenPCI(context.Background(), sys, "0000:00:1f.0", "0000:00:1f.0", db)
	var oe *dev.OpenError
	if !errors.As(err, &oe) {
		t.Errorf("an Intel function: %v", err)
	}
	_, _, err = dev.OpenPCI(context.Background(), sys, "0000:c1:00.0", "0000:c1:00.0", db)
	if !errors.As(err, &oe) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("no config space: %v", err)
	}
	if dev.IsRoot() != (os.Geteuid() == 0) {
		t.Error("IsRoot")
	}
}
