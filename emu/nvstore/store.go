// Package nvstore is the emulated adapter's NV configuration: the TLVs its
// firmware keeps in flash, with the registers that reach them (MNVQC,
// MNVGC, MNVDA, MNVDI, MNVIA, MNVGN) and the firmware reset that applies
// them (MFRL).
//
// Each TLV instance (per class: global, per port, per host function, per
// host, per module) has three values, as on hardware:
//
//   - FACTORY: the firmware's defaults;
//   - NEXT: what the next firmware boot applies: the value written to NV, or
//     FACTORY when nothing is written (MNVDI and MNVIA erase what is written);
//   - CURRENT: what the running firmware uses: NEXT as it was at the last
//     firmware reset.
//
// A firmware reset (MFRL) copies NEXT to CURRENT. The emulator has no host
// driver to negotiate with and no link for a tool to toggle, so a reset
// armed for the next PCIe link toggle (TRIGGER3) happens at once, while one
// armed for PERST (TRIGGER6, what mstconfig sends after set) waits for
// Reboot. PowerCycle always applies.
//
// TLV layouts, names and limits come from the NV parameter database
// (nvconf); register layouts from the PRM database the firmware answers
// with. Nothing is placed by hand.
package nvstore

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"

	"github.com/cxray/cxray/emu"
	"github.com/cxray/cxray/emu/fw"
	"github.com/cxray/cxray/nvconf"
	"github.com/cxray/cxray/nvconf/builtin"
	"github.com/cxray/cxray/nvconf/expr"
	"github.com/cxray/cxray/nvconf/tlv"
	"github.com/cxray/cxray/prm"
)

// Defaults are a profile's NV configuration. Values are given by parameter
// name as `cxray config` names them: NAME (a per-port or per-module name
// without suffix sets every port or module), NAME_P1, NAME_M0, NAME[i], or
// tlv.field for fields without a user-visible name, such as capability
// fields ("nv_global_pci_cap.max_vfs_per_pf"). Values are what `cxray
// config set` accepts (True, ETH, 8, 0x1f). Setting a parameter sets its
// valid bit.
type Defaults struct {
	// Factory values: what the firmware ships with (and MNVQC's capability
	// TLVs report).
	Factory map[string]string
	// Configured values were written to NV before power-on: Next Boot and
	// Current both hold them, and MNVGN lists their TLVs.
	Configured map[string]string
	// Pending values were written after power-on: Next Boot only.
	Pending map[string]string
	// Versions overrides the TLV version MNVQC reports, by TLV name
	// (default: the version the database describes).
	Versions map[string]int
	// Unsupported TLVs (by name) are reported unsupported by MNVQC and
	// refused by MNVDA.
	Unsupported []string
	// ReadOnly TLVs (by name) can be read but not written.
	ReadOnly []string
	// NoReadDefault and NoReadCurrent clear MNVGC's bits: the firmware
	// cannot read factory or current values.
	NoReadDefault, NoReadCurrent bool
	// Functions is the number of physical functions (Host_PF instances);
	// 0: one per port.
	Functions int
}

// Faults are NV failure modes, switched at run time.
type Faults struct {
	// NoAccess makes every NV register answer NoAccessStatus (default 4,
	// register not supported): firmware without NV configuration access.
	// mstconfig reports status 7 or 0x70 as "cannot access NV registers".
	NoAccess       bool
	NoAccessStatus uint8
	// RejectWrites makes writes of these TLVs (by name; "*" for all) answer
	// 0x20, configuration rejected.
	RejectWrites []string
	// EraseBudget, when positive, is the number of NV writes (MNVDA, MNVDI,
	// MNVIA SET) left before the flash reports 0x21, erase count exceeded.
	// EraseExceeded makes every write answer 0x21 at once.
	EraseBudget   int
	EraseExceeded bool
}

// Store is the NV configuration of one emulated adapter.
type Store struct {
	mu      sync.Mutex
	db      *nvconf.DB
	layout  nvconf.Layout
	entries map[uint32]*entry
	seq     uint32
	armed   bool
	faults  Faults
	readDef bool
	readCur bool
	da, di  *nvconf.HeaderCodec
	gn      *nvconf.HeaderCodec
	qc, gc  *nvconf.Fields
	ia, frl *nvconf.Fields
	// roq is MROQ, nil when the database lacks it (before Rev 0.61).
	roq    *nvconf.Fields
	resets int
}

type entry struct {
	inst    nvconf.Instance
	rd, wr  bool
	version int
	factory []byte
	current []byte
	nv      *record
}

// record is a TLV written to NV.
type record struct {
	data    []byte
	version int
	writer  uint8
	seq     uint32
}

