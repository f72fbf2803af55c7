package osmac

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/kernel"
	"github.com/cxray/cxray/kernel/kerneltest"
)

// A sysfs tree with an mlx5 uplink whose MAC was changed, one that kept
// its own, a loopback and a tunnel without a MAC; rtnetlink (fake) knows
// the permanent addresses of two of them.
func TestSystemLinux(t *testing.T) {
	root := t.TempDir()
	write := func(iface, file, v string) {
		p := filepath.Join(root, "class/net", iface, file)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, i := range []struct{ name, typ, addr, state string }{
		{"ens1f0np0", "1", "02:11:22:33:44:55", "up"},
		{"ens1f1np1", "1", "B8:3F:D2:D2:0A:21", "down"},
		{"lo", "772", "00:00:00:00:00:00", "unknown"},
		{"tun0", "65534", "", "unknown"},
	} {
		write(i.name, "type", i.typ)
		write(i.name, "address", i.addr)
		write(i.name, "operstate", i.state)
	}
	drv := filepath.Join(root, "bus/pci/drivers/mlx5_core")
	os.MkdirAll(drv, 0o755)
	os.MkdirAll(filepath.Join(root, "class/net/ens1f0np0/device"), 0o755)
	if err := os.Symlink(drv, filepath.Join(root, "class/net/ens1f0np0/device/driver")); err != nil {
		t.Fatal(err)
	}
	k := &kerneltest.Kernel{Links: map[string]kerneltest.Link{
		"ens1f0np0": {Index: 4, Address: "02:11:22:33:44:55", Permanent: "b8:3f:d2:d2:0a:20"},
		"ens1f1np1": {Index: 5, Address: "b8:3f:d2:d2:0a:21"}, // no IFLA_PERM_ADDRESS
	}}
	got, err := system(context.Background(), root, kernel.Options{DialRoute: k.DialRoute})
	if err != nil {
		t.Fatal(err)
	}
	want := &Listing{Format: FormatLinux, Interfaces: []Interface{
		{Name: "ens1f0np0", Description: "mlx5_core", MAC: "02:11:22:33:44:55", PermanentMAC: "b8:3f:d2:d2:0a:20", Status: "up"},
		{Name: "ens1f1np1", MAC: "b8:3f:d2:d2:0a:21", Status: "down"},
	}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("listing (-want +got):\n%s", d)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := system(ctx, root, kernel.Options{DialRoute: k.DialRoute}); err == nil {
		t.Error("a cancelled context gave no error")
	}
	if _, err := system(context.Background(), filepath.Join(root, "nothing"), kernel.Options{}); err == nil {
		t.Error("a missing class/net gave no error")
	}
}

// This machine's own interfaces: every one System lists has the address
// sysfs shows.
func TestSystemHost(t *testing.T) {
	l, err := System(context.Background())
	if err != nil {
		t.Skipf("no /sys/class/net here: %v", err)
	}
	for _, in := range l.Interfaces {
		b, err := os.ReadFile(filepath.Join("/sys/class/net", in.Name, "address"))
		if err != nil {
			t.Errorf("%s: %v", in.Name, err)
			continue
		}
		if mac, _ := NormalizeMAC(string(b)); mac != in.MAC {
			t.Errorf("%s: System says %s, sysfs %s", in.Name, in.MAC, mac)
		}
	}
}
