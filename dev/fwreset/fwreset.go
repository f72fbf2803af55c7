// Package fwreset asks an adapter which firmware resets it supports and
// requests one: MFRL (the reset levels and types the firmware accepts, and
// the request itself) and, where the register database has it and the
// firmware advertises it, MROQ (per reset type: the levels, the sync
// flows and the PCI reset methods). `cxray fw reset` and `cxray config
// apply` both go through it. Layouts come from the register database;
// nothing is placed by hand.
package fwreset

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/prm"
)

// Reset levels: MFRL reset_trigger bits (the PRM's TRIGGERn), one per
// request.
const (
	LevelLivePatch  uint8 = 1 << 0 // TRIGGER0: live patch, no reset
	LevelImmediate  uint8 = 1 << 1 // TRIGGER1: immediate reset (newer firmware)
	LevelLinkToggle uint8 = 1 << 3 // TRIGGER3: at the next PCIe link toggle or hot reset
	LevelPERST      uint8 = 1 << 6 // TRIGGER6: at the next PERST (host reboot)
)

// Levels lists the levels, lowest first, with the level numbers
// mstfwreset's --level uses for them (0, 1, 3, 4).
var Levels = []struct {
	Bit     uint8
	Number  int
	Name    string
	Meaning string
}{
	{LevelLivePatch, 0, "live_patch", "live patch: the firmware changes in place, nothing resets"},
	{LevelImmediate, 1, "immediate", "immediate firmware reset"},
	{LevelLinkToggle, 3, "pcie_link_toggle", "firmware reset at the next PCIe link toggle (driver unload, hot reset, reload)"},
	{LevelPERST, 4, "perst_reboot", "firmware reset at the next PERST: the host's warm reboot"},
}

// LevelName names a level bit ("" for none or several).
func LevelName(bit uint8) string {
	for _, l := range Levels {
		if l.Bit == bit {
			return l.Name
		}
	}
	return ""
}

// ParseLevel reads a level given as mstfwreset's number (0, 1, 3, 4) or
// by name.
func ParseLevel(s string) (uint8, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	for _, l := range Levels {
		if s == fmt.Sprint(l.Number) || s == l.Name {
			return l.Bit, nil
		}
	}
	var names []string
	for _, l := range Levels {
		names = append(names, fmt.Sprintf("%d (%s)", l.Number, l.Name))
	}
	return 0, fmt.Errorf("reset level %q: use %s", s, strings.Join(names, ", "))
}

// Reset types: MFRL reset_type bits; the value rst_type_sel and MROQ's
// reset_type take is the bit's number.
var Types = []struct {
	Bit  uint8
	Name string
}{
	{0, "full_chip"},
	{1, "phy_less"}, // the network port stays up during the reset
	{2, "nic_only"},
	{3, "arm_only"},
	{4, "arm_os_shutdown"},
	{5, "network_reset"},
}

// TypeName names a reset type by its number.
func TypeName(t uint8) string {
	for _, x := range Types {
		if x.Bit == t {
			return x.Name
		}
	}
	return fmt.Sprintf("type_%d", t)
}

// Sync flows (MROQ pci_sync_for_fw_update_start bits; MFRL takes the
// flow's number).
const (
	SyncLegacy uint8 = 1 << 0 // each host's tool sends MFRL itself
	SyncDriver uint8 = 1 << 1 // the driver acknowledges and unloads (devlink fw_activate)
	SyncTool   uint8 = 1 << 2 // a tool coordinates the hosts
)

// SyncNames name the flows by bit.
var SyncNames = map[uint8]string{SyncLegacy: "legacy", SyncDriver: "driver", SyncTool: "tool"}

// Caps is what the firmware says about resets.
type Caps struct {
	// Levels are the reset levels MFRL accepts (reset_trigger bits).
	Levels uint8
	// Types are the reset types MFRL supports (reset_type bits).
	Types uint8
	// State is MFRL's reset_state name ("" when the database lacks it).
	State string
	// ByType is MROQ's answer per supported type (nil without MROQ).
	ByType []TypeCaps
	// NoMROQ says why MROQ was not read ("" when it was).
	NoMROQ string
	// NoMROQCategory says whose the reason is: CategoryDatabase (the
	// register database lacks MROQ: a finding about the tool's database,
	// never about the adapter) or CategoryFirmware (the firmware does not
	// offer it). Either way the levels come from MFRL alone, as
	// mlxfwreset falls back to them.
	NoMROQCategory string
}

