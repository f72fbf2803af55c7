// Package fw is the emulated adapter's firmware: it answers access-register
// requests (it implements emu.Firmware) from a model of the adapter built
// from a Spec.
//
// Registers are answered through the PRM database it is given. Registers
// with behaviour (MGIR, MCAM, the firmware-component registers, the port
// registers, thermal sensors, counters, ROCE_ACCL, and what extensions
// install: the NV store, the modules) build their replies field by field
// through the codec; a few whose idle state is all the model needs
// (storeModels) are kept by a generic store, one instance per value of
// their INDEX fields, SET changing only RW fields. Every other register of
// the database is one this firmware does not implement: it answers status
// 4 (register not supported), as firmware answers a register it lacks, and
// MCAM/PCAM/QCAM do not advertise it.
// Nothing here places a field by hand, so the same firmware runs over any
// database revision that has the fields it uses.
//
// The model is deterministic: given the Spec (with its Seed) and the times
// the clock reports, every reply is the same on every run.
package fw

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cxray/cxray/emu"
	"github.com/cxray/cxray/internal/clock"
	"github.com/cxray/cxray/prm"
)

// Config builds a Firmware.
type Config struct {
	// DB is the register database (required).
	DB *prm.DB
	// Spec describes the adapter.
	Spec Spec
	// Clock drives uptime, temperatures and counters; nil: the wall clock.
	Clock emu.Clock
	// Strict turns a field a handler needs but the database lacks into
	// status 0x70 (internal error) instead of skipping it: for tests that
	// pin the built-in database.
	Strict bool
}

// Faults are firmware-level failure modes, switched at run time. Device-level
// faults (semaphores, ICMD, removal) live in emu.Faults.
type Faults struct {
	// Unsupported registers answer status 4 (not supported) and MCAM stops
	// advertising them, as on firmware that lacks them.
	Unsupported []string
	// Status makes registers answer a status instead of working.
	Status []StatusFault
	// Busy makes the next Busy requests answer status 1 (busy); it counts
	// down with each request (Faults reports what is left).
	Busy int
	// FreezeTemperatures keeps every sensor at the reading it had when the
	// fault went on (a stale monitor).
	FreezeTemperatures bool
	// ASICTemperatureOffsetC is added to the ASIC sensor (overheating).
	ASICTemperatureOffsetC float64
	// LinkDown lists local ports whose link partner is gone: they stay down
	// although everything on this side is ready.
	LinkDown []int
}

// StatusFault makes one register answer a status.
type StatusFault struct {
	Register string     // name ("PAOS") or ID ("0x5006")
	Method   emu.Method // 0: every method
	Status   uint8
}

// Result describes one handled request, for observers.
type Result struct {
	Time     time.Time
	ID       uint16
	Register string // "" when the ID is not in the database
	Method   emu.Method
	Status   uint8
	// Reason says why a request failed, in words a person can act on.
	Reason string
}

// Firmware answers access-register requests. Safe for concurrent use: the
// device serialises its own calls, and tests or a control socket may read and
// change the model at the same time.
type Firmware struct {
	mu     sync.Mutex
	db     *prm.DB
	clk    emu.Clock
	strict bool
	spec   Spec
	boot   time.Time

	regs       map[uint16]*regInfo
	behaviours map[uint16]Behaviour
	pddrPages  map[uint8]Handler
	store      map[instKey][]byte

	specUnsupported map[uint16]bool
	faults          Faults
	faultUnsupp     map[uint16]bool
	faultStatus     map[statusKey]uint8
	linkDown        map[int]bool
	frozenAt        time.Time

	observer func(Result)
	recorder func(Change)
	lastErr  error

	ports   []*portState
	modules []*moduleState
	// moduleClock is when each module's monitors stand (SetModuleClock).
	moduleClock func(module int, now time.Time) time.Time
	sensors     map[int]*sensor // by MTMP sensor_index
	roce        roceState
	flash       *flashState
}

type regInfo struct {
	reg  *prm.Register
	plan *prm.Plan
	// index marks the bits of INDEX fields outside unions: the key of an
	// instance in the generic store and what a reply echoes.
	index []byte
	// op marks the bits of OP fields: a GET that sets one (PPCNT clr)
	// changes the device.
	op []byte
}

type instKey struct {
	id  uint16
	idx string
}

type statusKey struct {
	id     uint16
	method emu.Method
}

