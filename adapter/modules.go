package adapter

import (
	"context"
	"errors"
	"fmt"

	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/optics"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/regpath"
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

// ReadPage implements optics.PageReader. The address fields are request
// fields of a GET, whatever access the database gives them (Rev 0.51 has
// i2c_device_address as RW), so they are written into the request as
// given.
func (r *MCIAReader) ReadPage(ctx context.Context, a optics.PageAddr, length int) ([]byte, error) {
	out := make([]byte, 0, length)
	for len(out) < length {
		n := min(MCIAChunk, length-len(out))
		req := At("i2c_device_address", uint64(a.I2C)).
			With("page_number", uint64(a.Page)).
			With("bank_number", uint64(a.Bank)).
			With("device_address", uint64(int(a.Offset)+len(out))).
			With("size", uint64(n))
		rd, err := r.Device.GetFields(ctx, "MCIA", At("module", uint64(r.Module)).Assignments(), req.Assignments())
		if err != nil {
			return nil, err
		}
		if v, err := rd.Decoded.Get(regpath.MCIAStatus); err == nil && v.Uint() != 0 {
			why := mciaStatus[v.Uint()]
			if why == "" {
				why = "unknown module status"
			}
			return nil, fmt.Errorf("MCIA %s: module status 0x%x (%s)", a, v.Uint(), why)
		}
		dw, err := rd.Decoded.Get(regpath.MCIADword)
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
// 3) with powers in µW (module_info_ext=1: an RW field of the request; it
// is still a GET). The page is read through the device's database when it
// has the page and the field, else through the reference layout (Rev 0.51
// has neither under these names).
func ReadPDDRModule(ctx context.Context, d *dev.Device, port, lanes int) (*optics.Module, error) {
	if !hasModulePage(d.DB) && d.Reference != nil && hasModulePage(d.Reference) {
		d = d.WithDB(d.Reference)
	}
	reg, err := d.DB.Register("PDDR")
	if err != nil {
		return nil, err
	}
	p, err := d.DB.RegisterPlan(reg)
	if err != nil {
		return nil, err
	}
	probe := p.NewBuffer()
	// page_select 3 is the module page in every revision; its enum name
	// is not.
	idx := LocalPort(port & 0xFF).Page(3)
	if _, err := p.Resolve("lp_msb", probe); err == nil {
		idx = idx.With("lp_msb", uint64(port>>8))
	}
	var req Index
	if _, err := p.Resolve("module_info_ext", probe); err == nil {
		req = req.With("module_info_ext", 1)
	}
	r, err := d.GetFields(ctx, "PDDR", idx.Assignments(), req.Assignments())
	if err != nil {
		return nil, err
	}
	return optics.FromPDDR(r.Decoded, lanes)
}

// hasModulePage says a database has PDDR's module page as the module
// view needs it.
func hasModulePage(db *prm.DB) bool {
	reg, err := db.Register("PDDR")
	if err != nil {
		return false
	}
	p, err := db.RegisterPlan(reg)
	if err != nil {
		return false
	}
	b := p.NewBuffer()
	_, err1 := p.Resolve("module_info_ext", b)
	_, err2 := p.Resolve(regpath.PDDRModCableType, b)
	return err1 == nil && err2 == nil
}

// registerModule reads a port's module: PMAOS for the cage state, the
// EEPROM through MCIA, and the firmware's view (PDDR page 3) when asked or
// when the EEPROM gives nothing usable.
func (a *Adapter) registerModule(ctx context.Context, p Port, o ModuleOptions) (*ModuleReading, error) {
	d, err := a.Registers(ctx)
	if err != nil {
		return nil, err
	}
	m := &ModuleReading{Port: p.Local, Module: p.Module, Netdev: p.Netdev, Access: "MCIA"}
	st, err := a.get(ctx, "PMAOS", At("module", uint64(p.Module)))
	switch {
	case err == nil:
		m.OperStatus = enumText(st.Decoded, "PMAOS", regpath.PMAOSOperStatus)
		if m.OperStatus == "module_plugged_with_error" {
			m.ErrorType = enumText(st.Decoded, "PMAOS", regpath.PMAOSErrorType)
		}
	case errors.Is(err, dev.ErrNotSupported):
	default:
		return nil, fmt.Errorf("port %d module %d (PMAOS): %w", p.Local, p.Module, err)
	}
	switch m.OperStatus {
	case "":
	case "unplugged":
		no := false
		m.Present = &no
		return m, nil
	default:
		yes := true
		m.Present = &yes
	}
	lanes := p.Lanes
	r := &MCIAReader{Device: d, Module: p.Module}
	var im *optics.Image
	if o.Full {
		im, err = optics.ReadFullImage(ctx, r)
	} else {
		im, err = optics.ReadImageCached(ctx, r, a.staticPages(p.Module))
	}
	switch {
	case errors.Is(err, dev.ErrNotSupported):
		m.NoMCIA = true
		m.EEPROMErr = errors.New("the firmware does not offer MCIA (module EEPROM access); showing its own view only")
	case err != nil:
		if ctx.Err() != nil {
			return nil, fmt.Errorf("module %d: %w", p.Module, err)
		}
		m.EEPROMErr = a.drop(err)
		if _, status := dev.StatusOf(err); !status && !prm.IsDatabaseProblem(err) {
			// No firmware answer at all: the register path failed (a held
			// semaphore, a removed device), not the module.
			m.EEPROMErr = &optics.PathError{Err: m.EEPROMErr, Next: "the register path to the adapter failed, not the module: 'cxray health' shows the access; read again when the adapter answers"}
		}
	default:
		m.Image = im
		dec, derr := optics.Decode(im)
		m.EEPROM, m.EEPROMErr = dec, derr
		if dec != nil && dec.Standard != "" && len(dec.Lanes) > 0 {
			lanes = len(dec.Lanes)
		}
	}
	if !o.Firmware && m.EEPROMErr == nil {
		return m, nil
	}
	fwm, err := ReadPDDRModule(ctx, d, p.Local, lanes)
	switch {
	case err == nil:
		m.Firmware = fwm
	case ctx.Err() != nil:
		return nil, err
	default:
		m.FirmwareErr = a.drop(err)
	}
	return m, nil
}
