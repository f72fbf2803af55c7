// Package modread reads an optical module over access registers: its
// EEPROM pages through MCIA, and the firmware's decoded view in PDDR page 3.
// cxray module, health and the exporter share it.
package modread

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/optics"
	"github.com/cxray/cxray/prm"
)

// MCIAChunk is the most bytes read per MCIA access. MCIA carries up to 32
// dwords, but the PRM (mcia dword; MCAM mng_feature_cap_mask bit 34) lets
// firmware without that bit take only 12: 48 bytes is the largest every
// ConnectX firmware accepts. Each access is a whole ICMD command of the
// register's full size, so a 128-byte half page costs 3 of them, not 4.
const MCIAChunk = 48

// MCIAReader reads a module's memory through the MCIA register; it is an
// optics.PageReader.
type MCIAReader struct {
	Device *dev.Device
	Module int // cage, 0-based
}

// mciaStatus explains MCIA's module status codes (PRM, mcia status).
var mciaStatus = map[uint64]string{
	0x1:  "no response from the module's EEPROM",
	0x2:  "module type not supported by the device",
	0x3:  "no module in the cage",
	0x9:  "I2C error while reading the module",
	0x10: "module is disabled",
	0x11: "page access failed: the page is not supported or protected",
}

// ReadPage implements optics.PageReader.
func (r *MCIAReader) ReadPage(ctx context.Context, a optics.PageAddr, length int) ([]byte, error) {
	out := make([]byte, 0, length)
	for len(out) < length {
		n := min(MCIAChunk, length-len(out))
		idx := []prm.Assignment{
			{Path: "module", Value: strconv.Itoa(r.Module)},
			{Path: "i2c_device_address", Value: strconv.Itoa(int(a.I2C))},
			{Path: "page_number", Value: strconv.Itoa(int(a.Page))},
			{Path: "bank_number", Value: strconv.Itoa(int(a.Bank))},
			{Path: "device_address", Value: strconv.Itoa(int(a.Offset) + len(out))},
			{Path: "size", Value: strconv.Itoa(n)},
		}
		rd, err := r.Device.Get(ctx, "MCIA", idx, nil, 0)
		if err != nil {
			return nil, err
		}
		if v, err := rd.Decoded.Get("status"); err == nil && v.Uint() != 0 {
			why := mciaStatus[v.Uint()]
			if why == "" {
				why = "unknown module status"
			}
			return nil, fmt.Errorf("MCIA %s: module status 0x%x (%s)", a, v.Uint(), why)
		}
		dw, err := rd.Decoded.Get("dword")
		if err != nil {
			return nil, fmt.Errorf("MCIA reply has no data: %w", err)
		}
		before := len(out)
		for i := 0; i < dw.Len() && len(out) < length && i*4 < n; i++ {
			w := dw.Kid(i).Uint()
			for j := 0; j < 4 && i*4+j < n; j++ {
				out = append(out, byte(w>>(24-8*j)))
			}
		}
		if len(out) == before {
			return nil, errors.New("MCIA returned no data")
		}
	}
	return out, nil
}

// ReadPDDRModule reads the firmware's view of a port's module (PDDR page
// 3) with powers in µW (module_info_ext=1: an RW field of the request, so
// the request is built through the codec; it is still a GET).
func ReadPDDRModule(ctx context.Context, d *dev.Device, port, lanes int) (*optics.Module, error) {
	reg, err := d.DB.Register("PDDR")
	if err != nil {
		return nil, err
	}
	p, err := d.DB.RegisterPlan(reg)
	if err != nil {
		return nil, err
	}
	buf := p.NewBuffer()
	as := []prm.Assignment{{Path: "local_port", Value: strconv.Itoa(port & 0xFF)}, {Path: "page_select", Value: "Module_info_page"}}
	if _, err := p.Resolve("lp_msb", buf); err == nil {
		as = append(as, prm.Assignment{Path: "lp_msb", Value: strconv.Itoa(port >> 8)})
	}
	if _, err := p.Resolve("module_info_ext", buf); err == nil {
		as = append(as, prm.Assignment{Path: "module_info_ext", Value: "1"})
	}
	if err := p.Encode(buf, as); err != nil {
		return nil, err
	}
	out, err := d.GetRaw(ctx, uint16(reg.ID), buf)
	if err != nil {
		return nil, err
	}
	dec, err := p.Decode(out)
	if err != nil {
		return nil, err
	}
	return optics.FromPDDR(dec, lanes)
}
