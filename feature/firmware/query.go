package firmware

import (
	"context"
	"fmt"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/dev/fwreset"
	"github.com/cxray/cxray/prm/regpath"
)

// Version is a firmware version with its build date.
type Version struct {
	Version string `json:"version"`
	Built   string `json:"built,omitempty"`
}

// Component is one MCQS component of the adapter.
type Component struct {
	Index      int    `json:"index"`
	Identifier string `json:"identifier"`
	Status     string `json:"status"`
	// UpdateState is MCQS component_update_state (IDLE, IN_PROGRESS,
	// ACTIVE_PENDING_RESET...).
	UpdateState string `json:"update_state"`
}

// DeviceInfo is what `cxray fw query -d DEV` reports.
type DeviceInfo struct {
	Device string `json:"device"`
	PSID   string `json:"psid"`
	// Running is the firmware running now (MGIR); Stored the boot image
	// in flash (MCQI of the boot image with read_pending_component), which
	// runs after the next firmware reset; Pending is Stored when it
	// differs from Running.
	Running Version  `json:"running"`
	Stored  *Version `json:"stored,omitempty"`
	Pending *Version `json:"pending,omitempty"`
	// ResetPending says the firmware waits for a reset to run the stored
	// image (MCQI ACTIVATION_METHOD pending_fw_reset).
	ResetPending bool        `json:"reset_pending"`
	Components   []Component `json:"components"`
	// UpdateState is the update state machine (MCC control_state), and
	// who holds it when it is not IDLE.
	UpdateState string `json:"update_state"`
	UpdateOwner string `json:"update_owner,omitempty"`
	// Resets are the firmware resets that would make a stored image run
	// (MFRL, and MROQ per type where it can be read; dev/fwreset).
	Resets *Resets `json:"resets,omitempty"`
	// Notes say what could not be read.
	Notes []string `json:"notes,omitempty"`
}

// Resets is the reset levels the adapter offers.
type Resets struct {
	// Levels are MFRL's levels by mstfwreset number and name
	// ("3 (pcie_link_toggle)").
	Levels []string `json:"levels"`
	// FullChip are MROQ's levels for a full-chip reset (nil without
	// MROQ).
	FullChip []string `json:"full_chip,omitempty"`
	// MROQUnavailable says why MROQ was not read; MROQCategory is
	// "database" (the register database lacks it: never an adapter fault)
	// or "firmware".
	MROQUnavailable string `json:"mroq_unavailable,omitempty"`
	MROQCategory    string `json:"mroq_unavailable_category,omitempty"`
}

// LevelNames lists a reset-level mask as "3 (pcie_link_toggle)".
func LevelNames(mask uint8) []string {
	out := []string{}
	for _, l := range fwreset.Levels {
		if mask&l.Bit != 0 {
			out = append(out, fmt.Sprintf("%d (%s)", l.Number, l.Name))
		}
	}
	return out
}

func readResets(ctx context.Context, d *dev.Device) (*Resets, error) {
	c, err := fwreset.Query(ctx, d)
	if err != nil {
		return nil, err
	}
	r := &Resets{Levels: LevelNames(c.Levels), MROQUnavailable: c.NoMROQ, MROQCategory: c.NoMROQCategory}
	if c.ByType != nil {
		r.FullChip = LevelNames(c.LevelsFor(0))
	}
	return r, nil
}

// bootImage is MCQS identifier BOOT_IMG.
const bootImage = 1

// maxComponents bounds the MCQS walk (real adapters list under 20).
const maxComponents = 64

// Query reads the adapter's firmware: running, stored and pending
// versions and its components.
func Query(ctx context.Context, ad *adapter.Adapter) (*DeviceInfo, error) {
	d, err := ad.Registers(ctx)
	if err != nil {
		return nil, err
	}
	id, err := d.Identity(ctx)
	if err != nil {
		return nil, err
	}
	info := &DeviceInfo{Device: ad.Name(), PSID: id.PSID, Running: Version{Version: id.Firmware}, Components: []Component{}}
	if rd, err := d.Get(ctx, "MGIR", nil, nil, 0); err == nil {
		info.Running.Built = bcdDate(u(rd.Decoded, regpath.MGIRFwYear), u(rd.Decoded, regpath.MGIRFwMonth), u(rd.Decoded, regpath.MGIRFwDay))
	}
	if info.Resets, err = readResets(ctx, d); err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		info.Notes = append(info.Notes, fmt.Sprintf("resets: %v", err))
	}
	r := regs{d}
	boot, err := r.components(ctx, info)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		info.Notes = append(info.Notes, fmt.Sprintf("components: %v", err))
		return info, nil
	}
	if boot < 0 {
		info.Notes = append(info.Notes, "the adapter lists no boot image component (MCQS)")
		return info, nil
	}
	if v, err := r.version(ctx, boot, true); err == nil {
		info.Stored = v
		if v.Version != info.Running.Version {
			info.Pending = v
		}
	} else if ctx.Err() != nil {
		return nil, err
	} else {
		info.Notes = append(info.Notes, fmt.Sprintf("stored image: %v", err))
	}
	if a, err := r.mcqi(ctx, boot, 5, false); err == nil {
		info.ResetPending = u(a, "data.mcqi_activation_method_ext.pending_fw_reset") != 0
	}
	if m, err := r.mccGet(ctx, boot); err == nil {
		info.UpdateState = m.State
		if m.StateNum != 0 {
			info.UpdateOwner = fmt.Sprintf("%s, idle %ds", m.Owner, m.IdleSecond)
		}
	} else if ctx.Err() != nil {
		return nil, err
	} else {
		info.Notes = append(info.Notes, fmt.Sprintf("update state: %v", err))
	}
	return info, nil
}

// components walks MCQS and returns the boot image's index (-1: none).
func (r regs) components(ctx context.Context, info *DeviceInfo) (int, error) {
	boot := -1
	for i := range maxComponents {
		d, err := r.mcqs(ctx, i)
		if err != nil {
			if dev.IsNotSupported(err) {
				return -1, fmt.Errorf("the firmware does not support MCQS: %w", err)
			}
			return boot, err
		}
		c := Component{Index: i, Identifier: enumName(d, "identifier"), Status: enumName(d, "component_status"), UpdateState: enumName(d, "component_update_state")}
		info.Components = append(info.Components, c)
		// identifier 1 is the boot image (the database's BOOT_IMG; older
		// revisions have no names for the values).
		if u(d, "identifier") == bootImage && boot < 0 {
			boot = i
		}
		if u(d, "last_index_flag") != 0 {
			return boot, nil
		}
	}
	return boot, fmt.Errorf("MCQS lists more than %d components without its last", maxComponents)
}