// New builds the firmware in its power-on state.
func New(cfg Config) (*Firmware, error) {
	if cfg.DB == nil {
		return nil, errors.New("fw: no register database; load one with builtin.Load()")
	}
	spec := cfg.Spec.clone()
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("fw: spec %q: %w", spec.Name, err)
	}
	f := &Firmware{
		db: cfg.DB, clk: cfg.Clock, strict: cfg.Strict, spec: spec,
		regs: map[uint16]*regInfo{}, behaviours: map[uint16]Behaviour{}, pddrPages: map[uint8]Handler{},
		store: map[instKey][]byte{}, specUnsupported: map[uint16]bool{}, faultUnsupp: map[uint16]bool{},
		faultStatus: map[statusKey]uint8{}, linkDown: map[int]bool{}, sensors: map[int]*sensor{},
	}
	if f.clk == nil {
		f.clk = clock.Real{}
	}
	f.boot = spec.Boot
	if f.boot.IsZero() {
		f.boot = f.clk.Now()
	}
	for _, r := range cfg.DB.Registers {
		if r.ID > 0xFFFF {
			continue
		}
		id := uint16(r.ID)
		if _, dup := f.regs[id]; dup {
			continue
		}
		p, err := cfg.DB.RegisterPlan(r)
		if err != nil {
			continue // a layout the codec cannot compile is not answered
		}
		f.regs[id] = &regInfo{reg: r, plan: p, index: indexMask(p), op: opMask(p)}
	}
	for _, name := range spec.Unsupported {
		id, err := f.lookup(name)
		if err != nil {
			return nil, fmt.Errorf("fw: spec %q: unsupported register: %w", spec.Name, err)
		}
		f.specUnsupported[id] = true
	}
	f.initFlash()
	if err := f.buildModel(); err != nil {
		return nil, fmt.Errorf("fw: spec %q: %w", spec.Name, err)
	}
	f.installBehaviours()
	f.relink(f.boot)
	return f, nil
}

// lookup resolves a register name or ID against the database.
func (f *Firmware) lookup(name string) (uint16, error) {
	r, err := f.db.Register(name)
	if err != nil {
		return 0, err
	}
	if _, ok := f.regs[uint16(r.ID)]; !ok || r.ID > 0xFFFF {
		return 0, fmt.Errorf("register %s (0x%x) has a layout the codec cannot compile", r.Name, r.ID)
	}
	return uint16(r.ID), nil
}

// indexMask marks the INDEX fields that are not inside a union.
func indexMask(p *prm.Plan) []byte {
	m := make([]byte, p.Bytes)
	for _, l := range p.Leaves() {
		if l.Access != prm.AccessIndex || l.When != "" || l.Joined {
			continue
		}
		n := max(l.Count, 1)
		if l.Variable {
			n = 1
		}
		setMaskBits(m, l.Bit, l.Width*n)
	}
	return m
}

// opMask marks every OP field (operations such as PPCNT clr).
func opMask(p *prm.Plan) []byte {
	var m []byte
	for _, l := range p.Leaves() {
		if l.Access != prm.AccessOP || l.Variable {
			continue
		}
		if m == nil {
			m = make([]byte, p.Bytes)
		}
		setMaskBits(m, l.Bit, l.Width*max(l.Count, 1))
	}
	return m
}

// anyBits says whether data has a bit set where mask has one.
func anyBits(data, mask []byte) bool {
	for i := 0; i < len(mask) && i < len(data); i++ {
		if data[i]&mask[i] != 0 {
			return true
		}
	}
	return false
}

// AccessRegister implements emu.Firmware with the adapter's own port
// numbering (local port N is port N). PCI functions use a View instead.
func (f *Firmware) AccessRegister(id uint16, method emu.Method, data []byte) ([]byte, uint8) {
	return f.accessVia(id, method, data, nil)
}

// View is the firmware as one PCI function sees it. On an adapter, port
// registers name ports relative to the function: local port 1 is the
// function's own port (the Linux driver always asks for local port 1, and
// mlxlink selects a port by opening its function). Local ports 2, 3, ...
// reach the ports listed after it, if any.
type View struct {
	f     *Firmware
	ports []int // local port L is adapter port ports[L-1]
}

