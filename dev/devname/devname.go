// Package devname parses the device names users give with -d and resolves
// them through sysfs (ARCHITECTURE.md, "Device names"): PCI addresses in their usual
// spellings, RDMA device names, network interface names, mst's names
// (/dev/mst/mt4129_pciconf0), the emulator and the kernel backend. It also
// lists the ConnectX functions of a machine. A name that is no ConnectX
// function here, whatever the reason, is a NotFoundError.
package devname

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/cxray/cxray/internal/lazyre"
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
	// Kernel is what follows "kernel:" in a kernel backend name.
	Kernel string
	// RDMA is the RDMA device the name gave (mlx5_0), "" for the other
	// forms.
	RDMA string
	// Via says how the name was resolved ("RDMA device mlx5_0").
	Via string
}

// Sys is a sysfs tree; Root is "/sys" on a real machine, a fake tree in tests.
type Sys struct{ Root string }

// Default is the machine's sysfs.
var Default = Sys{Root: "/sys"}

var (
	bdfFull  = lazyre.New(`^([0-9a-fA-F]{4}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7])$`)
	bdfShort = lazyre.New(`^([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7])$`)
)

// NotFoundError is a name that resolves to nothing on this machine.
type NotFoundError struct{ Msg string }

func (e *NotFoundError) Error() string { return e.Msg }

// Parse resolves a device name: RDMA devices, interfaces and mst names
// through sysfs, for the direct and the kernel (kernel:NAME) backends
// alike. A PCI address is taken as written; Function checks it is there.
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
		n.Kind, n.Kernel = Kernel, strings.TrimSpace(strings.TrimPrefix(g, "kernel:"))
		if n.Kernel == "" {
			return n, errors.New("kernel: needs an RDMA device name, e.g. kernel:mlx5_0")
		}
		// The kernel backend's names resolve as the direct ones do: one
		// resolver for every form.
		return s.resolve(n, n.Kernel)
	}
	n.Kind = PCI
	return s.resolve(n, g)
}

// resolve finds the PCI function g names (a PCI address, an mst name, an
// RDMA device or a network interface) and fills in n's BDF.
func (s Sys) resolve(n Name, g string) (Name, error) {
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
	if err := s.hostErr(); err != nil {
		return n, &NotFoundError{fmt.Sprintf("device %q: %v", g, err)}
	}
	// mst's names: /dev/mst/mt4129_pciconf0, mt4129_pciconf0.1.
	if m := mstName.FindStringSubmatch(g); m != nil {
		bdf, err := s.resolveMST(g, m)
		if err != nil {
			return n, err
		}
		n.BDF, n.Via = bdf, "mst name "+strings.TrimPrefix(g, "/dev/mst/")
		return n, nil
	}
	// An RDMA device or a network interface: a name, never a path out of
	// the class directories.
	if strings.ContainsAny(g, "/\x00") || g == "." || g == ".." {
		return n, fmt.Errorf("device %q: not a device name; give a PCI address (0000:03:00.0), an RDMA device (mlx5_0) or an interface (eth2); 'cxray status' lists them", g)
	}
	for _, c := range []struct{ dir, what string }{{"class/infiniband", "RDMA device"}, {"class/net", "network interface"}} {
		link := filepath.Join(s.Root, c.dir, g, "device")
		if target, err := os.Readlink(link); err == nil {
			bdf := filepath.Base(target)
			if !bdfFull.MatchString(bdf) {
				return n, &NotFoundError{fmt.Sprintf("device %q: the %s exists, but it is not on a PCI function (its device is %s), so it is no ConnectX adapter; run 'cxray status' to list the adapters, or use -d emu for the emulator", g, c.what, filepath.Base(target))}
			}
			if v := readHex(filepath.Join(s.Root, "bus/pci/devices", bdf, "vendor")); v != 0 && v != MellanoxVendor {
				return n, &NotFoundError{fmt.Sprintf("device %q: the %s is on %s, vendor 0x%04x, not a Mellanox/NVIDIA ConnectX adapter (0x15b3); run 'cxray status' to list the adapters", g, c.what, bdf, v)}
			}
			n.BDF, n.Via = bdf, c.what+" "+g
			if c.dir == "class/infiniband" {
				n.RDMA = g
			}
			return n, nil
		}
	}
	return n, &NotFoundError{fmt.Sprintf("device %q: not a PCI address (0000:03:00.0 or 03:00.0), and no RDMA device or network interface of that name here; run 'cxray status' to list the adapters, or use -d emu for the emulator", g)}
}

// mstName is mst's device naming: mt<PCI device ID in decimal>_pciconf<N>
// (or _pci_cr<N>) with an optional .<function>, under /dev/mst or not.
var mstName = lazyre.New(`^(?:/dev/mst/)?mt([0-9]+)_(pciconf|pci_cr)([0-9]+)(?:\.([0-7]))?$`)

