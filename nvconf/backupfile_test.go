package nvconf_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/cxray/cxray/nvconf"
	"github.com/cxray/cxray/nvconf/rawfile"
	"github.com/cxray/cxray/nvconf/tlv"
	prmbuiltin "github.com/cxray/cxray/prm/builtin"
)

func codec(t testing.TB) *nvconf.HeaderCodec {
	t.Helper()
	pdb, err := prmbuiltin.Load()
	if err != nil {
		t.Fatal(err)
	}
	hc, err := tlv.NewHeaderCodec(pdb, "MNVDA")
	if err != nil {
		t.Fatal(err)
	}
	return hc
}

// A raw file in the layout 'mstconfig backup' writes (its writer names have
// a space where the PRM has an underscore; comments are not parsed).
const mstconfigBackup = `MLNX_RAW_TLV_FILE
% TLV Type: 0x00000080, Writer ID: ICMD MLXCONFIG(0x09), Writer Host ID: 0x00
0x0009000c 0x00000080 0x00000000 0xbf000000 0xa0020010 0x02c3f045 
% TLV Type: 0x01010012, Writer ID: ICMD MLXCONFIG(0x09), Writer Host ID: 0x00
0x00090004 0x01010012 0x00000000 0x00000004 
`

func TestRawFile(t *testing.T) {
	hc := codec(t)
	db := load(t)
	tlvs, err := rawfile.Parse(mstconfigBackup, hc)
	if err != nil {
		t.Fatal(err)
	}
	if len(tlvs) != 2 || tlvs[0].Header.Type != 0x80 || tlvs[0].Header.WriterID != 9 || len(tlvs[0].Data) != 12 || tlvs[1].Header.Type != 0x01010012 {
		t.Fatalf("%+v", tlvs)
	}
	in, _ := db.InstanceOf(tlvs[0].Header.Type)
	lines := strings.Join(nvconf.DecodeLines(in, tlvs[0].Data), "\n")
	for _, want := range []string{"SRIOV_EN = True(1)", "NUM_OF_VFS = 16", "NUM_OF_PF = 2"} {
		if !strings.Contains(lines, want) {
			t.Errorf("decoded lines lack %q:\n%s", want, lines)
		}
	}
	out, err := rawfile.Write(tlvs, hc)
	if err != nil {
		t.Fatal(err)
	}
	// Same signature and data lines as mstconfig's; comments name writers
	// as the PRM does.
	var a, b []string
	for _, l := range strings.Split(mstconfigBackup, "\n") {
		if !strings.HasPrefix(l, "%") {
			a = append(a, l)
		}
	}
	for _, l := range strings.Split(string(out), "\n") {
		if !strings.HasPrefix(l, "%") {
			b = append(b, l)
		}
	}
	if strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Errorf("raw file differs:\n%s\nwant\n%s", out, mstconfigBackup)
	}
	// The readable format round-trips to the same TLVs.
	txt := nvconf.WriteBackup(tlvs, db, hc, nvconf.BackupInfo{Lines: []string{"device: test"}})
	again, err := nvconf.ParseFile(string(txt), hc, db)
	if err != nil {
		t.Fatalf("%v\n%s", err, txt)
	}
	if d := rawfile.Compare(tlvs, again); !d.Empty() || d.Same != 2 || again[0].Header.WriterID != 9 {
		t.Errorf("round trip: %+v\n%s", d, txt)
	}
}

