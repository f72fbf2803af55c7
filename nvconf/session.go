package nvconf

import (
	"context"
	"errors"
	"fmt"
	"github.com/cxray/cxray/access/regaccess"
	"strings"

	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/dev/fwreset"
	"github.com/cxray/cxray/nvconf/tlv"
	"github.com/cxray/cxray/prm"
)

// Session is NV configuration access to one device: the register traffic
// (MNVQC, MNVGC, MNVDA, MNVDI, MNVIA, MNVGN, MFRL) with the device's answers
// cached for the session.
type Session struct {
	Dev    *dev.Device
	DB     *DB
	Layout Layout
	// ReadDefault and ReadCurrent are what MNVGC says the firmware can read
	// besides Next Boot; OtherHost that TLVs of other hosts may be written.
	ReadDefault, ReadCurrent, OtherHost bool
	// Writer is the writer ID cxray's writes carry.
	Writer uint8
	// Notes say what could not be learnt from the device and what was
	// assumed instead.
	Notes []string

	da, di, gn *HeaderCodec
	qc, gc, ia *Fields
	frl        *Fields

	support map[uint32]Support
	reads   map[readKey]*Item
}

// Support is what MNVQC says about one TLV instance.
type Support struct {
	Read, Write bool
	Version     int
}

// Item is one TLV instance as read from the device.
type Item struct {
	Inst   Instance
	Mode   Mode
	Header Header
	// Data is the TLV data, exactly TLV.Size bytes.
	Data []byte
	// Absent is set when the firmware said the item holds nothing (status
	// "resource not available"); Data is then all zeros.
	Absent bool
}

type readKey struct {
	typ  uint32
	mode Mode
}

// NVError is a failed NV access with what it means for the user.
type NVError struct {
	Op     string
	Status uint8 // firmware status, 0 when the failure was not a status
	Err    error
	Hint   string
}

func (e *NVError) Error() string {
	cause := e.Err.Error()
	if e.Hint != "" {
		// The hint says what the status means for NV: the register
		// layer's general advice for it would be said twice.
		var se *regaccess.StatusError
		if errors.As(e.Err, &se) {
			cause = strings.Replace(cause, se.Error(), se.Short(), 1)
		}
		return "nvconf: " + e.Op + ": " + cause + "; " + e.Hint
	}
	return "nvconf: " + e.Op + ": " + cause
}

func (e *NVError) Unwrap() error { return e.Err }

// statusOf extracts the firmware status from an access error.
func statusOf(err error) (uint8, bool) { return dev.StatusOf(err) }

// nvErr explains an NV register failure.
func nvErr(op string, err error) error {
	st, ok := statusOf(err)
	e := &NVError{Op: op, Status: st, Err: err}
	if ok {
		switch st {
		case dev.StatusBadConfig:
			e.Hint = "the firmware rejected the configuration: a value is outside what this adapter accepts, or the TLV is locked; this TLV was not written"
		case dev.StatusEraseExceeded:
			e.Hint = "the NV configuration flash reached its erase limit; stop repeated writes (cxray config writes only what changes) and contact NVIDIA support"
		case dev.StatusConfigCorrupt:
			e.Hint = "the NV configuration area is corrupt; 'cxray config reset --all' restores the defaults"
		case dev.StatusLengthTooSmall:
			e.Hint = "the firmware expects a longer TLV than the parameter database describes; use a newer database (--nvdb)"
		}
	}
	return e
}

// Open starts a session: it reads the port count (MGIR), checks that NV
// access works (MNVQC, as mstconfig does first), and asks which reads the
// firmware supports (MNVGC).
func Open(ctx context.Context, d *dev.Device, db *DB) (*Session, error) {
	return OpenPorts(ctx, d, db, 0)
}

