package dev

import (
	"context"
	"fmt"
	"strings"

	"github.com/cxray/cxray/prm"
)

// Identity is what the firmware says about the adapter: read from MGIR
// (firmware version, PSID, ports, manufacturing base MAC) and PGUID (this
// function's node GUID, the system image GUID its adapter's functions
// share). Fields the firmware does not answer stay empty.
type Identity struct {
	Firmware string `json:"firmware,omitempty"`
	PSID     string `json:"psid,omitempty"`
	Ports    int    `json:"ports,omitempty"`
	// BaseMAC is the manufacturing base MAC; PermanentMAC is this
	// function's (base + PCI function number, as the driver assigns).
	BaseMAC      string `json:"base_mac,omitempty"`
	PermanentMAC string `json:"permanent_mac,omitempty"`
	NodeGUID     string `json:"node_guid,omitempty"`
	SysImageGUID string `json:"sys_image_guid,omitempty"`
	DeviceID     uint16 `json:"device_id,omitempty"`
}

// Identity reads the adapter's identity. MGIR is required; PGUID is
// optional (older firmware lacks it).
func (d *Device) Identity(ctx context.Context) (Identity, error) {
	r, err := d.Get(ctx, "MGIR", nil, nil, 0)
	if err != nil {
		return Identity{}, err
	}
	return d.IdentityOf(ctx, r), nil
}

// IdentityOf is Identity from an MGIR reading the caller already has, so
// that a command reads MGIR once; it still reads PGUID.
func (d *Device) IdentityOf(ctx context.Context, r *Reading) Identity {
	var id Identity
	num := func(p string) (uint64, bool) {
		v, err := r.Decoded.Get(p)
		if err != nil {
			return 0, false
		}
		return v.Uint(), true
	}
	if v, err := r.Decoded.Get("fw_info.psid"); err == nil && v.IsText() {
		id.PSID = v.TextString()
	}
	maj, ok1 := num("fw_info.extended_major")
	min, ok2 := num("fw_info.extended_minor")
	sub, ok3 := num("fw_info.extended_sub_minor")
	if ok1 && ok2 && ok3 {
		id.Firmware = fmt.Sprintf("%d.%d.%04d", maj, min, sub)
	}
	if v, ok := num("hw_info.num_ports"); ok {
		id.Ports = int(v)
	}
	if v, ok := num("hw_info.device_id"); ok {
		id.DeviceID = uint16(v)
	}
	if v, ok := num("hw_info.manufacturing_base_mac"); ok && v != 0 {
		id.BaseMAC = prm.FormatMAC(v)
		id.PermanentMAC = prm.FormatMAC(v + uint64(PCIFunction(d.BDF)))
	}
	// PGUID's GUIDs are 128 bits; the GUID is their low 64.
	if g, err := d.Get(ctx, "PGUID", nil, nil, 0); err == nil {
		guid := func(field string) string {
			v, err := g.Decoded.Get(field)
			if err != nil || v.Len() != 4 {
				return ""
			}
			if u := v.Kid(2).Uint()<<32 | v.Kid(3).Uint(); u != 0 {
				return prm.FormatGUID(u)
			}
			return ""
		}
		id.NodeGUID, id.SysImageGUID = guid("node_guid"), guid("sys_guid")
	}
	return id
}

// PCIFunction is the function number of a BDF (0000:03:00.1 -> 1).
func PCIFunction(bdf string) int {
	if i := strings.LastIndexByte(bdf, '.'); i >= 0 && i+1 < len(bdf) {
		return int(bdf[i+1] - '0')
	}
	return 0
}
