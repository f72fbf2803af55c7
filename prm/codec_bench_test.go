package prm_test

import (
	"testing"

	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/builtin"
)

// benchBuffer returns a register image with realistic content: the page
// selector for PDDR's module-info page and nonzero data elsewhere.
func benchBuffer(b *testing.B, reg string, assigns ...string) (*prm.Plan, []byte) {
	db, err := builtin.Load()
	if err != nil {
		b.Fatal(err)
	}
	r, err := db.Register(reg)
	if err != nil {
		b.Fatal(err)
	}
	p, err := db.RegisterPlan(r)
	if err != nil {
		b.Fatal(err)
	}
	buf := p.NewBuffer()
	for i := range buf {
		buf[i] = byte(i*37 + 11)
	}
	as, _ := prm.ParseAssignments(assigns)
	if err := p.Encode(buf, as); err != nil {
		b.Fatal(err)
	}
	return p, buf
}

func benchDecode(b *testing.B, reg string, assigns ...string) {
	p, buf := benchBuffer(b, reg, assigns...)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Decode(buf); err != nil {
			b.Fatal(err)
		}
	}
}

func benchEncode(b *testing.B, reg string, assigns ...string) {
	p, buf := benchBuffer(b, reg, assigns...)
	d, _ := p.Decode(buf)
	as := d.Assignments()
	out := p.NewBuffer()
	b.ReportAllocs()
	for b.Loop() {
		if err := p.Encode(out, as); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeMGIR(b *testing.B) { benchDecode(b, "MGIR") }
func BenchmarkDecodePDDRModuleInfo(b *testing.B) {
	benchDecode(b, "PDDR", "page_select=Module_info_page")
}
func BenchmarkEncodeMGIR(b *testing.B) { benchEncode(b, "MGIR") }
func BenchmarkEncodePDDRModuleInfo(b *testing.B) {
	benchEncode(b, "PDDR", "page_select=Module_info_page")
}
func BenchmarkJSONPDDRModuleInfo(b *testing.B) {
	p, buf := benchBuffer(b, "PDDR", "page_select=Module_info_page")
	d, _ := p.Decode(buf)
	var out []byte
	b.ReportAllocs()
	for b.Loop() {
		out = d.AppendJSON(out[:0], prm.JSONOptions{})
	}
}

// DecodeInto is the loop form: the same register decoded again and again.
func BenchmarkDecodeIntoPDDRModuleInfo(b *testing.B) {
	p, buf := benchBuffer(b, "PDDR", "page_select=Module_info_page")
	var d prm.Decoded
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		if err := p.DecodeInto(&d, buf); err != nil {
			b.Fatal(err)
		}
	}
}