// OpenPorts is Open for a caller that knows the adapter's port count
// (MGIR hw_info.num_ports, from its identity): the session does not read
// MGIR again. 0 reads it.
func OpenPorts(ctx context.Context, d *dev.Device, db *DB, ports int) (*Session, error) {
	s := &Session{Dev: d, DB: db, Writer: WriterUser1, support: map[uint32]Support{}, reads: map[readKey]*Item{}}
	var err error
	for _, c := range []struct {
		dst **HeaderCodec
		reg string
	}{{&s.da, "MNVDA"}, {&s.di, "MNVDI"}, {&s.gn, "MNVGN"}} {
		if *c.dst, err = tlv.NewHeaderCodec(d.DB, c.reg); err != nil {
			return nil, fmt.Errorf("nvconf: the PRM database (%s) cannot describe %s: %w", d.DB.Revision, c.reg, err)
		}
	}
	for _, c := range []struct {
		dst **Fields
		reg string
	}{{&s.qc, "MNVQC"}, {&s.gc, "MNVGC"}, {&s.ia, "MNVIA"}, {&s.frl, "MFRL"}} {
		if *c.dst, err = tlv.NewFields(d.DB, c.reg); err != nil {
			return nil, fmt.Errorf("nvconf: the PRM database (%s) lacks %s: %w", d.DB.Revision, c.reg, err)
		}
	}
	s.Layout = Layout{Ports: 1, Modules: 1}
	if ports > 0 && ports <= 64 {
		s.Layout.Ports, s.Layout.Modules = ports, ports
	} else if r, err := d.Get(ctx, "MGIR", nil, nil, 0); err == nil {
		if v, err := r.Decoded.Get("hw_info.num_ports"); err == nil && v.Uint() > 0 && v.Uint() <= 64 {
			s.Layout.Ports, s.Layout.Modules = int(v.Uint()), int(v.Uint())
		}
	} else {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		s.Notes = append(s.Notes, fmt.Sprintf("MGIR could not be read (%v): per-port parameters are shown for port 1 only", err))
	}
	// mstconfig's first NV access: MNVQC of type 0. Its failure says NV
	// configuration is not reachable at all.
	if _, err := s.querySupport(ctx, 0); err != nil {
		st, isStatus := statusOf(err)
		switch {
		case isStatus && st == dev.StatusRegisterNotSupported:
			return nil, &NVError{Op: "check NV access", Status: st, Err: err, Hint: "this firmware does not offer NV configuration registers (MNVQC); update the firmware, or on a BlueField DPU run cxray on the Arm side"}
		case isStatus && (st == dev.StatusBadParameter || st == dev.StatusInternalError):
			return nil, &NVError{Op: "check NV access", Status: st, Err: err, Hint: "the firmware refuses NV configuration access from this function: use the first physical function (usually function 0), or check that the host is allowed to configure the adapter (a restricted/multi-host setup or DPU mode)"}
		case isStatus:
			return nil, &NVError{Op: "check NV access", Status: st, Err: err, Hint: "the firmware answered the NV capability query with an error; retry, and if it persists reset the adapter (mstfwreset) or update the firmware"}
		}
		return nil, err
	}
	buf := make([]byte, s.gc.Plan.Bytes)
	if out, err := d.Transfer(ctx, dev.Get, s.gc.Reg.Name, buf, 0, 0); err == nil {
		s.ReadDefault = s.gc.Get(out, "nvda_read_factory_settings") != 0
		s.ReadCurrent = s.gc.Get(out, "nvda_read_current_settings") != 0
		s.OtherHost = s.gc.Get(out, "priv_nv_other_host") != 0
	} else {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		s.Notes = append(s.Notes, fmt.Sprintf("MNVGC could not be read (%v): Default and Current values are not available", err))
	}
	if !s.ReadDefault {
		s.Notes = append(s.Notes, "the firmware cannot read default (factory) values; parameters whose valid bit is clear are shown as stored")
	}
	return s, nil
}

// querySupport runs MNVQC for a type dword.
func (s *Session) querySupport(ctx context.Context, typ uint32) (Support, error) {
	buf := make([]byte, s.qc.Plan.Bytes)
	if err := s.qc.Set(buf, "type", uint64(typ)); err != nil {
		return Support{}, err
	}
	out, err := s.Dev.Transfer(ctx, dev.Get, s.qc.Reg.Name, buf, 0, 0)
	if err != nil {
		return Support{}, err
	}
	return Support{Read: s.qc.Get(out, "support_rd") != 0, Write: s.qc.Get(out, "support_wr") != 0, Version: int(s.qc.Get(out, "version"))}, nil
}