func TestFileErrors(t *testing.T) {
	hc := codec(t)
	db := load(t)
	cases := map[string]string{
		"MLNX_RAW_TLV_FILE\n0x0009000c 0x00000080 0x00000000 0xbf000000\n": "line 2: TLV size mismatch",
		"MLNX_RAW_TLV_FILE\n0x0009 zz 0x0\n":                               "line 2: \"0x0009\" is not a dword as raw TLV files write it",
		"MLNX_RAW_TLV_FILE\n0x00090000 0x80\n":                             "3 header dwords",
		"MLNX_RAW_TLV_FILE\n0x00090000 0x00000080 0x00000000 0x0000\n":     "\"0x0000\" is not a dword",
		"MLNX_RAW_TLV_FILE\n0x00090004 0x01010012 0x00000000 00000004\n":   "\"00000004\" is not a dword",
		"MLNX_RAW_TLV_FILE\n0x00090004 0x01010012 0x00000000 0x00000004":   "line 2: the last line has no newline: the file was cut short",
		"MLNX_RAW_TLV_FILE": "line 1: the last line has no newline",
		"MLNX_RAW_TLV_FILE\n% TLV Type: 0x01010012, Writer ID: x\n":                                                        "line 2: the file ends after the comment announcing TLV 0x01010012",
		"MLNX_RAW_TLV_FILE\n% TLV Type: 0x00000080\n0x00090004 0x01010012 0x00000000 0x00000004\n":                         "line 3: the data line holds TLV 0x01010012, but line 2 announces 0x00000080",
		"MLNX_RAW_TLV_FILE\n% TLV Type: 0x00000080\n% TLV Type: 0x01010012\n0x00090004 0x01010012 0x00000000 0x00000004\n": "line 3: the TLV 0x00000080 announced on line 2 has no data line",
		"MLNX_RAW_TLV_FILE\n0x00090004 0x00ffffff 0x00000000 0x00000004\n":                                                 "line 2: TLV type 0x00ffffff is not in the parameter database",
		"CXRAY_NV_BACKUP 1\ntlv 0x00000080 nv_vpi_link_type\ndata 0x0\n":                                                   "is nv_global_pci_conf, but the line names nv_vpi_link_type",
		"CXRAY_NV_BACKUP 1\ndata 0x0\n":                                                                                    "line 2: data before any tlv line",
		"CXRAY_NV_BACKUP 1\ntlv 0x00000080\n":                                                                              "has no data line",
		"CXRAY_NV_BACKUP 2\n":                                                                                              "no end line: it was cut short",
		"CXRAY_NV_BACKUP 3\n":                                                                                              "this cxray reads versions 1 and 2",
		"CXRAY_NV_BACKUP 1\ntlv 0x00000080 writer=NOBODY\ndata 0\n":                                                        "writer=NOBODY",
		"CXRAY_NV_BACKUP 1\ntlv 0x00000080 length=16\ndata 0x1\n":                                                          "length=16 but the data line has 4 bytes",
		"something else\n": "not an NV backup",
		"":                 "not an NV backup: it is empty",
		"CXRAY_NV_BACKUP 1\ntlv 0x80\ndata " + strings.Repeat("0x0 ", 65) + "\n":        "at most 256 bytes",
		"MLNX_RAW_TLV_FILE\n" + strings.Repeat("0x00000000 ", 70) + "\n":                "at most 268 bytes",
		"CXRAY_NV_BACKUP 1\ntlv 0x00000080 version=99\ndata 0x0\n":                      "version=99",
		"CXRAY_NV_BACKUP 1\nfoo\n":                                                      "unknown line",
		"CXRAY_NV_BACKUP 1\ntlv 0x00000080\ndata 0x1\ndata 0x2\n":                       "a second data line",
		"CXRAY_NV_BACKUP 1\ntlv 0x00000080 version=1 bogus=3\ndata 0x1\n":               "unknown key",
		"CXRAY_NV_BACKUP 1\ntlv 0x00000080\ndata 0x100000000\n":                         "not a 32-bit number",
		"MLNX_RAW_TLV_FILE\n0x00000004 0x01010012 0x00000000 0x00000004 0x00000000\n":   "header says 4 data bytes, the line carries 8",
		"MLNX_RAW_TLV_FILE\n0x0000000c 0x00000080 0x00000000 0xbf000000 0xa0020010\n":   "header says 12 data bytes, the line carries 8",
		"CXRAY_NV_BACKUP 1\ntlv 0x00000080 nv_global_pci_conf\ndata 0x1 0x2 0x3\ntlv\n": "needs a type dword",
	}
	for in, want := range cases {
		_, err := nvconf.ParseFile(in, hc, db)
		var fe *nvconf.FileError
		if err == nil || !errors.As(err, &fe) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}

// rawBoundaries are the offsets of a raw file where a cut leaves a whole
// shorter file: after each TLV's data line, with the number of TLVs
// before it.
func rawBoundaries(text string) map[int]int {
	out := map[int]int{}
	off, n := 0, 0
	for i, l := range strings.SplitAfter(text, "\n") {
		off += len(l)
		if t := strings.TrimSpace(l); i > 0 && t != "" && t[0] != '%' {
			n++
			out[off] = n
		}
	}
	return out
}

// Every cut of a raw backup is refused as a damaged file, but one: a cut
// of an mstconfig backup exactly at the end of a TLV's line. mstconfig's
// format holds no count, so that is the complete backup of fewer TLVs,
// and must read as exactly those TLVs (and as unchecked). cxray's raw
// files end with a count and checksum in a comment, so every cut of them
// is refused.
func TestRawFileCutAtEveryByte(t *testing.T) {
	hc := codec(t)
	db := load(t)
	capture, err := os.ReadFile("testdata/mstconfig-backup-pending.txt")
	if err != nil {
		t.Fatal(err)
	}
	whole, err := nvconf.ParseFile(string(capture), hc, db)
	if err != nil {
		t.Fatal(err)
	}
	ours, err := rawfile.Write(whole, hc)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		text    string
		checked bool
	}{{"mstconfig", string(capture), false}, {"cxray", string(ours), true}} {
		bf, err := nvconf.ReadBackupFile(c.text, hc, db)
		if err != nil || len(bf.TLVs) < 3 || bf.Unchecked == c.checked {
			t.Fatalf("%s: %+v, %v", c.name, bf, err)
		}
		full := bf.TLVs
		bounds := rawBoundaries(c.text)
		delete(bounds, len(c.text)) // the whole file
		if c.checked {
			bounds = nil
		}
		accepted := 0
		for i := 0; i < len(c.text); i++ {
			got, err := nvconf.ReadBackupFile(c.text[:i], hc, db)
			n, boundary := bounds[i]
			if !boundary {
				var fe *nvconf.FileError
				if err == nil {
					t.Errorf("%s cut at byte %d of %d (%q...) read as %d TLVs; want it refused", c.name, i, len(c.text), c.text[max(0, i-12):i], len(got.TLVs))
				} else if !errors.As(err, &fe) || fe.Kind == "" || !strings.Contains(err.Error(), "nothing was written") {
					t.Errorf("%s cut at byte %d: %v; want a FileError saying why and that nothing was written", c.name, i, err)
				}
				continue
			}
			accepted++
			if err != nil {
				t.Errorf("%s cut at the TLV boundary %d: %v", c.name, i, err)
				continue
			}
			if d := cmp.Diff(full[:n], got.TLVs, cmpopts.EquateEmpty()); d != "" || !got.Unchecked {
				t.Errorf("%s cut at the TLV boundary %d (unchecked %v): TLVs differ from the first %d (-want +got):\n%s", c.name, i, got.Unchecked, n, d)
			}
		}
		if want := len(bounds); accepted != want {
			t.Errorf("%s: %d boundary cuts read, want %d", c.name, accepted, want)
		}
	}
}

