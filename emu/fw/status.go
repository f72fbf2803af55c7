package fw

import (
	"fmt"
	"strings"

	"github.com/cxray/cxray/prm"
)

// Access-register status codes (operation TLV [14:8]), numbered as the PRM
// numbers them (mstflint reads them the same way: return_by_reg_status in
// mtcr_ul/mtcr_ul_com.c).
const (
	StatusOK               uint8 = 0x00
	StatusBusy             uint8 = 0x01
	StatusVersionNotSupp   uint8 = 0x02
	StatusUnknownTLV       uint8 = 0x03
	StatusRegNotSupported  uint8 = 0x04
	StatusClassNotSupp     uint8 = 0x05
	StatusMethodNotSupp    uint8 = 0x06
	StatusBadParam         uint8 = 0x07
	StatusResourceNotAvail uint8 = 0x08
	StatusMsgReceiptAck    uint8 = 0x09
	StatusBadConfig        uint8 = 0x20
	StatusEraseExceeded    uint8 = 0x21
	StatusConfigCorrupt    uint8 = 0x22
	StatusLenTooSmall      uint8 = 0x24
	StatusInternalError    uint8 = 0x70

	// StatusBadLength is what a register TLV of the wrong size gets. The PRM
	// has no status of its own for it: firmware rejects it as a bad parameter
	// (mstflint shows "Bad parameter"). StatusLenTooSmall (0x24) is kept for
	// the NV registers, where it means the data is too short for the
	// configuration TLV it names.
	StatusBadLength = StatusBadParam
)

var statusNames = map[uint8]string{
	StatusOK:               "ok",
	StatusBusy:             "device busy",
	StatusVersionNotSupp:   "version not supported",
	StatusUnknownTLV:       "unknown TLV",
	StatusRegNotSupported:  "register not supported",
	StatusClassNotSupp:     "class not supported",
	StatusMethodNotSupp:    "method not supported",
	StatusBadParam:         "bad parameter",
	StatusResourceNotAvail: "resource not available",
	StatusMsgReceiptAck:    "message receipt ack",
	StatusBadConfig:        "configuration rejected",
	StatusEraseExceeded:    "erase count exceeded",
	StatusConfigCorrupt:    "configuration section corrupted",
	StatusLenTooSmall:      "register length too small for the TLV",
	StatusInternalError:    "firmware internal error",
}

// StatusName describes a status code the way tools report it.
func StatusName(s uint8) string {
	if n, ok := statusNames[s]; ok {
		return n
	}
	return fmt.Sprintf("status 0x%02x", s)
}

// ParseStatus accepts a status as a number (any base) or by its name
// ("bad parameter", "bad_param", "busy", ...), for scenario files.
func ParseStatus(s string) (uint8, error) {
	key := normName(s)
	for v, n := range statusNames {
		if normName(n) == key {
			return v, nil
		}
	}
	for alias, v := range statusAliases {
		if alias == key {
			return v, nil
		}
	}
	if n, err := prm.ParseUint(strings.TrimSpace(s)); err == nil && n <= 0x7F {
		return uint8(n), nil
	}
	return 0, fmt.Errorf("%q is not an access-register status: use a number 0..0x7f or one of busy, bad_param, "+
		"reg_not_supported, method_not_supported, resource_not_available, internal_error", s)
}

var statusAliases = map[string]uint8{
	"busy": StatusBusy, "badparam": StatusBadParam, "badparameter": StatusBadParam,
	"regnotsupported": StatusRegNotSupported, "notsupported": StatusRegNotSupported,
	"methodnotsupported": StatusMethodNotSupp, "resourcenotavailable": StatusResourceNotAvail,
	"internalerror": StatusInternalError, "internal": StatusInternalError,
}

func normName(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z':
			b = append(b, c+'a'-'A')
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			b = append(b, c)
		}
	}
	return string(b)
}