// Support returns (and caches) what the firmware supports for an instance.
// EXP_ROM TLVs are stored by the firmware for the expansion ROM without
// interpreting them: when MNVQC answers at all they can be read and
// written, whatever its bits say (mstconfig treats them the same way).
func (s *Session) Support(ctx context.Context, in Instance) (Support, error) {
	typ, err := TypeDword(in)
	if err != nil {
		return Support{}, err
	}
	if sp, ok := s.support[typ]; ok {
		return sp, nil
	}
	sp, err := s.querySupport(ctx, typ)
	if err != nil {
		if _, isStatus := statusOf(err); !isStatus || ctx.Err() != nil {
			// The device did not answer (timeout, gateway): not a fact
			// about the TLV.
			return Support{}, nvErr(fmt.Sprintf("ask whether the firmware supports %s (MNVQC)", in), err)
		}
		// The firmware refused the query for this type (older firmware
		// answers so for TLVs it does not know): not supported.
		sp = Support{}
	} else if in.TLV.Target == "EXP_ROM" {
		sp.Read, sp.Write = true, true
	}
	s.support[typ] = sp
	return sp, nil
}

// Read reads a TLV instance in a mode (cached for the session).
func (s *Session) Read(ctx context.Context, in Instance, mode Mode) (*Item, error) {
	typ, err := TypeDword(in)
	if err != nil {
		return nil, err
	}
	if it, ok := s.reads[readKey{typ, mode}]; ok {
		return it, nil
	}
	switch {
	case mode == ModeFactory && !s.ReadDefault:
		return nil, fmt.Errorf("nvconf: this firmware cannot read default values (MNVGC)")
	case mode == ModeCurrent && !s.ReadCurrent:
		return nil, fmt.Errorf("nvconf: this firmware cannot read current values (MNVGC)")
	}
	off := s.da.DataOffset()
	buf := make([]byte, off+MaxData)
	if err := s.da.EncodeHeader(buf, Header{Length: MaxData, Mode: mode, Type: typ, WriterID: s.Writer, OverEn: true}); err != nil {
		return nil, err
	}
	it := &Item{Inst: in, Mode: mode, Data: make([]byte, in.TLV.Size)}
	out, err := s.Dev.Transfer(ctx, dev.Get, s.da.Reg.Name, buf, off, 0)
	if err != nil {
		if st, ok := statusOf(err); ok && st == dev.StatusResourceNotAvailable {
			it.Absent = true
			s.reads[readKey{typ, mode}] = it
			return it, nil
		}
		return nil, nvErr(fmt.Sprintf("read %s (%s)", in, mode), err)
	}
	it.Header = s.da.DecodeHeader(out)
	n := min(it.Header.Length, in.TLV.Size, len(out)-off)
	if n > 0 {
		copy(it.Data, out[off:off+n])
	}
	s.reads[readKey{typ, mode}] = it
	return it, nil
}

// WriteTLV writes a TLV instance's Next Boot data (MNVDA SET). version is
// the data layout version the header declares.
func (s *Session) WriteTLV(ctx context.Context, in Instance, data []byte, version int) error {
	typ, err := TypeDword(in)
	if err != nil {
		return err
	}
	return s.writeType(ctx, typ, data, version, s.Writer, fmt.Sprintf("write %s", in))
}

