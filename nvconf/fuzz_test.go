package nvconf_test

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cxray/cxray/nvconf"
	"github.com/cxray/cxray/nvconf/rawfile"
)

// FuzzParseFile: any text as a backup file, in either format, parses or is
// refused with a FileError; what parses writes back and parses to the
// same TLVs.
func FuzzParseFile(f *testing.F) {
	hc := codec(f)
	db := load(f)
	f.Add(mstconfigBackup)
	f.Add("CXRAY_NV_BACKUP 1\n# c\ntlv 0x00000080 nv_global_pci_conf version=1 writer=ICMD_mlxconfig length=12 host=2\ndata 0x80000000 0x00080000 0x0\n")
	f.Add("MLNX_RAW_TLV_FILE\n% x\n0x00090004 0x01010012 0 010\n")
	f.Add("MLNX_RAW_TLV_FILE\n% TLV Type: 0x01010012, Writer ID: ICMD_mlxconfig(0x09), Writer Host ID: 0x00\n0x00090004 0x01010012 0x00000000 0x00000004 \n")
	f.Add("CXRAY_NV_BACKUP 1\ntlv 0xffffffff\ndata\n")
	f.Fuzz(func(t *testing.T, text string) {
		tlvs, err := nvconf.ParseFile(text, hc, db)
		if err != nil {
			return
		}
		var out []byte
		if rawfile.IsRaw(text) {
			if out, err = rawfile.Write(tlvs, hc); err != nil {
				t.Fatalf("parsed but does not write: %v", err)
			}
		} else {
			out = nvconf.WriteBackup(tlvs, db, hc, nvconf.BackupInfo{})
		}
		again, err := nvconf.ParseFile(string(out), hc, db)
		if err != nil {
			t.Fatalf("written file does not parse: %v\n%s", err, out)
		}
		if len(again) != len(tlvs) {
			t.Fatalf("%d TLVs became %d", len(tlvs), len(again))
		}
		for i := range tlvs {
			a, b := tlvs[i], again[i]
			if !a.Equal(b) || a.Header.WriterID != b.Header.WriterID {
				t.Fatalf("TLV %d changed: %+v -> %+v\n%s", i, a.Header, b.Header, out)
			}
		}
		if !rawfile.IsRaw(text) || len(text) > 2048 {
			return
		}
		// A raw file that reads is whole lines; any cut of it is refused,
		// or (at the end of a line) reads as the first TLVs of the file.
		if !strings.HasSuffix(text, "\n") {
			t.Fatalf("a raw file without its final newline was read: %q", text)
		}
		for i := range len(text) {
			cut, err := nvconf.ParseFile(text[:i], hc, db)
			if err != nil {
				var fe *nvconf.FileError
				if !errors.As(err, &fe) {
					t.Fatalf("cut at %d: %T %v, want a FileError", i, err, err)
				}
				continue
			}
			if text[i-1] != '\n' || len(cut) > len(tlvs) {
				t.Fatalf("cut at %d (%q) read as %d TLVs", i, text[:i], len(cut))
			}
			for j := range cut {
				if !cut[j].Equal(tlvs[j]) {
					t.Fatalf("cut at %d: TLV %d reads %+v, the whole file %+v", i, j, cut[j].Header, tlvs[j].Header)
				}
			}
		}
	})
}

// FuzzBackupOrigin: the model and PSID a backup is written with read back
// as written (on one line, trimmed), whatever they hold, and they never
// change the TLVs the file carries.
func FuzzBackupOrigin(f *testing.F) {
	hc := codec(f)
	db := load(f)
	f.Add("ConnectX-7", "MT_0000000838")
	f.Add("ConnectX-6 Dx\n# psid: FAKE", " MT_1 \r\n")
	f.Add("", "")
	f.Fuzz(func(t *testing.T, model, psid string) {
		if !utf8.ValidString(model) || !utf8.ValidString(psid) {
			return
		}
		tlvs := []nvconf.RawTLV{{Header: nvconf.Header{Type: 0x80}, Data: make([]byte, 12)}}
		text := string(nvconf.WriteBackup(tlvs, db, hc, nvconf.BackupInfo{Model: model, PSID: psid}))
		b, err := nvconf.ReadBackupFile(text, hc, db)
		if err != nil {
			t.Fatalf("a backup written with model %q psid %q does not read: %v\n%s", model, psid, err, text)
		}
		clean := func(s string) string {
			return strings.TrimSpace(strings.NewReplacer("\n", " ", "\r", " ").Replace(s))
		}
		if b.Model != clean(model) || b.PSID != clean(psid) {
			t.Fatalf("origin %q %q read back as %q %q\n%s", model, psid, b.Model, b.PSID, text)
		}
		if len(b.TLVs) != 1 || !b.TLVs[0].Equal(tlvs[0]) {
			t.Fatalf("the TLVs changed: %+v", b.TLVs)
		}
	})
}
