package hexdump

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/builtin"
)

func TestParse(t *testing.T) {
	want := []byte{0x00, 0x00, 0x02, 0x18, 0xde, 0xad, 0xbe, 0xef}
	cases := map[string]string{
		"dwords":             "0x00000218 0xdeadbeef",
		"short dword":        "0x218, 0xDEADBEEF",
		"runs":               "00000218deadbeef",
		"bytes with 0x":      "0x00, 0x00, 0x02, 0x18,\n0xde,0xad,0xbe,0xef",
		"comments":           "# MGIR\n00000218 # first\n\ndeadbeef\n",
		"hexdump -C":         "00000000  00 00 02 18 de ad be ef                           |........|\n00000008\n",
		"xxd":                "00000000: 0000 0218 dead beef                      ........\n",
		"mstreg rows":        "0x00000000 | 0x00000218\n0x00000004 | 0xdeadbeef\n",
		"underscores":        "0x0000_0218 0xdead_beef",
		"xxd -i":             "unsigned char x[] = {\n  0x00, 0x00, 0x02, 0x18, 0xde, 0xad, 0xbe, 0xef\n};\nunsigned int x_len = 8;\n",
		"prm encode":         "PAOS, 8 bytes:\n  0x00: 0x00000218 0xdeadbeef\n",
		"od -A x -t x1":      "000000 00 00 02 18 de ad be ef\n000008\n",
		"od -t x1":           "0000000 00 00 02 18 de ad be ef\n0000010\n",
		"od -t x1z":          "000000 00 00 02 18 de ad be ef  >....>#.<\n000008\n",
		"ethtool":            "Offset\t\tValues\n------\t\t------\n0x0000:\t\t00 00 02 18 de ad be ef \n",
		"old ethtool":        "Offset\t\tValues\n------\t\t------\n0x0000\t\t00 00 02 18 de ad be ef \n",
		"cxray --id":         "ADDRESS     DATA\n0x00000000  0x00000218\n0x00000004  0xdeadbeef\n",
		"rdma -j -r":         `[{"ifindex":2,"ifname":"mlx5_0","lqpn":1,"data":[0,0,2,24,222,173,190,239]}]`,
		"cxray json":         `{"device":"emu","id":36874,"size_bytes":8,"dwords":["0x00000218","0xdeadbeef"]}`,
		"prm encode -o json": `{"name":"X","hex":"00000218deadbeef","dwords":["0x00000218","0xdeadbeef"]}`,
	}
	for name, in := range cases {
		got, err := Parse(in)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: % x, want % x", name, got, want)
		}
	}
	// The first tokens of a lone dword list stay dwords, as before.
	for _, in := range []string{"0x0 0x218 0xdeadbeef", "0 0x218 0xdeadbeef"} {
		got, err := Parse(in)
		if err != nil || !bytes.Equal(got, append([]byte{0, 0, 0, 0}, want...)) {
			t.Errorf("%q: % x, %v", in, got, err)
		}
	}
}

// The ASCII column of hexdump -C, xxd and od is never data, whatever it
// holds: spaces, '#', '|', hex-looking text.
func TestASCIIColumnIsNeverData(t *testing.T) {
	data := []byte("dead beef #12 |a")
	cases := map[string]string{
		"hexdump -C": "00000000  64 65 61 64 20 62 65 65  66 20 23 31 32 20 7c 61  |dead beef #12 |a|\n00000010\n",
		"xxd":        "00000000: 6465 6164 2062 6565 6620 2331 3220 7c61  dead beef #12 |a\n",
		"xxd -g1":    "00000000: 64 65 61 64 20 62 65 65 66 20 23 31 32 20 7c 61  dead beef #12 |a\n",
		"od":         "000000 64 65 61 64 20 62 65 65 66 20 23 31 32 20 7c 61  >dead beef #12 |a<\n000010\n",
	}
	for name, in := range cases {
		got, err := Parse(in)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !bytes.Equal(got, data) {
			t.Errorf("%s: % x, want % x", name, got, data)
		}
	}
	// A short last xxd line: the ASCII column is as long as its bytes,
	// after padding; here it looks like two more hex groups.
	got, err := Parse("00000000: 6162 6364 6566 6768 6162 6364 6566 6768  abcdefghabcdefgh\n00000010: 6163 6566                                acef\n")
	if err != nil || !bytes.Equal(got, []byte("abcdefghabcdefghacef")) {
		t.Errorf("short xxd line: %q, %v", got, err)
	}
}

