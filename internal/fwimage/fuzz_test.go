package fwimage

import (
	"reflect"
	"testing"
)

// FuzzParse: an image Parse accepts reports a PSID and a version, its
// sections lie inside the file, and the same bytes always give the same
// answer.
func FuzzParse(f *testing.F) {
	b, err := Build(testSpec())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(b[:0x4000])
	f.Add([]byte("MTFW"))
	f.Fuzz(func(t *testing.T, data []byte) {
		im, err := Parse(data)
		im2, err2 := Parse(data)
		if (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) {
			t.Fatalf("two parses differ: %v / %v", err, err2)
		}
		if err != nil {
			return
		}
		if !reflect.DeepEqual(im, im2) {
			t.Fatal("two parses of the same bytes differ")
		}
		if im.PSID == "" || im.Version.IsZero() {
			t.Fatalf("accepted image without PSID or version: %+v", im)
		}
		for _, s := range im.Sections {
			if s.Offset < 0 || s.Size < 0 || s.Offset+s.Size > len(data) {
				t.Fatalf("section %s at 0x%x+0x%x outside the 0x%x-byte file", s.Name, s.Offset, s.Size, len(data))
			}
		}
	})
}
