package optics

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
)

// I2C addresses of module memory (7-bit).
const (
	AddrA0 = 0x50 // ID memory: SFF-8472 A0h, and all of SFF-8636 and CMIS
	AddrA2 = 0x51 // SFF-8472 diagnostics (A2h)
)

// HalfSize is the size of a half page: the lower half (bytes 0..127) is
// always mapped; the upper half (128..255) is the selected page and bank.
const HalfSize = 128

// PageAddr names one half page of module memory.
type PageAddr struct {
	I2C  uint8 `json:"i2c"`
	Bank uint8 `json:"bank"`
	Page uint8 `json:"page"`
	// Offset is 0 (lower half) or 128 (upper half).
	Offset uint8 `json:"offset"`
}

func (a PageAddr) String() string {
	half := "lower"
	if a.Offset >= HalfSize {
		half = "upper"
	}
	if a.I2C == AddrA2 {
		return fmt.Sprintf("A2h %s", half)
	}
	if a.Bank != 0 {
		return fmt.Sprintf("bank %d page %02Xh %s", a.Bank, a.Page, half)
	}
	return fmt.Sprintf("page %02Xh %s", a.Page, half)
}

// Page is the bytes read at an address (up to HalfSize).
type Page struct {
	PageAddr
	Data []byte `json:"data"`
}