func (s *Session) writeType(ctx context.Context, typ uint32, data []byte, version int, writer uint8, op string) error {
	if len(data) > MaxData {
		return fmt.Errorf("nvconf: %s: %d data bytes; one access carries at most %d", op, len(data), MaxData)
	}
	off := s.da.DataOffset()
	n := (len(data) + 3) &^ 3
	buf := make([]byte, max(off+n, s.da.Plan.Bytes))
	if err := s.da.EncodeHeader(buf, Header{Length: len(data), Version: version, WriterID: writer, Mode: ModeNext, Type: typ, OverEn: true}); err != nil {
		return err
	}
	copy(buf[off:], data)
	if _, err := s.Dev.Transfer(ctx, dev.Set, s.da.Reg.Name, buf, 0, off); err != nil {
		return nvErr(op, err)
	}
	s.forget(typ)
	crashPoint("write")
	return nil
}

// forget drops cached reads of a type (after a write).
func (s *Session) forget(typ uint32) {
	for _, m := range []Mode{ModeNext, ModeCurrent, ModeFactory} {
		delete(s.reads, readKey{typ, m})
	}
}

// ForgetAll drops every cached read (after resets).
func (s *Session) ForgetAll() { s.reads = map[readKey]*Item{} }

// Invalidate resets one TLV instance to its default (MNVDI): its Next Boot
// value becomes the factory value.
func (s *Session) Invalidate(ctx context.Context, in Instance) error {
	typ, err := TypeDword(in)
	if err != nil {
		return err
	}
	buf := make([]byte, max(s.di.Plan.Bytes, s.di.DataOffset()))
	if err := s.di.EncodeHeader(buf, Header{Type: typ, WriterID: s.Writer, OverEn: true}); err != nil {
		return err
	}
	if _, err := s.Dev.Transfer(ctx, dev.Set, s.di.Reg.Name, buf, 0, 0); err != nil {
		return nvErr(fmt.Sprintf("reset %s", in), err)
	}
	s.forget(typ)
	crashPoint("write")
	return nil
}

// InvalidateAll resets every TLV to its default (MNVIA, target ALL).
func (s *Session) InvalidateAll(ctx context.Context) error {
	buf := make([]byte, s.ia.Plan.Bytes)
	_ = s.ia.Set(buf, "target", 0)
	s.ia.SetIf(buf, "writer_id", uint64(s.Writer))
	if _, err := s.Dev.Transfer(ctx, dev.Set, s.ia.Reg.Name, buf, 0, 0); err != nil {
		return nvErr("reset all NV configuration", err)
	}
	s.ForgetAll()
	crashPoint("write")
	return nil
}

// MaxWalk bounds the NV walk: no firmware stores more TLVs than this, so a
// pointer chain that does not end is reported instead of followed forever.
const MaxWalk = 4096

// Walk lists every TLV stored in the NV configuration area (MNVGN), in the
// firmware's order: what a backup holds. An empty area is an empty list.
func (s *Session) Walk(ctx context.Context) ([]RawTLV, error) {
	var out []RawTLV
	off := s.gn.DataOffset()
	seen := map[uint64]bool{}
	ptr := uint64(0)
	for i := 0; i < MaxWalk; i++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		buf := make([]byte, off+MaxData)
		if err := s.gn.Set(buf, "nv_pointer", ptr); err != nil {
			return nil, err
		}
		got, err := s.Dev.Transfer(ctx, dev.Get, s.gn.Reg.Name, buf, 0, 0)
		if err != nil {
			if st, ok := statusOf(err); ok && st == dev.StatusResourceNotAvailable && ptr == 0 {
				return nil, nil // "NV data area may be empty"
			}
			if st, ok := statusOf(err); ok && st == dev.StatusRegisterNotSupported {
				return nil, &NVError{Op: "walk the NV configuration (MNVGN)", Status: st, Err: err, Hint: "this firmware cannot list its stored TLVs; back up with an older firmware's tools or read parameters with 'cxray config query'"}
			}
			return nil, nvErr("walk the NV configuration (MNVGN)", err)
		}
		next := s.gn.Get(got, "nv_pointer")
		if next == 0 {
			return out, nil
		}
		if seen[next] {
			return nil, fmt.Errorf("nvconf: the firmware's NV walk returns pointer 0x%x twice; the list would never end", next)
		}
		seen[next] = true
		h := s.gn.DecodeHeader(got)
		n := min(h.Length, MaxData, len(got)-off)
		raw := RawTLV{Header: h, HeaderImage: s.gn.HeaderImage(got), Data: append([]byte(nil), got[off:off+max(n, 0)]...)}
		out = append(out, raw)
		ptr = next
	}
	return nil, fmt.Errorf("nvconf: the firmware's NV walk did not end after %d TLVs", MaxWalk)
}

