package prm_test

import (
	"testing"

	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/builtin"
)

// FuzzDecode: arbitrary bytes as any register of the built-in database
// decode without panicking, render, and survive the encode round trip.
func FuzzDecode(f *testing.F) {
	db, err := builtin.Load()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(uint16(0), []byte{1, 2, 3})
	f.Add(uint16(17), make([]byte, 256))
	f.Add(uint16(100), []byte("MT_0000000838 and more text to fill a buffer with"))
	f.Fuzz(func(t *testing.T, pick uint16, data []byte) {
		r := db.Registers[int(pick)%len(db.Registers)]
		p, err := db.RegisterPlan(r)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, max(p.Bytes, len(data)-len(data)%4))
		copy(buf, data)
		d, err := p.Decode(buf)
		if err != nil {
			t.Fatal(err)
		}
		d.AppendJSON(nil, prm.JSONOptions{})
		d.Rows()
		out := make([]byte, len(buf))
		if err := p.Encode(out, d.Assignments()); err != nil {
			t.Fatalf("%s: %v", r.Name, err)
		}
		d2, err := p.Decode(out)
		if err != nil {
			t.Fatal(err)
		}
		if string(d.AppendJSON(nil, prm.JSONOptions{Raw: true})) != string(d2.AppendJSON(nil, prm.JSONOptions{Raw: true})) {
			t.Fatalf("%s: round trip differs", r.Name)
		}
	})
}