func (e *entry) next() []byte {
	if e.nv != nil {
		return e.nv.data
	}
	return e.factory
}

// Options build a Store.
type Options struct {
	// PRM is the register database the firmware answers with (required).
	PRM *prm.DB
	// NV is the parameter database; nil: the built-in one.
	NV *nvconf.DB
	// Ports and Modules of the adapter (at least 1 port).
	Ports, Modules int
	Defaults       Defaults
}

// New builds a store in its power-on state.
func New(o Options) (*Store, error) {
	if o.PRM == nil {
		return nil, errors.New("nvstore: no PRM database")
	}
	db := o.NV
	if db == nil {
		var err error
		if db, err = builtin.Load(); err != nil {
			return nil, fmt.Errorf("nvstore: %w", err)
		}
	}
	if o.Ports < 1 {
		o.Ports = 1
	}
	if o.Modules < 1 {
		o.Modules = o.Ports
	}
	d := o.Defaults
	s := &Store{db: db, entries: map[uint32]*entry{}, readDef: !d.NoReadDefault, readCur: !d.NoReadCurrent}
	s.layout = nvconf.Layout{Ports: o.Ports, Modules: o.Modules}
	var err error
	for _, c := range []struct {
		dst **nvconf.HeaderCodec
		reg string
	}{{&s.da, "MNVDA"}, {&s.di, "MNVDI"}, {&s.gn, "MNVGN"}} {
		if *c.dst, err = tlv.NewHeaderCodec(o.PRM, c.reg); err != nil {
			return nil, fmt.Errorf("nvstore: %w", err)
		}
	}
	for _, c := range []struct {
		dst **nvconf.Fields
		reg string
	}{{&s.qc, "MNVQC"}, {&s.gc, "MNVGC"}, {&s.ia, "MNVIA"}, {&s.frl, "MFRL"}} {
		if *c.dst, err = tlv.NewFields(o.PRM, c.reg); err != nil {
			return nil, fmt.Errorf("nvstore: %w", err)
		}
	}
	// The handlers answer with these fields; a database without one cannot
	// run the store (every revision in the history has them; MFRL's
	// reset_trigger is optional, Rev 0.51 lacks it).
	for _, need := range []struct {
		f     *nvconf.Fields
		paths []string
	}{
		{s.qc, []string{"type", "support_rd", "support_wr", "version"}},
		{s.gc, []string{"nvda_read_factory_settings", "nvda_read_current_settings", "priv_nv_other_host"}},
		{s.ia, []string{"target"}},
		{s.gn.Fields, []string{"nv_pointer"}},
	} {
		for _, p := range need.paths {
			if !need.f.Has(p) {
				return nil, fmt.Errorf("nvstore: %s in PRM database %s has no field %s; the NV store needs it", need.f.Reg.Name, o.PRM.Revision, p)
			}
		}
	}
	if _, err := o.PRM.Register("MROQ"); err == nil {
		if s.roq, err = tlv.NewFields(o.PRM, "MROQ"); err != nil {
			return nil, fmt.Errorf("nvstore: %w", err)
		}
	}
	unsupported := nameSet(d.Unsupported)
	readOnly := nameSet(d.ReadOnly)
	for n := range unsupported {
		if db.TLV(n) == nil {
			return nil, fmt.Errorf("nvstore: unsupported TLV %q is not in the parameter database", n)
		}
	}
	for n := range readOnly {
		if db.TLV(n) == nil {
			return nil, fmt.Errorf("nvstore: read-only TLV %q is not in the parameter database", n)
		}
	}
	versions := map[string]int{}
	for n, v := range d.Versions {
		if db.TLV(n) == nil {
			return nil, fmt.Errorf("nvstore: version of TLV %q: not in the parameter database", n)
		}
		if v < 0 || v > 15 {
			return nil, fmt.Errorf("nvstore: version %d of TLV %s: a version is 0..15", v, n)
		}
		versions[strings.ToLower(n)] = v
	}
	fns := d.Functions
	if fns <= 0 {
		fns = o.Ports
	}
	for _, t := range db.TLVs {
		switch t.Class {
		case nvconf.ClassFile, nvconf.ClassSwitchGlobal:
			continue // configuration files and switches: not an adapter's NV
		}
		if t.Target == "SWITCH" || t.Size > nvconf.MaxData {
			continue
		}
		var ins []nvconf.Instance
		if t.Class == nvconf.ClassHostPF {
			for f := 0; f < fns; f++ {
				ins = append(ins, nvconf.Instance{TLV: t, Function: f})
			}
		} else {
			ins = s.layout.Instances(t)
		}
		ver := t.Version
		if v, ok := versions[strings.ToLower(t.Name)]; ok {
			ver = v
		}
		for _, in := range ins {
			typ, err := nvconf.TypeDword(in)
			if err != nil {
				return nil, fmt.Errorf("nvstore: %s: %w", in, err)
			}
			e := &entry{inst: in, version: ver, factory: make([]byte, t.Size), current: make([]byte, t.Size)}
			if !unsupported[strings.ToLower(t.Name)] {
				e.rd = true
				e.wr = !t.Cap && !readOnly[strings.ToLower(t.Name)]
			}
			s.entries[typ] = e
		}
	}
	if err := s.applyValues(d.Factory, Factory); err != nil {
		return nil, err
	}
	for _, e := range s.entries {
		copy(e.current, e.factory)
	}
	if err := s.applyValues(d.Configured, Configured); err != nil {
		return nil, err
	}
	if err := s.applyValues(d.Pending, Pending); err != nil {
		return nil, err
	}
	return s, nil
}