// MarshalJSON writes the bytes as one hex string, which people can read
// and paste (base64 would hide them).
func (p Page) MarshalJSON() ([]byte, error) {
	type plain struct {
		PageAddr
		Data string `json:"data"`
	}
	return json.Marshal(plain{PageAddr: p.PageAddr, Data: hex.EncodeToString(p.Data)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (p *Page) UnmarshalJSON(b []byte) error {
	var plain struct {
		PageAddr
		Data string `json:"data"`
	}
	if err := json.Unmarshal(b, &plain); err != nil {
		return err
	}
	d, err := hex.DecodeString(plain.Data)
	if err != nil {
		return fmt.Errorf("page data: %w", err)
	}
	p.PageAddr, p.Data = plain.PageAddr, d
	return nil
}

// PageError records a half page that could not be read.
type PageError struct {
	PageAddr
	Err string `json:"error"`
}

// Image is the module memory read so far, in read order.
type Image struct {
	Pages  []Page      `json:"pages"`
	Errors []PageError `json:"errors,omitempty"`
}

// Add records a half page (a later read of the same address replaces it).
func (im *Image) Add(a PageAddr, data []byte) {
	a = canonical(a)
	d := append([]byte(nil), data[:min(len(data), HalfSize)]...)
	for i := range im.Pages {
		if im.Pages[i].PageAddr == a {
			im.Pages[i].Data = d
			return
		}
	}
	im.Pages = append(im.Pages, Page{PageAddr: a, Data: d})
}

// canonical maps every lower-half address to page 0 bank 0: the lower half
// is the same whatever page is selected.
func canonical(a PageAddr) PageAddr {
	if a.Offset < HalfSize {
		a.Offset, a.Page, a.Bank = 0, 0, 0
	} else {
		a.Offset = HalfSize
	}
	return a
}

// Half returns the bytes of a half page, or nil when it was not read.
func (im *Image) Half(a PageAddr) []byte {
	if im == nil {
		return nil
	}
	a = canonical(a)
	for _, p := range im.Pages {
		if p.PageAddr == a {
			return p.Data
		}
	}
	return nil
}

// half is a bounds-safe view of a half page for the decoders: bytes that
// were not read (a short or missing page) read as zero, and ok/n say how
// much is real. Offsets are absolute (0..127 or 128..255).
type half struct {
	data [HalfSize]byte
	n    int
	base int
}

func (im *Image) view(i2c, bank, page uint8, upper bool) half {
	a := PageAddr{I2C: i2c, Bank: bank, Page: page}
	h := half{}
	if upper {
		a.Offset, h.base = HalfSize, HalfSize
	}
	b := im.Half(a)
	h.n = copy(h.data[:], b)
	return h
}

func (h half) ok() bool { return h.n == HalfSize }

func (h half) u8(addr int) byte {
	i := addr - h.base
	if i < 0 || i >= HalfSize {
		return 0
	}
	return h.data[i]
}

func (h half) u16(addr int) uint16 { return uint16(h.u8(addr))<<8 | uint16(h.u8(addr+1)) }

func (h half) s16(addr int) int16 { return int16(h.u16(addr)) }

// str is ASCII text with its padding (spaces, NULs) trimmed; other bytes
// become '?', so a corrupt EEPROM cannot put control characters on a terminal.
func (h half) str(addr, n int) string {
	b := make([]byte, 0, n)
	for i := 0; i < n; i++ {
		c := h.u8(addr + i)
		if c < 0x20 || c >= 0x7f {
			if c == 0 {
				c = ' '
			} else {
				c = '?'
			}
		}
		b = append(b, c)
	}
	end := len(b)
	for end > 0 && b[end-1] == ' ' {
		end--
	}
	start := 0
	for start < end && b[start] == ' ' {
		start++
	}
	return string(b[start:end])
}

// sum is the low 8 bits of the sum of bytes [from, to].
func (h half) sum(from, to int) uint8 {
	var s uint8
	for i := from; i <= to; i++ {
		s += h.u8(i)
	}
	return s
}

// PageReader reads module memory: length bytes (1..128, not crossing a
// half page) at a.Offset of page a.Page, bank a.Bank, I2C address a.I2C.
type PageReader interface {
	ReadPage(ctx context.Context, a PageAddr, length int) ([]byte, error)
}

// maxReads bounds ReadImage: the most pages any module needs (lower, four
// CMIS upper pages and 11h in four banks) with room to spare.
const maxReads = 16

// ReadImage reads the pages a full decode needs, following what the module
// says about itself: its identifier, flat memory, DDM support, banks and
// active lanes. Only the first read (the lower page) must succeed; later
// failures are kept in Image.Errors and the decode does what it can.
func ReadImage(ctx context.Context, r PageReader) (*Image, error) {
	im := &Image{}
	reads := 0
	var firstErr error
	read := func(a PageAddr) bool {
		if reads >= maxReads || ctx.Err() != nil {
			return false
		}
		reads++
		b, err := r.ReadPage(ctx, a, HalfSize)
		if err != nil {
			im.Errors = append(im.Errors, PageError{PageAddr: canonical(a), Err: err.Error()})
			if firstErr == nil {
				firstErr = err
			}
			return false
		}
		im.Add(a, b)
		return true
	}
	lower := PageAddr{I2C: AddrA0}
	if !read(lower) {
		if firstErr != nil {
			return im, fmt.Errorf("read the module's lower page: %w", firstErr)
		}
		if err := ctx.Err(); err != nil {
			return im, err
		}
		return im, ErrNotRead
	}
	lo := im.view(AddrA0, 0, 0, false)
	if allSame(im.Half(lower), 0xFF) {
		return im, nil // a hung bus reads ones: the rest would too
	}
	up := func(page, bank uint8) bool {
		return read(PageAddr{I2C: AddrA0, Page: page, Bank: bank, Offset: HalfSize})
	}
	switch StandardOf(lo.u8(0)) {
	case SFF8472:
		// Everything SFF-8472 defines sits in the lower halves of A0h and
		// A2h; A2h answers only when the module says it has diagnostics.
		if lo.u8(92)&0x40 != 0 {
			read(PageAddr{I2C: AddrA2})
		}
	case SFF8636:
		up(0, 0)
		if lo.u8(2)&0x04 == 0 {
			up(3, 0)
		}
	case CMIS:
		up(0, 0)
		if lo.u8(2)&0x80 != 0 {
			break // flat memory: nothing beyond page 00h
		}
		up(1, 0)
		up(2, 0)
		// Page 11h of every bank the module has (one per 8 lanes).
		banks := cmisBanks(im.view(AddrA0, 0, 1, true).u8(142))
		for b := 0; b < banks; b++ {
			if !up(0x11, uint8(b)) {
				break
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return im, err
	}
	return im, nil
}

// ErrNotRead is returned when a module's memory could not be read at all.
var ErrNotRead = errors.New("module memory was not read")

func allSame(b []byte, v byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c != v {
			return false
		}
	}
	return true
}
