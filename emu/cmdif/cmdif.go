// Package cmdif is the command interface of the emulated adapters: what the
// firmware answers to command mailboxes (the PRM's *_in/*_out layouts,
// prm/cmdb), delivered the way Linux's fwctl driver delivers them. An
// Endpoint implements the RPC of access/fwctl (structurally: mailbox in,
// mailbox out, at a scope, errors as the driver's errnos), so the fwctl
// client runs unchanged over it, everything but the ioctl itself.
//
// Answered, for each PCI function of a scenario:
//
//   - QUERY_HCA_CAP: the general, e-switch, RoCE and NVMe-oF pages, maximum
//     and current, consistent with the profile (every PF manages its own
//     e-switch; NVMe-oF offload as the scenario's nvmf key says).
//   - QUERY_ADAPTER: vendor, VSD and PSID from the profile.
//   - QUERY_ESW_FUNCTIONS and QUERY_VPORT_STATE: the host PF and its VFs
//     (the NV configuration's SRIOV_EN and NUM_OF_VFS), vport and uplink
//     states from the port model.
//   - QUERY_HCA_VPORT_CONTEXT: an InfiniBand port's logical and physical
//     states, LID and SM LID, and the GUIDs (ib.go).
//   - QUERY_Q_COUNTER: the RDMA counters of emu/rdma, one counter set per
//     local port (ids 1, 2, ...).
//   - QUERY_NVMF_NAMESPACE_CONTEXT: counters of the scenario's namespaces,
//     moving with the emulated clock; QUERY_XRQ: their XRQs.
//   - QUERY_QP and QUERY_MKEY: a few objects of the emulated driver.
//   - ACCESS_REG: into the same firmware (the function's fw.View) the
//     config-space gateway reaches, so both paths see one device.
//
// Everything else the driver lets through answers status 0x2 (bad
// operation), an object that does not exist 0x3 (bad parameter), with a
// syndrome of the emulator's own that says which check failed.
package cmdif

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/cxray/cxray/emu"
	"github.com/cxray/cxray/emu/rdma"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/cmdb"
)

// Command status codes (MLX5_CMD_STAT_*).
const (
	statusOK          = 0x00
	statusInternal    = 0x01
	statusBadOp       = 0x02
	statusBadParam    = 0x03
	statusBadSysState = 0x04
	statusBadResource = 0x05
	statusBusy        = 0x06
	statusBadInLen    = 0x50
	statusBadOutLen   = 0x51
)

// Syndromes: the emulator's own identifiers of the check that failed (the
// firmware's are internal and unpublished; clients print them, never read
// meaning into them).
const (
	syndBadOpcode     = 0x7e000001 // opcode not emulated
	syndShortIn       = 0x7e000002
	syndShortOut      = 0x7e000003
	syndCapType       = 0x7e000010 // capability type not emulated
	syndOtherFunction = 0x7e000011 // other_function names another function
	syndNoQP          = 0x7e000020
	syndNoMKey        = 0x7e000021
	syndNoCounterSet  = 0x7e000022
	syndNoVport       = 0x7e000023 // vport not on this e-switch
	syndNotManager    = 0x7e000024 // other_vport from a function that is not the e-switch manager
	syndNotIB         = 0x7e000025 // an InfiniBand command on a port that runs Ethernet
	syndNoOffload     = 0x7e000030 // NVMe-oF offload not enabled
	syndNoXRQ         = 0x7e000031
	syndNoNamespace   = 0x7e000032
	syndRegister      = 0x7e000100 // | the access-register status in the low byte
	syndInternal      = 0x7e0000ff
)

// Options tune New.
type Options struct {
	// RDMA is the adapter's RDMA counter model, to share with other
	// readers (the exporter, kernel-backend views); nil builds one from the
	// scenario (rdma.ForAdapter).
	RDMA *rdma.Model
}

