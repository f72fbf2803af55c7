package emu

import "maps"

// MapFirmware is a minimal Firmware for tests and demos: registers are plain
// byte buffers keyed by ID (no index fields); SET stores the payload, GET
// returns what was stored (zeros if nothing was), and registers not in Sizes
// answer status 4 (not supported). Not safe for use outside a Device, which
// serialises calls.
type MapFirmware struct {
	Sizes  map[uint16]int    // register ID -> size in bytes
	Values map[uint16][]byte // last SET payload per register
}

// NewMapFirmware returns a store for registers of the given sizes.
func NewMapFirmware(sizes map[uint16]int) *MapFirmware {
	return &MapFirmware{Sizes: maps.Clone(sizes), Values: map[uint16][]byte{}}
}

// AccessRegister implements Firmware.
func (f *MapFirmware) AccessRegister(id uint16, method Method, data []byte) ([]byte, uint8) {
	size, ok := f.Sizes[id]
	if !ok {
		return nil, StatusRegNotSupp
	}
	if len(data) < size {
		return nil, StatusLenTooSmall
	}
	switch method {
	case MethodSet:
		f.Values[id] = append([]byte(nil), data[:size]...)
		return data, StatusOK
	case MethodGet:
		out := make([]byte, len(data))
		copy(out, f.Values[id])
		return out, StatusOK
	}
	return nil, StatusMethodNotSupp
}