func nameSet(names []string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[strings.ToLower(strings.TrimSpace(n))] = true
	}
	return m
}

// Stage is where Set puts values.
type Stage uint8

// Stages of a value.
const (
	// Factory changes the firmware default.
	Factory Stage = iota
	// Configured writes NV and makes it current (as if set before boot).
	Configured
	// Pending writes NV only (Next Boot).
	Pending
)

// applyValues sets named values at a stage. Names without an instance
// suffix come first, so NAME sets every port and NAME_P2 then refines one.
func (s *Store) applyValues(vals map[string]string, st Stage) error {
	names := make([]string, 0, len(vals))
	for n := range vals {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		si, sj := s.isWhole(names[i]), s.isWhole(names[j])
		if si != sj {
			return si
		}
		return names[i] < names[j]
	})
	for _, n := range names {
		if err := s.setValue(n, vals[n], st); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) isWhole(name string) bool {
	p := s.db.ParamByMlxName(name)
	return p != nil && (p.TLV.Class == nvconf.ClassPort || p.TLV.Class == nvconf.ClassModule)
}

// setValue writes one named value into every instance it names.
func (s *Store) setValue(name, value string, st Stage) error {
	var refs []nvconf.Ref
	if p := s.db.ParamByMlxName(name); p != nil && (p.TLV.Class == nvconf.ClassPort || p.TLV.Class == nvconf.ClassModule || p.TLV.Class == nvconf.ClassHostPF) {
		for _, e := range s.entries {
			if e.inst.TLV == p.TLV {
				refs = append(refs, nvconf.Ref{Param: p, Inst: e.inst, Index: -1})
			}
		}
		// In type order, so records are written (and walked) reproducibly.
		sort.Slice(refs, func(i, j int) bool { return refs[i].Inst.Type() < refs[j].Inst.Type() })
	} else {
		r, err := s.db.Resolve(name, s.layout)
		if err != nil {
			return fmt.Errorf("nvstore: %s: %w", name, err)
		}
		refs = append(refs, r)
	}
	if len(refs) == 0 {
		return fmt.Errorf("nvstore: %s: no instance of its TLV on this adapter", name)
	}
	for _, r := range refs {
		e := s.entries[r.Inst.Type()]
		if e == nil {
			return fmt.Errorf("nvstore: %s: TLV %s is not stored by this adapter", name, r.Inst)
		}
		var data []byte
		switch st {
		case Factory:
			data = e.factory
		default:
			if e.nv == nil {
				s.seq++
				e.nv = &record{data: append([]byte(nil), e.factory...), version: e.version, writer: nvconf.WriterMlxconfig, seq: s.seq}
			}
			data = e.nv.data
		}
		if err := setParam(r, data, value); err != nil {
			return fmt.Errorf("nvstore: %w", err)
		}
		if st == Configured {
			copy(e.current, e.nv.data)
		}
	}
	return nil
}

// setParam parses a value for a reference and stores it (with its valid
// bit) in data.
func setParam(r nvconf.Ref, data []byte, value string) error {
	p := r.Param
	name := r.Name()
	switch {
	case p.Type == nvconf.TypeString || p.Type == nvconf.TypeBytes:
		b, err := p.ParseBytes(name, value)
		if err != nil {
			return err
		}
		if err := p.SetBytes(data, b); err != nil {
			return err
		}
	case p.IsArray() && r.Index < 0:
		for i := 0; i < p.ArrayLen; i++ {
			v, err := p.Parse(name, value)
			if err != nil {
				return err
			}
			if err := p.Set(data, i, v); err != nil {
				return err
			}
		}
	default:
		v, err := p.Parse(name, value)
		if err != nil {
			return err
		}
		if err := p.Set(data, max(r.Index, 0), v); err != nil {
			return err
		}
	}
	if p.ValidBit != "" {
		if vb := p.TLV.Param(p.ValidBit); vb != nil {
			if err := vb.Set(data, 0, 1); err != nil {
				return fmt.Errorf("%s: valid bit %s: %w", name, p.ValidBit, err)
			}
		}
	}
	return nil
}

