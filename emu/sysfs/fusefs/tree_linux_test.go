package fusefs_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cxray/cxray/dev/devname"
	"github.com/cxray/cxray/emu/sysfs"
	"github.com/cxray/cxray/emu/sysfs/fusefs"
)

// TestClassTree serves a sysfs root: the function, its interface and its
// RDMA device with attributes computed at each open; names resolve
// through it as on a host, in the staging tree and once its parts are
// bound over /sys.
func TestClassTree(t *testing.T) {
	if !inPrivateNS(t) {
		return
	}
	dev, _ := newDevice()
	var opens atomic.Int64
	counter := func() (string, error) { return strconv.FormatInt(opens.Add(1), 10) + "\n", nil }
	entry := sysfs.DeviceEntry{BDF: bdf, Dev: dev, NUMANode: -1, Driver: "mlx5_core", Netdevs: []string{"ens1f0np0"}, RDMA: []string{"mlx5_0"},
		ClassAttrs: map[string]map[string]sysfs.Attr{
			"ens1f0np0": {"address": fixed("b8:3f:d2:a1:b2:c0\n"), "operstate": fixed("up\n")},
			"mlx5_0": {"fw_ver": fixed("28.39.1010\n"), "ports/1/state": fixed("4: ACTIVE\n"),
				"ports/1/hw_counters/out_of_sequence": counter, "ports/1/hw_counters/broken": func() (string, error) { return "", errors.New("no") }},
		}}
	staging := t.TempDir()
	srv, err := fusefs.ServeTree(staging, []sysfs.DeviceEntry{entry}, &sysfs.Options{HostNamespace: os.Getenv(envHostNS)})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Unmount()
	check := func(root string) {
		t.Helper()
		for path, want := range map[string]string{
			"class/net/ens1f0np0/address":                          "b8:3f:d2:a1:b2:c0\n",
			"class/infiniband/mlx5_0/ports/1/state":                "4: ACTIVE\n",
			"bus/pci/devices/" + bdf + "/infiniband/mlx5_0/fw_ver": "28.39.1010\n",
			"bus/pci/devices/" + bdf + "/net/ens1f0np0/operstate":  "up\n",
			"class/net/ens1f0np0/device/vendor":                    "0x15b3\n",
		} {
			if b, err := os.ReadFile(filepath.Join(root, path)); err != nil || string(b) != want {
				t.Errorf("%s: %q, %v; want %q", path, b, err, want)
			}
		}
		// Computed at every open.
		c := filepath.Join(root, "class/infiniband/mlx5_0/ports/1/hw_counters/out_of_sequence")
		a, _ := os.ReadFile(c)
		b, _ := os.ReadFile(c)
		if string(a) == string(b) || len(a) == 0 {
			t.Errorf("counter read %q then %q", a, b)
		}
		if _, err := os.ReadFile(filepath.Join(root, "class/infiniband/mlx5_0/ports/1/hw_counters/broken")); err == nil {
			t.Error("a failing attribute read without an error")
		}
		sys := devname.Sys{Root: root}
		for _, name := range []string{"mlx5_0", "ens1f0np0"} {
			n, err := sys.Parse(name)
			if err != nil || n.BDF != bdf {
				t.Errorf("%s in %s resolves to %+v, %v", name, root, n, err)
			}
		}
		f, err := sys.Function(bdf)
		if err != nil || len(f.Netdevs) != 1 || f.Netdevs[0] != "ens1f0np0" || len(f.RDMA) != 1 || f.Driver != "mlx5_core" {
			t.Errorf("function in %s: %+v, %v", root, f, err)
		}
	}
	check(staging)
	for _, part := range []string{"bus/pci/devices", "class/net"} {
		if err := srv.Bind(part, "/sys/"+part); err != nil {
			t.Fatal(err)
		}
	}
	if err := srv.Bind("class/tty", "/sys/class/tty"); err == nil {
		t.Error("bound a part the tree does not have")
	}
	if err := srv.Detach(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(staging, "bus")); err == nil {
		t.Error("the staging mount is still there after Detach")
	}
	// /sys/class/infiniband may not exist on this host: the rest is
	// checked through the bound parts.
	if b, err := os.ReadFile("/sys/class/net/ens1f0np0/address"); err != nil || string(b) != "b8:3f:d2:a1:b2:c0\n" {
		t.Errorf("bound: %q %v", b, err)
	}
	if n, err := (devname.Sys{Root: "/sys"}).Parse("ens1f0np0"); err != nil || n.BDF != bdf {
		t.Errorf("bound: ens1f0np0 resolves to %+v, %v", n, err)
	}
	if err := srv.Unmount(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("/sys/class/net/ens1f0np0"); err == nil {
		t.Error("the emulated interface is still there after Unmount")
	}
}

func fixed(s string) sysfs.Attr { return func() (string, error) { return s, nil } }

// Attribute paths must be plain, belong to a listed device, and not make a
// path both a file and a directory.
func TestClassAttrsChecked(t *testing.T) {
	dev, _ := newDevice()
	for _, c := range []struct {
		attrs map[string]map[string]sysfs.Attr
		want  string
	}{
		{map[string]map[string]sysfs.Attr{"eth9": {"address": fixed("")}}, "neither among its Netdevs"},
		{map[string]map[string]sysfs.Attr{"eth2": {"../x": fixed("")}}, "bad part"},
		{map[string]map[string]sysfs.Attr{"eth2": {"ports": fixed(""), "ports/1/state": fixed("")}}, "both a file and a directory"},
		{map[string]map[string]sysfs.Attr{"eth2": {"device": fixed("")}}, "both a file and a directory"},
	} {
		_, err := fusefs.ServeTree(t.TempDir(), []sysfs.DeviceEntry{{BDF: bdf, Dev: dev, Netdevs: []string{"eth2"}, ClassAttrs: c.attrs}}, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.attrs, err, c.want)
		}
	}
	_, err := fusefs.ServeTree(t.TempDir(), []sysfs.DeviceEntry{{BDF: bdf, Dev: dev, Netdevs: []string{"eth2"}}, {BDF: bdf2, Dev: dev, Netdevs: []string{"eth2"}}}, nil)
	if err == nil || !strings.Contains(err.Error(), "used by") {
		t.Errorf("one name on two functions: %v", err)
	}
}