// MSTName returns the name mst gives a function: mt<device ID in decimal>
// _pciconf<N>, N counting the adapters (PCI slots) of that device ID in
// address order from 0, and ".F" for function F other than 0 (so the two
// ports of a ConnectX-7 at 03:00.0 and 03:00.1 are mt4129_pciconf0 and
// mt4129_pciconf0.1). fs is the machine's function list (List). Virtual
// functions get none: mst does not name them.
func MSTName(fs []Function, bdf string) string {
	var me *Function
	for i := range fs {
		if fs[i].BDF == bdf {
			me = &fs[i]
		}
	}
	if me == nil || me.VF {
		return ""
	}
	slot, fn := splitFunction(bdf)
	n := 0
	for _, s := range mstSlots(fs, me.DeviceID) {
		if s == slot {
			name := fmt.Sprintf("mt%d_pciconf%d", me.DeviceID, n)
			if fn != "0" {
				name += "." + fn
			}
			return name
		}
		n++
	}
	return ""
}

// mstSlots lists the PCI slots (domain:bus:device) holding physical
// functions of a device ID, in address order.
func mstSlots(fs []Function, id uint16) []string {
	var slots []string
	seen := map[string]bool{}
	sorted := append([]Function(nil), fs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].BDF < sorted[j].BDF })
	for _, f := range sorted {
		if f.DeviceID != id || f.VF {
			continue
		}
		slot, _ := splitFunction(f.BDF)
		if !seen[slot] {
			seen[slot] = true
			slots = append(slots, slot)
		}
	}
	return slots
}

func splitFunction(bdf string) (slot, fn string) {
	i := strings.LastIndexByte(bdf, '.')
	if i < 0 {
		return bdf, "0"
	}
	return bdf[:i], bdf[i+1:]
}

// resolveMST finds the function an mst name stands for on this machine.
func (s Sys) resolveMST(given string, m []string) (string, error) {
	id, err := strconv.ParseUint(m[1], 10, 16)
	idx, err2 := strconv.Atoi(m[3])
	fn := m[4]
	if fn == "" {
		fn = "0"
	}
	fs, lerr := s.List()
	explain := func(why string) error {
		msg := fmt.Sprintf("device %q: %s. mst names are mt<PCI device ID in decimal>_pciconf<N>[.F]: the N-th adapter with that device ID in PCI address order (from 0), function F (0 when left out)", given, why)
		var known []string
		for _, f := range fs {
			if n := MSTName(fs, f.BDF); n != "" {
				known = append(known, n+" = "+f.BDF)
			}
		}
		if len(known) > 0 {
			msg += "; here: " + strings.Join(known, ", ")
		} else {
			msg += "; this machine has no ConnectX function ('cxray status' lists them; -d emu for the emulator)"
		}
		return &NotFoundError{msg}
	}
	if err != nil || err2 != nil {
		return "", explain("the device ID or index is out of range")
	}
	if lerr != nil {
		return "", &NotFoundError{fmt.Sprintf("device %q: listing the PCI functions failed: %v", given, lerr)}
	}
	slots := mstSlots(fs, uint16(id))
	if len(slots) == 0 {
		model, _ := Model(uint16(id))
		return "", explain(fmt.Sprintf("no adapter with device ID %d (0x%04x, %s) here", id, id, model))
	}
	if idx >= len(slots) {
		return "", explain(fmt.Sprintf("there are %d adapter(s) with device ID %d here, so the index goes up to %d", len(slots), id, len(slots)-1))
	}
	bdf := slots[idx] + "." + fn
	for _, f := range fs {
		if f.BDF == bdf {
			return bdf, nil
		}
	}
	return "", explain(fmt.Sprintf("adapter %d with device ID %d (%s) has no function %s", idx, id, slots[idx], fn))
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
	if err := s.hostErr(); err != nil {
		return Function{}, fmt.Errorf("PCI function %s: %w", bdf, err)
	}
	dir := filepath.Join(s.Root, "bus/pci/devices", bdf)
	if _, err := os.Stat(dir); err != nil {
		return Function{}, &NotFoundError{fmt.Sprintf("no PCI function %s on this machine; run 'cxray status' to list the ConnectX adapters", bdf)}
	}
	f := Function{BDF: bdf, NUMANode: -1, Netdevs: []string{}, RDMA: []string{}}
	f.VendorID = uint16(readHex(filepath.Join(dir, "vendor")))
	f.DeviceID = uint16(readHex(filepath.Join(dir, "device")))
	if f.VendorID != MellanoxVendor {
		return f, &NotFoundError{fmt.Sprintf("%s is vendor 0x%04x, not a Mellanox/NVIDIA function (0x15b3); cxray only talks to ConnectX adapters ('cxray status' lists them)", bdf, f.VendorID)}
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
	if err := s.hostErr(); err != nil {
		return nil, fmt.Errorf("listing adapters: %w", err)
	}
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