// Endpoint is one emulated function's command interface. Safe for
// concurrent use.
type Endpoint struct {
	mu    sync.Mutex
	f     *scenario.Function
	a     *scenario.Adapter
	clk   emu.Clock
	db    *cmdb.DB
	rdma  *rdma.Model
	index int // the function's place in its adapter (0: the first PF)
	nvmf  scenario.NVMFSpec
	pages map[uint16][2][]byte // capability pages: [0] maximum, [1] current
	qps   map[uint32]*qpObject
	mkeys map[uint32]*mkeyObject
	// cleared holds, per Q counter set, the counts when clear=1 last read it.
	cleared map[uint8]map[string]uint64
	calls   int
}

// New builds the endpoint of function f of emulation e.
func New(e *scenario.Emulation, f *scenario.Function, o Options) (*Endpoint, error) {
	if e == nil || f == nil || f.Adapter == nil {
		return nil, errors.New("cmdif: no function; pass a function of a built scenario (scenario.Build)")
	}
	db, err := cmdb.Load()
	if err != nil {
		return nil, fmt.Errorf("cmdif: %w", err)
	}
	ep := &Endpoint{f: f, a: f.Adapter, clk: e.Clock, db: db, rdma: o.RDMA, qps: map[uint32]*qpObject{}, mkeys: map[uint32]*mkeyObject{},
		cleared: map[uint8]map[string]uint64{}}
	for i, g := range f.Adapter.Functions {
		if g == f {
			ep.index = i
		}
	}
	if ep.a.Spec != nil {
		ep.nvmf = ep.a.Spec.NVMF
	}
	if ep.index != 0 {
		ep.nvmf.XRQs = nil // the target software runs on the first function
	}
	if ep.rdma == nil {
		if ep.rdma, err = rdma.ForAdapter(ep.a, ep.clk); err != nil {
			return nil, fmt.Errorf("cmdif: %w", err)
		}
	}
	if err := ep.buildPages(); err != nil {
		return nil, fmt.Errorf("cmdif: %s: %w", f.BDF, err)
	}
	ep.buildObjects()
	return ep, nil
}

// Function is the function the endpoint answers for.
func (ep *Endpoint) Function() *scenario.Function { return ep.f }

// Calls counts the commands the endpoint ran (delivered, whatever their
// status): tests use it to see that a refused command never arrived.
func (ep *Endpoint) Calls() int {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	return ep.calls
}

// RPC delivers one command as the fwctl driver does (drivers/fwctl/mlx5/
// main.c): EMSGSIZE for a mailbox shorter than its header, EBADMSG for a
// command not allowed at the scope, ENODEV for a removed function;
// otherwise the firmware's answer, with its status in the out mailbox.
func (ep *Endpoint) RPC(ctx context.Context, scope cmdb.Scope, in []byte, outLen int) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(in) < cmdb.HeaderBytes || outLen < cmdb.HeaderBytes {
		return nil, syscall.EMSGSIZE
	}
	if scope > cmdb.ScopeDebugWriteFull {
		return nil, syscall.EOPNOTSUPP
	}
	op, opMod := cmdb.Opcode(in), cmdb.OpMod(in)
	cmd, known := ep.db.CommandByOpcode(op)
	if !known {
		return nil, syscall.EBADMSG
	}
	if r, ok := cmd.Policy(opMod); !ok || scope < r.Scope {
		return nil, syscall.EBADMSG
	}
	if ep.f.Device.Faults().Removed {
		return nil, syscall.ENODEV
	}
	ep.mu.Lock()
	defer ep.mu.Unlock()
	ep.calls++
	c := &call{ep: ep, cmd: cmd, in: in, opMod: opMod, now: ep.clk.Now()}
	c.run(outLen)
	return c.finish(outLen), nil
}

// call is one command being answered.
type call struct {
	ep       *Endpoint
	cmd      *cmdb.Command
	in       []byte
	opMod    uint16
	now      time.Time
	inDec    *prm.Decoded
	out      []byte
	outPlan  *prm.Plan
	status   uint8
	syndrome uint32
	err      error
}

