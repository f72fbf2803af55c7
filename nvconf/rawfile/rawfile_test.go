package rawfile_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/nvconf/rawfile"
	"github.com/cxray/cxray/nvconf/tlv"
	prmbuiltin "github.com/cxray/cxray/prm/builtin"
)

func codec(t testing.TB) *tlv.HeaderCodec {
	t.Helper()
	db, err := prmbuiltin.Load()
	if err != nil {
		t.Fatal(err)
	}
	hc, err := tlv.NewHeaderCodec(db, "MNVDA")
	if err != nil {
		t.Fatal(err)
	}
	return hc
}

func sample() []rawfile.TLV {
	return []rawfile.TLV{
		{Header: tlv.Header{Type: 0x80, Version: 1, WriterID: tlv.WriterMlxconfig}, Data: []byte{0x80, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0}},
		{Header: tlv.Header{Type: 0x01010012, Version: 3, WriterID: tlv.WriterUser1}, Data: []byte{0, 0, 0, 1}},
	}
}

// What Write writes, Parse reads back (type, version, writer, data), and
// the file is checked (cxray's end line); each cut of the file is refused
// or, at a line boundary before the marker's end line, reads fewer TLVs.
func TestWriteParse(t *testing.T) {
	hc := codec(t)
	in := sample()
	b, err := rawfile.Write(in, hc)
	if err != nil {
		t.Fatal(err)
	}
	if !rawfile.IsRaw(string(b)) {
		t.Fatal("IsRaw does not know the file Write wrote")
	}
	got, checked, err := rawfile.ParseChecked(string(b), hc)
	if err != nil || !checked {
		t.Fatalf("checked %v, %v", checked, err)
	}
	if d := rawfile.Compare(in, got); !d.Empty() {
		t.Errorf("read back differs: %+v", d)
	}
	for i := range got {
		if diff := cmp.Diff(in[i].Header.WriterHost, got[i].Header.WriterHost); diff != "" {
			t.Errorf("TLV %d writer host: %s", i, diff)
		}
	}
	for n := 1; n < len(b); n++ {
		_, err := rawfile.Parse(string(b[:n]), hc)
		var fe *rawfile.FileError
		if !errors.As(err, &fe) {
			t.Fatalf("cut at %d of %d: %v; want a FileError", n, len(b), err)
		}
	}
}

// FuzzParse: any text parses or is refused with a FileError; what parses
// writes back and parses to the same TLVs.
func FuzzParse(f *testing.F) {
	hc := codec(f)
	b, err := rawfile.Write(sample(), hc)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(b))
	f.Add(strings.ReplaceAll(string(b), "\n", "\r\n"))
	f.Add(rawfile.RawFileSignature + "\n0x00000000 0x00000080 0x00000000\n")
	f.Fuzz(func(t *testing.T, text string) {
		got, err := rawfile.Parse(text, hc)
		if err != nil {
			var fe *rawfile.FileError
			if !errors.As(err, &fe) {
				t.Fatalf("refused without a FileError: %v", err)
			}
			return
		}
		out, err := rawfile.Write(got, hc)
		if err != nil {
			t.Fatalf("what parsed does not write: %v", err)
		}
		again, err := rawfile.Parse(string(out), hc)
		if err != nil {
			t.Fatalf("what was written does not parse: %v", err)
		}
		if d := rawfile.Compare(got, again); !d.Empty() {
			t.Fatalf("round trip differs: %+v", d)
		}
	})
}

// A TLV built from fields (no header image kept) with a writer host other
// than 0 keeps it in the file: the header written carries bits 11:9 of its
// first dword, so the file passes its own checksum and reads back the
// host. Before, the image dropped the host and the file failed to read.
func TestWriterHostFromFields(t *testing.T) {
	hc := codec(t)
	for host := 0; host <= 7; host++ {
		in := []rawfile.TLV{{Header: tlv.Header{Type: 0x01010012, Version: 1, WriterID: tlv.WriterUser1, WriterHost: host}, Data: []byte{0, 0, 0, 1}}}
		b, err := rawfile.Write(in, hc)
		if err != nil {
			t.Fatal(err)
		}
		got, checked, err := rawfile.ParseChecked(string(b), hc)
		if err != nil || !checked {
			t.Fatalf("host %d: checked %v, %v\n%s", host, checked, err, b)
		}
		if got[0].Header.WriterHost != host {
			t.Errorf("host %d read back as %d", host, got[0].Header.WriterHost)
		}
	}
	bad := []rawfile.TLV{{Header: tlv.Header{Type: 0x80, WriterHost: 8}, Data: []byte{0, 0, 0, 0}}}
	if _, err := rawfile.Write(bad, hc); err == nil {
		t.Error("writer host 8 (three bits hold 0..7) was written")
	}
}
