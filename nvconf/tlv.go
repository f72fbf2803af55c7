package nvconf

import (
	"fmt"

	"github.com/cxray/cxray/nvconf/tlv"
)

// Instance is one TLV as a device stores it: the TLV and, by class, the
// port (1-based), module (0-based), host and function it belongs to.
type Instance struct {
	TLV      *TLV
	Port     int
	Module   int
	Host     int
	Function int
}

// Type is the instance's type dword.
func (in Instance) Type() uint32 {
	t, _ := TypeDword(in)
	return t
}

func (in Instance) String() string {
	switch in.TLV.Class {
	case ClassPort:
		return fmt.Sprintf("%s (port %d)", in.TLV.Name, in.Port)
	case ClassModule:
		return fmt.Sprintf("%s (module %d)", in.TLV.Name, in.Module)
	case ClassHostPF:
		if in.Host != 0 || in.Function != 0 {
			return fmt.Sprintf("%s (host %d function %d)", in.TLV.Name, in.Host, in.Function)
		}
	case ClassHost:
		if in.Host != 0 {
			return fmt.Sprintf("%s (host %d)", in.TLV.Name, in.Host)
		}
	}
	return in.TLV.Name
}

// Suffix is what a parameter name of this instance carries: _P<n> for port
// TLVs, _M<n> for module TLVs, nothing otherwise (mstconfig's naming).
func (in Instance) Suffix() string {
	switch in.TLV.Class {
	case ClassPort:
		return fmt.Sprintf("_P%d", in.Port)
	case ClassModule:
		return fmt.Sprintf("_M%d", in.Module)
	}
	return ""
}

// TypeDword encodes the type dword of an instance (tlv.EncodeType).
func TypeDword(in Instance) (uint32, error) {
	t := in.TLV
	return tlv.EncodeType(tlv.TypeFields{Class: t.Class, ID: t.ID, Port: in.Port, Module: in.Module, Host: in.Host, Function: in.Function})
}

// InstanceOf finds the TLV a type dword names. The "all ports/functions"
// classes are mapped to their base class (port 0, function 0).
func (db *DB) InstanceOf(t uint32) (Instance, bool) {
	f := tlv.SplitType(t)
	c := f.Class
	switch c {
	case ClassPortCommon:
		c = ClassPort
	case ClassHostAllFn, ClassAllHostsFn, ClassAllHostsAllFn:
		c = ClassHostPF
	}
	tlv := db.TLVByType(c, f.ID)
	if tlv == nil {
		return Instance{}, false
	}
	return Instance{TLV: tlv, Port: f.Port, Module: f.Module, Host: f.Host, Function: f.Function}, true
}

// DescribeType names a type dword for people: the TLV and its instance, or
// the raw fields when the database does not know it.
func (db *DB) DescribeType(t uint32) string {
	if in, ok := db.InstanceOf(t); ok {
		if tlv.SplitType(t).Class != in.TLV.Class {
			return fmt.Sprintf("%s (%s)", in.TLV.Name, tlv.SplitType(t).Class)
		}
		return in.String()
	}
	f := tlv.SplitType(t)
	return fmt.Sprintf("unknown TLV (class %s, index 0x%x)", f.Class, f.ID)
}

// ---- parameter placement inside TLV data

// startBit is the MSB-first offset of the parameter's first bit in the TLV
// data. A scalar narrower than a dword is placed by its LSB-based bit inside
// its big-endian dword; wider scalars start at their byte. Arrays, STRING and
// BYTES start at their byte (the database's bit part is ignored for them, as
// mstconfig ignores it).
func (p *Param) startBit() (int, error) {
	by, bi, err := splitByteBit(p.OffsetText)
	if err != nil {
		return 0, err
	}
	if p.ArrayLen > 0 || p.Type == TypeString || p.Type == TypeBytes || p.Size >= 32 {
		return 8 * by, nil
	}
	b := 8*by + bi
	if b%32+p.Size > 32 {
		return 0, fmt.Errorf("%d bits at bit %d of a dword cross the dword's end", p.Size, b%32)
	}
	return (b &^ 31) + 32 - b%32 - p.Size, nil
}

// Bit is the MSB-first offset of element i in the TLV data. Array elements
// follow each other in big-endian order: element i of 8-bit elements is byte
// start+i, of 16-bit elements the half-word start+2i. (mstconfig gets there
// in two steps, a byte swap inside each dword and a reversed walk over the
// dword's elements, which cancel.)
func (p *Param) Bit(i int) int {
	b, _ := p.startBit()
	if p.IsArray() {
		return b + i*p.ElemBits()
	}
	return b
}

// Get reads element i (0 for scalars) of a number-like parameter.
func (p *Param) Get(data []byte, i int) (uint64, error) {
	if err := p.checkElem(data, i); err != nil {
		return 0, err
	}
	return tlv.GetBits(data, p.Bit(i), p.ElemBits()), nil
}

// Set writes element i of a number-like parameter.
func (p *Param) Set(data []byte, i int, v uint64) error {
	if err := p.checkElem(data, i); err != nil {
		return err
	}
	w := p.ElemBits()
	if w < 64 && v>>uint(w) != 0 {
		return fmt.Errorf("%s: %d does not fit in %d bits", p.DisplayName(), v, w)
	}
	tlv.SetBits(data, p.Bit(i), w, v)
	return nil
}

func (p *Param) checkElem(data []byte, i int) error {
	if p.Type == TypeString || p.Type == TypeBytes {
		return fmt.Errorf("%s is %s; it has no number value", p.DisplayName(), p.Type)
	}
	if i < 0 || i >= p.Elems() {
		return fmt.Errorf("%s: index %d is out of range 0..%d", p.DisplayName(), i, p.Elems()-1)
	}
	if p.Bit(i)+p.ElemBits() > 8*len(data) {
		return fmt.Errorf("%s: the TLV data is %d bytes, too short for bit %d", p.DisplayName(), len(data), p.Bit(i)+p.ElemBits())
	}
	return nil
}

// RawBytes returns the bytes of a STRING or BYTES parameter (aliasing data).
func (p *Param) RawBytes(data []byte) []byte {
	s := p.Bit(0) / 8
	e := s + p.Size/8
	if e > len(data) {
		return nil
	}
	return data[s:e:e]
}

// ValidBitSet says whether the parameter's valid bit (if it has one) is set
// in data; parameters without one are always valid.
func (p *Param) ValidBitSet(data []byte) bool {
	if p.ValidBit == "" {
		return true
	}
	vb := p.TLV.Param(p.ValidBit)
	if vb == nil {
		return true
	}
	v, err := vb.Get(data, 0)
	return err != nil || v != 0
}
