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
	"slices"
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
	// ClassAttrs are the attributes of the function's class devices, by
	// name (one of Netdevs or RDMA), each by its path under the device's
	// directory ("address", "operstate", "ports/1/state",
	// "ports/1/hw_counters/out_of_sequence"). ServeTree serves them as
	// /sys/class/net/NAME and /sys/class/infiniband/NAME.
	ClassAttrs map[string]map[string]Attr
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

// Server is a mounted file system. Unmount it when done.
type Server struct {
	srv        *fuse.Server
	mountpoint string
	entries    []DeviceEntry
	hostNS     string
	binds      []string
	detached   bool

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

// Serve mounts a file system listing entries at mountpoint (an existing
// directory; DefaultMountpoint for PCI tools) and serves it until Unmount.
// It needs root (it calls mount(2) itself; no fusermount). Mounting
// anywhere under /sys is refused unless the process is in a mount namespace
// of its own, so the host's sysfs is never covered by accident.
func Serve(mountpoint string, entries []DeviceEntry, opts *Options) (*Server, error) {
	return serve(mountpoint, entries, opts, false)
}

func serve(mountpoint string, entries []DeviceEntry, opts *Options, tree bool) (*Server, error) {
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

	root := newRoot(list, time.Now(), tree)
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
	return &Server{srv: srv, mountpoint: mp, entries: list, hostNS: o.HostNamespace}, nil
}

// ServeTree mounts a file system shaped like a sysfs root at mountpoint:
// bus/pci/devices/BDF for each function (as Serve serves them), and
// class/net/NAME and class/infiniband/NAME for its class devices, each with
// a `device` link to its function and the entry's ClassAttrs; the
// function's net/ and infiniband/ entries link to them. All links are
// relative, so they resolve the same when the parts are bound over a real
// /sys (Bind). It is normally mounted on a private staging directory.
func ServeTree(mountpoint string, entries []DeviceEntry, opts *Options) (*Server, error) {
	return serve(mountpoint, entries, opts, true)
}

// Parts of a ServeTree file system that Bind puts over /sys.
var TreeParts = []string{"bus/pci/devices", "class/net", "class/infiniband"}

// Bind mounts the directory part of the file system (one of TreeParts)
// over target, an existing directory; Unmount removes it again. Binding
// under /sys is refused outside a private mount namespace, as Serve
// refuses to mount there.
func (s *Server) Bind(part, target string) error {
	if !slices.Contains(TreeParts, part) {
		return fmt.Errorf("sysfs: %q is not a part of the tree (%s)", part, strings.Join(TreeParts, ", "))
	}
	if s.detached {
		return errors.New("sysfs: Bind after Detach: the tree is no longer reachable")
	}
	tp, err := filepath.Abs(target)
	if err != nil {
		return err
	}
	if err := guardHostSys(tp, s.hostNS); err != nil {
		return err
	}
	if err := unix.Mount(filepath.Join(s.mountpoint, part), tp, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("sysfs: bind %s over %s: %w", part, tp, err)
	}
	s.binds = append(s.binds, tp)
	return nil
}

// Detach takes the file system off its own mount point, leaving only what
// Bind put elsewhere (the staging directory can then be removed); the
// server goes on serving those.
func (s *Server) Detach() error {
	if s.detached {
		return nil
	}
	if err := unix.Unmount(s.mountpoint, unix.MNT_DETACH); err != nil {
		return fmt.Errorf("sysfs: detach %s: %w", s.mountpoint, err)
	}
	s.detached = true
	return nil
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
		var errs []error
		for i := len(s.binds) - 1; i >= 0; i-- {
			if err := unix.Unmount(s.binds[i], unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) {
				errs = append(errs, fmt.Errorf("sysfs: unmount %s: %w", s.binds[i], err))
			}
		}
		if s.detached {
			// The binds were the last mounts: the kernel ends the
			// connection once nothing holds a file open.
			s.err = errors.Join(errs...)
			return
		}
		defer func() { s.err = errors.Join(append(errs, s.err)...) }()
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