// ---- public API (locks the store; never called by handlers)

// Set changes a named value at a stage (Factory, Configured, Pending).
func (s *Store) Set(name, value string, st Stage) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.setValue(name, value, st)
}

// Get returns a named value in a mode, formatted as query shows it.
func (s *Store) Get(name string, mode nvconf.Mode) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.db.Resolve(name, s.layout)
	if err != nil {
		return "", err
	}
	e := s.entries[r.Inst.Type()]
	if e == nil {
		return "", fmt.Errorf("nvstore: %s is not stored by this adapter", r.Inst)
	}
	data := e.next()
	switch mode {
	case nvconf.ModeCurrent:
		data = e.current
	case nvconf.ModeFactory:
		data = e.factory
	}
	if !r.Param.ValidBitSet(data) {
		data = e.factory
	}
	return r.Param.FormatData(data, max(r.Index, 0)), nil
}

// Stored lists the TLVs written to NV, in write order (what MNVGN walks).
func (s *Store) Stored() []nvconf.RawTLV {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []nvconf.RawTLV
	for _, e := range s.recordsInOrder() {
		out = append(out, nvconf.RawTLV{Header: nvconf.Header{Type: e.inst.Type(), Version: e.nv.version, WriterID: e.nv.writer, Length: len(e.nv.data)}, Data: append([]byte(nil), e.nv.data...)})
	}
	return out
}

func (s *Store) recordsInOrder() []*entry {
	var out []*entry
	for _, e := range s.entries {
		if e.nv != nil {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].nv.seq < out[j].nv.seq })
	return out
}

// FirmwareReset applies Next Boot: every TLV's current value becomes its
// next value (what an MFRL-triggered reset does).
func (s *Store) FirmwareReset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.firmwareReset()
}

func (s *Store) firmwareReset() {
	for _, e := range s.entries {
		copy(e.current, e.next())
	}
	s.armed = false
	s.resets++
}

// Reboot is a host reboot (PERST): it applies Next Boot only when a reset
// was armed for it (MFRL TRIGGER6), as a warm reboot on hardware keeps the
// firmware running otherwise. It reports whether the firmware reset.
func (s *Store) Reboot() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.armed {
		return false
	}
	s.firmwareReset()
	return true
}

// PowerCycle always applies Next Boot.
func (s *Store) PowerCycle() {
	s.FirmwareReset()
}

// Armed says whether a reset waits for the next PERST.
func (s *Store) Armed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.armed
}

// Resets counts the firmware resets so far.
func (s *Store) Resets() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.resets
}

