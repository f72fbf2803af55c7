package tlv

import (
	"encoding/binary"
	"fmt"
	"strings"
	"sync"

	"github.com/cxray/cxray/prm"
)

// Mode is the configuration-item access mode: which value of a TLV a read
// returns.
type Mode uint8

// Access modes (config_item access_mode).
const (
	ModeNext    Mode = 0 // what the next firmware boot applies
	ModeCurrent Mode = 1 // what the running firmware uses
	ModeFactory Mode = 2 // the firmware's defaults
)

func (m Mode) String() string {
	switch m {
	case ModeNext:
		return "next"
	case ModeCurrent:
		return "current"
	case ModeFactory:
		return "default"
	}
	return fmt.Sprintf("mode %d", uint8(m))
}

// Writer IDs the tools use (config_item writer_id).
const (
	WriterUnspecified     uint8 = 0x0
	WriterICMD            uint8 = 0x5
	WriterMlxconfig       uint8 = 0x9
	WriterUser1           uint8 = 0xA // "for customer-created tools": cxray's own writes
	WriterMlxconfigSetRaw uint8 = 0xC
)

// HeaderSize is the size of the configuration-item header.
const HeaderSize = 12

// Header is a configuration-item header.
type Header struct {
	Length     int // data bytes
	Version    int
	WriterID   uint8
	WriterHost int // bits 11:9 of the first dword (mstflint's writer_host_id; the ADB has host_id_valid at bit 9)
	Mode       Mode
	Type       uint32
	// ReadEn and OverEn are set when the database has them (rd_en, ovr_en).
	ReadEn, OverEn bool
}

// Fields places named fields of one register, resolved once through the
// PRM database, and reads and writes them in buffers of any length (the NV
// registers carry data past their layout).
type Fields struct {
	Reg  *prm.Register
	Plan *prm.Plan

	mu  sync.Mutex
	pos map[string]span
}

type span struct{ bit, width int }

// NewFields compiles a register of db.
func NewFields(db *prm.DB, register string) (*Fields, error) {
	r, err := db.Register(register)
	if err != nil {
		return nil, err
	}
	p, err := db.RegisterPlan(r)
	if err != nil {
		return nil, err
	}
	return &Fields{Reg: r, Plan: p, pos: map[string]span{}}, nil
}

// where resolves a dotted path to its bits.
func (f *Fields) where(path string) (span, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s, ok := f.pos[path]; ok {
		if s.width == 0 {
			return s, fmt.Errorf("%s has no field %s in this PRM database", f.Reg.Name, path)
		}
		return s, nil
	}
	var s span
	if t, err := f.Plan.Resolve(path, f.Plan.NewBuffer()); err == nil {
		s = span{t.Bit, t.Width}
	} else {
		for _, l := range f.Plan.Leaves() {
			if l.Path == path {
				s = span{l.Bit, l.Width}
				break
			}
		}
	}
	f.pos[path] = s
	if s.width == 0 {
		return s, fmt.Errorf("%s has no field %s in this PRM database", f.Reg.Name, path)
	}
	return s, nil
}

// Has says whether the register has the field.
func (f *Fields) Has(path string) bool {
	_, err := f.where(path)
	return err == nil
}

// EnumValue is the value the database names name for the field path.
func (f *Fields) EnumValue(path, name string) (uint64, bool) {
	t, err := f.Plan.Resolve(path, f.Plan.NewBuffer())
	if err != nil || t.Step.Field == nil {
		return 0, false
	}
	for _, e := range t.Step.Field.Enum {
		if e.Name == name {
			return e.Value, true
		}
	}
	return 0, false
}

// Bit is the MSB-first bit offset of a field.
func (f *Fields) Bit(path string) (int, error) {
	s, err := f.where(path)
	return s.bit, err
}

