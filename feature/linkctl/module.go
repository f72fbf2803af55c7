package linkctl

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/optics"
	"github.com/cxray/cxray/prm"
)

// cableWhat starts the What of a module write.
const cableWhat = "cable write"

// MaxModuleWrite is the most bytes one --cable --write changes: one MCIA
// write (a dword array of 128 bytes would allow more; the writable runs
// are at most 5 bytes long).
const MaxModuleWrite = 16

// PlanModuleWrite plans writing data into the module of port local at
// page, bank and offset as mlxlink numbers them (optics.HostAddr: an SFP's
// page 1 is its A2h map), as one MCIA write: it reads the module's
// identifier and the bytes now there, and refuses (an input error,
// nothing written) a byte its standard does not define as host-writable
// (optics.WritableBytes). The undo record writes the old bytes back.
func PlanModuleWrite(ctx context.Context, ad *adapter.Adapter, local int, given optics.PageAddr, data []byte) (*Change, error) {
	if len(data) == 0 || len(data) > MaxModuleWrite || int(given.Offset)+len(data) > 256 {
		return nil, inputErr("--write: give 1..%d bytes that end by byte 255", MaxModuleWrite)
	}
	pt, err := openPort(ctx, ad, local)
	if err != nil {
		return nil, err
	}
	rd := &adapter.MCIAReader{Device: pt.d, Module: pt.p.Module}
	id, err := rd.ReadPage(ctx, optics.PageAddr{I2C: 0x50}, 1)
	if err != nil {
		return nil, fmt.Errorf("port %d module %d: reading its identifier: %w", local, pt.p.Module, err)
	}
	std := optics.StandardOf(id[0])
	if std == "" {
		return nil, inputErr("port %d module %d: identifier 0x%02x is not one cxray knows the writable bytes of", local, pt.p.Module, id[0])
	}
	a, err := optics.HostAddr(std, int(given.Page), int(given.Bank), int(given.Offset))
	if err != nil {
		return nil, inputErr("--page/--bank/--offset: %v", err)
	}
	before, err := rd.ReadPage(ctx, a, len(data))
	if err != nil {
		return nil, fmt.Errorf("port %d module %d: %w", local, pt.p.Module, err)
	}
	if err := optics.CheckWrite(std, a, before, data); err != nil {
		var nw *optics.NotWritableError
		if errors.As(err, &nw) {
			return nil, inputErr("port %d module %d (%s): %v", local, pt.p.Module, std, err)
		}
		return nil, err
	}
	c := pt.change(fmt.Sprintf("%s page %d bank %d offset %d", cableWhat, given.Page, given.Bank, given.Offset))
	w, err := mciaWrite(pt, a, data)
	if err != nil {
		return nil, err
	}
	undo, err := mciaWrite(pt, a, before)
	if err != nil {
		return nil, err
	}
	if err := pt.plan(ctx, c, []Write{w}); err != nil {
		return nil, err
	}
	c.Undo = []Write{undo}
	c.UndoFlags = fmt.Sprintf("--cable --write %s --page %d --bank %d --offset %d", byteList(before), given.Page, given.Bank, given.Offset)
	for i := range data {
		wb, _ := optics.WritableAt(std, a, int(a.Offset)+i)
		c.Effects = append(c.Effects, fmt.Sprintf("byte %d: %s (%s)", int(a.Offset)+i, wb.What, wb.Clause))
	}
	c.Effects = append(c.Effects, "a module control changes the module's behaviour at once (a Tx disable stops the light, a low-power request drops the link); --undo writes the old bytes back")
	return c, nil
}

// mciaWrite is an MCIA write of data at a: the address fields select what
// is written (INDEX in the PRM; a revision where one is not, Rev 0.51's
// i2c_device_address, is refused as a database finding). dword[i]
// carries bytes 4i..4i+3, the first in the most significant position.
func mciaWrite(pt *port, a optics.PageAddr, data []byte) (Write, error) {
	w := Write{Register: "MCIA", Index: []Field{{"module", strconv.Itoa(pt.p.Module)}}}
	addr := []Field{{"i2c_device_address", strconv.Itoa(int(a.I2C))}, {"page_number", strconv.Itoa(int(a.Page))},
		{"bank_number", strconv.Itoa(int(a.Bank))}, {"device_address", strconv.Itoa(int(a.Offset))}, {"size", strconv.Itoa(len(data))}}
	r, err := pt.ad.DB().Register("MCIA")
	if err != nil {
		return w, err
	}
	p, err := pt.ad.DB().RegisterPlan(r)
	if err != nil {
		return w, err
	}
	probe := p.NewBuffer()
	for _, f := range addr {
		t, err := p.Resolve(f.Path, probe)
		switch {
		case err != nil:
			return w, fmt.Errorf("MCIA in this database has no %s: %w", f.Path, err)
		case t.Step.Access == prm.AccessIndex:
			w.Index = append(w.Index, f)
		default:
			// The guarded writer reads what it changes with the index
			// fields only; without this one it would read another
			// address than it writes.
			return w, inputErr("database finding: MCIA %s is %s, not INDEX, in %s, so a module write cannot be read first and read back at the same address; give a database where it is INDEX (--adb, Rev 0.56 or later)", f.Path, t.Step.Access, pt.ad.DB().Revision)
		}
	}
	for i := 0; i*4 < len(data); i++ {
		var v uint32
		for j := 0; j < 4; j++ {
			v <<= 8
			if k := i*4 + j; k < len(data) {
				v |= uint32(data[k])
			}
		}
		w.Fields = append(w.Fields, Field{fmt.Sprintf("dword[%d]", i), fmt.Sprintf("0x%08x", v)})
	}
	return w, nil
}

func byteList(b []byte) string {
	s := ""
	for i, x := range b {
		if i > 0 {
			s += ","
		}
		s += fmt.Sprintf("0x%02x", x)
	}
	return s
}
