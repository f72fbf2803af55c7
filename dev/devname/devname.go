// Package devname parses the device names users give with -d and resolves
// them through sysfs (ARCHITECTURE.md §3): PCI addresses in their usual
// spellings, RDMA device names, network interface names, the emulator and
// the kernel backend. It also lists the ConnectX functions of a machine.
package devname

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Kind says which backend a name selects.
type Kind int

// Kinds of device names.
const (
	PCI    Kind = iota // direct access through the config-space gateway
	Emu                // the built-in emulator
	Kernel             // the read-only kernel backend
)

// MellanoxVendor is the PCI vendor ID of Mellanox/NVIDIA networking.
const MellanoxVendor = 0x15b3

// Name is a parsed device name.
type Name struct {
	Given string
	Kind  Kind
	// BDF is the full PCI address (0000:03:00.0) for PCI names, resolved from
	// RDMA and interface names too.
	BDF string
	// Emu is "" for the default emulated device, a profile name, or a
	// scenario file (emu, emu:cx7-2p400g, emu:lab.yaml).
	Emu string
	// Kernel is the RDMA device of a kernel: name.
	Kernel string
	// Via says how the name was resolved ("RDMA device mlx5_0").
	Via string
}

// Sys is a sysfs tree; Root is "/sys" on a real machine, a fake tree in tests.
type Sys struct{ Root string }

// Default is the machine's sysfs.
var Default = Sys{Root: "/sys"}

var (
	bdfFull  = regexp.MustCompile(`^([0-9a-fA-F]{4}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7])$`)
	bdfShort = regexp.MustCompile(`^([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7])$`)
)

// NotFoundError is a name that resolves to nothing on this machine.
type NotFoundError struct{ Msg string }

func (e *NotFoundError) Error() string { return e.Msg }

// Parse resolves a device name. PCI-style names are checked against sysfs
// only by Resolve; Parse accepts any well-formed address.
func (s Sys) Parse(given string) (Name, error) {
	n := Name{Given: given}
	g := strings.TrimSpace(given)
	switch {
	case g == "":
		return n, errors.New("no device given; use -d with a PCI address (0000:03:00.0), an RDMA name (mlx5_0), an interface (eth2) or emu")
	case g == "emu" || strings.HasPrefix(g, "emu:"):
		n.Kind, n.Emu = Emu, strings.TrimPrefix(strings.TrimPrefix(g, "emu"), ":")
		return n, nil
	case strings.HasPrefix(g, "kernel:"):
		n.Kind, n.Kernel = Kernel, strings.TrimPrefix(g, "kernel:")
		if n.Kernel == "" {
			return n, errors.New("kernel: needs an RDMA device name, e.g. kernel:mlx5_0")
		}
		return n, nil
	}
	n.Kind = PCI
	addr := g
	addr = strings.TrimPrefix(addr, "pciconf-")
	if strings.HasPrefix(addr, "/sys/") {
		// /sys/bus/pci/devices/0000:03:00.0/config, or the directory.
		addr = filepath.Base(strings.TrimSuffix(strings.TrimSuffix(addr, "/"), "/config"))
	}
	if m := bdfShort.FindStringSubmatch(addr); m != nil {
		addr = "0000:" + addr
	}
	if bdfFull.MatchString(addr) {
		n.BDF = strings.ToLower(addr)
		return n, nil
	}
	// An RDMA device or a network interface.
	for _, c := range []struct{ dir, what string }{{"class/infiniband", "RDMA device"}, {"class/net", "network interface"}} {
		link := filepath.Join(s.Root, c.dir, g, "device")
		if target, err := os.Readlink(link); err == nil {
			bdf := filepath.Base(target)
			if bdfFull.MatchString(bdf) {
				n.BDF, n.Via = bdf, c.what+" "+g
				return n, nil
			}
			return n, fmt.Errorf("%s %s is not a PCI function (its device is %s)", c.what, g, target)
		}
	}
	return n, &NotFoundError{fmt.Sprintf("device %q: not a PCI address (0000:03:00.0 or 03:00.0), and no RDMA device or network interface of that name here; run 'cxray status' to list the adapters, or use -d emu for the emulator", g)}
}

