package fwctl

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/access/regaccess"
	"github.com/cxray/cxray/internal/clock"
	"github.com/cxray/cxray/prm/cmdb"
)

// The uAPI numbers and struct layouts, as include/uapi/fwctl/fwctl.h and
// include/uapi/fwctl/mlx5.h define them.
func TestIoctlLayout(t *testing.T) {
	if ioctlInfo != 0x9a00 || ioctlRPC != 0x9a01 {
		t.Errorf("FWCTL_INFO %#x, FWCTL_RPC %#x; want 0x9a00, 0x9a01 (_IO(0x9A, 0), _IO(0x9A, 1))", ioctlInfo, ioctlRPC)
	}
	var i infoArg
	var r rpcArg
	got := map[string]uintptr{
		"info size": unsafe.Sizeof(i), "info.flags": unsafe.Offsetof(i.Flags), "info.out_device_type": unsafe.Offsetof(i.OutDeviceType),
		"info.device_data_len": unsafe.Offsetof(i.DeviceDataLen), "info.out_device_data": unsafe.Offsetof(i.OutDeviceData),
		"rpc size": unsafe.Sizeof(r), "rpc.scope": unsafe.Offsetof(r.Scope), "rpc.in_len": unsafe.Offsetof(r.InLen),
		"rpc.out_len": unsafe.Offsetof(r.OutLen), "rpc.in": unsafe.Offsetof(r.In), "rpc.out": unsafe.Offsetof(r.Out),
		"mlx5 info size": unsafe.Sizeof(infoMLX5{}),
	}
	want := map[string]uintptr{
		"info size": 24, "info.flags": 4, "info.out_device_type": 8, "info.device_data_len": 12, "info.out_device_data": 16,
		"rpc size": 32, "rpc.scope": 4, "rpc.in_len": 8, "rpc.out_len": 12, "rpc.in": 16, "rpc.out": 24,
		"mlx5 info size": 8,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("struct layout (-uapi +go):\n%s", d)
	}
	if cmdb.ScopeConfiguration != 0 || cmdb.ScopeDebugReadOnly != 1 || cmdb.ScopeDebugWrite != 2 || cmdb.ScopeDebugWriteFull != 3 {
		t.Error("scope numbers differ from enum fwctl_rpc_scope")
	}
}

// The register header positions the accessor writes by hand are the ones
// the command database has for access_register_in/out.
func TestAccessRegisterHeader(t *testing.T) {
	db, err := cmdb.Load()
	if err != nil {
		t.Fatal(err)
	}
	c, _ := db.Command("ACCESS_REG")
	if c.Opcode != OpAccessReg {
		t.Fatalf("ACCESS_REG is 0x%x", c.Opcode)
	}
	for node, fields := range map[string]map[string][2]int{
		c.In:  {"opcode": {0, 16}, "op_mod": {48, 16}, "register_id": {80, 16}, "argument": {96, 32}, "register_data": {128, 32}},
		c.Out: {"status": {0, 8}, "syndrome": {32, 32}, "register_data": {128, 32}},
	} {
		p, err := db.Plan(node)
		if err != nil {
			t.Fatal(err)
		}
		if p.Bytes != accessRegHeader {
			t.Errorf("%s is %d bytes before its register data, want %d", node, p.Bytes, accessRegHeader)
		}
		for f, want := range fields {
			tg, err := p.Resolve(f, make([]byte, 64))
			if f == "register_data" {
				tg, err = p.Resolve(f+"[0]", make([]byte, 64))
			}
			if err != nil || tg.Bit != want[0] || tg.Width != want[1] {
				t.Errorf("%s.%s: %+v %v, want bit %d width %d", node, f, tg, err, want[0], want[1])
			}
		}
	}
	// Every status code the kernel names has a meaning and advice here.
	for _, s := range db.Statuses {
		if _, ok := statusInfo[s.Value]; !ok && s.Value != StatusOK {
			t.Errorf("status 0x%x (%s) has no explanation", s.Value, s.Name)
		}
	}
}

// fakeIoctl stands in for the system call: it checks the argument as the
// kernel would and answers from a function.
type fakeIoctl struct {
	t       *testing.T
	reqs    []uintptr
	rpc     func(scope uint32, in []byte, out []byte) (int, syscall.Errno)
	devType uint32
}

