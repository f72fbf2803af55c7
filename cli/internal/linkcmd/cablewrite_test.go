package linkcmd

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/cli/internal/cmdutil/cmdutiltest"
)

// cableByte reads one byte of the lower page through --cable --read.
func cableByte(t *testing.T, a *cmdutiltest.App, dev, port, off string) string {
	t.Helper()
	a.Output = "json"
	defer func() { a.Output = "table" }()
	if err := linkRun(a, "-d", dev, "--port", port, "--cable", "--read", "--offset", off, "--length", "1"); err != nil {
		t.Fatalf("read: %v", err)
	}
	var d struct {
		Bytes []string `json:"bytes"`
	}
	cmdutiltest.JSON(t, a.Out.String(), &d)
	return d.Bytes[0]
}

// --cable --write: a dry run writes nothing; with --yes the byte is
// written, read back and kept with an undo record that --undo replays; a
// read-only byte or bit, bad bytes and flags that do not go together are
// exit 2 and write nothing. Table and JSON give the same exit codes.
func TestCableWrite(t *testing.T) {
	a := cmdutiltest.New(t, "table")
	dev := cmdutiltest.Manual(t, "    modules:\n      - module: 1\n        type: qsfp28-100g-sr4\n")
	for _, out := range []string{"table", "json"} {
		a.Output = out
		if err := linkRun(a, "-d", dev, "--port", "2", "--cable", "--write", "0x05", "--offset", "86", "--dry-run"); err != nil {
			t.Fatalf("%s dry run: %v", out, err)
		}
		if got := cableByte(t, a, dev, "2", "86"); got != "0x00" {
			t.Errorf("%s: a dry run wrote byte 86: %s", out, got)
		}
	}
	a.Output = "json"
	if err := linkRun(a, "-d", dev, "--port", "2", "--cable", "--write", "0x05", "--offset", "86", "--yes"); err != nil {
		t.Fatalf("write: %v\n%s", err, a.Err)
	}
	var d changeJSON
	cmdutiltest.JSON(t, a.Out.String(), &d)
	want := []string{"MCIA module=1 i2c_device_address=80 page_number=0 bank_number=0 device_address=86 size=1 dword[0]=0x05000000"}
	if diff := cmp.Diff(want, d.Verified); diff != "" || !d.Written || !strings.Contains(d.Change.UndoFlags, "--cable --write 0x00") {
		t.Errorf("write: verified (-want +got):\n%s written %v undo %q", diff, d.Written, d.Change.UndoFlags)
	}
	if got := cableByte(t, a, dev, "2", "86"); got != "0x05" {
		t.Errorf("byte 86 after the write: %s, want 0x05", got)
	}
	for _, c := range []struct {
		args  []string
		words string
	}{
		{[]string{"--port", "2", "--cable", "--write", "0x01", "--offset", "22", "--yes"}, "not a byte SFF-8636 defines as host-writable"},
		{[]string{"--port", "2", "--cable", "--write", "0xf5", "--offset", "86", "--yes"}, "bits 0xf0 are read-only"},
		{[]string{"--port", "1", "--cable", "--write", "0x10", "--offset", "27", "--yes"}, "not a byte CMIS defines"},
		{[]string{"--port", "2", "--cable", "--write", "0x100", "--offset", "86"}, "is not a byte"},
		{[]string{"--port", "2", "--cable", "--write", "1,,2", "--offset", "86"}, "is not a byte"},
		{[]string{"--port", "2", "--cable", "--write", "1"}, "needs --offset"},
		{[]string{"--port", "2", "--cable", "--write", "1", "--offset", "86", "--read"}, "leave out --dump, --read and --length"},
		{[]string{"--port", "2", "--cable", "--read", "--dry-run"}, "only read"},
	} {
		for _, out := range []string{"table", "json"} {
			a.Output = out
			err := linkRun(a, append([]string{"-d", dev}, c.args...)...)
			if cmdutiltest.Code(err) != cmdutil.ExitUsage || !strings.Contains(err.Error(), c.words) {
				t.Errorf("%s %v: %v; want exit 2 saying %q", out, c.args, err, c.words)
			}
		}
	}
	if got := cableByte(t, a, dev, "2", "86"); got != "0x05" {
		t.Errorf("byte 86 after refused writes: %s, want 0x05", got)
	}
	if got := cableByte(t, a, dev, "2", "22"); got == "0x01" {
		t.Errorf("a refused write reached byte 22")
	}
	a.Output = "table"
	if err := linkRun(a, "-d", dev, "--port", "2", "--undo", "--yes"); err != nil {
		t.Fatalf("undo: %v\n%s", err, a.Err)
	}
	if !strings.Contains(a.Out.String(), "the module's bytes get the values they had") {
		t.Errorf("undo said:\n%s", a.Out)
	}
	if got := cableByte(t, a, dev, "2", "86"); got != "0x00" {
		t.Errorf("byte 86 after undo: %s, want 0x00", got)
	}
}

// An SFP module: --page 1 reads and writes its A2h map (I2C 0x51), as
// mlxlink numbers it; --page 2 is exit 2.
func TestCableSFP(t *testing.T) {
	a := cmdutiltest.New(t, "json")
	dev := cmdutiltest.Manual(t, "    modules:\n      - module: 1\n        type: sfp28-25g-lr\n")
	read := func() (i2c int, b string) {
		t.Helper()
		a.Output = "json"
		if err := linkRun(a, "-d", dev, "--port", "2", "--cable", "--read", "--page", "1", "--offset", "110", "--length", "1"); err != nil {
			t.Fatalf("read: %v", err)
		}
		var d struct {
			I2C   int      `json:"i2c"`
			Bytes []string `json:"bytes"`
		}
		cmdutiltest.JSON(t, a.Out.String(), &d)
		return d.I2C, d.Bytes[0]
	}
	i2c, before := read()
	if i2c != 0x51 {
		t.Fatalf("--page 1 of an SFP read I2C 0x%02x, want 0x51 (A2h)", i2c)
	}
	var old uint64
	fmt.Sscanf(before, "0x%x", &old)
	if err := linkRun(a, "-d", dev, "--port", "2", "--cable", "--write", fmt.Sprintf("0x%02x", old|0x40), "--page", "1", "--offset", "110", "--yes"); err != nil {
		t.Fatalf("write: %v\n%s", err, a.Err)
	}
	if _, after := read(); after != fmt.Sprintf("0x%02x", old|0x40) {
		t.Errorf("A2h byte 110 after soft TX disable: %s (was %s)", after, before)
	}
	for _, out := range []string{"table", "json"} {
		a.Output = out
		err := linkRun(a, "-d", dev, "--port", "2", "--cable", "--read", "--page", "2", "--offset", "0", "--length", "1")
		if cmdutiltest.Code(err) != cmdutil.ExitUsage || !strings.Contains(err.Error(), "page 1 (A2h") {
			t.Errorf("%s --page 2 of an SFP: %v; want exit 2", out, err)
		}
	}
	a.Output = "table"
	if err := linkRun(a, "-d", dev, "--port", "2", "--cable", "--read", "--page", "1", "--offset", "96", "--length", "16"); err != nil || !strings.Contains(a.Out.String(), "I2C 0x51") {
		t.Errorf("table read of A2h: %v\n%s", err, a.Out)
	}
}
