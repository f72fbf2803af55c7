// Package sysfs describes emulated PCI functions as Linux's
// /sys/bus/pci/devices shows them: one directory per function with the
// attribute files PCI tools read (vendor, device, class, numa_node,
// resource, ...) and a `config` file whose every pread/pwrite reaches the
// function's ReadAt/WriteAt at the caller's offset and size.
//
// Package emu/sysfs/fusefs serves them over FUSE; mounted over
// /sys/bus/pci/devices inside a private mount namespace (see package
// emu/nsrun), they let unmodified tools such as mstflint's mstreg and
// cxray's own sysfs path drive the emulator. The mount hides the real
// directory, so the host's real PCI functions are invisible there. This
// package links no FUSE library (the emulator's in-process adapter reads
// the same attributes), so cxray's CLI does not either
// (cmd/cxray/deps_test.go).
package sysfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/cxray/cxray/internal/lazyre"
)

// DefaultMountpoint is where PCI tools look for functions.
const DefaultMountpoint = "/sys/bus/pci/devices"

// DefaultConfigSize is the size of a PCI Express function's config space.
const DefaultConfigSize = 4096

// ConfigSpace is a PCI function's configuration space, as pci.ConfigSpace
// and *emu.Device provide it. Implementations must be safe for concurrent
// use: the file system serves requests from several processes at once.
type ConfigSpace interface {
	ReadAt(p []byte, off int64) (int, error)
	WriteAt(p []byte, off int64) (int, error)
}

// DeviceEntry is one PCI function to serve.
type DeviceEntry struct {
	// BDF is the PCI address, "DDDD:BB:DD.F" or "BB:DD.F" (domain 0); it is
	// served in the canonical lower-case "0000:03:00.0" form.
	BDF string
	// Dev answers the `config` file.
	Dev ConfigSpace
	// ConfigSize is the size of `config`; 0 means DefaultConfigSize.
	ConfigSize int

	// PCI identity for the attribute files. Zero values are taken from
	// Dev's config header (vendor, device and subsystem IDs, class code,
	// revision), which is what the kernel does too.
	Vendor, Device       uint16
	SubVendor, SubDevice uint16
	Class                uint32 // 24 bits, e.g. 0x020000 (Ethernet)
	Revision             uint8

	// NUMANode is the `numa_node` value (-1: no affinity, as on one-socket
	// machines).
	NUMANode int
	// Netdevs and RDMA name the entries of the function's `net/` and
	// `infiniband/` directories (eth2, mlx5_0); tools list them to show
	// which interfaces belong to the function.
	Netdevs, RDMA []string
	// Driver, when set, adds a `driver` link naming the bound driver
	// (mlx5_core). mstflint does not read it; cxray's discovery reports it.
	Driver string
	// BAR0Size is the size of BAR 0 reported in `resource` (0: 32 MiB).
	BAR0Size uint64
	// Fwctl, when set, is the function's firmware command interface as
	// Linux's fwctl subsystem offers it: ServeTree serves it as
	// /sys/class/fwctl/fwctlN (its `device` link names the function) and
	// the device file dev/fwctl/fwctlN, which answers the FWCTL_INFO and
	// FWCTL_RPC ioctls (include/uapi/fwctl/fwctl.h). N counts the entries
	// with one, in address order.
	Fwctl *Fwctl
	// Attrs are more attribute files of the function's own directory,
	// computed when opened (current_link_speed, aer_dev_correctable):
	// plain names that no built-in attribute or entry uses.
	Attrs map[string]Attr
	// Upstream, when set, is the bridge the function sits behind (the
	// slot's port): the function's directory is served inside the
	// bridge's, and bus/pci/devices/BDF links to it, as on a host, so a
	// reader finds the bridge as the function's parent directory.
	Upstream *Bridge
	// ClassAttrs are the attributes of the function's class devices, by
	// name (one of Netdevs or RDMA), each by its path under the device's
	// directory ("address", "operstate", "ports/1/state",
	// "ports/1/hw_counters/out_of_sequence"). ServeTree serves them as
	// /sys/class/net/NAME and /sys/class/infiniband/NAME.
	ClassAttrs map[string]map[string]Attr
}