// The real tools print what Read reads, whatever the bytes.
func TestRealTools(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	inputs := [][]byte{[]byte("dead beef #12 |a0x00 ff  "), make([]byte, 64)}
	for i := 0; i < 20; i++ {
		b := make([]byte, rng.Intn(300)+1)
		rng.Read(b)
		inputs = append(inputs, b)
	}
	// Repeated lines squeezed into "*".
	inputs = append(inputs, append(bytes.Repeat([]byte{0xab}, 80), 1, 2, 3))
	tools := [][]string{{"xxd"}, {"xxd", "-g1"}, {"xxd", "-c", "8"}, {"xxd", "-a"}, {"hexdump", "-C"}, {"od", "-A", "x", "-t", "x1z"}, {"od", "-t", "x1"}, {"od", "-A", "x", "-t", "x1"}}
	ran := 0
	for _, tool := range tools {
		if _, err := exec.LookPath(tool[0]); err != nil {
			t.Logf("%s is not installed; skipping its cases", tool[0])
			continue
		}
		for _, in := range inputs {
			cmd := exec.Command(tool[0], tool[1:]...)
			cmd.Stdin = bytes.NewReader(in)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%v: %v", tool, err)
			}
			got, err := Parse(string(out))
			if err != nil {
				t.Errorf("%v of % x: %v\n%s", tool, in, err, out)
				continue
			}
			if !bytes.Equal(got, in) {
				t.Errorf("%v: read % x\nwant % x\n%s", tool, got, in, out)
			}
			ran++
		}
	}
	if ran == 0 {
		t.Skip("none of xxd, hexdump, od is installed")
	}
}

