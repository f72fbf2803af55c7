package nvconf_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/cxray/cxray/nvconf"
	"github.com/cxray/cxray/nvconf/rawfile"
)

func sampleTLVs(t *testing.T) []nvconf.RawTLV {
	tlvs, err := rawfile.Parse(mstconfigBackup, codec(t))
	if err != nil {
		t.Fatal(err)
	}
	return append(tlvs, nvconf.RawTLV{Header: nvconf.Header{Type: 0x0000010a, WriterID: 9}, Data: []byte{0, 0, 0x10, 0, 0, 0x0e, 0, 0}})
}

func fileErr(t *testing.T, err error) *nvconf.FileError {
	t.Helper()
	var fe *nvconf.FileError
	if !errors.As(err, &fe) {
		t.Fatalf("want a FileError, got %T %v", err, err)
	}
	return fe
}

// A backup cxray writes reads back whole; every shorter cut of it is
// refused (never read as a smaller backup), and so are edits and joins.
func TestBackupSelfChecking(t *testing.T) {
	hc, db := codec(t), load(t)
	tlvs := sampleTLVs(t)
	text := string(nvconf.WriteBackup(tlvs, db, hc, nvconf.BackupInfo{Lines: []string{"device: test"}}))
	b, err := nvconf.ReadBackupFile(text, hc, db)
	if err != nil || b.Unchecked || len(b.TLVs) != 3 || b.Format != "cxray backup" {
		t.Fatalf("whole backup: %+v %v", b, err)
	}
	if !strings.HasSuffix(text, "\n") || !strings.Contains(text, "\nend tlvs=3 sha256=") {
		t.Fatalf("no end line:\n%s", text)
	}
	for n := 0; n < len(text)-1; n++ {
		cut := text[:n]
		got, err := nvconf.ReadBackupFile(cut, hc, db)
		if err == nil {
			t.Fatalf("a backup cut to %d of %d bytes was read as %d TLVs", n, len(text), len(got.TLVs))
		}
		fileErr(t, err)
	}
	// The cut of issue 13: header and comments only.
	_, err = nvconf.ReadBackupFile(text[:strings.Index(text, "\ntlv ")], hc, db)
	if fe := fileErr(t, err); fe.Kind != nvconf.FileTruncated || !strings.Contains(err.Error(), "cut short") || !strings.Contains(err.Error(), "nothing was written") {
		t.Errorf("header only: %v", err)
	}
	// Editing a data dword breaks the checksum; editing comments does not.
	edited := strings.Replace(text, "data 0xbf000000 0xa0020010", "data 0xbf000000 0xa0020011", 1)
	if edited == text {
		t.Fatal("the edit did not apply")
	}
	_, err = nvconf.ReadBackupFile(edited, hc, db)
	if fe := fileErr(t, err); fe.Kind != nvconf.FileCorrupt || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("edited data: %v", err)
	}
	if _, err := nvconf.ReadBackupFile(strings.Replace(text, "# device: test", "# device: renamed by hand", 1), hc, db); err != nil {
		t.Errorf("edited comment: %v", err)
	}
	// Two backups joined.
	_, err = nvconf.ReadBackupFile(text+text, hc, db)
	if fe := fileErr(t, err); fe.Kind != nvconf.FileCorrupt {
		t.Errorf("joined: %v", err)
	}
	// A TLV block dropped together with... nothing else: the count says so.
	i, j := strings.Index(text, "\ntlv 0x01010012"), strings.Index(text, "\ntlv 0x0000010a")
	_, err = nvconf.ReadBackupFile(text[:i]+text[j:], hc, db)
	if fe := fileErr(t, err); fe.Kind != nvconf.FileTruncated || !strings.Contains(err.Error(), "counts 3 TLVs; the file holds 2") {
		t.Errorf("dropped block: %v", err)
	}
}

// mstconfig's format (and cxray's version 1) carry no checksum: read, and
// flagged so the caller asks before writing.
func TestBackupUnchecked(t *testing.T) {
	hc, db := codec(t), load(t)
	raw, err := os.ReadFile("testdata/mstconfig-backup-pending.txt")
	if err != nil {
		t.Fatal(err)
	}
	b, err := nvconf.ReadBackupFile(string(raw), hc, db)
	if err != nil || !b.Unchecked || b.Format != "mstflint raw TLV file" || len(b.TLVs) == 0 {
		t.Fatalf("mstconfig backup: %+v %v", b, err)
	}
	v1 := "CXRAY_NV_BACKUP 1\ntlv 0x00000080 nv_global_pci_conf\ndata 0x00000000 0xbf000000 0xa0020010\n"
	b, err = nvconf.ReadBackupFile(v1, hc, db)
	if err != nil || !b.Unchecked || len(b.TLVs) != 1 {
		t.Errorf("version 1: %+v %v", b, err)
	}
	// A raw file cut inside a line is refused; cut at a line end it cannot
	// be told from a smaller file, which is why it is unchecked.
	cut := string(raw)[:len(raw)-10]
	_, err = nvconf.ReadBackupFile(cut, hc, db)
	if fe := fileErr(t, err); fe.Kind != nvconf.FileTruncated {
		t.Errorf("cut raw file: %v", err)
	}
}

func TestForeignFiles(t *testing.T) {
	hc, db := codec(t), load(t)
	q, err := os.ReadFile("testdata/mstconfig-q.txt")
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		`{"format":"cxray-snapshot"}`: "it is JSON",
		string(q):                     "an mlxconfig/mstconfig query output",
		"hello\n":                     `its first line is "hello"`,
		"":                            "it is empty",
	} {
		_, err := nvconf.ReadBackupFile(in, hc, db)
		if fe := fileErr(t, err); fe.Kind != nvconf.FileForeign || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "nothing was written") {
			t.Errorf("%.30q: %v", in, err)
		}
	}
}
