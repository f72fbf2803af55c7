package mfa2

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/internal/fwimage"
)

func image(t testing.TB, psid string, v fwimage.Version) []byte {
	t.Helper()
	b, err := fwimage.Build(fwimage.Spec{Version: v, PSID: psid, HWID: 0x218, PCIDeviceID: 0x1021})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func pkg(t testing.TB) ([]byte, [][]byte) {
	t.Helper()
	ims := [][]byte{image(t, "MT_0000000834", fwimage.Version{Major: 28, Minor: 40, SubMinor: 1000}), image(t, "MT_0000000838", fwimage.Version{Major: 28, Minor: 40, SubMinor: 1000}), image(t, "MT_0000000834", fwimage.Version{Major: 28, Minor: 41, SubMinor: 2})}
	b, err := Build(Spec{Version: fwimage.Version{Major: 28, Minor: 41, SubMinor: 2}, Images: ims})
	if err != nil {
		t.Fatal(err)
	}
	return b, ims
}

// A package lists each PSID with its components, and Extract gives back
// the very images put in.
func TestBuildParseExtract(t *testing.T) {
	b, ims := pkg(t)
	p, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Device{{PSID: "MT_0000000834", Components: []int{0, 2}}, {PSID: "MT_0000000838", Components: []int{1}}}, p.Devices); diff != "" {
		t.Errorf("devices (-want +got):\n%s", diff)
	}
	if p.Version != (fwimage.Version{Major: 28, Minor: 41, SubMinor: 2}) || p.Components[2].Version != (fwimage.Version{Major: 28, Minor: 41, SubMinor: 2}) {
		t.Errorf("versions: package %v, component 2 %v", p.Version, p.Components[2].Version)
	}
	for i, want := range ims {
		got, err := p.Extract(i)
		if err != nil {
			t.Fatalf("component %d: %v", i, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("component %d: extracted %d bytes differ from the %d put in", i, len(got), len(want))
		}
	}
}

// A package cut anywhere is refused by Parse or, when the cut is in the
// compressed block, by Extract; never a wrong image.
func TestCutPackageRefused(t *testing.T) {
	b, ims := pkg(t)
	for n := 0; n < len(b); n += 97 {
		p, err := Parse(b[:n])
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("cut at %d: %v is not a format error", n, err)
			}
			continue
		}
		for i := range p.Components {
			got, err := p.Extract(i)
			if err == nil && !bytes.Equal(got, ims[i]) {
				t.Fatalf("cut at %d: component %d extracted wrong bytes without an error", n, i)
			}
		}
	}
}

// FuzzParse: an accepted package names a PSID and a version for every
// component a device points to, and the same bytes give the same answer.
func FuzzParse(f *testing.F) {
	b, _ := pkg(f)
	f.Add(b)
	f.Add(b[:200])
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(data)
		p2, err2 := Parse(data)
		if (err == nil) != (err2 == nil) {
			t.Fatalf("two parses differ: %v / %v", err, err2)
		}
		if err != nil {
			return
		}
		if !reflect.DeepEqual(p.Devices, p2.Devices) || !reflect.DeepEqual(p.Components, p2.Components) {
			t.Fatal("two parses of the same bytes differ")
		}
		for _, d := range p.Devices {
			if d.PSID == "" || len(d.Components) == 0 {
				t.Fatalf("accepted device without PSID or component: %+v", d)
			}
			for _, c := range d.Components {
				if c < 0 || c >= len(p.Components) {
					t.Fatalf("device %s points to component %d of %d", d.PSID, c, len(p.Components))
				}
			}
		}
	})
}