// SetFaults replaces the NV faults.
func (s *Store) SetFaults(f Faults) error {
	for _, n := range f.RejectWrites {
		if n != "*" && s.db.TLV(n) == nil {
			return fmt.Errorf("nvstore: reject_writes: TLV %q is not in the parameter database", n)
		}
	}
	if f.EraseBudget < 0 {
		return fmt.Errorf("nvstore: erase budget %d is negative", f.EraseBudget)
	}
	if f.NoAccessStatus > 0x7F {
		return fmt.Errorf("nvstore: status 0x%x does not fit the 7-bit status field", f.NoAccessStatus)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f.RejectWrites = append([]string(nil), f.RejectWrites...)
	s.faults = f
	return nil
}

// Faults returns the active faults (EraseBudget counts down).
func (s *Store) Faults() Faults {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.faults
	f.RejectWrites = append([]string(nil), f.RejectWrites...)
	return f
}

// DB is the parameter database the store is built on.
func (s *Store) DB() *nvconf.DB { return s.db }

// Layout is the adapter's ports and modules.
func (s *Store) Layout() nvconf.Layout { return s.layout }

// ---- register behaviours

// Behaviours returns the register behaviours, keyed by register name.
func (s *Store) Behaviours() map[string]fw.Behaviour {
	return map[string]fw.Behaviour{
		"MNVQC": {Access: s.mnvqc},
		"MNVGC": {Access: s.mnvgc},
		"MNVDA": {Access: s.mnvda},
		"MNVDI": {Access: s.mnvdi},
		"MNVIA": {Access: s.mnvia},
		"MNVGN": {Access: s.mnvgn},
		"MFRL":  {Access: s.mfrl},
		"MROQ":  {Access: s.mroq},
	}
}

func (s *Store) noAccess(c *fw.Call) (uint8, bool) {
	if !s.faults.NoAccess || c.Replaying() {
		return 0, false
	}
	st := s.faults.NoAccessStatus
	if st == 0 {
		st = fw.StatusRegNotSupported
	}
	return c.Fail(st, "NV configuration access is disabled (fault)"), true
}

// writeFault checks the write faults, counting the erase budget.
func (s *Store) writeFault(c *fw.Call, tlv string) (uint8, bool) {
	if c.Replaying() {
		return 0, false // faults are the switches of the process that recorded the write
	}
	if s.faults.EraseExceeded {
		return c.Fail(fw.StatusEraseExceeded, "NV flash erase count exceeded (fault)"), true
	}
	for _, n := range s.faults.RejectWrites {
		if n == "*" || (tlv != "" && strings.EqualFold(n, tlv)) {
			return c.Fail(fw.StatusBadConfig, "write of %s rejected (fault)", tlv), true
		}
	}
	if s.faults.EraseBudget > 0 {
		s.faults.EraseBudget--
		if s.faults.EraseBudget == 0 {
			s.faults.EraseExceeded = true
		}
	}
	return 0, false
}

// targets maps a type dword to the entries it addresses: the "all ports"
// and "all functions" classes address every instance.
func (s *Store) targets(typ uint32) []*entry {
	if e := s.entries[typ]; e != nil {
		return []*entry{e}
	}
	f := tlv.SplitType(typ)
	var base nvconf.Class
	switch f.Class {
	case nvconf.ClassPortCommon:
		base = nvconf.ClassPort
	case nvconf.ClassHostAllFn, nvconf.ClassAllHostsFn, nvconf.ClassAllHostsAllFn:
		base = nvconf.ClassHostPF
	default:
		return nil
	}
	var out []*entry
	for _, e := range s.entries {
		if e.inst.TLV.Class == base && e.inst.TLV.ID == f.ID {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].inst.Type() < out[j].inst.Type() })
	return out
}

func (s *Store) mnvqc(c *fw.Call) uint8 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.noAccess(c); ok {
		return st
	}
	if c.Method != emu.MethodGet {
		return c.Fail(fw.StatusMethodNotSupp, "MNVQC is query only")
	}
	typ := uint32(s.qc.Get(c.In, "type"))
	if err := s.qc.Set(c.Out, "type", uint64(typ)); err != nil {
		return c.Internal(err)
	}
	es := s.targets(typ)
	if len(es) == 0 {
		return fw.StatusOK // unknown type: supported neither for read nor write
	}
	e := es[0]
	if err := errors.Join(
		s.qc.Set(c.Out, "support_rd", uint64(b2i(e.rd))),
		s.qc.Set(c.Out, "support_wr", uint64(b2i(e.wr))),
		s.qc.Set(c.Out, "version", uint64(e.version)),
	); err != nil {
		return c.Internal(err)
	}
	return fw.StatusOK
}

func (s *Store) mnvgc(c *fw.Call) uint8 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.noAccess(c); ok {
		return st
	}
	if c.Method != emu.MethodGet {
		return c.Fail(fw.StatusMethodNotSupp, "MNVGC is query only")
	}
	if err := errors.Join(
		s.gc.Set(c.Out, "nvda_read_factory_settings", uint64(b2i(s.readDef))),
		s.gc.Set(c.Out, "nvda_read_current_settings", uint64(b2i(s.readCur))),
		s.gc.Set(c.Out, "priv_nv_other_host", 0),
	); err != nil {
		return c.Internal(err)
	}
	return fw.StatusOK
}