func TestAddresses(t *testing.T) {
	// Out of order rows land at their addresses.
	d, err := Read("Address    | Data\n=======\n0x00000004 | 0x00000002\n0x00000000 | 0x00000001\n=======\n")
	if err != nil || !bytes.Equal(d.Bytes, []byte{0, 0, 0, 1, 0, 0, 0, 2}) || len(d.Notes) != 0 {
		t.Errorf("out of order: % x %v %v", d.Bytes, d.Notes, err)
	}
	// A dump that starts at 0x10 and skips 0x18: zero-filled, with notes.
	d, err = Read("00000010  01 02 03 04 05 06 07 08\n00000020  aa bb\n")
	if err != nil {
		t.Fatal(err)
	}
	want := make([]byte, 0x22)
	copy(want[0x10:], []byte{1, 2, 3, 4, 5, 6, 7, 8})
	want[0x20], want[0x21] = 0xaa, 0xbb
	if diff := cmp.Diff(want, d.Bytes); diff != "" {
		t.Errorf("gaps (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"bytes 0x0..0xf are not in the dump; taken as zero", "bytes 0x18..0x1f are not in the dump; taken as zero"}, d.Notes); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
	// A conflict is an error that names both lines.
	_, err = Read("0x00000000 | 0x00000001\n0x00000000 | 0x00000002\n")
	if err == nil || !strings.Contains(err.Error(), "line 2") || !strings.Contains(err.Error(), "on line 1") {
		t.Errorf("conflict: %v", err)
	}
	// The same row twice is no conflict.
	if b, err := Parse("0x00000000 | 0x00000001\n0x00000000 | 0x00000001\n"); err != nil || len(b) != 4 {
		t.Errorf("repeat: % x %v", b, err)
	}
	// hexdump -C's "*" repeats the line before up to the next offset.
	b, err := Parse("00000000  ab ab ab ab ab ab ab ab  ab ab ab ab ab ab ab ab  |................|\n*\n00000030  01                                                |.|\n00000031\n")
	if err != nil || !bytes.Equal(b, append(bytes.Repeat([]byte{0xab}, 0x30), 1)) {
		t.Errorf("*: % x %v", b, err)
	}
	// Lines without an address follow the one before.
	b, err = Parse("0x00000004 | 0x00000002\n0x00000003\n")
	if err != nil || !bytes.Equal(b, []byte{0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 3}) {
		t.Errorf("follow: % x %v", b, err)
	}
	// ethtool pages at 0x80 land at 0x80.
	d, err = Read("Offset\t\tValues\n------\t\t------\n0x0080:\t\t11 22 \n")
	if err != nil || len(d.Bytes) != 0x82 || d.Bytes[0x80] != 0x11 || len(d.Notes) != 1 {
		t.Errorf("ethtool page: %d bytes %v %v", len(d.Bytes), d.Notes, err)
	}
}

func TestErrors(t *testing.T) {
	cases := map[string]string{
		"abc":                                   "odd number of hex digits",
		"0x123456789":                           "not a whole number of dwords",
		"00 zz":                                 "not hex",
		"0x00000001\n  0xg1":                    "line 2",
		"a | b | c":                             "more than two columns",
		"0x0 | 0x1 | 0x2":                       "more than two columns",
		"-E- Index: port_type was not provided": "the tool's error",
		"0000000 0000 1802 0000 0000\n":         "16-bit words",
		"0000009 00 01\n":                       "octal",
		"00000000: 0000 0218  ....\n*\n":        "'*' line",
		"0xfffffff0 | 0x00000000":               "beyond",
		`{"a":1}`:                               "no register bytes",
		`[{"data":[1]},{"data":[2]}]`:           "2 dumps",
		`{"data":[256]}`:                        "byte value",
		"link mlx5_0/1 lqpn 1 0425525400>":      "rdma -j",
		"0x00000000 | 0x00000001\nField Name | Data\nx | 0x1": "a field table after bytes",
	}
	for in, want := range cases {
		_, err := Read(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", in, err, want)
		}
	}
	if _, err := Parse("Field Name | Data\nsensor_index | 0x0\n"); err == nil || !strings.Contains(err.Error(), "prm decode") {
		t.Errorf("a field table through Parse: %v", err)
	}
}

func TestBinary(t *testing.T) {
	raw := []byte{0x11, 0x07, 0x00, 0x41}
	d, err := ReadBytes(raw)
	if err != nil || d.Format != "binary" || !bytes.Equal(d.Bytes, raw) {
		t.Errorf("binary: %+v %v", d, err)
	}
	d, err = ReadBytes([]byte("0x11070041\n"))
	if err != nil || !bytes.Equal(d.Bytes, raw) {
		t.Errorf("text: %+v %v", d, err)
	}
}

func plan(t testing.TB, reg string) *prm.Plan {
	db, err := builtin.Load()
	if err != nil {
		t.Fatal(err)
	}
	r, err := db.Register(reg)
	if err != nil {
		t.Fatal(err)
	}
	p, err := db.RegisterPlan(r)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func readFile(t *testing.T, name string) string {
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// captures are the registers testdata/capture.sh read from the emulator
// with mstreg (mstflint 4.21) in both forms, and with cxray.
var captures = []struct{ file, reg string }{
	{"MGIR", "MGIR"}, {"MTMP", "MTMP"}, {"PAOS", "PAOS"}, {"PMLP", "PMLP"}, {"PGUID", "PGUID"},
	{"PDDR3", "PDDR"}, {"PDDR1", "PDDR"},
}

// mstreg's two --get forms of one register give the same bytes: the dword
// form directly, the named form through the layout (PDDR prints every
// union member, 477 rows whose names repeat).
func TestMstregCaptures(t *testing.T) {
	for _, c := range captures {
		id, err := Read(readFile(t, "mstreg-"+c.file+".id.txt"))
		if err != nil {
			t.Fatalf("%s dword form: %v", c.file, err)
		}
		if id.Format != "mstreg --get (Address | Data)" || len(id.Notes) != 0 || len(id.Bytes) != plan(t, c.reg).Bytes {
			t.Errorf("%s dword form: %q, notes %v, %d bytes", c.file, id.Format, id.Notes, len(id.Bytes))
		}
		named, err := Read(readFile(t, "mstreg-"+c.file+".named.txt"))
		if err != nil {
			t.Fatalf("%s named form: %v", c.file, err)
		}
		if named.Format != "mstreg --get (Field Name | Data)" || named.Bytes != nil {
			t.Errorf("%s named form: %q", c.file, named.Format)
		}
		got, err := named.Encode(plan(t, c.reg))
		if err != nil {
			t.Fatalf("%s named form: %v", c.file, err)
		}
		if diff := cmp.Diff(id.Bytes, got); diff != "" {
			t.Errorf("%s: named form through the layout differs from the dword form (-dwords +named):\n%s", c.file, diff)
		}
	}
}

// cxray's own outputs decode back to the bytes mstreg read.
func TestCxrayOutputsRoundTrip(t *testing.T) {
	for _, c := range captures {
		id, err := Read(readFile(t, "mstreg-"+c.file+".id.txt"))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, kind := range []string{"get.txt", "raw.txt", "json"} {
			text, err := os.ReadFile("testdata/cxray-" + c.file + "." + kind)
			if err != nil {
				continue
			}
			n++
			d, err := Read(string(text))
			if err != nil {
				t.Errorf("%s %s: %v", c.file, kind, err)
				continue
			}
			if d.Register != c.reg {
				t.Errorf("%s %s: register %q", c.file, kind, d.Register)
			}
			got, err := d.Encode(plan(t, c.reg))
			if err != nil {
				t.Errorf("%s %s: %v", c.file, kind, err)
				continue
			}
			if diff := cmp.Diff(id.Bytes, got); diff != "" {
				t.Errorf("%s %s (-mstreg +cxray):\n%s", c.file, kind, diff)
			}
		}
		if n == 0 && c.file != "PDDR1" {
			t.Errorf("%s: no cxray capture", c.file)
		}
	}
	// reg get --id, as a table and as JSON.
	want, _ := Read(readFile(t, "mstreg-MTMP.id.txt"))
	for _, f := range []string{"cxray-MTMP.id.txt", "cxray-MTMP.id.json"} {
		got, err := Parse(readFile(t, f))
		if err != nil || !bytes.Equal(got, want.Bytes) {
			t.Errorf("%s: % x, %v", f, got, err)
		}
	}
}

func TestEncodeErrors(t *testing.T) {
	p := plan(t, "MTMP")
	cases := map[string]string{
		"Field Name | Data\nsensr_index | 0x0\n":                              "did you mean sensor_index",
		"Field Name | Data\ntemperature | 0x0\ntemperature | 0x1\n":           "names temperature 2 times",
		"FIELD VALUE\nsensor_index  0x1ffff\n":                                "does not fit",
		"FIELD VALUE\nsensor_index  \"abc\"\n":                                "text",
		"FIELD VALUE\nsensor_name_hi  0x41\nsensor_name  \"BSIC\"\n":          "disagrees with sensor_name_hi on line 2",
		"FIELD VALUE\ntemperature  0x0196 (406) = 50.75 °C\nsensor_index  x1": "not a number",
	}
	for in, want := range cases {
		d, err := Read(in)
		if err == nil {
			_, err = d.Encode(p)
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
	// Signed values in parentheses are two's complement; units are dropped.
	d, err := Read("MTMP (0x900a) on emu\nFIELD VALUE\ntemperature  0xffe6 (-26) = -3.25 °C\n")
	if err != nil {
		t.Fatal(err)
	}
	b, err := d.Encode(p)
	if err != nil || b[6] != 0xff || b[7] != 0xe6 {
		t.Errorf("signed: % x %v", b, err)
	}
}

// Formatters of the dump forms, for the fuzz property below.
func formatXXD(b []byte) string {
	var sb strings.Builder
	for i := 0; i < len(b); i += 16 {
		line := b[i:min(i+16, len(b))]
		fmt.Fprintf(&sb, "%08x: ", i)
		hexPart := ""
		for j := 0; j < len(line); j += 2 {
			hexPart += fmt.Sprintf("%x ", line[j:min(j+2, len(line))])
		}
		fmt.Fprintf(&sb, "%-40s ", hexPart)
		for _, c := range line {
			if c < 0x20 || c >= 0x7f {
				c = '.'
			}
			sb.WriteByte(c)
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}

func formatHexdumpC(b []byte) string {
	var sb strings.Builder
	for i := 0; i < len(b); i += 16 {
		line := b[i:min(i+16, len(b))]
		fmt.Fprintf(&sb, "%08x  ", i)
		for j := 0; j < 16; j++ {
			if j < len(line) {
				fmt.Fprintf(&sb, "%02x ", line[j])
			} else {
				sb.WriteString("   ")
			}
			if j == 7 {
				sb.WriteByte(' ')
			}
		}
		sb.WriteString(" |")
		for _, c := range line {
			if c < 0x20 || c >= 0x7f {
				c = '.'
			}
			sb.WriteByte(c)
		}
		sb.WriteString("|\n")
	}
	fmt.Fprintf(&sb, "%08x\n", len(b))
	return sb.String()
}

func formatMstreg(b []byte) string {
	var sb strings.Builder
	sb.WriteString("Sending access register...\n\nAddress    | Data\n=======================\n")
	for i := 0; i+4 <= len(b); i += 4 {
		fmt.Fprintf(&sb, "0x%08x | 0x%02x%02x%02x%02x\n", i, b[i], b[i+1], b[i+2], b[i+3])
	}
	sb.WriteString("=======================\n")
	return sb.String()
}

func formatEthtool(b []byte) string {
	var sb strings.Builder
	sb.WriteString("Offset\t\tValues\n------\t\t------")
	for i, c := range b {
		if i%16 == 0 {
			fmt.Fprintf(&sb, "\n0x%04x:\t\t", i)
		}
		fmt.Fprintf(&sb, "%02x ", c)
	}
	sb.WriteByte('\n')
	return sb.String()
}

// What each formatter prints reads back as the same bytes, whatever they
// are (the ASCII columns hold every printable character).
func FuzzFormatsRoundTrip(f *testing.F) {
	f.Add([]byte("dead beef #12 |a"))
	f.Add([]byte{0x20, 0x20, 0x7c, 0x23, 0x30, 0x78})
	f.Add(bytes.Repeat([]byte{0x41}, 40))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 || len(b) > 4096 {
			return
		}
		dw := b[:len(b)&^3]
		for name, text := range map[string]string{"xxd": formatXXD(b), "hexdump -C": formatHexdumpC(b), "ethtool": formatEthtool(b), "mstreg": formatMstreg(dw)} {
			want := b
			if name == "mstreg" {
				want = dw
				if len(dw) == 0 {
					continue
				}
			}
			got, err := Parse(text)
			if err != nil {
				t.Fatalf("%s: %v\n%s", name, err, text)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s: % x, want % x\n%s", name, got, want, text)
			}
		}
	})
}

// Whatever the text, Read does not panic, its byte dumps stay bounded,
// and what it read prints back (as hexdump -C) to the same bytes.
func FuzzRead(f *testing.F) {
	for _, s := range []string{"0x00000218 0xdeadbeef", "00000000  00 00 02 18 |....|", "00000000: 0000 0218  ..", "0x0 | 0x1", "#x\n0x12,0x34",
		"Field Name | Data\nx | 0x1\n", "FIELD VALUE\na.b  up (1)\n", "*\n00000010\n", `{"data":[1,2]}`, "Offset\t\tValues\n0x0010:\t\t01 \n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := Read(s)
		if err != nil {
			return
		}
		if d.Fields != nil {
			return
		}
		if len(d.Bytes) > MaxBytes {
			t.Fatalf("%d bytes", len(d.Bytes))
		}
		// Gaps are ordered, disjoint, inside the dump, and zero-filled.
		at := 0
		for _, g := range d.Gaps {
			if g.From < at || g.To <= g.From || g.To > len(d.Bytes) {
				t.Fatalf("gaps %v of %d bytes", d.Gaps, len(d.Bytes))
			}
			for _, c := range d.Bytes[g.From:g.To] {
				if c != 0 {
					t.Fatalf("gap %v holds a byte", g)
				}
			}
			at = g.To
		}
		if len(d.Bytes) == 0 {
			return
		}
		again, err := Parse(formatHexdumpC(d.Bytes))
		if err != nil || !bytes.Equal(again, d.Bytes) {
			t.Fatalf("% x does not read back: %v", d.Bytes, err)
		}
	})
}

// cxray's field table of any bytes of a register reads back, through the
// layout, into bytes that show the same table: the PDDR page layouts
// (unions picked by page_select), MGIR (BCD, text, a date) and PMAOS and
// PTYS, whose fields are valid only under a condition ("not valid" rows).
func FuzzFieldTableRoundTrip(f *testing.F) {
	f.Add(uint8(3), []byte{0x00, 0x01, 0x00, 0x00, 0, 0, 0, 3})
	f.Add(uint8(0), []byte("MT_0000000834"))
	f.Add(uint8(1), []byte{0x20, 0x23, 0x10, 0x05, 0x12, 0x34})
	f.Add(uint8(6), []byte{0x00, 0x01, 0x01, 0x01, 0x00, 0x00, 0x05, 0x00}) // PMAOS: plugged_enabled, error_type 5 (not valid)
	regs := []string{"PDDR", "MGIR", "MTMP", "PGUID", "PMLP", "PAOS", "PMAOS", "PTYS"}
	plans := map[string]*prm.Plan{}
	for _, r := range regs {
		plans[r] = plan(f, r)
	}
	f.Fuzz(func(t *testing.T, which uint8, seed []byte) {
		p := plans[regs[int(which)%len(regs)]]
		buf := make([]byte, p.Bytes)
		for i := range buf {
			if len(seed) > 0 {
				buf[i] = seed[i%len(seed)]
			}
		}
		if p.Node.Name == "pddr_reg_ext" {
			buf[7] = []byte{0, 1, 3}[int(which)%3] // a page with a layout
		}
		d, err := p.Decode(buf)
		if err != nil {
			t.Fatal(err)
		}
		table := rowsTable(d)
		dump, err := Read(table)
		if err != nil {
			t.Fatalf("%v\n%s", err, table)
		}
		b, err := dump.Encode(p)
		if err != nil {
			t.Fatalf("%v\n%s", err, table)
		}
		d2, err := p.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		if again := rowsTable(d2); again != table {
			t.Fatalf("the table does not read back:\n%s", cmp.Diff(table, again))
		}
	})
}

func rowsTable(d *prm.Decoded) string {
	var sb strings.Builder
	sb.WriteString("FIELD  VALUE\n")
	for _, r := range d.Rows() {
		fmt.Fprintf(&sb, "%s  %s\n", r.Path, r.Text)
	}
	return sb.String()
}

// A hexdump -C that starts past 0 and repeats lines with '*' reads with
// the bytes before its first line as a gap, and the repeated lines filled.
func TestGaps(t *testing.T) {
	d, err := Read("000000b0  01 02 03 04 05 06 07 08  09 0a 0b 0c 0d 0e 0f 10  |................|\n*\n000000e0  ff ff ff ff ff ff ff ff  ff ff ff ff ff ff ff ff  |................|\n000000f0\n")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Range{{0, 0xb0}}, d.Gaps); diff != "" || len(d.Bytes) != 0xf0 || d.Bytes[0xd0] != 1 || !d.Missing(0, 1) || d.Missing(0xb0, 0xf0) {
		t.Errorf("gaps (-want +got):\n%s\n%d bytes", diff, len(d.Bytes))
	}
}
