package winesmoke

import (
	"bytes"
	"debug/pe"
	"encoding/binary"
	"strings"
	"testing"
)

// The DLL is a well-formed PE32+ image whose export directory names one
// function, by name, as a forwarder to the target.
func TestForwarderDLL(t *testing.T) {
	b := ForwarderDLL("bcryptprimitives.dll", "ProcessPrng", "advapi32.SystemFunction036")
	f, err := pe.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if f.Machine != pe.IMAGE_FILE_MACHINE_AMD64 || f.Characteristics&pe.IMAGE_FILE_DLL == 0 {
		t.Fatalf("machine %#x, characteristics %#x: want an x86-64 DLL", f.Machine, f.Characteristics)
	}
	oh, ok := f.OptionalHeader.(*pe.OptionalHeader64)
	if !ok {
		t.Fatalf("optional header %T, want PE32+", f.OptionalHeader)
	}
	dir := oh.DataDirectory[pe.IMAGE_DIRECTORY_ENTRY_EXPORT]
	sec := f.Sections[0]
	data, err := sec.Data()
	if err != nil {
		t.Fatal(err)
	}
	at := func(rva uint32) []byte { return data[rva-sec.VirtualAddress:] }
	cstr := func(rva uint32) string { s := at(rva); return string(s[:bytes.IndexByte(s, 0)]) }
	le := binary.LittleEndian
	ed := at(dir.VirtualAddress)
	if n := le.Uint32(ed[20:]); n != 1 || le.Uint32(ed[24:]) != 1 {
		t.Fatalf("%d functions, %d names; want 1 and 1", n, le.Uint32(ed[24:]))
	}
	if got := cstr(le.Uint32(ed[12:])); got != "bcryptprimitives.dll" {
		t.Errorf("DLL name %q", got)
	}
	name := cstr(le.Uint32(at(le.Uint32(ed[32:]))))
	fn := le.Uint32(at(le.Uint32(ed[28:])))
	ord := le.Uint16(at(le.Uint32(ed[36:])))
	if name != "ProcessPrng" || ord != 0 {
		t.Errorf("export %q ordinal index %d", name, ord)
	}
	// A function address inside the export directory is a forwarder.
	if fn < dir.VirtualAddress || fn >= dir.VirtualAddress+dir.Size {
		t.Fatalf("function RVA %#x outside the export directory [%#x,%#x): not a forwarder", fn, dir.VirtualAddress, dir.VirtualAddress+dir.Size)
	}
	if got := cstr(fn); got != "advapi32.SystemFunction036" || !strings.Contains(got, ".") {
		t.Errorf("forwarder %q", got)
	}
	if oh.SizeOfImage%oh.SectionAlignment != 0 || uint32(len(b))%oh.FileAlignment != 0 {
		t.Errorf("image %#x / file %#x bytes not aligned", oh.SizeOfImage, len(b))
	}
}