// View returns the firmware as seen through a function whose local ports
// 1, 2, ... are the adapter's ports listed (1-based, no repeats).
func (f *Firmware) View(ports []int) (*View, error) {
	seen := map[int]bool{}
	for _, p := range ports {
		if f.port(p) == nil {
			return nil, fmt.Errorf("fw: view: port %d does not exist (ports 1..%d)", p, len(f.ports))
		}
		if seen[p] {
			return nil, fmt.Errorf("fw: view: port %d is listed twice", p)
		}
		seen[p] = true
	}
	if len(ports) == 0 {
		return nil, errors.New("fw: view: a PCI function needs at least one port")
	}
	return &View{f: f, ports: slices.Clone(ports)}, nil
}

// AccessRegister implements emu.Firmware.
func (v *View) AccessRegister(id uint16, method emu.Method, data []byte) ([]byte, uint8) {
	return v.f.accessVia(id, method, data, v.ports)
}

// Firmware returns the adapter's firmware behind the view.
func (v *View) Firmware() *Firmware { return v.f }

// Ports lists the adapter ports the view's local ports 1, 2, ... name.
func (v *View) Ports() []int { return slices.Clone(v.ports) }

func (f *Firmware) accessVia(id uint16, method emu.Method, data []byte, ports []int) ([]byte, uint8) {
	f.mu.Lock()
	c, status := f.access(id, method, data, ports, false)
	obs, rec := f.observer, f.recorder
	res := Result{Time: c.Now, ID: id, Method: method, Status: status, Reason: c.reason}
	if c.Register != nil {
		res.Register = c.Register.Name
	}
	changed := status == StatusOK && (method == emu.MethodSet || c.changed || anyBits(data, f.regs[id].op))
	f.mu.Unlock()
	if obs != nil {
		obs(res)
	}
	if rec != nil && changed {
		rec(Change{Time: c.Now, Ports: slices.Clone(ports), ID: id, Method: method, Data: slices.Clone(data)})
	}
	if status != StatusOK {
		return nil, status
	}
	return c.Out, status
}

// Change is an access that changed the device (a SET, or a GET that
// carries an operation such as PPCNT clr), as a recorder sees it: enough
// to perform it again on another copy of the same firmware (Replay) at the
// same emulated time.
type Change struct {
	Time time.Time
	// Ports are the view's ports (nil: the adapter's own numbering).
	Ports  []int
	ID     uint16
	Method emu.Method
	// Data is the request as sent.
	Data []byte
}

// SetRecorder installs fn, called after every access that changed the
// device (outside the lock, before the access returns). Replayed accesses
// are not reported. nil removes it.
func (f *Firmware) SetRecorder(fn func(Change)) {
	f.mu.Lock()
	f.recorder = fn
	f.mu.Unlock()
}

// Replay performs a recorded access again, with the adapter's own port
// numbering: see View.Replay.
func (f *Firmware) Replay(id uint16, method emu.Method, data []byte) (uint8, string) {
	return f.replayVia(id, method, data, nil)
}

// Replay performs an access a recorder saw, on another copy of the same
// firmware, to bring it to the same state: the clock must read the
// change's time. The faults switched on here are not applied (they are
// the switches of the process that runs them, not the device's state),
// and neither the observer nor the recorder hears of it. It returns the
// status and, on failure, the reason.
func (v *View) Replay(id uint16, method emu.Method, data []byte) (uint8, string) {
	return v.f.replayVia(id, method, data, v.ports)
}

func (f *Firmware) replayVia(id uint16, method emu.Method, data []byte, ports []int) (uint8, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, status := f.access(id, method, data, ports, true)
	return status, c.reason
}