func (c *call) fail(status uint8, syndrome uint32) {
	if c.status == statusOK {
		c.status, c.syndrome = status, syndrome
	}
}

// run checks the mailboxes against the command's layouts and calls its
// handler.
func (c *call) run(outLen int) {
	h, ok := handlers[c.cmd.Name]
	if !ok || c.cmd.Out == "" {
		c.fail(statusBadOp, syndBadOpcode)
		return
	}
	if c.cmd.In != "" {
		p, err := c.ep.db.Plan(c.cmd.In)
		if err != nil {
			c.internal(err)
			return
		}
		if len(c.in) < p.Bytes {
			c.fail(statusBadInLen, syndShortIn)
			return
		}
		if c.inDec, err = p.Decode(c.in); err != nil {
			c.internal(err)
			return
		}
	}
	p, err := c.ep.db.Plan(c.cmd.Out)
	if err != nil {
		c.internal(err)
		return
	}
	c.outPlan = p
	if outLen < p.Bytes && !p.HasVariable() {
		c.fail(statusBadOutLen, syndShortOut)
		return
	}
	c.out = make([]byte, max(outLen, p.Bytes))
	h(c)
}

func (c *call) internal(err error) {
	c.err = err
	c.fail(statusInternal, syndInternal)
}

// finish writes the header and trims the answer to what the caller has
// room for (a failed command answers its header alone).
func (c *call) finish(outLen int) []byte {
	if c.status != statusOK || c.out == nil {
		out := make([]byte, cmdb.HeaderBytes)
		out[0] = c.status
		binary.BigEndian.PutUint32(out[4:], c.syndrome)
		return out
	}
	return c.out[:min(outLen, len(c.out))]
}

// get reads an in-mailbox field (0 when the layout lacks it).
func (c *call) get(path string) uint64 {
	if c.inDec == nil {
		return 0
	}
	v, err := c.inDec.Get(path)
	if err != nil {
		return 0
	}
	return v.Uint()
}

// set writes out-mailbox fields by name through the codec.
func (c *call) set(as ...prm.Assignment) {
	if c.status != statusOK {
		return
	}
	if err := c.outPlan.Encode(c.out, as); err != nil {
		c.internal(fmt.Errorf("%s: %w", c.cmd.Name, err))
	}
}

// put copies bytes into the out mailbox at a field's position.
func (c *call) put(path string, b []byte) {
	if c.status != statusOK {
		return
	}
	t, err := c.outPlan.Resolve(path, c.out)
	if err != nil {
		c.internal(fmt.Errorf("%s: %w", c.cmd.Name, err))
		return
	}
	copy(c.out[t.Bit/8:], b)
}

func kv(path string, v any) prm.Assignment { return prm.Assignment{Path: path, Value: fmt.Sprint(v)} }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// handlers answer the emulated commands by name.
var handlers = map[string]func(*call){
	"QUERY_HCA_CAP":                (*call).queryHCACap,
	"QUERY_ADAPTER":                (*call).queryAdapter,
	"QUERY_ESW_FUNCTIONS":          (*call).queryESWFunctions,
	"QUERY_VPORT_STATE":            (*call).queryVportState,
	"QUERY_HCA_VPORT_CONTEXT":      (*call).queryHCAVportContext,
	"QUERY_Q_COUNTER":              (*call).queryQCounter,
	"QUERY_NVMF_NAMESPACE_CONTEXT": (*call).queryNVMFNamespace,
	"QUERY_XRQ":                    (*call).queryXRQ,
	"QUERY_QP":                     (*call).queryQP,
	"QUERY_MKEY":                   (*call).queryMKey,
	"ACCESS_REG":                   (*call).accessReg,
	"NOP":                          func(*call) {},
}

// portUp says whether an adapter port's link is up.
func (ep *Endpoint) portUp(port int) bool {
	ps := ep.a.Firmware.Ports()
	return port >= 1 && port <= len(ps) && ps[port-1].OperUp
}