// Get reads a field of at most 64 bits; missing fields and bits past the
// buffer read as 0.
func (f *Fields) Get(buf []byte, path string) uint64 {
	s, err := f.where(path)
	if err != nil || s.width > 64 {
		return 0
	}
	return GetBits(buf, s.bit, s.width)
}

// Set writes a field; a field the database lacks is an error, a value
// too wide for it too.
func (f *Fields) Set(buf []byte, path string, v uint64) error {
	s, err := f.where(path)
	if err != nil {
		return err
	}
	if s.width > 64 || (s.width < 64 && v>>uint(s.width) != 0) {
		return fmt.Errorf("%s.%s: %d does not fit in %d bits", f.Reg.Name, path, v, s.width)
	}
	if s.bit+s.width > 8*len(buf) {
		return fmt.Errorf("%s.%s: buffer of %d bytes is too short", f.Reg.Name, path, len(buf))
	}
	SetBits(buf, s.bit, s.width, v)
	return nil
}

// SetIf writes a field when the database has it (optional fields such as
// rd_en that older revisions lack).
func (f *Fields) SetIf(buf []byte, path string, v uint64) {
	if f.Has(path) {
		_ = f.Set(buf, path, v)
	}
}

// HeaderCodec reads and writes the configuration-item header of an NV
// register (MNVDA, MNVDI, MNVGN) and knows where the data starts. The
// header's fields come from the PRM database: Rev 0.57 splits the type into
// type_class and type_index, newer revisions hold one 32-bit type.
type HeaderCodec struct {
	*Fields
	prefix   string
	dataByte int
	hdrByte  int
}

// NewHeaderCodec compiles the header of register (MNVDA, MNVDI or MNVGN).
func NewHeaderCodec(db *prm.DB, register string) (*HeaderCodec, error) {
	f, err := NewFields(db, register)
	if err != nil {
		return nil, err
	}
	c := &HeaderCodec{Fields: f, prefix: "configuration_item_header."}
	for _, need := range []string{"length", "version", "writer_id", "access_mode"} {
		if !f.Has(c.prefix + need) {
			return nil, fmt.Errorf("%s in this PRM database has no %s%s; cxray needs a database with the NV registers (Rev 0.51 or later)", f.Reg.Name, c.prefix, need)
		}
	}
	if !(f.Has(c.prefix+"type") || (f.Has(c.prefix+"type_class") && f.Has(c.prefix+"type_index"))) {
		return nil, fmt.Errorf("%s in this PRM database has no configuration item type field", f.Reg.Name)
	}
	lenBit, _ := f.Bit(c.prefix + "length")
	c.hdrByte = lenBit / 32 * 4
	c.dataByte = -1
	if b, err := f.Bit("configuration_item_data"); err == nil {
		c.dataByte = b / 8
	}
	if c.dataByte < 0 {
		c.dataByte = c.hdrByte + HeaderSize
	}
	return c, nil
}

// DataOffset is where the TLV data starts in the register.
func (c *HeaderCodec) DataOffset() int { return c.dataByte }

// HeaderOffset is where the header starts in the register.
func (c *HeaderCodec) HeaderOffset() int { return c.hdrByte }

// EncodeHeader writes h into a register buffer.
func (c *HeaderCodec) EncodeHeader(buf []byte, h Header) error {
	p := c.prefix
	if h.Length < 0 || h.Length > 0x1FF {
		return fmt.Errorf("TLV data length %d is outside 0..511", h.Length)
	}
	for _, kv := range []struct {
		path string
		v    uint64
	}{{"length", uint64(h.Length)}, {"version", uint64(h.Version)}, {"writer_id", uint64(h.WriterID)}, {"access_mode", uint64(h.Mode)}} {
		if err := c.Set(buf, p+kv.path, kv.v); err != nil {
			return err
		}
	}
	if c.Has(p + "type") {
		if err := c.Set(buf, p+"type", uint64(h.Type)); err != nil {
			return err
		}
	} else {
		if err := c.Set(buf, p+"type_class", uint64(h.Type>>24)); err != nil {
			return err
		}
		if err := c.Set(buf, p+"type_index", uint64(h.Type&0xFFFFFF)); err != nil {
			return err
		}
	}
	c.SetIf(buf, p+"rd_en", uint64(b2i(h.ReadEn)))
	over := p + "ovr_en"
	if !c.Has(over) {
		over = p + "over_en"
	}
	c.SetIf(buf, over, uint64(b2i(h.OverEn)))
	return nil
}