// cxray's raw file is mstconfig's format with two comments: the marker
// after the signature and the end line. Edited, joined or recounted, it
// is refused; an empty one reads as no TLVs, checked.
func TestRawFileEndLine(t *testing.T) {
	hc := codec(t)
	db := load(t)
	tlvs, err := rawfile.Parse(mstconfigBackup, hc)
	if err != nil {
		t.Fatal(err)
	}
	b, err := rawfile.Write(tlvs, hc)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if !strings.HasPrefix(lines[1], "% cxray raw TLV file") || !strings.HasPrefix(lines[len(lines)-1], "% end tlvs=2 sha256=") {
		t.Fatalf("no marker or end line:\n%s", text)
	}
	cases := map[string]struct{ text, kind, want string }{
		"edited":    {strings.Replace(text, "0xa0020010", "0xa0020011", 1), nvconf.FileCorrupt, "do not match the file's checksum"},
		"joined":    {text + text, nvconf.FileCorrupt, "lines after the end line"},
		"recounted": {strings.Replace(text, "tlvs=2", "tlvs=3", 1), nvconf.FileTruncated, "counts 3 TLVs; the file holds 2"},
		"bad end":   {strings.Replace(text, "\n% end tlvs=2 sha256=", "\n% end tlvs=2 sha256=zz", 1), nvconf.FileCorrupt, "not a checksum"},
		"no end":    {strings.Join(lines[:len(lines)-1], "\n") + "\n", nvconf.FileTruncated, "has no end line"},
	}
	for name, c := range cases {
		_, err := nvconf.ReadBackupFile(c.text, hc, db)
		var fe *nvconf.FileError
		if !errors.As(err, &fe) || fe.Kind != c.kind || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %s %q", name, err, c.kind, c.want)
		}
	}
	empty, err := rawfile.Write(nil, hc)
	if err != nil {
		t.Fatal(err)
	}
	if bf, err := nvconf.ReadBackupFile(string(empty), hc, db); err != nil || len(bf.TLVs) != 0 || bf.Unchecked {
		t.Errorf("empty cxray raw file: %+v %v", bf, err)
	}
	if _, err := nvconf.ReadBackupFile(nvconf.RawFileSignature+"\n", hc, db); err == nil || !strings.Contains(err.Error(), "holds no TLV") {
		t.Errorf("a raw file of its signature only: %v", err)
	}
}