func (s *Store) mnvda(c *fw.Call) uint8 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.noAccess(c); ok {
		return st
	}
	h := s.da.DecodeHeader(c.In)
	off := s.da.DataOffset()
	es := s.targets(h.Type)
	if len(es) == 0 {
		return c.Fail(fw.StatusBadParam, "type 0x%08x is not a TLV this firmware stores", h.Type)
	}
	e := es[0]
	name := e.inst.TLV.Name
	size := e.inst.TLV.Size
	if c.Method == emu.MethodGet {
		if !e.rd {
			return c.Fail(fw.StatusBadParam, "%s is not supported by this firmware", name)
		}
		var data []byte
		ver, writer := e.version, nvconf.WriterUnspecified
		switch h.Mode {
		case nvconf.ModeNext:
			data = e.next()
			if e.nv != nil {
				ver, writer = e.nv.version, e.nv.writer
			}
		case nvconf.ModeCurrent:
			if !s.readCur {
				return c.Fail(fw.StatusBadParam, "reading current values is not supported (MNVGC)")
			}
			data = e.current
		case nvconf.ModeFactory:
			if !s.readDef {
				return c.Fail(fw.StatusBadParam, "reading default values is not supported (MNVGC)")
			}
			data = e.factory
		default:
			return c.Fail(fw.StatusBadParam, "access_mode %d is not NEXT, CURRENT or FACTORY", h.Mode)
		}
		if len(c.Out)-off < size {
			return c.Fail(fw.StatusLenTooSmall, "%s holds %d bytes; the request has room for %d", name, size, len(c.Out)-off)
		}
		clear(c.Out[off:])
		copy(c.Out[off:], data)
		if err := s.da.EncodeHeader(c.Out, nvconf.Header{Length: size, Version: ver, WriterID: writer, Mode: h.Mode, Type: h.Type}); err != nil {
			return c.Fail(fw.StatusInternalError, "%v", err)
		}
		return fw.StatusOK
	}
	if st, bad := s.writeFault(c, name); bad {
		return st
	}
	switch {
	case !e.rd:
		return c.Fail(fw.StatusBadParam, "%s is not supported by this firmware", name)
	case !e.wr:
		return c.Fail(fw.StatusBadConfig, "%s cannot be written (read-only)", name)
	case h.Mode != nvconf.ModeNext:
		return c.Fail(fw.StatusBadParam, "writes go to NEXT; access_mode %d is for queries", h.Mode)
	case h.Length > size:
		return c.Fail(fw.StatusBadParam, "%s holds %d bytes; the header says %d", name, size, h.Length)
	case off+h.Length > len(c.In):
		return c.Fail(fw.StatusLenTooSmall, "the header says %d data bytes; the request carries %d", h.Length, len(c.In)-off)
	case h.Version > e.version:
		return c.Fail(fw.StatusBadConfig, "%s version %d is newer than this firmware's %d", name, h.Version, e.version)
	}
	data := make([]byte, size)
	copy(data, c.In[off:off+h.Length])
	for _, t := range es {
		if why := s.check(t, data); why != "" {
			return c.Fail(fw.StatusBadConfig, "%s: %s", t.inst, why)
		}
	}
	writer := h.WriterID
	if writer < 0x6 || writer > 0xD {
		writer = nvconf.WriterICMD // the PRM: other values become ICMD
	}
	for _, t := range es {
		s.seq++
		t.nv = &record{data: append([]byte(nil), data...), version: h.Version, writer: writer, seq: s.seq}
	}
	if err := s.da.EncodeHeader(c.Out, nvconf.Header{Length: h.Length, Version: h.Version, WriterID: writer, Mode: h.Mode, Type: h.Type}); err != nil {
		return c.Fail(fw.StatusInternalError, "%v", err)
	}
	return fw.StatusOK
}

// check is the firmware's own validation of a write: enum values it knows
// and the limits the database states against its capability TLVs. Only
// fields that change are checked, so a TLV with an old out-of-range field
// can still be rewritten.
func (s *Store) check(e *entry, data []byte) string {
	old := e.next()
	for _, p := range e.inst.TLV.Params {
		if p.Type == nvconf.TypeString || p.Type == nvconf.TypeBytes || p.IsArray() || !p.ValidBitSet(data) {
			continue
		}
		v, err := p.Get(data, 0)
		if err != nil {
			continue
		}
		if ov, err := p.Get(old, 0); err == nil && ov == v && p.ValidBitSet(old) {
			continue
		}
		if p.Type == nvconf.TypeEnum {
			if _, ok := p.EnumName(v); !ok {
				return fmt.Sprintf("%s=%d is not a value of %s", p.DisplayName(), v, p.DisplayName())
			}
		}
		for _, b := range []struct {
			expr string
			max  bool
		}{{p.MinVal, false}, {p.MaxVal, true}} {
			if strings.TrimSpace(b.expr) == "" {
				continue
			}
			x, err := expr.Parse(b.expr)
			if err != nil {
				continue
			}
			lim, err := x.Eval(s.lookup(e, data))
			if err != nil || math.IsNaN(lim) {
				continue
			}
			if b.max && float64(v) > lim {
				return fmt.Sprintf("%s=%d is above the maximum %v", p.DisplayName(), v, lim)
			}
			if !b.max && float64(v) < lim {
				return fmt.Sprintf("%s=%d is below the minimum %v", p.DisplayName(), v, lim)
			}
		}
	}
	return ""
}

