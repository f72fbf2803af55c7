package fwimage

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func testSpec() Spec {
	return Spec{Version: Version{28, 40, 1000}, Released: time.Date(2024, 3, 7, 9, 30, 0, 0, time.UTC),
		PSID: "MT_0000000834", PartNumber: "EMU-CX7-2P400G", Description: "test image", PCIDeviceID: 0x1021, HWID: 0x218,
		BaseGUID: 0xb83fd20300d20a20, BaseMAC: 0xb83fd2d20a20, ImageVSD: "vsd"}
}

func build(t testing.TB, s Spec) []byte {
	t.Helper()
	b, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// What Build writes, Parse reads back field by field.
func TestBuildParseRoundTrip(t *testing.T) {
	for _, size := range []int{0, 0x20000, 0x100000} {
		s := testSpec()
		s.Size = size
		b := build(t, s)
		im, err := Parse(b)
		if err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		type got struct {
			V                  Version
			Rel                time.Time
			PSID, Orig, PN, D  string
			HW                 []uint32
			Dev                uint16
			GUID, MAC          uint64
			VSD                string
			Signed, MCC, Secur bool
		}
		want := got{s.Version, s.Released, s.PSID, s.PSID, s.PartNumber, s.Description, []uint32{0x218}, 0x1021, s.BaseGUID, s.BaseMAC, "vsd", true, true, false}
		have := got{im.Version, im.Released, im.PSID, im.OrigPSID, im.PartNumber, im.Description, im.HWIDs, im.PCIDeviceID, im.BaseGUID, im.BaseMAC, im.ImageVSD, im.Signed, im.MCCEnabled, im.SecureFW}
		if diff := cmp.Diff(want, have); diff != "" {
			t.Errorf("size %d: parsed image (-want +got):\n%s", size, diff)
		}
		if im.CheckSignature(b) != SignatureOK {
			t.Errorf("size %d: signature %v, want ok", size, im.CheckSignature(b))
		}
		if im.FormatDate() != "7.3.2024" {
			t.Errorf("FormatDate %q, want flint's 7.3.2024", im.FormatDate())
		}
	}
}

// Every signing choice gives the check the emulator makes of it; a byte
// changed in the signed part (with its CRCs made right again would be
// needed to pass Parse, so here: the main code) is caught by the CRC.
func TestSignatures(t *testing.T) {
	for sg, want := range map[Signing]SignatureCheck{SignEmulator: SignatureOK, SignNone: SignatureMissing, SignBadKey: SignatureBad, SignUnknownKey: SignatureUnknownKey} {
		s := testSpec()
		s.Signature = sg
		b := build(t, s)
		im, err := Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		if got := im.CheckSignature(b); got != want {
			t.Errorf("signing %d: check %v, want %v", sg, got, want)
		}
	}
}

// A file cut anywhere is refused, as cut short when the cut falls inside
// what the image describes; a changed byte in any checked part is refused.
func TestCutAndDamagedImagesRefused(t *testing.T) {
	b := build(t, testSpec())
	for n := 0; n < len(b); n += 0x200 {
		_, err := Parse(b[:n])
		if !errors.Is(err, ErrFormat) {
			t.Fatalf("cut at 0x%x: err %v, want a format error", n, err)
		}
	}
	var fe *FormatError
	if _, err := Parse(b[:0x9000]); !errors.As(err, &fe) || !fe.Truncated {
		t.Errorf("cut at 0x9000: %v, want an error that says the file is cut short", err)
	}
	for _, off := range []int{0x18, 0x500, 0x1010, 0x2004, 0x2020, 0x3030, 0x5000, len(b) - 0x1000 + 4, len(b) - 0x3000 + 2} {
		d := bytes.Clone(b)
		d[off] ^= 0x40
		if _, err := Parse(d); !errors.Is(err, ErrFormat) {
			t.Errorf("byte 0x%x changed: err %v, want a format error", off, err)
		}
	}
}

func TestVersion(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Version
		bad  bool
	}{{"28.39.1010", Version{28, 39, 1010}, false}, {" 22.1.2 ", Version{22, 1, 2}, false}, {"28.39", Version{}, true}, {"28.x.1", Version{}, true}, {"1.2.70000", Version{}, true}} {
		v, err := ParseVersion(c.in)
		if (err != nil) != c.bad || v != c.want {
			t.Errorf("ParseVersion(%q) = %v, %v; want %v (error %v)", c.in, v, err, c.want, c.bad)
		}
	}
	if (Version{28, 40, 1}).Compare(Version{28, 39, 9999}) != 1 || (Version{28, 39, 1010}).String() != "28.39.1010" || (Version{1, 2, 3}).String() != "1.2.0003" {
		t.Error("Compare/String")
	}
}

// mstflint reads what Build writes and agrees with Parse (conformance; the
// cli package compares whole query outputs).
func TestMstflintReadsBuiltImages(t *testing.T) {
	if _, err := exec.LookPath("mstflint"); err != nil {
		t.Skip("*** SKIPPING: mstflint is not installed (apt-get install -y mstflint)")
	}
	path := filepath.Join(t.TempDir(), "img.bin")
	if err := os.WriteFile(path, build(t, testSpec()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("mstflint", "-i", path, "v").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "FW image verification succeeded") {
		t.Fatalf("mstflint verify: %v\n%s", err, out)
	}
}
