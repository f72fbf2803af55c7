package fusefs

import (
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/cxray/cxray/emu/sysfs"
)

// Server is a mounted file system. Unmount it when done.
type Server struct {
	srv        *fuse.Server
	mountpoint string
	entries    []sysfs.DeviceEntry
	hostNS     string
	binds      []string
	detached   bool

	once sync.Once
	err  error
}

// Serve mounts a file system listing entries at mountpoint (an existing
// directory; DefaultMountpoint for PCI tools) and serves it until Unmount.
// It needs root (it calls mount(2) itself; no fusermount). Mounting
// anywhere under /sys is refused unless the process is in a mount namespace
// of its own, so the host's sysfs is never covered by accident.
func Serve(mountpoint string, entries []sysfs.DeviceEntry, opts *sysfs.Options) (*Server, error) {
	return serve(mountpoint, entries, opts, false)
}

func serve(mountpoint string, entries []sysfs.DeviceEntry, opts *sysfs.Options, tree bool) (*Server, error) {
	var o sysfs.Options
	if opts != nil {
		o = *opts
	}
	if o.MountTimeout <= 0 {
		o.MountTimeout = 10 * time.Second
	}
	list, err := sysfs.Normalize(entries)
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
	// go-fuse's direct mount (mount_linux.go, mountDirect) opens /dev/fuse
	// without O_CLOEXEC and returns before it sets close-on-exec, so the
	// command `emu run` starts would hold the connection: it then outlives
	// its server, and a process left using it sleeps in fuse_flush,
	// unkillable, until the connection is aborted.
	if err := fuseCloseOnExec(); err != nil {
		srv.Unmount()
		return nil, fmt.Errorf("sysfs: %w", err)
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
func ServeTree(mountpoint string, entries []sysfs.DeviceEntry, opts *sysfs.Options) (*Server, error) {
	return serve(mountpoint, entries, opts, true)
}

// Bind mounts the directory part of the file system (one of TreeParts, or
// of FwctlParts when an entry has a Fwctl) over target, an existing directory; Unmount removes it again.
// Binding under /sys or /dev is refused outside a private mount
// namespace, as Serve refuses to mount there.
func (s *Server) Bind(part, target string) error {
	if !slices.Contains(sysfs.TreeParts, part) && !(slices.Contains(sysfs.FwctlParts, part) && sysfs.HasFwctl(s.entries)) {
		return fmt.Errorf("sysfs: %q is not a part of the tree (%s)", part, strings.Join(append(slices.Clone(sysfs.TreeParts), sysfs.FwctlParts...), ", "))
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

// fuseCloseOnExec marks every descriptor of this process open on /dev/fuse
// close-on-exec.
func fuseCloseOnExec() error {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return fmt.Errorf("list this process's descriptors: %w", err)
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if target, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && target == "/dev/fuse" {
			unix.CloseOnExec(fd)
		}
	}
	return nil
}