func (f *Firmware) access(id uint16, method emu.Method, data []byte, ports []int, replay bool) (*Call, uint8) {
	c := &Call{Method: method, Now: f.clk.Now(), fw: f, ports: ports, replay: replay}
	f.tick(c.Now)
	ri := f.regs[id]
	if ri == nil {
		return c, c.Fail(StatusRegNotSupported, "register 0x%04x is not in the PRM database (%s)", id, f.db.Revision)
	}
	c.Register, c.Plan = ri.reg, ri.plan
	if f.specUnsupported[id] || !f.models(id) {
		return c, c.Fail(StatusRegNotSupported, "%s is not implemented by this firmware", ri.reg.Name)
	}
	if !replay {
		if f.faultUnsupp[id] {
			return c, c.Fail(StatusRegNotSupported, "%s is not implemented by this firmware", ri.reg.Name)
		}
		if st, ok := f.faultStatus[statusKey{id, method}]; ok {
			return c, c.Fail(st, "%s answers status %d (fault)", ri.reg.Name, st)
		}
		if st, ok := f.faultStatus[statusKey{id, 0}]; ok {
			return c, c.Fail(st, "%s answers status %d (fault)", ri.reg.Name, st)
		}
		if f.faults.Busy > 0 {
			f.faults.Busy--
			return c, c.Fail(StatusBusy, "firmware busy (fault, %d more)", f.faults.Busy)
		}
	}
	if method != emu.MethodGet && method != emu.MethodSet {
		return c, c.Fail(StatusMethodNotSupp, "method %d is neither GET (1) nor SET (2)", method)
	}
	b := f.behaviours[id]
	n, want := len(data), ri.plan.Bytes
	// A request shorter than the firmware's layout is refused. A longer
	// one is what a tool with a newer PRM database sends (PTYS grew from
	// 64 to 68 bytes in Rev 0.59, ROCE_ACCL to 128 in 0.62): the firmware
	// answers with its own layout and leaves the bytes it does not know
	// zero, up to what one access carries.
	switch {
	case n < want:
		return c, c.Fail(StatusBadLength, "%s is %d bytes; the request carries %d", ri.reg.Name, want, n)
	case n > maxRegisterBytes:
		return c, c.Fail(StatusBadLength, "%s is %d bytes; the request carries %d, more than one access holds", ri.reg.Name, want, n)
	}
	c.In = append([]byte(nil), data...)
	c.Out = merge(make([]byte, n), c.In, ri.index)
	h := b.Access
	if h == nil {
		h = f.generic
	}
	status := h(c)
	if status != StatusOK {
		if c.err != nil {
			f.lastErr = c.err
		}
		return c, status
	}
	if err := c.Flush(); err != nil {
		f.lastErr = err
		return c, c.internal(err)
	}
	return c, StatusOK
}

// maxRegisterBytes is the largest register one access carries: the ICMD
// mailbox (0x340 bytes) less the TLV header.
const maxRegisterBytes = 0x340 - 20

// missing handles a field the database lacks.
func (f *Firmware) missing(c *Call, path string, err error) {
	if !f.strict {
		return
	}
	if err == nil {
		err = errMissing
	}
	c.internal(fmt.Errorf("%s.%s: %w", c.Register.Name, path, err))
}

// generic is the behaviour of a register without one: the stored instance
// for the request's index fields, or zeros; SET keeps everything but RW.
func (f *Firmware) generic(c *Call) uint8 {
	ri := f.regs[uint16(c.Register.ID)]
	key := instKey{uint16(c.Register.ID), string(merge(make([]byte, len(c.In)), c.In, ri.index)[:min(len(c.In), len(ri.index))])}
	old := f.store[key]
	if c.Method == emu.MethodSet {
		mask, err := rwMask(c.Plan, c.In)
		if err != nil {
			return c.internal(err)
		}
		base := c.Out // index fields and zeros
		if old != nil {
			base = merge(old, c.Out, ri.index)
		}
		next := merge(base, c.In, mask)
		f.store[key] = next
		copy(c.Out, next)
		return StatusOK
	}
	if old != nil {
		clear(c.Out)
		copy(c.Out, old)
	}
	return StatusOK
}

// rwMask marks the RW fields of the members the request selects.
func rwMask(p *prm.Plan, buf []byte) ([]byte, error) {
	d, err := p.Decode(buf)
	if err != nil {
		return nil, err
	}
	m := make([]byte, len(buf))
	var walk func(v prm.Value, depth int)
	walk = func(v prm.Value, depth int) {
		if depth > 64 {
			return
		}
		s := v.Step()
		switch v.Kind() {
		case prm.KindUint, prm.KindBytes:
			if s.Access == prm.AccessRW {
				setMaskBits(m, v.Bit(), s.Width)
			}
			return
		case prm.KindArray:
			if v.IsText() {
				if s.Access == prm.AccessRW {
					setMaskBits(m, v.Bit(), len(v.Raw())*8)
				}
				return
			}
		case prm.KindUnion:
			if v.Member() == prm.MemberNone {
				return // the request selects no member: nothing is known to be writable
			}
		case prm.KindJoined:
			return // its halves are listed on their own
		}
		for i := 0; i < v.Len(); i++ {
			walk(v.Kid(i), depth+1)
		}
	}
	walk(d.Root(), 0)
	return m, nil
}

