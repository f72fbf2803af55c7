// Package winesmoke runs the Windows build of cxray under Wine and
// compares what it prints with the Linux build's (smoke_test.go). It
// skips when Wine is not installed (scripts/setup.sh installs Debian's
// wine64).
//
// Go's Windows runtime needs bcryptprimitives.dll's ProcessPrng, which
// every Windows since 10 has and Wine gained only after 8.0 (Debian 12's
// Wine). ForwarderDLL builds a DLL of that name whose one export forwards
// to advapi32's SystemFunction036 (RtlGenRandom, the same kind of call:
// buffer and length in, a boolean out), so a Go program starts under the
// older Wine. It holds no code: the loader resolves the forwarder.
package winesmoke

import (
	"bytes"
	"encoding/binary"
)

// The one section's place in the file and in memory.
const (
	fileAlign    = 0x200
	sectionAlign = 0x1000
	sectionRVA   = 0x1000
	imageBase    = 0x180000000
)

// ForwarderDLL returns a PE32+ (x86-64) DLL named dll that exports name as a
// forwarder to target ("advapi32.SystemFunction036").
func ForwarderDLL(dll, name, target string) []byte {
	// The export directory and everything it points at, laid out from
	// sectionRVA: the directory (40 bytes), the address, name and ordinal
	// tables (one entry each), then the strings. A function address inside
	// the export directory's range is a forwarder string.
	var ed bytes.Buffer
	const dirSize = 40
	funcs := uint32(sectionRVA + dirSize)
	names := funcs + 4
	ords := names + 4
	strs := ords + 2
	dllRVA := strs
	nameRVA := dllRVA + uint32(len(dll)+1)
	targetRVA := nameRVA + uint32(len(name)+1)
	le := binary.LittleEndian
	w32 := func(v uint32) { ed.Write(le.AppendUint32(nil, v)) }
	w16 := func(v uint16) { ed.Write(le.AppendUint16(nil, v)) }
	w32(0)      // Characteristics
	w32(0)      // TimeDateStamp
	w16(0)      // MajorVersion
	w16(0)      // MinorVersion
	w32(dllRVA) // Name
	w32(1)      // Base ordinal
	w32(1)      // NumberOfFunctions
	w32(1)      // NumberOfNames
	w32(funcs)  // AddressOfFunctions
	w32(names)  // AddressOfNames
	w32(ords)   // AddressOfNameOrdinals
	w32(targetRVA)
	w32(nameRVA)
	w16(0)
	for _, s := range []string{dll, name, target} {
		ed.WriteString(s)
		ed.WriteByte(0)
	}
	exportSize := uint32(ed.Len())
	raw := align(exportSize, fileAlign)

	var b bytes.Buffer
	// DOS header: "MZ", and e_lfanew (offset 0x3C) pointing just past it.
	dos := make([]byte, 64)
	copy(dos, "MZ")
	le.PutUint32(dos[0x3C:], 64)
	b.Write(dos)
	b.WriteString("PE\x00\x00")
	// COFF header.
	const optSize = 240
	coff := make([]byte, 20)
	le.PutUint16(coff[0:], 0x8664) // IMAGE_FILE_MACHINE_AMD64
	le.PutUint16(coff[2:], 1)      // sections
	le.PutUint16(coff[16:], optSize)
	le.PutUint16(coff[18:], 0x2000|0x0020|0x0002) // DLL | LARGE_ADDRESS_AWARE | EXECUTABLE_IMAGE
	b.Write(coff)
	// Optional header, PE32+.
	opt := make([]byte, optSize)
	le.PutUint16(opt[0:], 0x20B)
	le.PutUint32(opt[8:], raw)                                         // SizeOfInitializedData
	le.PutUint32(opt[16:], 0)                                          // AddressOfEntryPoint: no DllMain
	le.PutUint32(opt[20:], sectionRVA)                                 // BaseOfCode
	le.PutUint64(opt[24:], imageBase)                                  // ImageBase
	le.PutUint32(opt[32:], sectionAlign)                               // SectionAlignment
	le.PutUint32(opt[36:], fileAlign)                                  // FileAlignment
	le.PutUint16(opt[40:], 6)                                          // MajorOperatingSystemVersion
	le.PutUint16(opt[48:], 6)                                          // MajorSubsystemVersion
	le.PutUint32(opt[56:], sectionRVA+align(exportSize, sectionAlign)) // SizeOfImage
	le.PutUint32(opt[60:], fileAlign)                                  // SizeOfHeaders
	le.PutUint16(opt[68:], 3)                                          // IMAGE_SUBSYSTEM_WINDOWS_CUI
	le.PutUint16(opt[70:], 0x0100|0x0040)                              // NX_COMPAT | DYNAMIC_BASE (nothing to relocate)
	le.PutUint64(opt[72:], 0x100000)                                   // SizeOfStackReserve
	le.PutUint64(opt[80:], 0x1000)                                     // SizeOfStackCommit
	le.PutUint64(opt[88:], 0x100000)                                   // SizeOfHeapReserve
	le.PutUint64(opt[96:], 0x1000)                                     // SizeOfHeapCommit
	le.PutUint32(opt[108:], 16)                                        // NumberOfRvaAndSizes
	le.PutUint32(opt[112:], sectionRVA)                                // export directory
	le.PutUint32(opt[116:], exportSize)
	b.Write(opt)
	// Section header.
	sec := make([]byte, 40)
	copy(sec, ".edata")
	le.PutUint32(sec[8:], exportSize) // VirtualSize
	le.PutUint32(sec[12:], sectionRVA)
	le.PutUint32(sec[16:], raw)       // SizeOfRawData
	le.PutUint32(sec[20:], fileAlign) // PointerToRawData
	le.PutUint32(sec[36:], 0x40000040)
	b.Write(sec)
	b.Write(make([]byte, fileAlign-b.Len()))
	b.Write(ed.Bytes())
	b.Write(make([]byte, int(raw)-ed.Len()))
	return b.Bytes()
}

func align(n, a uint32) uint32 { return (n + a - 1) / a * a }