// Categories of a missing MROQ answer.
const (
	CategoryDatabase = "database"
	CategoryFirmware = "firmware"
)

// TypeCaps is MROQ's answer for one reset type.
type TypeCaps struct {
	Type uint8
	// Levels, Sync and Methods are bitmasks: reset_trigger bits, sync
	// flows (SyncLegacy...), PCI reset methods (bit 0 link disable, bit 1
	// hot reset).
	Levels, Sync, Methods uint8
}

// Query reads MFRL and, where it can, MROQ for every type MFRL lists.
func Query(ctx context.Context, d *dev.Device) (*Caps, error) {
	r, err := d.Get(ctx, "MFRL", nil, nil, 0)
	if err != nil {
		return nil, fmt.Errorf("read the firmware reset capabilities (MFRL): %w", err)
	}
	c := &Caps{Levels: uint8(field(r.Decoded, levelField(r.Decoded))), Types: uint8(field(r.Decoded, "reset_type"))}
	if v, err := r.Decoded.Get("reset_state"); err == nil {
		if n, ok := v.EnumName(); ok {
			c.State = n
		} else {
			c.State = fmt.Sprint(v.Uint())
		}
	}
	c.ByType, c.NoMROQ, err = queryMROQ(ctx, d, c.Types)
	if c.NoMROQ != "" {
		c.NoMROQCategory = CategoryFirmware
		if _, derr := d.DB.Register("MROQ"); derr != nil {
			c.NoMROQCategory = CategoryDatabase
		}
	}
	return c, err
}

// levelField is MFRL's level field: reset_trigger from Rev 0.57, named
// reset_level before (same bits).
func levelField(d *prm.Decoded) string {
	if _, err := d.Get("reset_trigger"); err != nil {
		if _, err := d.Get("reset_level"); err == nil {
			return "reset_level"
		}
	}
	return "reset_trigger"
}

func field(d *prm.Decoded, path string) uint64 {
	v, err := d.Get(path)
	if err != nil {
		return 0
	}
	return v.Uint()
}

func queryMROQ(ctx context.Context, d *dev.Device, types uint8) ([]TypeCaps, string, error) {
	reg, err := d.DB.Register("MROQ")
	if err != nil {
		return nil, fmt.Sprintf("the register database (%s) has no MROQ (Rev 0.61 and later do)", d.DB.Revision), nil
	}
	caps, err := d.Capabilities(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, "", ctx.Err()
		}
		return nil, fmt.Sprintf("the firmware's register list (MCAM) could not be read: %v", err), nil
	}
	if ok, covered := caps.Supports(reg.ID); covered && !ok {
		return nil, "the firmware does not advertise MROQ (MCAM)", nil
	}
	var out []TypeCaps
	for t := range uint8(8) {
		if types&(1<<t) == 0 {
			continue
		}
		r, err := d.Get(ctx, "MROQ", []prm.Assignment{{Path: "reset_type", Value: fmt.Sprint(t)}}, nil, 0)
		if err != nil {
			if ctx.Err() != nil {
				return nil, "", ctx.Err()
			}
			if dev.IsNotSupported(err) {
				return nil, "the firmware refuses MROQ", nil
			}
			return nil, "", fmt.Errorf("read the reset options of type %s (MROQ): %w", TypeName(t), err)
		}
		if field(r.Decoded, "query_is_valid") == 0 {
			continue
		}
		out = append(out, TypeCaps{Type: t, Levels: uint8(field(r.Decoded, "reset_trigger")),
			Sync: uint8(field(r.Decoded, "pci_sync_for_fw_update_start")), Methods: uint8(field(r.Decoded, "pci_reset_req_method"))})
	}
	return out, "", nil
}