// lookup gives expression variables their values from the store: the
// written TLV's new data, other TLVs' next values.
func (s *Store) lookup(e *entry, data []byte) expr.Env {
	return func(name string) (float64, error) {
		tn, pn, cross := strings.Cut(name, ".")
		if !cross {
			p := e.inst.TLV.Param(name)
			if p == nil {
				return 0, fmt.Errorf("no field %s", name)
			}
			v, err := p.Get(data, 0)
			return float64(v), err
		}
		t := s.db.TLV(tn)
		if t == nil {
			return 0, fmt.Errorf("no TLV %s", tn)
		}
		p := t.Param(pn)
		if p == nil {
			return 0, fmt.Errorf("no field %s.%s", tn, pn)
		}
		in := nvconf.Instance{TLV: t}
		if t.Class == e.inst.TLV.Class {
			in = e.inst
			in.TLV = t
		} else if ins := s.layout.Instances(t); len(ins) > 0 {
			in = ins[0]
		}
		o := s.entries[in.Type()]
		if o == nil {
			return 0, fmt.Errorf("%s is not stored", in)
		}
		v, err := p.Get(o.next(), 0)
		return float64(v), err
	}
}

func (s *Store) mnvdi(c *fw.Call) uint8 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.noAccess(c); ok {
		return st
	}
	if c.Method != emu.MethodSet {
		return c.Fail(fw.StatusMethodNotSupp, "MNVDI is write only")
	}
	h := s.di.DecodeHeader(c.In)
	es := s.targets(h.Type)
	if len(es) == 0 || !es[0].rd {
		return c.Fail(fw.StatusBadParam, "type 0x%08x is not a TLV this firmware stores", h.Type)
	}
	if st, bad := s.writeFault(c, es[0].inst.TLV.Name); bad {
		return st
	}
	for _, e := range es {
		e.nv = nil
	}
	if err := s.di.EncodeHeader(c.Out, nvconf.Header{Type: h.Type, Mode: h.Mode}); err != nil {
		return c.Internal(err)
	}
	return fw.StatusOK
}

func (s *Store) mnvia(c *fw.Call) uint8 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.noAccess(c); ok {
		return st
	}
	if c.Method != emu.MethodSet {
		return c.Fail(fw.StatusMethodNotSupp, "MNVIA is write only")
	}
	if t := s.ia.Get(c.In, "target"); t != 0 {
		return c.Fail(fw.StatusBadParam, "MNVIA target %d is reserved; 0 (ALL) is the only target", t)
	}
	if st, bad := s.writeFault(c, ""); bad {
		return st
	}
	for _, e := range s.entries {
		e.nv = nil
	}
	return fw.StatusOK
}

// mnvgn walks the written TLVs in write order. A request names the
// pointer of the previous TLV (0 to start); the reply carries the next TLV
// and its pointer, or pointer 0 when there is none. An empty NV area
// answers "resource not available", as mstconfig expects.
func (s *Store) mnvgn(c *fw.Call) uint8 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.noAccess(c); ok {
		return st
	}
	if c.Method != emu.MethodGet {
		return c.Fail(fw.StatusMethodNotSupp, "MNVGN is query only")
	}
	ptr := uint32(s.gn.Get(c.In, "nv_pointer"))
	recs := s.recordsInOrder()
	if len(recs) == 0 && ptr == 0 {
		return c.Fail(fw.StatusResourceNotAvail, "the NV configuration area is empty")
	}
	var e *entry
	for _, r := range recs {
		if r.nv.seq > ptr {
			e = r
			break
		}
	}
	off := s.gn.DataOffset()
	clear(c.Out)
	if e == nil {
		return fw.StatusOK // nv_pointer 0: the walk is over
	}
	if len(c.Out)-off < len(e.nv.data) {
		return c.Fail(fw.StatusLenTooSmall, "%s holds %d bytes; the request has room for %d", e.inst, len(e.nv.data), len(c.Out)-off)
	}
	if err := s.gn.Set(c.Out, "nv_pointer", uint64(e.nv.seq)); err != nil {
		return c.Internal(err)
	}
	copy(c.Out[off:], e.nv.data)
	if err := s.gn.EncodeHeader(c.Out, nvconf.Header{Length: len(e.nv.data), Version: e.nv.version, WriterID: e.nv.writer, Type: e.inst.Type()}); err != nil {
		return c.Fail(fw.StatusInternalError, "%v", err)
	}
	return fw.StatusOK
}

// Triggers the emulated firmware accepts (MFRL reset_trigger) and the reset
// types it reports.
const (
	// The triggers of the PRM revision the emulator models (Rev 0.57: live
	// patch, PCIe link toggle, PERST); the immediate reset of newer firmware
	// is not offered.
	supportedTriggers = nvconf.TriggerLivePatch | nvconf.TriggerLinkToggle | nvconf.TriggerPERST
	resetTypes        = 0x3 // full chip reset; keep the network port active
)