// Function is one ConnectX PCI function found in sysfs.
type Function struct {
	BDF        string   `json:"bdf"`
	VendorID   uint16   `json:"vendor_id"`
	DeviceID   uint16   `json:"device_id"`
	DeviceName string   `json:"device_name"`
	VF         bool     `json:"vf"`
	NUMANode   int      `json:"numa_node"`
	Netdevs    []string `json:"netdevs"`
	RDMA       []string `json:"rdma"`
	Driver     string   `json:"driver,omitempty"`
}

// Function reads one function's sysfs entry and checks it is Mellanox's.
func (s Sys) Function(bdf string) (Function, error) {
	dir := filepath.Join(s.Root, "bus/pci/devices", bdf)
	if _, err := os.Stat(dir); err != nil {
		return Function{}, &NotFoundError{fmt.Sprintf("no PCI function %s on this machine; run 'cxray status' to list the ConnectX adapters", bdf)}
	}
	f := Function{BDF: bdf, NUMANode: -1, Netdevs: []string{}, RDMA: []string{}}
	f.VendorID = uint16(readHex(filepath.Join(dir, "vendor")))
	f.DeviceID = uint16(readHex(filepath.Join(dir, "device")))
	if f.VendorID != MellanoxVendor {
		return f, fmt.Errorf("%s is vendor 0x%04x, not a Mellanox/NVIDIA function (0x15b3); cxray only talks to ConnectX adapters", bdf, f.VendorID)
	}
	f.DeviceName, f.VF = Model(f.DeviceID)
	if b, err := os.ReadFile(filepath.Join(dir, "numa_node")); err == nil {
		if v, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			f.NUMANode = v
		}
	}
	f.Netdevs = listDir(filepath.Join(dir, "net"))
	f.RDMA = listDir(filepath.Join(dir, "infiniband"))
	if t, err := os.Readlink(filepath.Join(dir, "driver")); err == nil {
		f.Driver = filepath.Base(t)
	}
	return f, nil
}

// List returns every Mellanox PCI function, sorted by address.
func (s Sys) List() ([]Function, error) {
	ents, err := os.ReadDir(filepath.Join(s.Root, "bus/pci/devices"))
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	var out []Function
	for _, e := range ents {
		if !bdfFull.MatchString(e.Name()) {
			continue
		}
		f, err := s.Function(e.Name())
		if err != nil {
			continue // not Mellanox's, or gone
		}
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].BDF < out[j].BDF })
	return out, nil
}

// MAC reads a network interface's current address.
func (s Sys) MAC(netdev string) string {
	b, err := os.ReadFile(filepath.Join(s.Root, "class/net", netdev, "address"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func readHex(path string) uint64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	v, _ := strconv.ParseUint(strings.TrimPrefix(strings.TrimSpace(string(b)), "0x"), 16, 32)
	return v
}

func listDir(dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return []string{}
	}
	out := make([]string, 0, len(ents))
	for _, e := range ents {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

// models maps PCI device IDs of ConnectX and BlueField functions to names.
var models = map[uint16]struct {
	name string
	vf   bool
}{
	0x1013: {"ConnectX-4", false}, 0x1014: {"ConnectX-4 VF", true},
	0x1015: {"ConnectX-4 Lx", false}, 0x1016: {"ConnectX-4 Lx VF", true},
	0x1017: {"ConnectX-5", false}, 0x1018: {"ConnectX-5 VF", true},
	0x1019: {"ConnectX-5 Ex", false}, 0x101a: {"ConnectX-5 Ex VF", true},
	0x101b: {"ConnectX-6", false}, 0x101c: {"ConnectX-6 VF", true},
	0x101d: {"ConnectX-6 Dx", false}, 0x101e: {"ConnectX-6 Dx/Lx/7 VF", true},
	0x101f: {"ConnectX-6 Lx", false}, 0x1021: {"ConnectX-7", false},
	0x1023: {"ConnectX-8", false}, 0xa2d2: {"BlueField", false},
	0xa2d6: {"BlueField-2", false}, 0xa2dc: {"BlueField-3", false},
}

// Model names a device ID and says whether it is a virtual function.
func Model(id uint16) (string, bool) {
	if m, ok := models[id]; ok {
		return m.name, m.vf
	}
	return fmt.Sprintf("Mellanox device 0x%04x", id), false
}
