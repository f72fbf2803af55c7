// Package tlv is the NV configuration TLV codec: the type dword of each TLV
// class, the configuration-item header of the NV registers (NVDA, NVQC,
// NVIA) placed through the PRM database, and MSB-first bit fields in TLV
// data. It knows no parameter database; nvconf builds on it.
package tlv

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// MaxData is the most TLV data one NV access carries (the header's length
// field allows 256 for MNVDA).
const MaxData = 256

// Class is a TLV's class as the database numbers it; it is also the class
// byte of the TLV type dword.
type Class uint8

// Database classes (mlxconfig's TLVClass; the type dword layouts of
// mstflint's tools_layouts/tools_open_layouts.h). The "all ports" and "all hosts/functions"
// variants exist only in type dwords.
const (
	ClassGlobal       Class = 0
	ClassPort         Class = 1
	ClassHostPF       Class = 3
	ClassFile         Class = 6
	ClassHost         Class = 7
	ClassSwitchGlobal Class = 8
	ClassModule       Class = 9

	ClassPortCommon    Class = 0x81
	ClassHostAllFn     Class = 0x43
	ClassAllHostsFn    Class = 0x83
	ClassAllHostsAllFn Class = 0xC3
)

var classNames = map[Class]string{
	ClassGlobal: "Global", ClassPort: "Port", ClassHostPF: "Host_PF", ClassFile: "File",
	ClassHost: "Host", ClassSwitchGlobal: "Switch_Global", ClassModule: "Module",
	ClassPortCommon: "Port_Common", ClassHostAllFn: "Per_Host_All_Functions",
	ClassAllHostsFn: "All_Hosts_Per_Function", ClassAllHostsAllFn: "All_Hosts_All_Functions",
}

func (c Class) String() string {
	if n, ok := classNames[c]; ok {
		return n
	}
	return fmt.Sprintf("Class(%d)", uint8(c))
}

// TypeFields is a type dword taken apart.
type TypeFields struct {
	Class    Class
	ID       uint32
	Port     int
	Module   int
	Host     int
	Function int
}

// EncodeType encodes a type dword (mstflint's
// tools_layouts/tools_open_layouts.h):
//
//	Global, File, Switch_Global: class[31:24] index[23:0]
//	Port:                        class[31:24] port[23:16] index[15:0]
//	Host_PF:                     class[31:24] host[23:18] function[17:10] index[9:0]
//	Host:                        class[31:24] host[23:18] index[17:0]
//	Module:                      class[31:24] module[23:14] index[13:0]
func EncodeType(f TypeFields) (uint32, error) {
	c := uint32(f.Class) << 24
	check := func(what string, v int, bits uint) error {
		if v < 0 || v >= 1<<bits {
			return fmt.Errorf("%s %d does not fit the %d bits the type dword has for it", what, v, bits)
		}
		return nil
	}
	idx := func(bits uint) error { return check("index", int(f.ID), bits) }
	switch f.Class {
	case ClassGlobal, ClassFile, ClassSwitchGlobal:
		if err := idx(24); err != nil {
			return 0, err
		}
		return c | f.ID, nil
	case ClassPort:
		if err := idx(16); err != nil {
			return 0, err
		}
		if err := check("port", f.Port, 8); err != nil {
			return 0, err
		}
		return c | uint32(f.Port)<<16 | f.ID, nil
	case ClassHostPF:
		if err := idx(10); err != nil {
			return 0, err
		}
		if err := check("host", f.Host, 6); err != nil {
			return 0, err
		}
		if err := check("function", f.Function, 8); err != nil {
			return 0, err
		}
		return c | uint32(f.Host)<<18 | uint32(f.Function)<<10 | f.ID, nil
	case ClassHost:
		if err := idx(18); err != nil {
			return 0, err
		}
		if err := check("host", f.Host, 6); err != nil {
			return 0, err
		}
		return c | uint32(f.Host)<<18 | f.ID, nil
	case ClassModule:
		if err := idx(14); err != nil {
			return 0, err
		}
		if err := check("module", f.Module, 10); err != nil {
			return 0, err
		}
		return c | uint32(f.Module)<<14 | f.ID, nil
	}
	return 0, fmt.Errorf("class %d has no type dword layout", f.Class)
}

// SplitType takes a type dword apart by its class. The "all ports" and "all
// functions" classes come back with their own class and the index.
func SplitType(t uint32) TypeFields {
	f := TypeFields{Class: Class(t >> 24)}
	switch f.Class {
	case ClassPort, ClassPortCommon:
		f.Port, f.ID = int(t>>16&0xFF), t&0xFFFF
	case ClassHostPF, ClassHostAllFn, ClassAllHostsFn, ClassAllHostsAllFn:
		f.Host, f.Function, f.ID = int(t>>18&0x3F), int(t>>10&0xFF), t&0x3FF
	case ClassHost:
		f.Host, f.ID = int(t>>18&0x3F), t&0x3FFFF
	case ClassModule:
		f.Module, f.ID = int(t>>14&0x3FF), t&0x3FFF
	default:
		f.ID = t & 0xFFFFFF
	}
	return f
}

// GetBits reads width (1..64) bits at MSB-first bit offset bit; bits past
// the end read as zero.
func GetBits(buf []byte, bit, width int) uint64 {
	var v uint64
	for i := 0; i < width; i++ {
		b := bit + i
		v <<= 1
		if b/8 < len(buf) && buf[b/8]&(0x80>>(b%8)) != 0 {
			v |= 1
		}
	}
	return v
}

// SetBits writes the low width bits of v at MSB-first bit offset bit; the
// caller has checked the range.
func SetBits(buf []byte, bit, width int, v uint64) {
	for i := 0; i < width; i++ {
		b := bit + i
		m := byte(0x80 >> (b % 8))
		if v>>(uint(width-1-i))&1 != 0 {
			buf[b/8] |= m
		} else {
			buf[b/8] &^= m
		}
	}
}

// Dwords renders bytes as big-endian dwords "0x00000080 0x00000000 ...",
// padding a last partial dword with zeros.
func Dwords(b []byte) string {
	var sb strings.Builder
	for i := 0; i < len(b); i += 4 {
		var w [4]byte
		copy(w[:], b[i:])
		if i > 0 {
			sb.WriteByte(' ')
		}
		fmt.Fprintf(&sb, "0x%08x", binary.BigEndian.Uint32(w[:]))
	}
	return sb.String()
}