// DecodeHeader reads the header from a register buffer.
func (c *HeaderCodec) DecodeHeader(buf []byte) Header {
	p := c.prefix
	h := Header{
		Length:   int(c.Get(buf, p+"length")),
		Version:  int(c.Get(buf, p+"version")),
		WriterID: uint8(c.Get(buf, p+"writer_id")),
		Mode:     Mode(c.Get(buf, p+"access_mode")),
	}
	if c.Has(p + "type") {
		h.Type = uint32(c.Get(buf, p+"type"))
	} else {
		h.Type = uint32(c.Get(buf, p+"type_class"))<<24 | uint32(c.Get(buf, p+"type_index"))
	}
	if lb, err := c.Bit(p + "length"); err == nil && lb/8+4 <= len(buf) {
		h.WriterHost = int(binary.BigEndian.Uint32(buf[lb/32*4:]) >> 9 & 7)
	}
	h.ReadEn = c.Get(buf, p+"rd_en") != 0
	h.OverEn = c.Get(buf, p+"ovr_en") != 0 || c.Get(buf, p+"over_en") != 0
	return h
}

// PutWriterHost writes the writer host into a header in buf: bits 11:9 of
// the length's dword, where DecodeHeader reads it (mstflint's
// writer_host_id; the ADB names only bit 9, host_id_valid). Raw files carry
// it; EncodeHeader leaves it to the firmware, which sets it on a write.
func (c *HeaderCodec) PutWriterHost(buf []byte, host int) error {
	if host < 0 || host > 7 {
		return fmt.Errorf("TLV writer host %d is outside 0..7", host)
	}
	lb, err := c.Bit(c.prefix + "length")
	if err != nil || lb/32*4+4 > len(buf) {
		if host == 0 {
			return nil
		}
		return fmt.Errorf("TLV writer host %d: the header layout has no place for it", host)
	}
	w := binary.BigEndian.Uint32(buf[lb/32*4:])
	binary.BigEndian.PutUint32(buf[lb/32*4:], w&^(7<<9)|uint32(host)<<9)
	return nil
}

// HeaderImage is the 12-byte header as the register carries it, for raw
// files (big-endian dwords, the register's own layout).
func (c *HeaderCodec) HeaderImage(buf []byte) []byte {
	if c.hdrByte+HeaderSize > len(buf) {
		return nil
	}
	return append([]byte(nil), buf[c.hdrByte:c.hdrByte+HeaderSize]...)
}

// WriterName names a writer ID from the PRM database's enum (ICMD_mlxconfig).
func (c *HeaderCodec) WriterName(id uint8) string {
	t, err := c.Plan.Resolve(c.prefix+"writer_id", c.Plan.NewBuffer())
	if err == nil && t.Step.Field != nil {
		if n, ok := t.Step.Field.EnumName(uint64(id)); ok {
			return n
		}
	}
	return fmt.Sprintf("writer 0x%x", id)
}

// WriterByName finds a writer ID by its enum name (case-insensitive) or number.
func (c *HeaderCodec) WriterByName(s string) (uint8, bool) {
	t, err := c.Plan.Resolve(c.prefix+"writer_id", c.Plan.NewBuffer())
	if err == nil && t.Step.Field != nil {
		if v, ok := t.Step.Field.EnumValueOf(strings.TrimSpace(s)); ok {
			return uint8(v), true
		}
	}
	v, err := prm.ParseUint(s)
	if err != nil || v > 0x1F {
		return 0, false
	}
	return uint8(v), true
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