func (f *fakeIoctl) install(t *testing.T) {
	oldInfo, oldRPC := doInfo, doRPC
	t.Cleanup(func() { doInfo, doRPC = oldInfo, oldRPC })
	doInfo = func(fd uintptr, a *infoArg, d *infoMLX5) syscall.Errno {
		f.reqs = append(f.reqs, ioctlInfo)
		if a.Size != 24 || a.DeviceDataLen != 8 || a.OutDeviceData != uint64(uintptr(unsafe.Pointer(d))) {
			f.t.Errorf("FWCTL_INFO argument %+v does not point at the device data", *a)
			return syscall.EINVAL
		}
		a.OutDeviceType = f.devType
		d.UID, d.UctxCaps = 7, 4
		return 0
	}
	doRPC = func(fd uintptr, a *rpcArg, in, out []byte) syscall.Errno {
		f.reqs = append(f.reqs, ioctlRPC)
		if a.Size != 32 || a.InLen != uint32(len(in)) || a.OutLen != uint32(len(out)) ||
			a.In != uint64(uintptr(unsafe.Pointer(&in[0]))) || a.Out != uint64(uintptr(unsafe.Pointer(&out[0]))) {
			f.t.Errorf("FWCTL_RPC argument %+v does not describe the mailboxes (%d, %d bytes)", *a, len(in), len(out))
			return syscall.EINVAL
		}
		n, e := f.rpc(a.Scope, in, out)
		a.OutLen = uint32(n)
		return e
	}
}

func tempDevice(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "fwctl0")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Everything but the system call: FWCTL_INFO on open, the device type
// check, FWCTL_RPC with the mailboxes and the returned length, errnos.
func TestDeviceIoctl(t *testing.T) {
	f := &fakeIoctl{t: t, devType: DeviceTypeMLX5}
	f.install(t)
	var gotScope uint32
	var gotIn []byte
	f.rpc = func(scope uint32, in, out []byte) (int, syscall.Errno) {
		gotScope, gotIn = scope, append([]byte(nil), in...)
		in[3] = 0x55 // the driver writes the uid into the caller's buffer
		out[0], out[15] = 0, 0xAB
		return 16, 0
	}
	d, err := OpenDevice(tempDevice(t))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.Info() != (Info{DeviceType: 1, UID: 7, UctxCaps: 4}) {
		t.Errorf("info %+v", d.Info())
	}
	in := make([]byte, 16)
	binary.BigEndian.PutUint16(in, 0x100)
	out, err := d.RPC(context.Background(), cmdb.ScopeDebugReadOnly, in, 64)
	if err != nil {
		t.Fatal(err)
	}
	if gotScope != 1 || !bytes.Equal(gotIn, in) || len(out) != 16 || out[15] != 0xAB || in[3] != 0 {
		t.Errorf("scope %d in %x out %x (caller's in %x must stay unchanged)", gotScope, gotIn, out, in)
	}
	f.rpc = func(uint32, []byte, []byte) (int, syscall.Errno) { return 0, syscall.EBADMSG }
	_, err = d.RPC(context.Background(), cmdb.ScopeDebugReadOnly, in, 16)
	if !errors.Is(err, ErrNotAllowed) || !errors.Is(err, syscall.EBADMSG) || !strings.Contains(err.Error(), "scope") {
		t.Errorf("EBADMSG: %v", err)
	}
	for errno, kind := range map[syscall.Errno]error{syscall.ENODEV: ErrDeviceGone, syscall.EMSGSIZE: ErrBadRequest, syscall.EPERM: ErrPermission, syscall.E2BIG: ErrBadRequest} {
		f.rpc = func(uint32, []byte, []byte) (int, syscall.Errno) { return 0, errno }
		if _, err := d.RPC(context.Background(), 1, in, 16); !errors.Is(err, kind) || !errors.Is(err, errno) {
			t.Errorf("%v: %v, want %v", errno, err, kind)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := d.RPC(ctx, 1, in, 16); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}

	f.devType = 2 // CXL
	if _, err := OpenDevice(tempDevice(t)); !errors.Is(err, ErrNotMLX5) {
		t.Errorf("a CXL fwctl device: %v", err)
	}
	if _, err := OpenDevice(filepath.Join(t.TempDir(), "none")); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "mlx5_fwctl") {
		t.Errorf("missing node: %v", err)
	}
}