// resetOption is what MROQ reports for one reset type (PRM Rev 0.61+
// mroq_ext): the triggers, the sync flows (bit 0 legacy, bit 1 the
// driver's, bit 2 a tool's) and the PCI reset methods of TRIGGER3 (bit 0
// link disable, bit 1 hot reset).
type resetOption struct{ triggers, sync, methods uint8 }

// resetOptions are the emulated firmware's answers, by reset type (the
// rst_type_sel number): a full-chip reset at every supported trigger, and
// a phy-less one (the network port stays up) only at a PCIe link toggle,
// the one reset that keeps the host running. Both offer the legacy and the
// driver-synced flow; the emulator has no other host to coordinate.
var resetOptions = map[uint8]resetOption{
	0: {supportedTriggers, 0x3, 0x3},
	1: {nvconf.TriggerLinkToggle, 0x3, 0x3},
}

// mroq answers MROQ for the reset type the request names.
func (s *Store) mroq(c *fw.Call) uint8 {
	if c.Method != emu.MethodGet {
		return c.Fail(fw.StatusBadParam, "MROQ is read-only: use GET")
	}
	t := uint8(s.roq.Get(c.In, "reset_type"))
	o, ok := resetOptions[t]
	if !ok || resetTypes&(1<<t) == 0 {
		return fw.StatusOK // query_is_valid 0: the type is not offered
	}
	for _, f := range []struct {
		path string
		v    uint64
	}{{"query_is_valid", 1}, {"reset_trigger", uint64(o.triggers)}} {
		if err := s.roq.Set(c.Out, f.path, f.v); err != nil {
			return c.Internal(err)
		}
	}
	s.roq.SetIf(c.Out, "pci_sync_for_fw_update_start", uint64(o.sync))
	s.roq.SetIf(c.Out, "pci_reset_req_method", uint64(o.methods))
	return fw.StatusOK
}

func (s *Store) mfrl(c *fw.Call) uint8 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.Method == emu.MethodGet {
		// Rev 0.51's MFRL has no reset_trigger: nothing to offer with.
		if s.frl.Has("reset_trigger") {
			if err := s.frl.Set(c.Out, "reset_trigger", uint64(supportedTriggers)); err != nil {
				return c.Internal(err)
			}
		}
		s.frl.SetIf(c.Out, "reset_type", resetTypes)
		// An armed reset waits for its trigger (PRM Rev 0.59+ reset_state;
		// a database without the field has nothing to say it with).
		if v, ok := s.frl.EnumValue("reset_state", nvconf.ResetStateArmed); ok && s.armed {
			s.frl.SetIf(c.Out, "reset_state", v)
		}
		return fw.StatusOK
	}
	t := uint8(s.frl.Get(c.In, "reset_trigger"))
	if t == 0 || t&(t-1) != 0 || t&supportedTriggers == 0 {
		return c.Fail(fw.StatusBadParam, "reset_trigger 0x%x: set exactly one of the supported triggers (0x%x)", t, supportedTriggers)
	}
	// The type and the flow must be ones MROQ offers (fields a database
	// lacks read as 0: a full-chip reset, the legacy flow).
	typ := uint8(s.frl.Get(c.In, "rst_type_sel"))
	o, ok := resetOptions[typ]
	if !ok || resetTypes&(1<<typ) == 0 {
		return c.Fail(fw.StatusBadParam, "rst_type_sel %d: the reset types offered are 0x%x (MFRL reset_type)", typ, resetTypes)
	}
	if t&o.triggers == 0 {
		return c.Fail(fw.StatusBadParam, "reset_trigger 0x%x is not offered with reset type %d (MROQ lists 0x%x)", t, typ, o.triggers)
	}
	if sync := s.frl.Get(c.In, "pci_sync_for_fw_update_start"); sync > 1 || o.sync&(1<<sync) == 0 {
		return c.Fail(fw.StatusBadParam, "pci_sync_for_fw_update_start %d: the flows offered are legacy (0) and driver-synced (1)", sync)
	}
	switch t {
	case nvconf.TriggerLinkToggle:
		s.firmwareReset()
		c.FirmwareReset() // the stored firmware image runs too (emu/fw/flash.go)
	case nvconf.TriggerPERST:
		s.armed = true
	}
	if err := s.frl.Set(c.Out, "reset_trigger", uint64(t)); err != nil {
		return c.Internal(err)
	}
	return fw.StatusOK
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
