package regaccess

import (
	"errors"
	"fmt"
)

// PRM access-register status codes (operation TLV [14:8]).
const (
	StatusOK                   = 0x00
	StatusBusy                 = 0x01
	StatusVersionNotSupported  = 0x02
	StatusUnknownTLV           = 0x03
	StatusRegisterNotSupported = 0x04
	StatusClassNotSupported    = 0x05
	StatusMethodNotSupported   = 0x06
	StatusBadParameter         = 0x07
	StatusResourceNotAvailable = 0x08
	StatusMessageReceiptAck    = 0x09
	StatusNotSupportedBySecond = 0x0E
	StatusBadConfig            = 0x20
	StatusEraseExceeded        = 0x21
	StatusConfigCorrupt        = 0x22
	StatusLengthTooSmall       = 0x24
	StatusInternalError        = 0x70
)

// ErrRegisterNotSupported matches a StatusError with status 4, the answer
// for a register this firmware does not implement.
var ErrRegisterNotSupported = errors.New("register not supported")

var statusInfo = map[uint8][2]string{
	StatusBusy:                 {"device busy", "the firmware is busy with another request; retry shortly"},
	StatusVersionNotSupported:  {"TLV version not supported", "the firmware does not speak this access-register version; update the firmware"},
	StatusUnknownTLV:           {"unknown TLV", "the firmware did not understand the request framing; report this as a cxray bug"},
	StatusRegisterNotSupported: {"register not supported by this firmware", "check `cxray reg list` / MCAM for the registers this firmware offers, or update the firmware"},
	StatusClassNotSupported:    {"register class not supported", "this register is not reachable through this interface (some are in-band only)"},
	StatusMethodNotSupported:   {"method not supported", "the register does not accept this method (for example SET on a read-only register)"},
	StatusBadParameter:         {"bad parameter", "an index or field value is out of range, or the length is wrong: check the index fields (`cxray prm show REG`) and that the register size matches the firmware's PRM"},
	StatusResourceNotAvailable: {"resource not available", "the addressed resource (port, module, lane) is absent or not ready; check that it exists and retry"},
	StatusMessageReceiptAck:    {"message receipt acknowledged", "the firmware accepted the request but has not completed it; query again later"},
	StatusNotSupportedBySecond: {"not supported on a secondary function", "run the command on the primary physical function (usually function 0 of the adapter)"},
	StatusBadConfig:            {"configuration rejected", "the firmware rejected the values; check them against `cxray config` limits and dependencies"},
	StatusEraseExceeded:        {"erase count exceeded", "the NV configuration flash reached its erase limit; stop repeated writes and contact support"},
	StatusConfigCorrupt:        {"configuration section corrupted", "the NV configuration is corrupt; reset it to defaults (`cxray config reset`) or reflash the firmware"},
	StatusLengthTooSmall:       {"register length too small for the TLV", "the firmware expects a larger register than sent: the PRM database may be older than the firmware; use a matching database"},
	StatusInternalError:        {"firmware internal error", "check dmesg and retry; if it persists, reset the device (mstfwreset) and report it"},
}

// StatusError is a non-zero status the firmware returned for a register access.
type StatusError struct {
	Status     uint8
	RegisterID uint16
	Method     Method
}

func (e *StatusError) Error() string {
	info, ok := statusInfo[e.Status]
	if !ok {
		info = [2]string{"unknown status", "the firmware returned a status this tool does not know; update cxray or report it"}
	}
	return e.Short() + "; " + info[1]
}

// Short is the error without its advice, for a caller that gives advice
// of its own (an NV write says what a rejected TLV means).
func (e *StatusError) Short() string {
	name := "unknown status"
	if info, ok := statusInfo[e.Status]; ok {
		name = info[0]
	}
	return fmt.Sprintf("regaccess: %s of register 0x%04x failed with status 0x%x (%s)", e.Method, e.RegisterID, e.Status, name)
}

// Is matches ErrRegisterNotSupported for status 4.
func (e *StatusError) Is(target error) bool {
	return target == ErrRegisterNotSupported && e.Status == StatusRegisterNotSupported
}