// Supports says whether the firmware accepts a level with a type: MFRL's
// levels and types, and MROQ's per-type levels where it was read.
func (c *Caps) Supports(level, typ uint8) bool {
	if c.Levels&level == 0 || (typ != 0 && c.Types&(1<<typ) == 0) {
		return false
	}
	if c.ByType == nil {
		return true
	}
	i := slices.IndexFunc(c.ByType, func(t TypeCaps) bool { return t.Type == typ })
	return i >= 0 && c.ByType[i].Levels&level != 0
}

// LevelsFor is the levels offered with a type: MROQ's where it was read,
// else MFRL's (for a type MFRL lists).
func (c *Caps) LevelsFor(typ uint8) uint8 {
	if typ != 0 && c.Types&(1<<typ) == 0 {
		return 0
	}
	if c.ByType == nil {
		return c.Levels
	}
	for _, t := range c.ByType {
		if t.Type == typ {
			return t.Levels & c.Levels
		}
	}
	return 0
}

// SyncFor is the sync flows MROQ lists for a type (0: unknown).
func (c *Caps) SyncFor(typ uint8) uint8 {
	for _, t := range c.ByType {
		if t.Type == typ {
			return t.Sync
		}
	}
	return 0
}

// Request is one MFRL request.
type Request struct {
	Level uint8
	// Type is rst_type_sel (0: full chip).
	Type uint8
	// Sync is pci_sync_for_fw_update_start: 0 legacy, 1 the driver's
	// synced flow, 2 the tool's (Rev 0.64; Rev 0.57's field is one bit).
	Sync uint8
}

// ErrUnsupported matches a request the firmware says it does not offer.
var ErrUnsupported = errors.New("reset not offered by the firmware")

// UnsupportedError says which level the firmware does not offer.
type UnsupportedError struct {
	Level, Levels uint8
	Type          uint8
}

func (e *UnsupportedError) Error() string {
	var have []string
	for _, l := range Levels {
		if e.Levels&l.Bit != 0 {
			have = append(have, fmt.Sprintf("%s (%d)", l.Name, l.Number))
		}
	}
	offered := "none"
	if len(have) > 0 {
		offered = strings.Join(have, ", ")
	}
	return fmt.Sprintf("the firmware does not offer the %s reset of type %s (it offers: %s)", LevelName(e.Level), TypeName(e.Type), offered)
}

// Is makes errors.Is(err, ErrUnsupported) true.
func (e *UnsupportedError) Is(target error) bool { return target == ErrUnsupported }

// Send writes the request (MFRL SET). Fields the database lacks (the sync
// flow before Rev 0.57) are left out when they would be zero.
func Send(ctx context.Context, d *dev.Device, r Request) error {
	if r.Level == 0 || r.Level&(r.Level-1) != 0 {
		return fmt.Errorf("fwreset: level 0x%02x: exactly one level bit is sent", r.Level)
	}
	reg, err := d.DB.Register("MFRL")
	if err != nil {
		return err
	}
	p, err := d.DB.RegisterPlan(reg)
	if err != nil {
		return err
	}
	buf := p.NewBuffer()
	lf := "reset_trigger"
	if _, err := p.Resolve(lf, buf); err != nil {
		lf = "reset_level" // before Rev 0.57
	}
	as := []prm.Assignment{{Path: lf, Value: fmt.Sprint(r.Level)}}
	for _, f := range []struct {
		path string
		v    uint8
	}{{"rst_type_sel", r.Type}, {"pci_sync_for_fw_update_start", r.Sync}} {
		if f.v == 0 {
			continue
		}
		if _, err := p.Resolve(f.path, buf); err != nil {
			return fmt.Errorf("the register database (%s) has no MFRL %s to request it", d.DB.Revision, f.path)
		}
		as = append(as, prm.Assignment{Path: f.path, Value: fmt.Sprint(f.v)})
	}
	if err := p.Encode(buf, as); err != nil {
		return err
	}
	if _, err := d.Transfer(ctx, dev.Set, reg.Name, buf, 0, 0); err != nil {
		return fmt.Errorf("request a firmware reset (MFRL): %w", err)
	}
	return nil
}
