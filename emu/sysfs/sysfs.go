// Package sysfs serves emulated PCI functions as a FUSE file system shaped
// like Linux's /sys/bus/pci/devices: one directory per function with the
// attribute files PCI tools read (vendor, device, class, numa_node,
// resource, ...) and a `config` file whose every pread/pwrite reaches the
// function's ReadAt/WriteAt at the caller's offset and size.
//
// Mounted over /sys/bus/pci/devices inside a private mount namespace (see
// package emu/nsrun), it lets unmodified tools such as mstflint's mstreg and
// cxray's own sysfs path drive the emulator. The mount hides the real
// directory, so the host's real PCI functions are invisible there.
package sysfs

import (
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
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
}

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

// Server is a mounted file system. Unmount it when done.
type Server struct {
	srv        *fuse.Server
	mountpoint string
	entries    []DeviceEntry

	once sync.Once
	err  error
}

// Mountpoint returns where the file system is mounted.
func (s *Server) Mountpoint() string { return s.mountpoint }

// Entries returns the served functions, normalised (canonical BDFs, IDs
// filled in from the config headers).
func (s *Server) Entries() []DeviceEntry { return append([]DeviceEntry(nil), s.entries...) }

var bdfRe = regexp.MustCompile(`^(?:([0-9a-fA-F]{4}):)?([0-9a-fA-F]{2}):([01][0-9a-fA-F])\.([0-7])$`)

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

// normalize checks the entries and fills in what the header gives.
func normalize(in []DeviceEntry) ([]DeviceEntry, error) {
	if len(in) == 0 {
		return nil, errors.New("sysfs: no devices to serve; give at least one DeviceEntry")
	}
	seen := map[string]bool{}
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
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].BDF < out[j].BDF })
	return out, nil
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

// Serve mounts a file system listing entries at mountpoint (an existing
// directory; DefaultMountpoint for PCI tools) and serves it until Unmount.
// It needs root (it calls mount(2) itself; no fusermount). Mounting
// anywhere under /sys is refused unless the process is in a mount namespace
// of its own, so the host's sysfs is never covered by accident.
func Serve(mountpoint string, entries []DeviceEntry, opts *Options) (*Server, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MountTimeout <= 0 {
		o.MountTimeout = 10 * time.Second
	}
	list, err := normalize(entries)
	if err != nil {
		return nil, err
	}
	mp, err := filepath.Abs(mountpoint)
	if err != nil {
		return nil, fmt.Errorf("sysfs: mount point %q: %w", mountpoint, err)
	}
	if st, err := os.Stat(mp); err != nil {
		return nil, fmt.Errorf("sysfs: mount point: %w; it must be an existing directory", err)
	} else if !st.IsDir() {
		return nil, fmt.Errorf("sysfs: mount point %s is not a directory", mp)
	}
	if err := guardHostSys(mp, o.HostNamespace); err != nil {
		return nil, err
	}

	root := newRoot(list, time.Now())
	long := time.Minute // the tree never changes while mounted
	fo := &fs.Options{
		EntryTimeout:    &long,
		AttrTimeout:     &long,
		NegativeTimeout: &long,
		MountOptions: fuse.MountOptions{
			FsName: "cxray-emu",
			Name:   "cxray",
			// mount(2) directly: we are root, and the setuid
			// fusermount helper (for users) may not even be installed.
			DirectMountStrict: true,
			// Let the kernel apply the modes below (config 0644,
			// attributes 0444) to non-root users, as sysfs does.
			AllowOther: true,
			Options:    []string{"default_permissions"},
			// No xattr round trips: sysfs attributes have none worth
			// emulating and tools like ls ask for security labels.
			DisableXAttrs: true,
			Debug:         o.Debug,
			Logger:        o.Logger,
		},
		Logger: o.Logger,
	}
	if o.Debug && o.Logger == nil {
		fo.MountOptions.Logger = log.New(os.Stderr, "sysfs-fuse: ", log.Lmicroseconds)
	}
	rawFS := fs.NewNodeFS(root, fo)
	srv, err := fuse.NewServer(rawFS, mp, &fo.MountOptions)
	if err != nil {
		return nil, mountError(mp, err)
	}
	go srv.Serve()
	done := make(chan error, 1)
	go func() { done <- srv.WaitMount() }()
	select {
	case err = <-done:
	case <-time.After(o.MountTimeout):
		err = fmt.Errorf("the kernel did not start the file system within %v", o.MountTimeout)
	}
	if err != nil {
		_ = unix.Unmount(mp, unix.MNT_DETACH)
		return nil, fmt.Errorf("sysfs: mount on %s: %w", mp, err)
	}
	return &Server{srv: srv, mountpoint: mp, entries: list}, nil
}