// Find maps a PCI address to its fwctl node through the sysfs device link.
func TestFind(t *testing.T) {
	root := t.TempDir()
	pci := filepath.Join(root, "devices", "pci0000:00", "0000:00:01.0")
	for _, bdf := range []string{"0000:03:00.0", "0000:03:00.1"} {
		if err := os.MkdirAll(filepath.Join(pci, bdf), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	class := filepath.Join(root, "class", "fwctl")
	for name, bdf := range map[string]string{"fwctl0": "0000:03:00.1", "fwctl1": "0000:03:00.0"} {
		dir := filepath.Join(root, "devices", "virtual", name)
		os.MkdirAll(dir, 0o755)
		if err := os.Symlink(filepath.Join(pci, bdf), filepath.Join(dir, "device")); err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(class, 0o755)
		if err := os.Symlink(dir, filepath.Join(class, name)); err != nil {
			t.Fatal(err)
		}
	}
	n, err := Find(root, "0000:03:00.0")
	if err != nil || n != (Node{Name: "fwctl1", Path: "/dev/fwctl/fwctl1", BDF: "0000:03:00.0"}) {
		t.Errorf("Find: %+v %v", n, err)
	}
	_, err = Find(root, "0000:04:00.0")
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "fwctl0 → 0000:03:00.1") {
		t.Errorf("unknown function: %v", err)
	}
	_, err = Find(t.TempDir(), "0000:03:00.0")
	if !errors.Is(err, ErrNoFwctl) || !strings.Contains(err.Error(), "6.15") {
		t.Errorf("no fwctl class: %v", err)
	}
}

// scripted is an RPC that answers from a script and records what it got.
type scripted struct {
	scopes  []cmdb.Scope
	ins     [][]byte
	answers []func(in []byte, outLen int) ([]byte, error)
}

func (s *scripted) RPC(ctx context.Context, scope cmdb.Scope, in []byte, outLen int) ([]byte, error) {
	s.scopes = append(s.scopes, scope)
	s.ins = append(s.ins, append([]byte(nil), in...))
	i := min(len(s.ins), len(s.answers)) - 1
	return s.answers[i](in, outLen)
}

func reply(status uint8, syndrome uint32, body []byte) func([]byte, int) ([]byte, error) {
	return func(in []byte, outLen int) ([]byte, error) {
		out := make([]byte, outLen)
		out[0] = status
		binary.BigEndian.PutUint32(out[4:], syndrome)
		copy(out[16:], body)
		return out, nil
	}
}

func mailbox(op, opMod uint16, n int) []byte {
	b := make([]byte, n)
	binary.BigEndian.PutUint16(b, op)
	binary.BigEndian.PutUint16(b[6:], opMod)
	return b
}

// The client sends queries at the read-only scope, refuses what the driver
// would refuse without sending it, and turns statuses into typed errors.
func TestClientScopesAndStatus(t *testing.T) {
	s := &scripted{answers: []func([]byte, int) ([]byte, error){reply(0, 0, nil)}}
	clk := clock.NewManual(time.Unix(0, 0))
	c, err := NewClient(s, Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, op := range []uint16{0x100, 0x50b, 0x728, 0x740} { // QUERY_HCA_CAP, QUERY_QP, NVMF namespace, ESW functions
		if _, err := c.Exec(ctx, mailbox(op, 1, 16), 0x100); err != nil {
			t.Errorf("0x%x: %v", op, err)
		}
	}
	if d := cmp.Diff([]cmdb.Scope{1, 1, 1, 1}, s.scopes); d != "" {
		t.Errorf("scopes (-want +got):\n%s", d)
	}
	for name, in := range map[string][]byte{
		"CREATE_MKEY":        mailbox(0x200, 0, 16),
		"unknown opcode":     mailbox(0x7fff, 0, 16),
		"SET_HCA_CAP":        mailbox(0x109, 0, 16),
		"ACCESS_REG write":   mailbox(0x805, 0, 32),
		"short mailbox":      make([]byte, 8),
		"MODIFY_CONG_STATUS": mailbox(0x711, 0, 16),
	} {
		sent := len(s.ins)
		if _, err := c.Exec(ctx, in, 64); !errors.Is(err, ErrRefused) && !errors.Is(err, ErrBadRequest) {
			t.Errorf("%s: %v, want refused", name, err)
		}
		if len(s.ins) != sent {
			t.Errorf("%s was sent", name)
		}
	}

	s.answers = []func([]byte, int) ([]byte, error){reply(StatusBadParam, 0x1234abcd, nil)}
	out, err := c.Exec(ctx, mailbox(0x50b, 0, 16), 0x100)
	var ce *CommandError
	if !errors.As(err, &ce) || ce.Status != 3 || ce.Syndrome != 0x1234abcd || ce.Command != "QUERY_QP" || !errors.Is(err, ErrBadParam) || len(out) != 0x100 {
		t.Fatalf("bad param: %v", err)
	}
	for _, want := range []string{"QUERY_QP (0x50b)", "BAD_PARAM_ERR", "syndrome 0x1234abcd", "; "} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}

	// A busy firmware is asked again by the access layer's one policy
	// (vsec.BusyRetry, as regaccess): 2, 4, 8 ... ms apart, up to 100 ms,
	// until the caller's deadline (issue 25.5: fwctl gave up after 4
	// retries, 20 ms in all, whatever the deadline).
	s.answers = []func([]byte, int) ([]byte, error){reply(StatusBusy, 0, nil), reply(StatusBusy, 0, nil), reply(0, 0, nil)}
	s.ins = nil
	if _, err := c.Exec(ctx, mailbox(0x100, 1, 16), 0x100); err != nil || len(s.ins) != 3 {
		t.Errorf("busy twice: %v after %d tries", err, len(s.ins))
	}
	s.answers = []func([]byte, int) ([]byte, error){reply(StatusBusy, 9, nil)}
	s.ins = nil
	start := clk.Now()
	dctx, cancel := context.WithTimeout(ctx, time.Second)
	_, err = c.Exec(dctx, mailbox(0x100, 1, 16), 0x100)
	cancel()
	if waited := clk.Now().Sub(start); !errors.Is(err, ErrBusy) || waited < 900*time.Millisecond || waited > time.Second || len(s.ins) < 10 {
		t.Errorf("always busy: %v after %d tries in %v (virtual), want retries until the 1 s deadline", err, len(s.ins), waited)
	}
	s.answers = []func([]byte, int) ([]byte, error){func([]byte, int) ([]byte, error) { return make([]byte, 8), nil }}
	if _, err := c.Exec(ctx, mailbox(0x100, 1, 16), 0x100); !errors.Is(err, ErrBadResponse) {
		t.Errorf("short answer: %v", err)
	}
}

// Registers over ACCESS_REG: the mailbox the firmware gets, the scopes,
// the data that comes back, and the register errors dev relies on.
func TestRegisters(t *testing.T) {
	s := &scripted{answers: []func([]byte, int) ([]byte, error){func(in []byte, outLen int) ([]byte, error) {
		out := make([]byte, outLen)
		copy(out[16:], in[16:])
		out[16] ^= 0xFF // mark that this came back
		return out, nil
	}}}
	c, _ := NewClient(s, Options{Clock: clock.NewManual(time.Unix(0, 0))})
	r := NewRegisters(c)
	data := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	got, err := r.Access(context.Background(), regaccess.Get, 0x9020, data)
	if err != nil {
		t.Fatal(err)
	}
	want := mailbox(0x805, 1, 24)
	binary.BigEndian.PutUint16(want[10:], 0x9020)
	copy(want[16:], data)
	if !bytes.Equal(s.ins[0], want) || s.scopes[0] != cmdb.ScopeDebugReadOnly || !bytes.Equal(got, []byte{0xFE, 2, 3, 4, 5, 6, 7, 8}) {
		t.Errorf("GET: sent %x at %s, got %x", s.ins[0], s.scopes[0], got)
	}
	if _, err := r.Access(context.Background(), regaccess.Set, 0x5006, make([]byte, 16)); err != nil {
		t.Fatal(err)
	}
	if s.scopes[1] != cmdb.ScopeConfiguration || cmdb.OpMod(s.ins[1]) != 0 {
		t.Errorf("SET went at %s with op_mod %d", s.scopes[1], cmdb.OpMod(s.ins[1]))
	}
	for _, bad := range [][]byte{nil, make([]byte, 6)} {
		if _, err := r.Access(context.Background(), regaccess.Get, 1, bad); !errors.Is(err, regaccess.ErrBadRequest) {
			t.Errorf("%d bytes: %v", len(bad), err)
		}
	}
	if _, err := r.Access(context.Background(), 3, 1, make([]byte, 4)); !errors.Is(err, regaccess.ErrBadRequest) {
		t.Errorf("method 3: %v", err)
	}
	s.answers = []func([]byte, int) ([]byte, error){reply(StatusBadSysState, 0x77, nil)}
	_, err = r.Access(context.Background(), regaccess.Get, 0x1234, make([]byte, 8))
	var se *regaccess.StatusError
	var ce *CommandError
	if !errors.Is(err, regaccess.ErrRegisterNotSupported) || !strings.Contains(err.Error(), "register 0x1234") ||
		!errors.As(err, &se) || se.Status != regaccess.StatusRegisterNotSupported || se.RegisterID != 0x1234 ||
		!errors.As(err, &ce) || ce.Syndrome != 0x77 {
		t.Errorf("unsupported register: %v", err)
	}
	// Each command status reads as the register status it stands for.
	for cmd, reg := range map[uint8]uint8{1: 0x70, 2: 6, 3: 7, 4: 4, 5: 8, 6: 1} {
		s.answers = []func([]byte, int) ([]byte, error){reply(cmd, 0, nil)}
		_, err := r.Access(context.Background(), regaccess.Get, 0x5006, make([]byte, 16))
		if !errors.As(err, &se) || se.Status != reg {
			t.Errorf("command status 0x%x: %v, want register status 0x%x", cmd, err, reg)
		}
	}
	s.answers = []func([]byte, int) ([]byte, error){reply(0x0f, 0, nil)}
	if _, err := r.Access(context.Background(), regaccess.Get, 0x5006, make([]byte, 16)); errors.As(err, &se) || !errors.As(err, &ce) {
		t.Errorf("no-resources status has no register equivalent: %v", err)
	}
}

// FuzzReply: whatever the device answers, the client never panics; a
// status 0 answer is returned whole, and any other status becomes a
// CommandError carrying exactly the status and syndrome of the bytes.
//
//	go test -fuzz=FuzzReply ./access/fwctl
func FuzzReply(f *testing.F) {
	f.Add([]byte{}, uint16(0x100), 16)
	f.Add(make([]byte, 16), uint16(0x805), 32)
	f.Add([]byte{3, 0, 0, 0, 0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 0, 0, 0, 0, 0}, uint16(0x50b), 0x100)
	f.Fuzz(func(t *testing.T, answer []byte, op uint16, n int) {
		if n < 0 || n > 4096 {
			return
		}
		s := &scripted{answers: []func([]byte, int) ([]byte, error){func([]byte, int) ([]byte, error) { return answer, nil }}}
		c, _ := NewClient(s, Options{Clock: clock.NewManual(time.Unix(0, 0))})
		out, err := c.Exec(context.Background(), mailbox(op, 1, 16), max(n, 16))
		var ce *CommandError
		switch {
		case err == nil:
			if len(answer) < 16 || answer[0] != 0 || !bytes.Equal(out, answer) {
				t.Fatalf("accepted %x as %x", answer, out)
			}
		case errors.As(err, &ce):
			if len(answer) < 16 || ce.Status != answer[0] || ce.Status == 0 || ce.Syndrome != binary.BigEndian.Uint32(answer[4:]) {
				t.Fatalf("%x became %+v", answer, ce)
			}
		case len(answer) >= 16 && len(s.ins) > 0:
			t.Fatalf("a full-header answer %x gave %v", answer, err)
		}
		r := NewRegisters(c)
		if reg, err := r.Access(context.Background(), regaccess.Get, 1, make([]byte, 8)); err == nil && len(reg) != 8 {
			t.Fatalf("register of %d bytes from a %d-byte answer", len(reg), len(answer))
		}
	})
}