// WriteRaw writes a TLV from a backup or raw file as it is: its type,
// version and data. The writer ID is kept when the firmware accepts it from
// a tool (0x6..0xD); otherwise cxray's own is used.
func (s *Session) WriteRaw(ctx context.Context, r RawTLV) error {
	w := r.Header.WriterID
	if w < 0x6 || w > 0xD {
		w = s.Writer
	}
	return s.writeType(ctx, r.Header.Type, r.Data, r.Header.Version, w, "restore "+s.DB.DescribeType(r.Header.Type))
}

// InvalidateType resets a TLV named by its type dword.
func (s *Session) InvalidateType(ctx context.Context, typ uint32) error {
	buf := make([]byte, max(s.di.Plan.Bytes, s.di.DataOffset()))
	if err := s.di.EncodeHeader(buf, Header{Type: typ, WriterID: s.Writer, OverEn: true}); err != nil {
		return err
	}
	if _, err := s.Dev.Transfer(ctx, dev.Set, s.di.Reg.Name, buf, 0, 0); err != nil {
		return nvErr("reset "+s.DB.DescribeType(typ), err)
	}
	s.forget(typ)
	crashPoint("write")
	return nil
}

// Reset triggers (MFRL reset_trigger bits, Rev 0.57 and later): the
// levels of dev/fwreset, which `cxray fw reset` shares.
const (
	TriggerLivePatch  = fwreset.LevelLivePatch  // no NV effect
	TriggerImmediate  = fwreset.LevelImmediate  // newer firmware: reset now
	TriggerLinkToggle = fwreset.LevelLinkToggle // reset at the next PCIe link toggle / hot reset
	TriggerPERST      = fwreset.LevelPERST      // reset at the next PERST (host reboot)
)

// ResetCaps is what MFRL reports.
type ResetCaps struct {
	// Triggers lists the reset triggers the firmware accepts (bitmask).
	Triggers uint8
	// Types lists the reset types it supports (bit 0 full chip reset,
	// bit 1 keeping the network port up).
	Types uint8
	// State is MFRL reset_state by name (Waiting_For_Reset_Trigger: a
	// reset is armed, as 'config apply --at-reboot' leaves it); "" when
	// the database has no such field (it came with PRM Rev 0.59).
	State string
}

// Armed says a firmware reset waits for its trigger (the next reboot).
func (c ResetCaps) Armed() bool { return c.State == ResetStateArmed }

// ResetStateArmed is MFRL reset_state's name for an armed reset.
const ResetStateArmed = "Waiting_For_Reset_Trigger"

// FirmwareResetCaps reads MFRL (dev/fwreset).
func (s *Session) FirmwareResetCaps(ctx context.Context) (ResetCaps, error) {
	c, err := fwreset.Query(ctx, s.Dev)
	if err != nil {
		return ResetCaps{}, nvErr("read the firmware reset capabilities (MFRL)", err)
	}
	return ResetCaps{Triggers: c.Levels, Types: c.Types, State: c.State}, nil
}

// FirmwareReset asks the firmware for a reset with one trigger (MFRL SET,
// dev/fwreset): Next Boot values become Current when the reset happens.
func (s *Session) FirmwareReset(ctx context.Context, trigger uint8) error {
	if err := fwreset.Send(ctx, s.Dev, fwreset.Request{Level: trigger}); err != nil {
		return nvErr("request a firmware reset (MFRL)", err)
	}
	s.ForgetAll()
	return nil
}

// HeaderCodec returns the MNVDA header codec (for raw files).
func (s *Session) HeaderCodec() *HeaderCodec { return s.da }

// PRM is the register database the session encodes with.
func (s *Session) PRM() *prm.DB { return s.Dev.DB }
