package sysfs

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// header is a config space whose first 64 bytes are a ConnectX-7 header.
type header struct{ b [4096]byte }

func newHeader() *header {
	h := &header{}
	copy(h.b[:], []byte{0xb3, 0x15, 0x21, 0x10, 0, 0, 0x10, 0, 0, 0, 0, 0x02})
	h.b[0x2c], h.b[0x2d], h.b[0x2e], h.b[0x2f] = 0xb3, 0x15, 0x21, 0x00
	return h
}

func (h *header) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(h.b)) {
		return 0, io.EOF
	}
	n := copy(p, h.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (h *header) WriteAt(p []byte, off int64) (int, error) { return copy(h.b[off:], p), nil }

func TestCanonicalBDF(t *testing.T) {
	for in, want := range map[string]string{
		"03:00.0": "0000:03:00.0", "0000:03:00.0": "0000:03:00.0", "0001:AF:1f.7": "0001:af:1f.7", " 81:00.1 ": "0000:81:00.1",
	} {
		if got, err := CanonicalBDF(in); err != nil || got != want {
			t.Errorf("CanonicalBDF(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "3:00.0", "03:20.0", "03:00.8", "0000:03:00", "mlx5_0", "00000:03:00.0"} {
		if _, err := CanonicalBDF(bad); err == nil || !strings.Contains(err.Error(), "e.g. 0000:03:00.0") {
			t.Errorf("CanonicalBDF(%q) = %v; want an error showing the expected form", bad, err)
		}
	}
}

func TestNormalize(t *testing.T) {
	out, err := Normalize([]DeviceEntry{
		{BDF: "81:00.0", Dev: newHeader(), Device: 0x1017},
		{BDF: "03:00.0", Dev: newHeader(), NUMANode: -1, Netdevs: []string{"eth2"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if out[0].BDF != "0000:03:00.0" || out[1].BDF != "0000:81:00.0" {
		t.Fatalf("entries not sorted by canonical address: %s, %s", out[0].BDF, out[1].BDF)
	}
	e := out[0]
	if e.Vendor != 0x15b3 || e.Device != 0x1021 || e.SubVendor != 0x15b3 || e.SubDevice != 0x21 ||
		e.Class != 0x020000 || e.Revision != 0 || e.ConfigSize != DefaultConfigSize || e.BAR0Size != 32<<20 {
		t.Errorf("identity from the header: %+v", e)
	}
	if out[1].Device != 0x1017 {
		t.Errorf("a given device ID was replaced by the header's: 0x%x", out[1].Device)
	}

	for name, c := range map[string]struct {
		in   []DeviceEntry
		want string
	}{
		"none":      {nil, "no devices"},
		"bad bdf":   {[]DeviceEntry{{BDF: "x", Dev: newHeader()}}, "bad PCI address"},
		"twice":     {[]DeviceEntry{{BDF: "03:00.0", Dev: newHeader()}, {BDF: "0000:03:00.0", Dev: newHeader()}}, "listed twice"},
		"nil dev":   {[]DeviceEntry{{BDF: "03:00.0"}}, "no config space"},
		"slash":     {[]DeviceEntry{{BDF: "03:00.0", Dev: newHeader(), Netdevs: []string{"a/b"}}}, "plain file name"},
		"dup name":  {[]DeviceEntry{{BDF: "03:00.0", Dev: newHeader(), RDMA: []string{"mlx5_0", "mlx5_0"}}}, "listed twice"},
		"tiny":      {[]DeviceEntry{{BDF: "03:00.0", Dev: newHeader(), ConfigSize: 16}}, "smaller than"},
		"bad drv":   {[]DeviceEntry{{BDF: "03:00.0", Dev: newHeader(), Driver: ".."}}, "plain file name"},
		"no header": {[]DeviceEntry{{BDF: "03:00.0", Dev: &short{}}}, "config header"},
	} {
		if _, err := Normalize(c.in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an error mentioning %q", name, err, c.want)
		}
	}
}

type short struct{}

func (short) ReadAt(p []byte, off int64) (int, error)  { return 0, errors.New("gone") }
func (short) WriteAt(p []byte, off int64) (int, error) { return 0, errors.New("gone") }

func TestAttributes(t *testing.T) {
	es, err := Normalize([]DeviceEntry{{BDF: "03:00.0", Dev: newHeader(), NUMANode: 1, Driver: "mlx5_core"}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, a := range Attributes(es[0]) {
		got[a.Name] = a.Content
	}
	want := map[string]string{
		"vendor": "0x15b3\n", "device": "0x1021\n", "subsystem_vendor": "0x15b3\n", "subsystem_device": "0x0021\n",
		"class": "0x020000\n", "revision": "0x00\n", "numa_node": "1\n", "irq": "0\n", "enable": "1\n",
		"modalias": "pci:v000015B3d00001021sv000015B3sd00000021bc02sc00i00\n",
		"uevent": "DRIVER=mlx5_core\nPCI_CLASS=20000\nPCI_ID=15B3:1021\nPCI_SUBSYS_ID=15B3:0021\n" +
			"PCI_SLOT_NAME=0000:03:00.0\nMODALIAS=pci:v000015B3d00001021sv000015B3sd00000021bc02sc00i00\n",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s = %q, want %q", k, got[k], w)
		}
	}
	lines := strings.Split(strings.TrimSuffix(got["resource"], "\n"), "\n")
	if len(lines) != resourceLines || lines[0] != "0x00000000e0000000 0x00000000e1ffffff 0x000000000014220c" ||
		lines[1] != "0x0000000000000000 0x0000000000000000 0x0000000000000000" {
		t.Errorf("resource:\n%s", got["resource"])
	}
}

func TestReadWriteClipping(t *testing.T) {
	h := newHeader()
	buf := make([]byte, 8)
	if n, err := ReadConfig(h, 256, buf, 252); n != 4 || err != nil {
		t.Errorf("read across the end: %d, %v; want 4", n, err)
	}
	if n, err := ReadConfig(h, 256, buf, 256); n != 0 || err != nil {
		t.Errorf("read at the end: %d, %v; want 0, nil", n, err)
	}
	if n, err := WriteConfig(h, 256, buf, 300); n != 0 || err != nil {
		t.Errorf("write past the end: %d, %v; want 0, nil (sysfs ignores it)", n, err)
	}
	if n, err := WriteConfig(h, 256, buf, 250); n != 6 || err != nil {
		t.Errorf("write across the end: %d, %v; want 6", n, err)
	}
	if _, err := ReadConfig(short{}, 256, buf, 0); err == nil {
		t.Error("a failing device read must fail the read")
	}
}