func mountError(mp string, err error) error {
	switch {
	case errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENODEV):
		return fmt.Errorf("sysfs: mount on %s: %w; FUSE is not available: load the fuse module (modprobe fuse) or install fuse3", mp, err)
	case errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES):
		return fmt.Errorf("sysfs: mount on %s: %w; mounting FUSE needs root (CAP_SYS_ADMIN); in a container run it with --privileged or --cap-add SYS_ADMIN --device /dev/fuse", mp, err)
	}
	return fmt.Errorf("sysfs: mount on %s: %w", mp, err)
}

// guardHostSys refuses to cover any part of /sys in a namespace that is
// not private: that would hide the host's devices from every process on
// it. The namespace must differ from PID 1's (when that can be read; in
// some sandboxes it cannot) and from hostNS (when given).
func guardHostSys(mp, hostNS string) error {
	if mp != "/sys" && !strings.HasPrefix(mp, "/sys/") {
		return nil
	}
	self, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		return fmt.Errorf("sysfs: refusing to mount on %s: cannot read this process's mount namespace: %w", mp, err)
	}
	refuse := fmt.Errorf("sysfs: refusing to mount on %s in the host's mount namespace (it would hide the real PCI devices from everyone); run it in a private one, e.g. `cxray emu run -- CMD` (package nsrun)", mp)
	checked := false
	if init, err := os.Readlink("/proc/1/ns/mnt"); err == nil {
		if init == self {
			return refuse
		}
		checked = true
	}
	if hostNS != "" {
		if hostNS == self {
			return refuse
		}
		checked = true
	}
	if !checked {
		return fmt.Errorf("sysfs: refusing to mount on %s: cannot tell whether this mount namespace is private "+
			"(/proc/1/ns/mnt is unreadable and Options.HostNamespace is empty); run it through nsrun", mp)
	}
	return nil
}

// Unmount detaches the file system and stops serving it. If processes
// still hold files open, it falls back to a lazy detach (the kernel
// finishes it when they close them). Calling it again returns the first
// result.
func (s *Server) Unmount() error {
	s.once.Do(func() {
		done := make(chan error, 1)
		go func() { done <- s.srv.Unmount() }()
		var err error
		select {
		case err = <-done:
		case <-time.After(5 * time.Second):
			err = errors.New("timed out")
		}
		if err == nil {
			return
		}
		if derr := unix.Unmount(s.mountpoint, unix.MNT_DETACH); derr != nil && !errors.Is(derr, unix.EINVAL) {
			s.err = fmt.Errorf("sysfs: unmount %s: %v; lazy detach: %w", s.mountpoint, err, derr)
		}
	})
	return s.err
}

// Wait blocks until the file system is unmounted (by Unmount or by
// someone else) and its request loops have ended.
func (s *Server) Wait() { s.srv.Wait() }

// readConfig performs one config-file read for the FUSE layer: exactly one
// ReadAt of len(dest) bytes at off (clipped to the config size), as the
// kernel's sysfs `config` file does.
func readConfig(cs ConfigSpace, size int, dest []byte, off int64) (int, error) {
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

// writeConfig is the write counterpart: beyond the end nothing is written
// and 0 is returned, like sysfs.
func writeConfig(cs ConfigSpace, size int, data []byte, off int64) (int, error) {
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
