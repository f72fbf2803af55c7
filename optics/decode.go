package optics

import (
	"fmt"
	"strings"
)

// Kinds of DecodeError.
const (
	// KindAllOnes: the memory reads 0xFF everywhere, what a hung I2C bus
	// (or a module that does not drive it) returns.
	KindAllOnes = "all_ones"
	// KindAllZeros: the memory reads zero everywhere: the module did not
	// answer and something upstream filled the buffer (a known mlx5 bug).
	KindAllZeros = "all_zeros"
	// KindUnsupported: an identifier cxray does not decode.
	KindUnsupported = "unsupported_identifier"
	// KindNotRead: the lower page is missing.
	KindNotRead = "not_read"
)

// DecodeError says why a module's memory gave no usable data.
type DecodeError struct {
	Kind string
	Msg  string
}

func (e *DecodeError) Error() string { return e.Msg }

// PathError is a module read that failed on the way to the module, not in
// it: the kernel has no interface of that name now, the driver does not
// give the EEPROM, the OS refused the request. Diagnose blames the reader
// (category software) with Next, never the module.
type PathError struct {
	Err error
	// Next is what to do about the path ("check the interface with ip link").
	Next string
}

func (e *PathError) Error() string { return e.Err.Error() }

func (e *PathError) Unwrap() error { return e.Err }

// Decode decodes a module's memory. It always returns a Module (as much as
// could be read); the error is a *DecodeError when the memory is not usable.
func Decode(im *Image) (*Module, error) {
	m := &Module{Source: SourceEEPROM, Lanes: []Lane{}}
	lower := im.Half(PageAddr{I2C: AddrA0})
	if len(lower) == 0 {
		return m, &DecodeError{Kind: KindNotRead, Msg: "the module's lower page was not read"}
	}
	if allSame(lower, 0xFF) {
		m.Identifier = IdentifierName(0xFF)
		return m, &DecodeError{Kind: KindAllOnes, Msg: "the module's memory reads all ones (0xFF): the I2C bus is stuck or the module does not answer"}
	}
	if allSame(lower, 0x00) {
		m.Identifier = IdentifierName(0)
		return m, &DecodeError{Kind: KindAllZeros, Msg: "the module's memory reads all zeros: the module did not answer the read"}
	}
	lo := im.view(AddrA0, 0, 0, false)
	id := lo.u8(0)
	m.Identifier = IdentifierName(id)
	switch StandardOf(id) {
	case SFF8472:
		decode8472(im, m)
	case SFF8636:
		decode8636(im, m)
	case CMIS:
		decodeCMIS(im, m)
	default:
		return m, &DecodeError{Kind: KindUnsupported, Msg: fmt.Sprintf("identifier 0x%02x (%s) is not a module type cxray decodes (SFP, QSFP/QSFP28 or CMIS)", id, m.Identifier.Name)}
	}
	for _, e := range im.Errors {
		m.note("%s was not read: %s", e.PageAddr, e.Err)
	}
	return m, nil
}

func (m *Module) note(format string, args ...any) {
	m.Notes = append(m.Notes, fmt.Sprintf(format, args...))
}

// checksum records a check code over [from, to] stored at at.
func (m *Module) checksum(name string, h half, from, to, at int) {
	if h.n == 0 {
		return
	}
	got, want := h.sum(from, to), h.u8(at)
	m.Checksums = append(m.Checksums, Checksum{Name: name, Want: want, Got: got, OK: got == want})
}

// ChecksumsOK says whether every check code matches.
func (m *Module) ChecksumsOK() bool {
	for _, c := range m.Checksums {
		if !c.OK {
			return false
		}
	}
	return true
}

func oui(h half, addr int) string {
	return fmt.Sprintf("%02x:%02x:%02x", h.u8(addr), h.u8(addr+1), h.u8(addr+2))
}

// dateCode reads the 8-byte YYMMDDLL code.
func dateCode(h half, addr int) (raw, date, lot string) {
	raw = h.str(addr, 8)
	b := []byte(raw)
	if len(b) >= 6 && digits(b[:6]) {
		date = fmt.Sprintf("20%s-%s-%s", b[0:2], b[2:4], b[4:6])
		lot = strings.TrimSpace(string(b[6:]))
	}
	return raw, date, lot
}

func digits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Conversions of the common DDM encodings (SFF-8472 §9, SFF-8636 §6.7,
// CMIS §8.2): temperature s16 in 1/256 °C, supply u16 in 100 µV, bias u16
// in 2 µA, optical power u16 in 0.1 µW.

func tempOf(raw int16) *Temperature {
	if na := sentinel16(uint16(raw), true); na != "" {
		return &Temperature{Raw: int64(raw), NA: na}
	}
	return &Temperature{C: float64(raw) / 256, Raw: int64(raw)}
}

func voltOf(raw uint16) *Voltage {
	if na := sentinel16(raw, false); na != "" {
		return &Voltage{Raw: int64(raw), NA: na}
	}
	return &Voltage{V: float64(raw) / 10000, Raw: int64(raw)}
}

func biasOf(raw uint16, mult int) *Current {
	if na := sentinel16(raw, false); na != "" {
		return &Current{Raw: int64(raw), NA: na}
	}
	return &Current{MA: float64(raw) * float64(mult) * 0.002, Raw: int64(raw)}
}

func powerRaw(raw uint16) *Power {
	if na := sentinel16(raw, false); na != "" {
		return &Power{Raw: int64(raw), NA: na}
	}
	return powerOf(float64(raw)/10000, int64(raw))
}

// fourLimits reads four thresholds stored high alarm, low alarm, high
// warning, low warning, two bytes each from addr.
func fourLimits[T any](h half, addr int, conv func(a int) *T) *Limits[T] {
	return &Limits[T]{HighAlarm: conv(addr), LowAlarm: conv(addr + 2), HighWarning: conv(addr + 4), LowWarning: conv(addr + 6)}
}

// flagsHigh reads HA, LA, HW, LW from bits 7..4 (SFF-8636 order) of b.
func flagsHigh(b byte) Flags {
	return Flags{HighAlarm: b&0x80 != 0, LowAlarm: b&0x40 != 0, HighWarning: b&0x20 != 0, LowWarning: b&0x10 != 0}
}

// flagsLow reads HA, LA, HW, LW from bits 0..3 (CMIS order) of b.
func flagsLow(b byte) Flags {
	return Flags{HighAlarm: b&0x01 != 0, LowAlarm: b&0x02 != 0, HighWarning: b&0x04 != 0, LowWarning: b&0x08 != 0}
}

func techName(v uint8) string {
	if n, ok := technologyNames[v]; ok {
		return n
	}
	return fmt.Sprintf("0x%x", v)
}

// mediaFromTechnology guesses the medium from the transmitter technology
// nibble when nothing better says it.
func mediaFromTechnology(t uint8) string {
	switch {
	case t == 0x0:
		return "optical-mmf"
	case t >= 0x1 && t <= 0x9:
		return "optical-smf"
	case t == 0xA || t == 0xB:
		return "passive-copper"
	default:
		return "active-cable"
	}
}