// SetBehaviour gives a register of the database its behaviour, replacing
// what it had; this is how later work adds registers (MCIA, the NV
// registers, MFRL). A zero Behaviour removes it: the register is then
// refused (status 4) unless the generic store models it (storeModels).
func (f *Firmware) SetBehaviour(register string, b Behaviour) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	id, err := f.lookup(register)
	if err != nil {
		return fmt.Errorf("fw: %w", err)
	}
	if b.Access == nil {
		delete(f.behaviours, id)
		return nil
	}
	f.behaviours[id] = b
	return nil
}

// Behaviour returns a register's behaviour, so that an extension can wrap it.
func (f *Firmware) Behaviour(register string) (Behaviour, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id, err := f.lookup(register)
	if err != nil {
		return Behaviour{}, false
	}
	b, ok := f.behaviours[id]
	return b, ok
}

// SetPDDRPage gives PDDR page_select=page its behaviour (page 3, the module
// page, belongs to the optics model). nil returns the page to the generic
// store. Pages 0 and 1 are built in but can be replaced.
func (f *Firmware) SetPDDRPage(page uint8, h Handler) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if h == nil {
		delete(f.pddrPages, page)
		return
	}
	f.pddrPages[page] = h
}

// SetObserver installs fn, called after every request (outside the lock).
func (f *Firmware) SetObserver(fn func(Result)) {
	f.mu.Lock()
	f.observer = fn
	f.mu.Unlock()
}

// LastError returns the last internal error (a handler bug), if any.
func (f *Firmware) LastError() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lastErr
}

// SetFaults replaces the firmware-level faults. Unknown registers or ports
// are an error and leave the faults unchanged.
func (f *Firmware) SetFaults(fl Faults) error {
	unsupp := map[uint16]bool{}
	status := map[statusKey]uint8{}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, name := range fl.Unsupported {
		id, err := f.lookup(name)
		if err != nil {
			return fmt.Errorf("fw: unsupported register: %w", err)
		}
		unsupp[id] = true
	}
	for _, sf := range fl.Status {
		id, err := f.lookup(sf.Register)
		if err != nil {
			return fmt.Errorf("fw: status fault: %w", err)
		}
		if sf.Method != 0 && sf.Method != emu.MethodGet && sf.Method != emu.MethodSet {
			return fmt.Errorf("fw: status fault on %s: method %d is neither GET (1) nor SET (2)", sf.Register, sf.Method)
		}
		if sf.Status > 0x7F {
			return fmt.Errorf("fw: status fault on %s: status 0x%x does not fit the 7-bit status field", sf.Register, sf.Status)
		}
		status[statusKey{id, sf.Method}] = sf.Status
	}
	down := map[int]bool{}
	for _, p := range fl.LinkDown {
		if f.port(p) == nil {
			return fmt.Errorf("fw: link-down fault: local port %d does not exist (ports 1..%d)", p, len(f.ports))
		}
		down[p] = true
	}
	if fl.Busy < 0 {
		return fmt.Errorf("fw: busy count %d is negative", fl.Busy)
	}
	if !(fl.ASICTemperatureOffsetC >= -100 && fl.ASICTemperatureOffsetC <= 200) {
		return fmt.Errorf("fw: ASIC temperature offset %v °C is out of range -100..200", fl.ASICTemperatureOffsetC)
	}
	now := f.clk.Now()
	if fl.FreezeTemperatures && !f.faults.FreezeTemperatures {
		f.frozenAt = now
	}
	fl.Unsupported = slices.Clone(fl.Unsupported)
	fl.Status = slices.Clone(fl.Status)
	fl.LinkDown = slices.Clone(fl.LinkDown)
	f.faults, f.faultUnsupp, f.faultStatus, f.linkDown = fl, unsupp, status, down
	f.relink(now)
	return nil
}

// Faults returns the active firmware-level faults.
func (f *Firmware) Faults() Faults {
	f.mu.Lock()
	defer f.mu.Unlock()
	fl := f.faults
	fl.Unsupported = slices.Clone(fl.Unsupported)
	fl.Status = slices.Clone(fl.Status)
	fl.LinkDown = slices.Clone(fl.LinkDown)
	return fl
}

// Spec returns the spec the firmware was built from.
func (f *Firmware) Spec() Spec {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.spec.clone()
}

