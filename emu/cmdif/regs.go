package cmdif

import (
	"github.com/cxray/cxray/emu"
	"github.com/cxray/cxray/emu/fw"
)

// accessReg answers ACCESS_REG through the firmware the function's
// config-space gateway hands register payloads to (Function.Firmware):
// a write through either path is what the other reads. Device-level
// register faults (emu.Faults.RegisterStatus) apply here as on the gateway.
// op_mod 1 reads, 0 writes; the register's own status becomes a command
// status (as mstflint maps them back), with the register status in the
// low byte of the syndrome.
func (c *call) accessReg() {
	id := uint16(c.get("register_id"))
	method := emu.MethodSet
	if c.opMod != 0 {
		method = emu.MethodGet
	}
	data := append([]byte(nil), c.in[16:]...)
	var out []byte
	var st uint8
	if fst, ok := c.ep.f.Device.Faults().RegisterStatus[id]; ok {
		st = fst
	} else {
		fwi := c.ep.f.Firmware
		if fwi == nil {
			fwi = c.ep.f.View
		}
		out, st = fwi.AccessRegister(id, method, data)
	}
	if st != fw.StatusOK {
		c.fail(commandStatus(st), syndRegister|uint32(st))
		return
	}
	copy(c.out[16:], out)
}

// commandStatus maps an access-register status to the command status the
// firmware answers ACCESS_REG with (the inverse of mstflint's
// translate_cmd_status_to_reg_status).
func commandStatus(reg uint8) uint8 {
	switch reg {
	case fw.StatusBusy:
		return statusBusy
	case fw.StatusRegNotSupported:
		return statusBadSysState
	case fw.StatusMethodNotSupp:
		return statusBadOp
	case fw.StatusResourceNotAvail:
		return statusBadResource
	case fw.StatusInternalError:
		return statusInternal
	}
	return statusBadParam
}
