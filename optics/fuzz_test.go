package optics

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/cxray/cxray/prm/builtin"
)

// fuzzReader serves module memory cut from fuzz data: each read takes the
// next slice (possibly short or empty), some reads fail.
type fuzzReader struct {
	data  []byte
	reads int
}

func (r *fuzzReader) ReadPage(_ context.Context, a PageAddr, n int) ([]byte, error) {
	r.reads++
	if r.reads > 64 {
		panic("ReadImage does not bound its reads")
	}
	if len(r.data) == 0 {
		return nil, errors.New("no more data")
	}
	take := int(r.data[0])%(n+1) + 0
	r.data = r.data[1:]
	if take > len(r.data) {
		take = len(r.data)
	}
	out := r.data[:take]
	r.data = r.data[take:]
	return out, nil
}

// exercise runs everything that consumes a decoded module.
func exercise(t *testing.T, m *Module) {
	if m == nil {
		t.Fatal("Decode returned no module")
	}
	if _, err := json.Marshal(m); err != nil {
		t.Fatalf("module does not marshal: %v", err)
	}
	Marks(m)
	Compare(m, m)
	Changed(m, m)
	Diagnose(Observation{EEPROM: m, Firmware: m, Verified: true, Comparisons: Compare(m, m), EEPROM2: m, Firmware2: m})
}

// FuzzDecode: random, short and truncated pages of every memory map never
// panic and always give a module that marshals.
func FuzzDecode(f *testing.F) {
	f.Add(byte(0x03), []byte{0x40, 1, 2, 3})
	f.Add(byte(0x11), make([]byte, 600))
	f.Add(byte(0x18), []byte("\x80\x18\x50\x00\x06"))
	f.Add(byte(0x1E), append(make([]byte, 130), 0xFF, 0xFF))
	f.Add(byte(0xFF), []byte{0xFF, 0xFF})
	f.Fuzz(func(t *testing.T, id byte, data []byte) {
		// As a flat image: halves cut one after the other.
		addrs := []PageAddr{{I2C: AddrA0}, {I2C: AddrA0, Offset: 128}, {I2C: AddrA2}, {I2C: AddrA0, Page: 3, Offset: 128},
			{I2C: AddrA0, Page: 1, Offset: 128}, {I2C: AddrA0, Page: 2, Offset: 128}, {I2C: AddrA0, Page: 0x11, Offset: 128},
			{I2C: AddrA0, Page: 0x11, Bank: 1, Offset: 128}}
		im := &Image{}
		rest := data
		for i, a := range addrs {
			n := min(len(rest), HalfSize)
			if i > 0 && len(rest) > 0 {
				n = min(int(rest[0])%(HalfSize+1), len(rest)) // short pages too
			}
			page := append([]byte(nil), rest[:n]...)
			rest = rest[n:]
			if i == 0 && len(page) > 0 {
				page[0] = id
			}
			im.Add(a, page)
		}
		m, _ := Decode(im)
		exercise(t, m)
		// Through the reader, which follows what the pages say.
		im2, _ := ReadImage(context.Background(), &fuzzReader{data: append([]byte{128, id}, data...)})
		m2, _ := Decode(im2)
		exercise(t, m2)
		if _, err := json.Marshal(im2); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzFromPDDR: any bytes as a PDDR reply decode without panicking.
func FuzzFromPDDR(f *testing.F) {
	db, err := builtin.Load()
	if err != nil {
		f.Fatal(err)
	}
	r, err := db.Register("PDDR")
	if err != nil {
		f.Fatal(err)
	}
	p, err := db.RegisterPlan(r)
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte{0, 0, 0, 0, 0x20, 0, 0, 3}, 4)
	f.Add(make([]byte, 256), 0)
	f.Fuzz(func(t *testing.T, data []byte, lanes int) {
		buf := p.NewBuffer()
		copy(buf, data)
		buf[7] = 3 // the module page, so the union decodes as it
		d, err := p.Decode(buf)
		if err != nil {
			t.Fatal(err)
		}
		m, err := FromPDDR(d, lanes)
		if err != nil {
			return
		}
		exercise(t, m)
	})
}
