package devname

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeSys builds a sysfs tree with one ConnectX-7 (two netdevs, one RDMA
// device) and one Intel function.
func fakeSys(t *testing.T) Sys {
	root := t.TempDir()
	mk := func(p, content string) {
		full := filepath.Join(root, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		os.WriteFile(full, []byte(content), 0o644)
	}
	cx := "bus/pci/devices/0000:03:00.0"
	mk(cx+"/vendor", "0x15b3\n")
	mk(cx+"/device", "0x1021\n")
	mk(cx+"/numa_node", "1\n")
	os.MkdirAll(filepath.Join(root, cx, "net/ens1f0np0"), 0o755)
	os.MkdirAll(filepath.Join(root, cx, "infiniband/mlx5_0"), 0o755)
	mk("bus/pci/devices/0000:00:1f.0/vendor", "0x8086\n")
	mk("bus/pci/devices/0000:00:1f.0/device", "0xa0a3\n")
	for _, l := range []struct{ dir, name string }{{"class/net", "ens1f0np0"}, {"class/infiniband", "mlx5_0"}} {
		os.MkdirAll(filepath.Join(root, l.dir, l.name), 0o755)
		os.Symlink("../../../devices/pci0000:00/0000:03:00.0", filepath.Join(root, l.dir, l.name, "device"))
	}
	mk("class/net/ens1f0np0/address", "b8:ce:f6:00:00:01\n")
	os.MkdirAll(filepath.Join(root, "class/net/lo"), 0o755)
	return Sys{Root: root}
}

func TestParse(t *testing.T) {
	s := fakeSys(t)
	for _, in := range []string{"0000:03:00.0", "03:00.0", "pciconf-03:00.0", "/sys/bus/pci/devices/0000:03:00.0/config", "/sys/bus/pci/devices/0000:03:00.0", "mlx5_0", "ens1f0np0"} {
		n, err := s.Parse(in)
		if err != nil || n.Kind != PCI || n.BDF != "0000:03:00.0" {
			t.Errorf("%s: %+v %v", in, n, err)
		}
	}
	if n, _ := s.Parse("mlx5_0"); n.Via != "RDMA device mlx5_0" {
		t.Errorf("via %q", n.Via)
	}
	for in, want := range map[string]string{"emu": "", "emu:cx6dx-2p100g": "cx6dx-2p100g", "emu:lab.yaml": "lab.yaml"} {
		n, err := s.Parse(in)
		if err != nil || n.Kind != Emu || n.Emu != want {
			t.Errorf("%s: %+v %v", in, n, err)
		}
	}
	// The kernel backend's names resolve with the same resolver: to the
	// function, and the RDMA device the name gave.
	for in, rdma := range map[string]string{"kernel:mlx5_0": "mlx5_0", "kernel:ens1f0np0": "", "kernel:03:00.0": ""} {
		n, err := s.Parse(in)
		if err != nil || n.Kind != Kernel || n.Kernel != strings.TrimPrefix(in, "kernel:") || n.BDF != "0000:03:00.0" || n.RDMA != rdma {
			t.Errorf("%s: %+v %v", in, n, err)
		}
	}
	for _, in := range []string{"kernel:../../etc", "ens1f0np0/../mlx5_0", ".."} {
		if _, err := s.Parse(in); err == nil || !strings.Contains(err.Error(), "not a device name") {
			t.Errorf("%s: %v, want a refusal of a path", in, err)
		}
	}
	_, err := s.Parse("eth9")
	var nf *NotFoundError
	if !errors.As(err, &nf) || !strings.Contains(err.Error(), "cxray status") {
		t.Errorf("unknown name: %v", err)
	}
	if _, err := s.Parse(""); err == nil {
		t.Error("empty name accepted")
	}
}

func TestListAndFunction(t *testing.T) {
	s := fakeSys(t)
	fs, err := s.List()
	if err != nil || len(fs) != 1 {
		t.Fatalf("%v %v", fs, err)
	}
	f := fs[0]
	if f.BDF != "0000:03:00.0" || f.DeviceName != "ConnectX-7" || f.NUMANode != 1 || f.Netdevs[0] != "ens1f0np0" || f.RDMA[0] != "mlx5_0" {
		t.Errorf("%+v", f)
	}
	if _, err := s.Function("0000:00:1f.0"); err == nil || !strings.Contains(err.Error(), "not a Mellanox/NVIDIA function") {
		t.Errorf("Intel function: %v", err)
	}
	if _, err := s.Function("0000:09:00.0"); err == nil || !strings.Contains(err.Error(), "no PCI function") {
		t.Errorf("missing function: %v", err)
	}
	if s.MAC("ens1f0np0") != "b8:ce:f6:00:00:01" {
		t.Error("MAC")
	}
}

// mstSys: two ConnectX-7 adapters (two functions, then one), a
// ConnectX-6 Dx between them, a ConnectX-7 VF, an Intel NIC with an
// interface, and a virtio interface.
func mstSys(t *testing.T) Sys {
	root := t.TempDir()
	mk := func(p, content string) {
		full := filepath.Join(root, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		os.WriteFile(full, []byte(content), 0o644)
	}
	for bdf, id := range map[string]string{"0000:03:00.0": "0x1021", "0000:03:00.1": "0x1021", "0000:0b:00.0": "0x101d", "0000:81:00.0": "0x1021", "0000:03:00.2": "0x101e"} {
		mk("bus/pci/devices/"+bdf+"/vendor", "0x15b3\n")
		mk("bus/pci/devices/"+bdf+"/device", id+"\n")
	}
	mk("bus/pci/devices/0000:00:1f.6/vendor", "0x8086\n")
	mk("bus/pci/devices/0000:00:1f.6/device", "0x15bb\n")
	os.MkdirAll(filepath.Join(root, "class/net/eno1"), 0o755)
	os.Symlink("../../../devices/pci0000:00/0000:00:1f.6", filepath.Join(root, "class/net/eno1/device"))
	os.MkdirAll(filepath.Join(root, "class/net/eth0"), 0o755)
	os.Symlink("../../../virtio2", filepath.Join(root, "class/net/eth0/device"))
	return Sys{Root: root}
}

func TestMSTNames(t *testing.T) {
	s := mstSys(t)
	fs, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"0000:03:00.0": "mt4129_pciconf0", "0000:03:00.1": "mt4129_pciconf0.1", "0000:81:00.0": "mt4129_pciconf1",
		"0000:0b:00.0": "mt4125_pciconf0", "0000:03:00.2": "",
	}
	for bdf, name := range want {
		if got := MSTName(fs, bdf); got != name {
			t.Errorf("MSTName(%s) = %q, want %q", bdf, got, name)
		}
	}
	for in, bdf := range map[string]string{
		"/dev/mst/mt4129_pciconf0": "0000:03:00.0", "mt4129_pciconf0": "0000:03:00.0", "mt4129_pciconf0.1": "0000:03:00.1",
		"/dev/mst/mt4129_pciconf1": "0000:81:00.0", "mt4125_pciconf0": "0000:0b:00.0", "mt4129_pci_cr0": "0000:03:00.0",
	} {
		n, err := s.Parse(in)
		if err != nil || n.BDF != bdf || n.Kind != PCI || !strings.HasPrefix(n.Via, "mst name ") {
			t.Errorf("%s: %+v %v", in, n, err)
		}
	}
	for in, why := range map[string]string{
		"mt4129_pciconf2":   "there are 2 adapter(s) with device ID 4129 here, so the index goes up to 1",
		"mt4129_pciconf1.1": "has no function 1",
		"mt4119_pciconf0":   "no adapter with device ID 4119 (0x1017, ConnectX-5) here",
	} {
		_, err := s.Parse(in)
		var nf *NotFoundError
		if !errors.As(err, &nf) || !strings.Contains(err.Error(), why) || !strings.Contains(err.Error(), "mst names are mt<PCI device ID in decimal>_pciconf<N>[.F]") ||
			!strings.Contains(err.Error(), "here: mt4129_pciconf0 = 0000:03:00.0, mt4129_pciconf0.1 = 0000:03:00.1, mt4125_pciconf0 = 0000:0b:00.0, mt4129_pciconf1 = 0000:81:00.0") {
			t.Errorf("%s: %v", in, err)
		}
	}
}

// An interface that is no ConnectX function fails like a name that does
// not exist: the same error type, with the reason.
func TestNotConnectXIsNotFound(t *testing.T) {
	s := mstSys(t)
	for in, why := range map[string]string{
		"eth0":  "not on a PCI function (its device is virtio2)",
		"eno1":  "vendor 0x8086, not a Mellanox/NVIDIA ConnectX adapter",
		"nope0": "no RDMA device or network interface of that name",
	} {
		_, err := s.Parse(in)
		var nf *NotFoundError
		if !errors.As(err, &nf) || !strings.Contains(err.Error(), why) {
			t.Errorf("%s: %v", in, err)
		}
	}
	_, err := s.Function("0000:00:1f.6")
	var nf *NotFoundError
	if !errors.As(err, &nf) {
		t.Errorf("an Intel function: %T %v", err, err)
	}
}
