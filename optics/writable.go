package optics

import "fmt"

// Writable is a run of module memory bytes the host may write, and within
// each byte the bits it may change. Everything else of a module's memory is
// read-only to the host (identity, monitors, thresholds, flags: the module
// writes them) or selects what is read (the page and bank select bytes,
// which MCIA's page and bank fields drive; writing them by hand would move
// the firmware's own reads).
type Writable struct {
	Standard string
	I2C      uint8
	// Lower: bytes 0..127, whatever page is selected; else Page (and Bank
	// for CMIS banked pages) selects the upper half.
	Lower       bool
	Page, Bank  uint8
	First, Last uint8
	Mask        uint8 // bits the host may change
	What        string
	Clause      string
}

// WritableBytes lists what SFF-8636 and CMIS (at I2C address 0x50) and
// SFF-8472 (its A2h map, 0x51) define as host writable and cxray lets
// --cable --write change. Deliberately short: each entry is a control or
// mask a host changes in normal operation.
var WritableBytes = []Writable{
	{Standard: SFF8636, I2C: 0x50, Lower: true, First: 86, Last: 86, Mask: 0x0F, What: "Tx_Disable, channels 4..1 (bits 3..0)",
		Clause: "SFF-8636 Rev 2.10a, lower page control bytes, byte 86"},
	{Standard: SFF8636, I2C: 0x50, Lower: true, First: 93, Last: 93, Mask: 0x07, What: "Power control: Power_override, Power_set (low power), High_Power_Class_Enable (bits 2..0)",
		Clause: "SFF-8636 Rev 2.10a, lower page control bytes, byte 93"},
	{Standard: SFF8636, I2C: 0x50, Lower: true, First: 100, Last: 104, Mask: 0xFF, What: "Module and channel interrupt masks (LOS, Tx fault, CDR LOL, temperature, Vcc)",
		Clause: "SFF-8636 Rev 2.10a, lower page masks, bytes 100-104"},
	{Standard: CMIS, I2C: 0x50, Lower: true, First: 26, Last: 26, Mask: 0x50, What: "Module global controls: LowPwrAllowRequestHW (bit 6), LowPwrRequestSW (bit 4)",
		Clause: "CMIS 5.2, lower memory, byte 26 module global controls"},
	{Standard: SFF8472, I2C: 0x51, Lower: true, First: 110, Last: 110, Mask: 0x48, What: "Soft TX Disable Select (bit 6), Soft Rate Select RS(0) (bit 3)",
		Clause: "SFF-8472 Rev 12.4, A2h byte 110 status/control"},
}

// HostAddr is where mlxlink's --page, --bank and --offset point in a
// module of standard std. An SFP (SFF-8472) has two maps at two I2C
// addresses, A0h (0x50) and A2h (0x51), which mlxlink numbers page 0 and
// page 1; the other standards page (and CMIS banks) at 0x50.
func HostAddr(std string, page, bank, offset int) (PageAddr, error) {
	if page < 0 || page > 255 || bank < 0 || bank > 255 || offset < 0 || offset > 255 {
		return PageAddr{}, fmt.Errorf("page %d bank %d offset %d: each is 0..255", page, bank, offset)
	}
	if std != SFF8472 {
		return PageAddr{I2C: 0x50, Page: uint8(page), Bank: uint8(bank), Offset: uint8(offset)}, nil
	}
	if page > 1 || bank != 0 {
		return PageAddr{}, fmt.Errorf("an SFP module (SFF-8472) has page 0 (A0h, I2C 0x50) and page 1 (A2h, I2C 0x51), no page %d bank %d", page, bank)
	}
	return PageAddr{I2C: 0x50 + uint8(page), Offset: uint8(offset)}, nil
}

// NotWritableError says a byte of a write is not one the host may change.
type NotWritableError struct {
	Standard string
	Addr     PageAddr
	Byte     int
	Bits     uint8 // bits the write would change that are not writable
}

func (e *NotWritableError) Error() string {
	where := fmt.Sprintf("page %d bank %d byte %d", e.Addr.Page, e.Addr.Bank, e.Byte)
	if e.Byte < HalfSize {
		where = fmt.Sprintf("lower page byte %d", e.Byte)
	}
	if e.Bits != 0 {
		return fmt.Sprintf("%s %s: bits 0x%02x are read-only to the host (docs/link.md lists the writable bytes)", e.Standard, where, e.Bits)
	}
	return fmt.Sprintf("%s %s is not a byte %s defines as host-writable (docs/link.md lists the writable bytes)", e.Standard, where, e.Standard)
}

// WritableAt finds the entry that covers byte off of the page at a.
func WritableAt(standard string, a PageAddr, off int) (Writable, bool) {
	for _, w := range WritableBytes {
		if w.Standard != standard || w.I2C != a.I2C || off < int(w.First) || off > int(w.Last) {
			continue
		}
		if w.Lower && off < HalfSize || !w.Lower && off >= HalfSize && w.Page == a.Page && w.Bank == a.Bank {
			return w, true
		}
	}
	return Writable{}, false
}

// CheckWrite says whether writing after over before at a (from byte
// a.Offset) changes only bits the standard lets the host write. A byte
// written with its own value is allowed only where the byte is writable.
func CheckWrite(standard string, a PageAddr, before, after []byte) error {
	if len(before) != len(after) {
		return fmt.Errorf("optics: %d bytes read, %d to write", len(before), len(after))
	}
	for i := range after {
		off := int(a.Offset) + i
		w, ok := WritableAt(standard, a, off)
		if !ok {
			return &NotWritableError{Standard: standard, Addr: a, Byte: off}
		}
		if bad := (before[i] ^ after[i]) &^ w.Mask; bad != 0 {
			return &NotWritableError{Standard: standard, Addr: a, Byte: off, Bits: bad}
		}
	}
	return nil
}
