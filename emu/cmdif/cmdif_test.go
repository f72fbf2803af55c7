package cmdif_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/access/fwctl"
	"github.com/cxray/cxray/access/regaccess"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/emu"
	"github.com/cxray/cxray/emu/cmdif"
	"github.com/cxray/cxray/emu/rdma"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/internal/clock"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/builtin"
	"github.com/cxray/cxray/prm/cmdb"
)

type rig struct {
	e   *scenario.Emulation
	clk *clock.Manual
	eps []*cmdif.Endpoint
	db  *cmdb.DB
}

func build(t testing.TB, sc *scenario.Scenario) *rig {
	t.Helper()
	clk := clock.NewManual(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
	e, err := scenario.Build(sc, scenario.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	db, err := cmdb.Load()
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{e: e, clk: clk, db: db}
	for _, f := range e.Functions() {
		ep, err := cmdif.New(e, f, cmdif.Options{})
		if err != nil {
			t.Fatalf("%s: %v", f.BDF, err)
		}
		r.eps = append(r.eps, ep)
	}
	return r
}

func parse(t testing.TB, yaml string) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.Parse([]byte(yaml), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func profile(t testing.TB, name string) *rig {
	sc, err := scenario.FromProfile(name)
	if err != nil {
		t.Fatal(err)
	}
	return build(t, sc)
}

// device wraps endpoint i as the lead's opener will: a dev.Device whose
// registers go through ACCESS_REG and with the client as its commander.
func (r *rig) device(t testing.TB, i int) *dev.Device {
	t.Helper()
	c, err := fwctl.NewClient(r.eps[i], fwctl.Options{Clock: r.clk})
	if err != nil {
		t.Fatal(err)
	}
	db, err := builtin.Load()
	if err != nil {
		t.Fatal(err)
	}
	d := dev.New("emu", r.eps[i].Function().BDF, dev.BackendFwctl, db, fwctl.NewRegisters(c), nil)
	d.AttachCommander(c)
	return d
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func field(t testing.TB, d *prm.Decoded, path string) uint64 {
	t.Helper()
	v, err := d.Get(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v.Uint()
}

func caps(t testing.TB, d *dev.Device, typ string, cur bool) *prm.Decoded {
	t.Helper()
	db, _ := cmdb.Load()
	ct, err := db.CapType(typ)
	if err != nil {
		t.Fatal(err)
	}
	opMod := int(ct.Value) << 1
	if cur {
		opMod |= 1
	}
	out, err := d.Command(ctxT(t), "QUERY_HCA_CAP", []prm.Assignment{{Path: "op_mod", Value: fmt.Sprint(opMod)}})
	if err != nil {
		t.Fatalf("QUERY_HCA_CAP %s: %v", typ, err)
	}
	return out
}

// The capability pages follow the profile: every PF manages its own
// e-switch (and no ECPF); the ConnectX-7 profile offers NVMe-oF offload
// and the ConnectX-6 Dx does not.
func TestCapabilityPages(t *testing.T) {
	r := build(t, parse(t, "devices:\n  - profile: cx7-2p400g\n    functions: 2\n  - profile: cx6dx-2p100g\n"))
	type facts struct {
		Manager, Group, NVMF, RoCE, ESWChanged, ECPF uint64
	}
	var got []facts
	for i := range r.eps {
		d := r.device(t, i)
		g := caps(t, d, "general", true)
		e := caps(t, d, "eswitch", true)
		got = append(got, facts{
			Manager: field(t, g, "capability.cmd_hca_cap.eswitch_manager"), Group: field(t, g, "capability.cmd_hca_cap.vport_group_manager"),
			NVMF: field(t, g, "capability.cmd_hca_cap.nvmf_target_offload"), RoCE: field(t, g, "capability.cmd_hca_cap.roce"),
			ESWChanged: field(t, e, "capability.e_switch_cap.esw_functions_changed"), ECPF: field(t, e, "capability.e_switch_cap.ecpf_vport_exists"),
		})
	}
	want := []facts{{1, 1, 1, 1, 1, 0}, {1, 1, 1, 1, 1, 0}, {1, 1, 0, 1, 1, 0}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("capabilities per function (-want +got):\n%s", d)
	}
	d := r.device(t, 0)
	if max, cur := field(t, caps(t, d, "general", false), "capability.cmd_hca_cap.log_max_qp"), field(t, caps(t, d, "general", true), "capability.cmd_hca_cap.log_max_qp"); max != 24 || cur != 18 {
		t.Errorf("log_max_qp max %d cur %d, want 24 and 18", max, cur)
	}
	if v := field(t, caps(t, d, "roce", true), "capability.roce_cap.r_roce_dest_udp_port"); v != 4791 {
		t.Errorf("RoCE UDP port %d", v)
	}
	if v := field(t, caps(t, d, "nvmf", true), "capability.nvmf_cap.frontend_namespace_context"); v != 1 {
		t.Errorf("nvmf frontend_namespace_context %d", v)
	}
	// The ConnectX-6 Dx has no NVMe-oF page; a type not emulated is a bad parameter.
	cx6 := r.device(t, 2)
	db, _ := cmdb.Load()
	for _, typ := range []string{"nvmf", "qos"} {
		ct, _ := db.CapType(typ)
		_, err := cx6.Command(ctxT(t), "QUERY_HCA_CAP", []prm.Assignment{{Path: "op_mod", Value: fmt.Sprint(int(ct.Value)<<1 | 1)}})
		var ce *fwctl.CommandError
		if !errors.As(err, &ce) || ce.Status != 3 || ce.Syndrome == 0 {
			t.Errorf("cx6dx %s page: %v, want status 3 with a syndrome", typ, err)
		}
	}
}

// The driver's checks happen before the firmware: short mailboxes,
// commands not allowed at the scope, a removed function.
func TestDriverChecks(t *testing.T) {
	r := profile(t, "cx7-2p400g")
	ep := r.eps[0]
	ctx := ctxT(t)
	mbox := func(op uint16, opMod uint16) []byte {
		c, _ := r.db.CommandByOpcode(op)
		in, err := r.db.Request(c, []prm.Assignment{{Path: "op_mod", Value: fmt.Sprint(opMod)}})
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	if _, err := ep.RPC(ctx, cmdb.ScopeDebugReadOnly, make([]byte, 8), 16); !errors.Is(err, syscall.EMSGSIZE) {
		t.Errorf("short in: %v", err)
	}
	if _, err := ep.RPC(ctx, cmdb.ScopeDebugWriteFull, mbox(0x200, 0), 16); !errors.Is(err, syscall.EBADMSG) {
		t.Errorf("CREATE_MKEY: %v", err)
	}
	if _, err := ep.RPC(ctx, cmdb.ScopeConfiguration, mbox(0x50b, 0), 0x200); !errors.Is(err, syscall.EBADMSG) {
		t.Errorf("QUERY_QP at the configuration scope: %v", err)
	}
	calls := ep.Calls()
	out, err := ep.RPC(ctx, cmdb.ScopeDebugReadOnly, mbox(0x402, 0), 0x200) // QUERY_CQ: allowed, not emulated
	if err != nil || out[0] != 2 || calls+1 != ep.Calls() {
		t.Errorf("QUERY_CQ: %x %v, want status 2 (bad operation)", out, err)
	}
	out, err = ep.RPC(ctx, cmdb.ScopeDebugReadOnly, mbox(0x100, 1), 16) // out room for the header only
	if err != nil || out[0] != 0x51 {
		t.Errorf("short out: %x %v, want status 0x51", out, err)
	}
	ep.Function().Device.SetFaults(emu.Faults{Removed: true})
	if _, err := ep.RPC(ctx, cmdb.ScopeDebugReadOnly, mbox(0x100, 1), 0x1010); !errors.Is(err, syscall.ENODEV) {
		t.Errorf("removed: %v", err)
	}
	ep.Function().Device.ClearFaults()
	ctxc, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := ep.RPC(ctxc, cmdb.ScopeDebugReadOnly, mbox(0x100, 1), 0x1010); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// One device, two paths: a register written through ACCESS_REG reads back
// through the config-space gateway, and the other way round.
func TestAccessRegSharesTheGatewayStore(t *testing.T) {
	r := profile(t, "cx7-2p400g")
	f := r.e.Functions()[0]
	db, _ := builtin.Load()
	ctx := ctxT(t)
	gw, _, err := dev.OpenConfigSpace(ctx, "emu", f.BDF, dev.BackendEmulator, db, f.Config, dev.StackOptions{Clock: r.clk})
	if err != nil {
		t.Fatal(err)
	}
	fc := r.device(t, 0)
	for _, c := range []struct {
		name           string
		writer, reader *dev.Device
		value          string
	}{{"fwctl write, gateway read", fc, gw, "down_by_configuration"}, {"gateway write, fwctl read", gw, fc, "up"}} {
		index := []prm.Assignment{{Path: "local_port", Value: "1"}}
		wp, err := c.writer.PrepareSet(ctx, "PAOS", index, []prm.Assignment{{Path: "admin_status", Value: c.value}, {Path: "ase", Value: "1"}})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if _, err := c.writer.ApplySet(ctx, wp, index); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		rd, err := c.reader.Get(ctx, "PAOS", index, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		v, _ := rd.Decoded.Get("admin_status")
		if n, _ := v.EnumName(); !equalFold(n, c.value) {
			t.Errorf("%s: admin_status reads %q, want %s", c.name, n, c.value)
		}
	}
	// A register the firmware lacks reads as not supported over fwctl too.
	if _, err := fc.GetRaw(ctx, 0x1234, make([]byte, 16)); !dev.IsNotSupported(err) {
		t.Errorf("unknown register over fwctl: %v", err)
	}
	// Device-level register faults apply on both paths.
	f.Device.SetFaults(emu.Faults{RegisterStatus: map[uint16]uint8{0x9020: 8}})
	_, err = fc.Get(ctx, "MGIR", nil, nil, 0)
	var ce *fwctl.CommandError
	if !errors.As(err, &ce) || ce.Status != 5 || ce.Register != 0x9020 || !errors.Is(err, dev.ErrResourceNotAvailable) {
		t.Errorf("MGIR with a resource fault: %v (want status 5, read as dev.ErrResourceNotAvailable)", err)
	}
}

func equalFold(a, b string) bool { return bytes.EqualFold([]byte(a), []byte(b)) }

// lockdown: true makes every function's config space refuse writes as a
// locked-down kernel does, while fwctl keeps working.
func TestLockdown(t *testing.T) {
	r := build(t, parse(t, "devices:\n  - profile: cx7-2p400g\n    functions: 2\n    lockdown: true\n"))
	db, _ := builtin.Load()
	ctx := ctxT(t)
	for i, f := range r.e.Functions() {
		if _, ok := f.Config.(*emu.Lockdown); !ok {
			t.Fatalf("%s: config space is not behind the lockdown", f.BDF)
		}
		b := make([]byte, 4)
		if _, err := f.Config.ReadAt(b, 0); err != nil || b[0] != 0xb3 {
			t.Errorf("%s: read under lockdown: %x %v", f.BDF, b, err)
		}
		if n, err := f.Config.WriteAt([]byte{1, 0, 0, 0}, 0xC8); n != 0 || !errors.Is(err, syscall.EPERM) {
			t.Errorf("%s: write under lockdown: %d %v, want EPERM", f.BDF, n, err)
		}
		_, _, err := dev.OpenConfigSpace(ctx, "emu", f.BDF, dev.BackendEmulator, db, f.Config, dev.StackOptions{Clock: r.clk})
		if !errors.Is(err, syscall.EPERM) {
			t.Errorf("%s: opening the gateway under lockdown: %v, want an EPERM the opener can fall back on", f.BDF, err)
		}
		if _, err := r.device(t, i).Get(ctx, "MGIR", nil, nil, 0); err != nil {
			t.Errorf("%s: MGIR over fwctl under lockdown: %v", f.BDF, err)
		}
		if s := f.Device.State(); s.GatewaySemaphore != 0 {
			t.Errorf("%s: the refused writes reached the device: %+v", f.BDF, s)
		}
	}
	if f := profile(t, "cx7-2p400g").e.Functions()[0]; f.Config != scenario.ConfigSpace(f.Device) {
		t.Error("without lockdown the config space is the device itself")
	}
}

// Q counters are the RDMA model's, per local port, and clear=1 zeroes them.
func TestQCounters(t *testing.T) {
	sc := parse(t, "devices:\n  - profile: cx7-2p400g\n    rdma: {loss: 1e-4, rtt: 20us}\n")
	r := build(t, sc)
	r.clk.Advance(90 * time.Second)
	d := r.device(t, 0)
	m, err := rdma.ForAdapter(r.e.Adapters[0], r.clk)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := m.Counters(1, r.clk.Now())
	out, err := d.Command(ctxT(t), "QUERY_Q_COUNTER", []prm.Assignment{{Path: "counter_set_id", Value: "1"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"rx_write_requests", "out_of_sequence", "packet_seq_err", "local_ack_timeout_err", "roce_adp_retrans"} {
		if got := field(t, out, n); got != want[n] || (n != "roce_adp_retrans" && got == 0) {
			t.Errorf("%s = %d, model %d", n, got, want[n])
		}
	}
	if _, err := d.Command(ctxT(t), "QUERY_Q_COUNTER", []prm.Assignment{{Path: "counter_set_id", Value: "1"}, {Path: "clear", Value: "1"}}); err != nil {
		t.Fatal(err)
	}
	out, _ = d.Command(ctxT(t), "QUERY_Q_COUNTER", []prm.Assignment{{Path: "counter_set_id", Value: "1"}})
	if v := field(t, out, "rx_write_requests"); v != 0 {
		t.Errorf("after clear, at the same time: %d", v)
	}
	_, err = d.Command(ctxT(t), "QUERY_Q_COUNTER", []prm.Assignment{{Path: "counter_set_id", Value: "9"}})
	if !errors.Is(err, fwctl.ErrBadParam) {
		t.Errorf("unknown counter set: %v", err)
	}
}

// The namespaces' counters move with the clock at the scenario's rates.
func TestNVMFNamespaces(t *testing.T) {
	r := profile(t, "cx7-2p400g")
	d := r.device(t, 0)
	q := func(xrqn, ns int) (*prm.Decoded, error) {
		return d.Command(ctxT(t), "QUERY_NVMF_NAMESPACE_CONTEXT", []prm.Assignment{{Path: "xrqn", Value: fmt.Sprint(xrqn)}, {Path: "frontend_namespace", Value: fmt.Sprint(ns)}})
	}
	a, err := q(1, 1)
	if err != nil {
		t.Fatal(err)
	}
	r.clk.Advance(10 * time.Second)
	b, _ := q(1, 1)
	for name, perSec := range map[string]uint64{"num_read_cmd": 120000, "num_read_blocks": 960000, "num_write_cmd": 40000, "num_write_inline_cmd": 12000, "num_flush_cmd": 20} {
		if got := field(t, b, "ns_ctx."+name) - field(t, a, "ns_ctx."+name); got != 10*perSec {
			t.Errorf("%s grew by %d in 10 s, want %d", name, got, 10*perSec)
		}
	}
	n2, _ := q(1, 2)
	if field(t, n2, "ns_ctx.num_error_cmd") != 5 || field(t, n2, "ns_ctx.num_backend_error_cmd") != 1 {
		t.Errorf("namespace 2 errors after 10 s: %d, %d", field(t, n2, "ns_ctx.num_error_cmd"), field(t, n2, "ns_ctx.num_backend_error_cmd"))
	}
	for _, c := range [][2]int{{2, 1}, {1, 3}} {
		if _, err := q(c[0], c[1]); !errors.Is(err, fwctl.ErrBadParam) {
			t.Errorf("xrq %d ns %d: %v, want bad parameter", c[0], c[1], err)
		}
	}
	r6 := profile(t, "cx6dx-2p100g")
	if _, err := r6.device(t, 0).Command(ctxT(t), "QUERY_NVMF_NAMESPACE_CONTEXT", []prm.Assignment{{Path: "xrqn", Value: "1"}}); !errors.Is(err, fwctl.ErrBadOp) {
		t.Errorf("no offload: %v, want bad operation", err)
	}
	// Scenario keys replace the namespaces and their rates.
	r = build(t, parse(t, "devices:\n  - profile: cx6dx-2p100g\n    nvmf:\n      offload: true\n      xrqs:\n        - xrqn: 7\n          namespaces:\n            - {nsid: 3, read_iops: 10, read_blocks: 4}\n"))
	r.clk.Advance(3 * time.Second)
	out, err := r.device(t, 0).Command(ctxT(t), "QUERY_NVMF_NAMESPACE_CONTEXT", []prm.Assignment{{Path: "xrqn", Value: "7"}, {Path: "frontend_namespace", Value: "3"}})
	if err != nil || field(t, out, "ns_ctx.num_read_blocks") != 120 || field(t, out, "ns_ctx.num_write_cmd") != 0 {
		t.Errorf("scenario namespace: %v", err)
	}
}

func TestObjectsAndVports(t *testing.T) {
	r := build(t, parse(t, "devices:\n  - profile: cx7-2p400g\n    functions: 2\n    nv: {configured: {SRIOV_EN: True, NUM_OF_VFS: 4}}\n"))
	d := r.device(t, 0)
	ctx := ctxT(t)
	qp, err := d.Command(ctx, "QUERY_QP", []prm.Assignment{{Path: "qpn", Value: fmt.Sprint(cmdif.QPActive)}})
	if err != nil {
		t.Fatal(err)
	}
	v, _ := qp.Get("qpc.state")
	if n, _ := v.EnumName(); n != "RTS" || field(t, qp, "qpc.retry_count") != 7 {
		t.Errorf("QP state %q retry %d", n, field(t, qp, "qpc.retry_count"))
	}
	r.clk.Advance(time.Second)
	qp2, _ := d.Command(ctx, "QUERY_QP", []prm.Assignment{{Path: "qpn", Value: fmt.Sprint(cmdif.QPActive)}})
	if got := (field(t, qp2, "qpc.next_send_psn") - field(t, qp, "qpc.next_send_psn")) & 0xffffff; got != 50000 {
		t.Errorf("send PSN moved %d in 1 s", got)
	}
	if _, err := d.Command(ctx, "QUERY_QP", []prm.Assignment{{Path: "qpn", Value: "0x999"}}); !errors.Is(err, fwctl.ErrBadParam) {
		t.Errorf("unknown QP: %v", err)
	}
	mk, err := d.Command(ctx, "QUERY_MKEY", []prm.Assignment{{Path: "mkey_index", Value: fmt.Sprint(cmdif.MKeyData >> 8)}})
	if err != nil || field(t, mk, "memory_key_mkey_entry.len") != 1<<30 || field(t, mk, "memory_key_mkey_entry.rw") != 1 {
		t.Errorf("MKEY: %v", err)
	}
	esw, err := d.Command(ctx, "QUERY_ESW_FUNCTIONS", nil)
	if err != nil || field(t, esw, "host_params_context.host_num_of_vfs") != 4 || field(t, esw, "host_params_context.host_pci_bus") != 3 {
		t.Errorf("ESW functions: %v", err)
	}
	// The second PF manages its own e-switch: its host function is
	// itself (function 1), with its own VFs.
	esw1, err := r.device(t, 1).Command(ctx, "QUERY_ESW_FUNCTIONS", nil)
	if err != nil || field(t, esw1, "host_params_context.host_pci_function") != 1 || field(t, esw1, "host_params_context.host_num_of_vfs") != 4 {
		t.Errorf("ESW functions of the second PF: %v", err)
	}
	vs := func(d *dev.Device, opMod, vport int, other bool) (*prm.Decoded, error) {
		return d.Command(ctx, "QUERY_VPORT_STATE", []prm.Assignment{{Path: "op_mod", Value: fmt.Sprint(opMod)}, {Path: "vport_number", Value: fmt.Sprint(vport)}, {Path: "other_vport", Value: fmt.Sprint(b2i(other))}})
	}
	own, _ := vs(d, 0, 0, false)
	vf, _ := vs(d, 1, 2, true)
	if field(t, own, "state") != 1 || field(t, vf, "state") != 0 {
		t.Errorf("own vport %d, VF 2 %d", field(t, own, "state"), field(t, vf, "state"))
	}
	if _, err := vs(d, 1, 5, true); !errors.Is(err, fwctl.ErrBadParam) {
		t.Errorf("VF 5 of 4: %v", err)
	}
	if v, err := vs(r.device(t, 1), 1, 1, true); err != nil || field(t, v, "state") != 0 {
		t.Errorf("the second PF's VF 1: %v", err)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Every example and test scenario, every function: the endpoint builds,
// answers the general capabilities and MGIR, and every function (a PF)
// is the manager of its own e-switch.
func TestEveryScenario(t *testing.T) {
	var files []string
	for _, g := range []string{"../../examples/*.yaml", "../scenario/testdata/*.yaml"} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	if len(files) < 4 {
		t.Fatalf("found %d scenario files", len(files))
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			sc, err := scenario.Parse(data, file)
			if err != nil {
				t.Fatal(err)
			}
			r := build(t, sc)
			for i, f := range r.e.Functions() {
				d := r.device(t, i)
				if m := field(t, caps(t, d, "general", true), "capability.cmd_hca_cap.eswitch_manager"); m != 1 {
					t.Errorf("%s (adapter %s): eswitch_manager %d, want 1 (every PF manages its e-switch)", f.BDF, f.Adapter.Name, m)
				}
				if f.Device.Faults().Removed {
					continue
				}
				if _, err := d.Get(ctxT(t), "MGIR", nil, nil, 0); err != nil && !errors.Is(err, regaccess.ErrRegisterNotSupported) {
					var ce *fwctl.CommandError
					if !errors.As(err, &ce) {
						t.Errorf("%s: MGIR over fwctl: %v", f.BDF, err)
					}
				}
			}
		})
	}
}

// FuzzRPC: whatever mailbox arrives, the endpoint answers without
// panicking: an errno, or an out mailbox of at least the header and at
// most the room given, whose status 0 comes only with a command the
// driver allows at that scope.
//
//	go test -fuzz=FuzzRPC ./emu/cmdif
func FuzzRPC(f *testing.F) {
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0x13, 0, 0, 0, 0, 0, 0, 0, 0}, uint8(1), 0x1010)
	f.Add([]byte{0x08, 0x05, 0, 0, 0, 0, 0, 1, 0, 0, 0x90, 0x20, 0, 0, 0, 0}, uint8(1), 0x100)
	f.Add([]byte{0x07, 0x28, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2}, uint8(3), 0x80)
	f.Add([]byte{0x05, 0x0b, 0, 0, 0, 0, 0, 0, 0, 0, 1, 8}, uint8(0), 16)
	r := profile(f, "cx7-2p400g")
	db, _ := cmdb.Load()
	f.Fuzz(func(t *testing.T, in []byte, scope uint8, outLen int) {
		if outLen < 0 || outLen > 1<<14 || len(in) > 1<<12 {
			return
		}
		out, err := r.eps[0].RPC(context.Background(), cmdb.Scope(scope), in, outLen)
		if err != nil {
			var errno syscall.Errno
			if !errors.As(err, &errno) {
				t.Fatalf("error %v is not an errno", err)
			}
			return
		}
		if len(out) < cmdb.HeaderBytes || len(out) > max(outLen, cmdb.HeaderBytes) {
			t.Fatalf("%d-byte answer for %d bytes of room", len(out), outLen)
		}
		if out[0] == 0 {
			c, ok := db.CommandByOpcode(cmdb.Opcode(in))
			rule, allowed := c.Policy(cmdb.OpMod(in))
			if !ok || !allowed || cmdb.Scope(scope) < rule.Scope {
				t.Fatalf("opcode 0x%x op_mod 0x%x succeeded at scope %d", cmdb.Opcode(in), cmdb.OpMod(in), scope)
			}
		}
	})
}