// Fwctl is a function's fwctl device: its type and device data (what
// FWCTL_INFO reports; for mlx5, struct fwctl_info_mlx5) and the RPC that
// FWCTL_RPC delivers, with the scope and mailboxes as the caller gave them.
// An RPC error that is a syscall.Errno is returned to the caller's ioctl
// as that errno (the driver's refusals: EBADMSG, EOPNOTSUPP, ENODEV ...);
// any other is EIO.
type Fwctl struct {
	DeviceType uint32
	DeviceData []byte
	RPC        func(ctx context.Context, scope uint32, in []byte, outLen int) ([]byte, error)
	// name is fwctlN, given by Normalize.
	name string
}

// Name is the fwctl device's name (fwctlN) once Normalize has numbered it.
func (f *Fwctl) Name() string { return f.name }

// Bridge is a PCI bridge as sysfs shows one: its address, its IDs (the
// identity files every PCI device has, which tools that list
// /sys/bus/pci/devices read: mstflint fails without them), and its
// attribute files besides those.
type Bridge struct {
	BDF            string
	Vendor, Device uint16
	Attrs          map[string]Attr
}

// Attr produces an attribute's text when the file is opened, as the
// kernel computes sysfs attributes on read (link states and counters
// change). An error makes the open fail with EIO.
type Attr func() (string, error)

// Options tune a Server. The zero value is fine.
type Options struct {
	// Debug logs every FUSE request to Logger (or standard error).
	Debug  bool
	Logger *log.Logger
	// MountTimeout bounds the wait for the kernel to accept the mount
	// (0: 10 s).
	MountTimeout time.Duration
	// HostNamespace is the mount namespace (the /proc/PID/ns/mnt link text)
	// of the process that created this one. Serve refuses to mount under
	// /sys unless it can see that its own namespace differs from PID 1's
	// or from this one.
	HostNamespace string
}

// Mounted is a served file system (a *fusefs.Server): Bind puts one of
// its parts (TreeParts, FwctlParts) over a directory, Detach drops the
// mount it was served on, Unmount ends it.
type Mounted interface {
	Bind(part, target string) error
	Detach() error
	Unmount() error
}

// A Mounter serves entries at mountpoint: the devices directory alone, or
// with tree the whole sysfs (fusefs.Mount). The namespace helper takes one
// (nsrun.Child), so that only the binary that serves links FUSE.
type Mounter func(mountpoint string, entries []DeviceEntry, opts *Options, tree bool) (Mounted, error)

var bdfRe = lazyre.New(`^(?:([0-9a-fA-F]{4}):)?([0-9a-fA-F]{2}):([01][0-9a-fA-F])\.([0-7])$`)

// CanonicalBDF returns bdf as "dddd:bb:dd.f", or an error saying what form
// is expected.
func CanonicalBDF(bdf string) (string, error) {
	m := bdfRe.FindStringSubmatch(strings.TrimSpace(bdf))
	if m == nil {
		return "", fmt.Errorf("bad PCI address %q: want DDDD:BB:DD.F or BB:DD.F in hex, device 00..1f, function 0..7 (e.g. 0000:03:00.0)", bdf)
	}
	dom := m[1]
	if dom == "" {
		dom = "0000"
	}
	return strings.ToLower(fmt.Sprintf("%s:%s:%s.%s", dom, m[2], m[3], m[4])), nil
}