// DB returns the register database the firmware answers from.
func (f *Firmware) DB() *prm.DB { return f.db }

// Boot returns the power-on time.
func (f *Firmware) Boot() time.Time { return f.boot }

// Supported lists the registers the firmware implements and answers now
// (neither listed unsupported by the spec nor by a fault), sorted by ID.
func (f *Firmware) Supported() []*prm.Register {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*prm.Register
	for id, ri := range f.regs {
		if f.answers(id) {
			out = append(out, ri.reg)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func (f *Firmware) answers(id uint16) bool {
	return f.models(id) && !f.specUnsupported[id] && !f.faultUnsupp[id]
}

// models says the firmware implements a register: it has a behaviour, or
// the generic store models it (storeModels).
func (f *Firmware) models(id uint16) bool {
	ri := f.regs[id]
	if ri == nil {
		return false
	}
	_, b := f.behaviours[id]
	return b || storeModels[ri.reg.Name] != ""
}

// storeModels are the registers the generic store answers, with why its
// answer (the stored RW fields, zeros elsewhere) is the device's: each is
// in an idle state no tool of the emulator's users changes, and NVIDIA's
// tools read it. Anything else without behaviour is refused.
var storeModels = map[string]string{
	"MFSV":  "no firmware security version is burnt in the fuses; mstflint's query reads it",
	"PMPT":  "no module PRBS test runs; mstlink reads it",
	"PPHCR": "no PHY histogram is configured; mstlink reads it",
}

// Handled lists the registers with behaviour beyond the generic store.
func (f *Firmware) Handled() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for id := range maps.Keys(f.behaviours) {
		out = append(out, f.regs[id].reg.Name)
	}
	sort.Strings(out)
	return out
}

// installBehaviours registers the built-in behaviours for the registers the
// database has (a register missing from an older database is skipped).
func (f *Firmware) installBehaviours() {
	builtin := map[string]Handler{
		"MGIR": f.mgir, "MCAM": f.mcam, "MCQS": f.mcqs, "MCQI": f.mcqi, "MQIS": f.mqis,
		"PAOS": f.paos, "PMAOS": f.pmaos, "PTYS": f.ptys, "PMLP": f.pmlp, "PDDR": f.pddr,
		"MTCAP": f.mtcap, "MTMP": f.mtmp, "PPCNT": f.ppcnt, "ROCE_ACCL": f.roceAccl,
		"PGUID": f.pguid, "MFPA": f.mfpa, "PPLM": f.pplm, "PPLR": f.pplr, "SLRG": f.slrg,
		"PCAM": f.pcam, "QCAM": f.qcam, "MCC": f.mcc, "MCDA": f.mcda,
		"PPHCR": f.pphcr, "SLRED": f.slred, "PPTT": f.pptt, "PPRT": f.pprt, "PPAOS": f.ppaos,
	}
	for name, h := range builtin {
		if id, err := f.lookup(name); err == nil {
			f.behaviours[id] = Behaviour{Access: h}
		}
	}
	f.pddrPages[0] = f.pddrOperational
	f.pddrPages[1] = f.pddrTroubleshooting
	f.pddrPages[6] = f.pddrLinkDownInfo
}

// enumValue looks up an enum value of a register field by name, so that
// handlers name states ("plugged_enabled") instead of numbering them.
func (f *Firmware) enumValue(register, path, name string) (uint64, bool) {
	r, err := f.db.Register(register)
	if err != nil {
		return 0, false
	}
	ri := f.regs[uint16(r.ID)]
	if ri == nil {
		return 0, false
	}
	t, err := ri.plan.Resolve(path, ri.plan.NewBuffer())
	if err != nil || t.Step.Field == nil {
		return 0, false
	}
	return t.Step.Field.EnumValueOf(name)
}

// enumNames lists a field's enum names, for error messages.
func (f *Firmware) enumNames(register, path string) string {
	r, err := f.db.Register(register)
	if err != nil {
		return ""
	}
	ri := f.regs[uint16(r.ID)]
	if ri == nil {
		return ""
	}
	t, err := ri.plan.Resolve(path, ri.plan.NewBuffer())
	if err != nil || t.Step.Field == nil {
		return ""
	}
	var names []string
	for _, e := range t.Step.Field.Enum {
		names = append(names, e.Name)
	}
	return strings.Join(names, ", ")
}