// TestBridgeTree: a function behind its slot's port is served inside the
// port's directory, as on a host, with its own computed attributes; names
// and the listing of functions still work, and the port is found as the
// function's parent.
func TestBridgeTree(t *testing.T) {
	if !inPrivateNS(t) {
		return
	}
	dev, _ := newDevice()
	const bridge = "0000:00:03.0"
	entry := sysfs.DeviceEntry{BDF: bdf, Dev: dev, NUMANode: -1, Driver: "mlx5_core", Netdevs: []string{"ens1f0np0"},
		Attrs:      map[string]sysfs.Attr{"current_link_width": fixed("8\n"), "max_link_width": fixed("16\n")},
		Upstream:   &sysfs.Bridge{BDF: bridge, Vendor: 0x8086, Attrs: map[string]sysfs.Attr{"max_link_width": fixed("8\n")}},
		ClassAttrs: map[string]map[string]sysfs.Attr{"ens1f0np0": {"address": fixed("b8:3f:d2:a1:b2:c0\n")}}}
	root := t.TempDir()
	srv, err := fusefs.ServeTree(root, []sysfs.DeviceEntry{entry}, &sysfs.Options{HostNamespace: os.Getenv(envHostNS)})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Unmount()
	fnDir, err := filepath.EvalSymlinks(filepath.Join(root, "bus/pci/devices", bdf))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fnDir, filepath.Join(root, "bus/pci/devices", bridge, bdf); got != want {
		t.Errorf("the function resolves to %s, want %s", got, want)
	}
	for path, want := range map[string]string{
		"bus/pci/devices/" + bdf + "/current_link_width":                   "8\n",
		"bus/pci/devices/" + bdf + "/vendor":                               "0x15b3\n",
		"bus/pci/devices/" + bdf + "/net/ens1f0np0/address":                "b8:3f:d2:a1:b2:c0\n",
		"class/net/ens1f0np0/device/max_link_width":                        "16\n",
		filepath.Join(filepath.Dir(fnDir), "max_link_width")[len(root)+1:]: "8\n",
		"bus/pci/devices/" + bridge + "/class":                             "0x060400\n",
	} {
		if b, err := os.ReadFile(filepath.Join(root, path)); err != nil || string(b) != want {
			t.Errorf("%s: %q, %v; want %q", path, b, err, want)
		}
	}
	fs, err := (devname.Sys{Root: root}).List()
	if err != nil || len(fs) != 1 || fs[0].BDF != bdf {
		t.Errorf("listing: %+v, %v (the bridge is no adapter)", fs, err)
	}
	if n, err := (devname.Sys{Root: root}).Parse("ens1f0np0"); err != nil || n.BDF != bdf {
		t.Errorf("ens1f0np0 resolves to %+v, %v", n, err)
	}
}

func TestAttrsChecked(t *testing.T) {
	dev, _ := newDevice()
	for _, c := range []struct {
		e    sysfs.DeviceEntry
		want string
	}{
		{sysfs.DeviceEntry{BDF: bdf, Dev: dev, Attrs: map[string]sysfs.Attr{"vendor": fixed("")}}, "already served"},
		{sysfs.DeviceEntry{BDF: bdf, Dev: dev, Attrs: map[string]sysfs.Attr{"a/b": fixed("")}}, "plain file name"},
		{sysfs.DeviceEntry{BDF: bdf, Dev: dev, Attrs: map[string]sysfs.Attr{"x": nil}}, "no function"},
		{sysfs.DeviceEntry{BDF: bdf, Dev: dev, Upstream: &sysfs.Bridge{BDF: bdf}}, "also a function"},
		{sysfs.DeviceEntry{BDF: bdf, Dev: dev, Upstream: &sysfs.Bridge{BDF: "zz"}}, "upstream bridge"},
		{sysfs.DeviceEntry{BDF: bdf, Dev: dev, Upstream: &sysfs.Bridge{BDF: "00:03.0", Attrs: map[string]sysfs.Attr{"class": fixed("")}}}, "other than the identity files"},
	} {
		_, err := fusefs.ServeTree(t.TempDir(), []sysfs.DeviceEntry{c.e}, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.e, err, c.want)
		}
	}
}
