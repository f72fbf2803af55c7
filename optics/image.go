package optics

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
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

// Bytes of each half page the decoders use, from the start of the half:
// a read asks for no more (module memory is read over I2C, through MCIA,
// a few dozen bytes at a time, and each MCIA access is a whole ICMD
// command). The decode of a page read this far equals the decode of the
// whole page (TestTrimmedReadsDecodeTheSame).
const (
	needCMISPage00  = 95  // 128..222: identification, its checksum at 222
	needCMISPage01  = 33  // 128..160: versions, lengths, banks, monitor support
	needCMISPage02  = 72  // 128..199: thresholds
	needCMISPage11  = 86  // 128..213: flags, lane monitors, active control set
	needSFF8636Up00 = 96  // 128..223: identification, CC_BASE and CC_EXT
	needSFF8636Up03 = 72  // 128..199: thresholds
	needSFF8472A0   = 96  // 0..95: ID fields, CC_BASE and CC_EXT
	needFull        = 128 // lower pages (monitors, flags, applications), SFF-8472 A2h
)

// ReadImage reads the parts of the pages a full decode needs, following
// what the module says about itself: its identifier, flat memory, DDM
// support, banks and active lanes. Only the first read (the lower page)
// must succeed; later failures are kept in Image.Errors and the decode does
// what it can. Pages are read only as far as the decoders look (the raw
// pages of the result may be shorter than 128 bytes); ReadFullImage reads
// them whole.
func ReadImage(ctx context.Context, r PageReader) (*Image, error) {
	return readImage(ctx, r, nil, false)
}

// ReadFullImage is ReadImage reading every page it visits whole (for raw
// dumps).
func ReadFullImage(ctx context.Context, r PageReader) (*Image, error) {
	return readImage(ctx, r, nil, true)
}

// ReadImageCached is ReadImage reusing the static pages kept in c from an
// earlier read of the same module in this process (see StaticPages); c may
// be nil.
func ReadImageCached(ctx context.Context, r PageReader, c *StaticPages) (*Image, error) {
	return readImage(ctx, r, c, false)
}

func readImage(ctx context.Context, r PageReader, cache *StaticPages, full bool) (*Image, error) {
	im := &Image{}
	reads := 0
	var firstErr error
	read := func(a PageAddr, n int) bool {
		if reads >= maxReads || ctx.Err() != nil {
			return false
		}
		if full {
			n = HalfSize
		}
		reads++
		b, err := r.ReadPage(ctx, a, n)
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
	if !read(lower, needFull) {
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
	upper := func(page, bank uint8) PageAddr {
		return PageAddr{I2C: AddrA0, Page: page, Bank: bank, Offset: HalfSize}
	}
	up := func(page, bank uint8, n int) bool { return read(upper(page, bank), n) }
	// static reads a page that does not change while the module stays
	// plugged, from the cache when the identification page just read is
	// the one it was cached with.
	var ident []byte
	static := func(page uint8, n int) bool {
		a := upper(page, 0)
		if b := cache.get(ident, a, n); b != nil {
			im.Add(a, b)
			return true
		}
		if !up(page, 0, n) {
			return false
		}
		cache.put(ident, a, im.Half(a))
		return true
	}
	switch StandardOf(lo.u8(0)) {
	case SFF8472:
		// Everything SFF-8472 defines sits in the lower halves of A0h and
		// A2h; A2h answers only when the module says it has diagnostics.
		// The lower page read first is whole; its decode needs 96 bytes.
		if lo.u8(92)&0x40 != 0 {
			read(PageAddr{I2C: AddrA2}, needFull)
		}
	case SFF8636:
		if up(0, 0, needSFF8636Up00) {
			ident = identity(im, lo.u8(0))
		}
		if lo.u8(2)&0x04 == 0 {
			static(3, needSFF8636Up03)
		}
	case CMIS:
		if up(0, 0, needCMISPage00) {
			ident = identity(im, lo.u8(0))
		}
		if lo.u8(2)&0x80 != 0 {
			break // flat memory: nothing beyond page 00h
		}
		static(1, needCMISPage01)
		static(2, needCMISPage02)
		// Page 11h of every bank the module has (one per 8 lanes).
		banks := cmisBanks(im.view(AddrA0, 0, 1, true).u8(142))
		for b := 0; b < banks; b++ {
			if !up(0x11, uint8(b), needCMISPage11) {
				break
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return im, err
	}
	return im, nil
}

// identity is what tells one module from another: its identifier and its
// identification page (vendor, part and serial number, date code).
func identity(im *Image, id byte) []byte {
	p := im.Half(PageAddr{I2C: AddrA0, Offset: HalfSize})
	if len(p) == 0 {
		return nil
	}
	return append([]byte{id}, p...)
}

// StaticPages keeps a module's static pages (CMIS advertising 01h and
// thresholds 02h, SFF-8636 thresholds 03h) between reads in one process,
// so a monitor or exporter reading the module every few seconds does not
// read them again each time. They are reused only when the module's
// identification page, which is read every time, is the same byte for
// byte: another module in the cage (a different serial number) invalidates
// them. Keep one per module (cage); safe for concurrent use.
type StaticPages struct {
	mu    sync.Mutex
	ident []byte
	pages map[PageAddr][]byte
}

func (c *StaticPages) get(ident []byte, a PageAddr, n int) []byte {
	if c == nil || ident == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !bytes.Equal(c.ident, ident) {
		return nil
	}
	if b := c.pages[a]; len(b) >= n {
		return b
	}
	return nil
}

func (c *StaticPages) put(ident []byte, a PageAddr, b []byte) {
	if c == nil || ident == nil || len(b) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !bytes.Equal(c.ident, ident) {
		c.ident = append([]byte(nil), ident...)
		c.pages = map[PageAddr][]byte{}
	}
	c.pages[a] = append([]byte(nil), b...)
}

// Forget drops what is kept (a caller that saw the module unplugged).
func (c *StaticPages) Forget() {
	c.mu.Lock()
	c.ident, c.pages = nil, nil
	c.mu.Unlock()
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