// Normalize checks the entries and fills in what the header gives.
func Normalize(in []DeviceEntry) ([]DeviceEntry, error) {
	if len(in) == 0 {
		return nil, errors.New("sysfs: no devices to serve; give at least one DeviceEntry")
	}
	seen := map[string]bool{}
	classSeen := map[string]string{}
	out := make([]DeviceEntry, 0, len(in))
	for i, e := range in {
		bdf, err := CanonicalBDF(e.BDF)
		if err != nil {
			return nil, fmt.Errorf("sysfs: device %d: %w", i, err)
		}
		if seen[bdf] {
			return nil, fmt.Errorf("sysfs: device %s is listed twice; give each function its own address", bdf)
		}
		seen[bdf] = true
		e.BDF = bdf
		if e.Dev == nil {
			return nil, fmt.Errorf("sysfs: device %s has no config space (Dev is nil)", bdf)
		}
		if e.ConfigSize == 0 {
			e.ConfigSize = DefaultConfigSize
		}
		if e.ConfigSize < 64 {
			return nil, fmt.Errorf("sysfs: device %s: config size %d is smaller than the 64-byte PCI header", bdf, e.ConfigSize)
		}
		if err := fillFromHeader(&e); err != nil {
			return nil, err
		}
		for _, names := range [][]string{e.Netdevs, e.RDMA} {
			if err := checkNames(bdf, names); err != nil {
				return nil, err
			}
		}
		if e.Driver != "" && !validName(e.Driver) {
			return nil, fmt.Errorf("sysfs: device %s: driver name %q must be a plain file name", bdf, e.Driver)
		}
		if e.BAR0Size == 0 {
			e.BAR0Size = 32 << 20
		}
		e.Netdevs = append([]string(nil), e.Netdevs...)
		e.RDMA = append([]string(nil), e.RDMA...)
		if err := checkClassAttrs(e); err != nil {
			return nil, err
		}
		if err := checkAttrs(e); err != nil {
			return nil, err
		}
		for _, names := range [][]string{e.Netdevs, e.RDMA} {
			for _, n := range names {
				if other, dup := classSeen[n]; dup && other != bdf {
					return nil, fmt.Errorf("sysfs: interface name %q is used by %s and %s; give each its own", n, other, bdf)
				}
				classSeen[n] = bdf
			}
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].BDF < out[j].BDF })
	n := 0
	for i := range out {
		if out[i].Fwctl == nil {
			continue
		}
		if out[i].Fwctl.RPC == nil {
			return nil, fmt.Errorf("sysfs: device %s: its fwctl device has no RPC", out[i].BDF)
		}
		fc := *out[i].Fwctl
		fc.name = fmt.Sprintf("fwctl%d", n)
		out[i].Fwctl = &fc
		n++
	}
	for i := range out {
		u := out[i].Upstream
		if u == nil {
			continue
		}
		b, err := CanonicalBDF(u.BDF)
		if err != nil {
			return nil, fmt.Errorf("sysfs: device %s: its upstream bridge: %w", out[i].BDF, err)
		}
		if seen[b] {
			return nil, fmt.Errorf("sysfs: device %s: upstream bridge %s is also a function; give the bridge its own address", out[i].BDF, b)
		}
		for n, a := range u.Attrs {
			if !validName(n) || a == nil || bridgeIDs[n] {
				return nil, fmt.Errorf("sysfs: bridge %s: attribute %q must be a plain name with a function, other than the identity files", b, n)
			}
		}
		out[i].Upstream = &Bridge{BDF: b, Vendor: u.Vendor, Device: u.Device, Attrs: u.Attrs}
	}
	return out, nil
}

// bridgeIDs are the identity files of a bridge's directory.
var bridgeIDs = map[string]bool{"class": true, "vendor": true, "device": true, "subsystem_vendor": true, "subsystem_device": true, "revision": true}

// BridgeFiles are a bridge's identity files, in the kernel's formats.
func BridgeFiles(b *Bridge) []File {
	hex4 := func(v uint16) string { return fmt.Sprintf("0x%04x\n", v) }
	return []File{{"vendor", hex4(b.Vendor)}, {"device", hex4(b.Device)}, {"subsystem_vendor", hex4(0)},
		{"subsystem_device", hex4(0)}, {"class", "0x060400\n"}, {"revision", "0x00\n"}}
}

// checkAttrs checks a function's extra attributes: plain names that the
// built-in files and entries do not use.
func checkAttrs(e DeviceEntry) error {
	taken := map[string]bool{"config": true, "net": true, "infiniband": true, "driver": true}
	for _, a := range Attributes(e) {
		taken[a.Name] = true
	}
	for n, fn := range e.Attrs {
		if !validName(n) || strings.Contains(n, "/") {
			return fmt.Errorf("sysfs: device %s: attribute %q must be a plain file name", e.BDF, n)
		}
		if taken[n] {
			return fmt.Errorf("sysfs: device %s: attribute %q is already served", e.BDF, n)
		}
		if fn == nil {
			return fmt.Errorf("sysfs: device %s: attribute %q has no function", e.BDF, n)
		}
	}
	return nil
}

// fillFromHeader reads the standard header (offsets 0x00-0x3F hold no
// registers with read side effects) for identity fields left at zero.
func fillFromHeader(e *DeviceEntry) error {
	var h [64]byte
	if n, err := e.Dev.ReadAt(h[:], 0); n < len(h) {
		return fmt.Errorf("sysfs: device %s: read its config header: %v", e.BDF, err)
	}
	le16 := func(o int) uint16 { return uint16(h[o]) | uint16(h[o+1])<<8 }
	if e.Vendor == 0 {
		e.Vendor = le16(0x00)
	}
	if e.Device == 0 {
		e.Device = le16(0x02)
	}
	if e.Revision == 0 {
		e.Revision = h[0x08]
	}
	if e.Class == 0 {
		e.Class = uint32(h[0x09]) | uint32(h[0x0A])<<8 | uint32(h[0x0B])<<16
	}
	if e.SubVendor == 0 {
		e.SubVendor = le16(0x2C)
	}
	if e.SubDevice == 0 {
		e.SubDevice = le16(0x2E)
	}
	return nil
}

func validName(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, "/\x00") && len(s) <= 255
}

func checkNames(bdf string, names []string) error {
	seen := map[string]bool{}
	for _, n := range names {
		if !validName(n) {
			return fmt.Errorf("sysfs: device %s: interface name %q must be a plain file name", bdf, n)
		}
		if seen[n] {
			return fmt.Errorf("sysfs: device %s: interface name %q is listed twice", bdf, n)
		}
		seen[n] = true
	}
	return nil
}

// checkClassAttrs checks the attribute paths of a function's class
// devices: plain names joined by '/', for devices the function lists, no
// path both a file and a directory.
func checkClassAttrs(e DeviceEntry) error {
	listed := map[string]bool{}
	for _, n := range append(append([]string(nil), e.Netdevs...), e.RDMA...) {
		listed[n] = true
	}
	for dev, attrs := range e.ClassAttrs {
		if !listed[dev] {
			return fmt.Errorf("sysfs: device %s: attributes for %q, which is neither among its Netdevs nor its RDMA devices", e.BDF, dev)
		}
		dirs := map[string]bool{"device": true}
		for p := range attrs {
			parts := strings.Split(p, "/")
			for i, c := range parts {
				if !validName(c) {
					return fmt.Errorf("sysfs: device %s, %s: attribute path %q has a bad part %q", e.BDF, dev, p, c)
				}
				if i < len(parts)-1 {
					dirs[strings.Join(parts[:i+1], "/")] = true
				}
			}
			if attrs[p] == nil {
				return fmt.Errorf("sysfs: device %s, %s: attribute %q has no function", e.BDF, dev, p)
			}
		}
		for p := range attrs {
			if dirs[p] {
				return fmt.Errorf("sysfs: device %s, %s: %q is both a file and a directory", e.BDF, dev, p)
			}
		}
	}
	return nil
}

// Parts of a ServeTree file system that Bind puts over /sys.
var TreeParts = []string{"bus/pci/devices", "class/net", "class/infiniband"}

// FwctlParts are the parts a ServeTree file system has when an entry has
// a Fwctl (HasFwctl): "class/fwctl" goes over /sys/class/fwctl,
// "dev/fwctl" (the device files) over /dev/fwctl.
var FwctlParts = []string{"class/fwctl", "dev/fwctl"}

// HasFwctl says whether an entry has a fwctl device.
func HasFwctl(entries []DeviceEntry) bool {
	for _, e := range entries {
		if e.Fwctl != nil {
			return true
		}
	}
	return false
}

// ReadConfig performs one config-file read for the FUSE layer: exactly one
// ReadAt of len(dest) bytes at off (clipped to the config size), as the
// kernel's sysfs `config` file does.
func ReadConfig(cs ConfigSpace, size int, dest []byte, off int64) (int, error) {
	if off < 0 {
		return 0, syscall.EINVAL
	}
	if off >= int64(size) {
		return 0, nil
	}
	n := min(int64(len(dest)), int64(size)-off)
	got, err := cs.ReadAt(dest[:n], off)
	if err != nil && !errors.Is(err, io.EOF) && got == 0 {
		return 0, err
	}
	return got, nil
}

// WriteConfig is the write counterpart: beyond the end nothing is written
// and 0 is returned, like sysfs.
func WriteConfig(cs ConfigSpace, size int, data []byte, off int64) (int, error) {
	if off < 0 {
		return 0, syscall.EINVAL
	}
	if off >= int64(size) {
		return 0, nil
	}
	n := min(int64(len(data)), int64(size)-off)
	got, err := cs.WriteAt(data[:n], off)
	if err != nil && got == 0 {
		return 0, err
	}
	return got, nil
}
