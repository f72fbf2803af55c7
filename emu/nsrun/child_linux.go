package nsrun

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cxray/cxray/access/pci"
	"github.com/cxray/cxray/emu/sysfs"
)

// File descriptors the helper inherits from Run.
const (
	fdRequest = 3 // Run -> helper: one JSON request
	fdReport  = 4 // helper -> Run: JSON lines (ready, error, exit)
)

type request struct {
	Token      string   `json:"token"`
	Payload    []byte   `json:"payload"`
	Path       string   `json:"path"`
	Argv       []string `json:"argv"`
	Env        []string `json:"env"`
	Dir        string   `json:"dir"`
	Mountpoint string   `json:"mountpoint"`
	Debug      bool     `json:"debug"`
	HostNS     string   `json:"host_ns"`
	// KillGrace is how long the command has after a SIGTERM before it
	// and everything it started are killed.
	KillGrace time.Duration `json:"kill_grace"`
}

const (
	evReady = "ready"
	evError = "error"
	evExit  = "exit"
)

type report struct {
	Event string `json:"event"`
	Error string `json:"error,omitempty"`
	PID   int    `json:"pid,omitempty"`
	Code  int    `json:"code"`
}

// Child turns the process into the namespace helper if Run started it, and
// then never returns; otherwise it returns at once. Call it at the top of
// main, before any other work (in tests: in TestMain), with the Builder
// that turns Spec.Payload into devices and the Mounter that serves them
// (fusefs.Mount: only the program that serves links FUSE).
func Child(build Builder, mount sysfs.Mounter) {
	tok := os.Getenv(EnvChild)
	if tok == "" {
		return
	}
	os.Exit(helper(tok, build, mount))
}

// helper runs in the re-executed binary, in the private mount namespace.
func helper(tok string, build Builder, mount sysfs.Mounter) int {
	os.Unsetenv(EnvChild)
	var st unix.Stat_t
	if unix.Fstat(fdRequest, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO ||
		unix.Fstat(fdReport, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
		fmt.Fprintf(os.Stderr, "nsrun: %s is set, but this process was not started by nsrun.Run; unset it\n", EnvChild)
		return 2
	}
	// Neither pipe may leak into the command: an inherited report pipe
	// would keep Run waiting for as long as the command lives.
	unix.CloseOnExec(fdRequest)
	unix.CloseOnExec(fdReport)
	rep := os.NewFile(fdReport, "nsrun-report")
	enc := json.NewEncoder(rep)
	send := func(r report) { _ = enc.Encode(r) }
	fail := func(format string, args ...any) int {
		send(report{Event: evError, Error: fmt.Sprintf(format, args...)})
		return 125 // like env(1) and docker: the runner failed, not the command
	}

	// Catch signals from the start so that a SIGTERM during setup still
	// unmounts (and reaches the command once there is one).
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)

	var req request
	// Non-blocking, so the read can have a deadline.
	_ = unix.SetNonblock(fdRequest, true)
	reqf := os.NewFile(fdRequest, "nsrun-request")
	_ = reqf.SetReadDeadline(time.Now().Add(10 * time.Second))
	err := json.NewDecoder(reqf).Decode(&req)
	reqf.Close()
	if err != nil {
		return fail("read the request from the parent: %v", err)
	}
	if req.Token != tok {
		return fail("the request does not match this helper's token; was %s copied from another process?", EnvChild)
	}

	// Never mount in the parent's namespace: check it is a different one,
	// and that / propagates nothing back (Go did this before exec; again
	// for safety).
	self, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil || self == req.HostNS {
		return fail("not in a private mount namespace (this %q, parent %q, %v); refusing to mount", self, req.HostNS, err)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fail("make / private in the new mount namespace: %v", err)
	}

	// Adopt what the command leaves behind, to stop it at the end.
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fail("become a child subreaper: %v", err)
	}

	if build == nil || mount == nil {
		return fail("no device builder or mounter: the program must pass both to nsrun.Child")
	}
	defer runExitHooks()
	entries, err := build(req.Payload)
	if err != nil {
		return fail("build the emulated devices: %v", err)
	}
	defer closeDevices(entries)
	warnKernelModule(entries)

	isolateLocks()
	srv, err := mountDevices(req, entries, mount)
	if err != nil {
		return fail("%v", err)
	}
	defer srv.Unmount()

	select {
	case s := <-sigs:
		return fail("stopped by %v before the command started", s)
	default:
	}
	cmd := &exec.Cmd{
		Path: req.Path, Args: req.Argv, Env: req.Env, Dir: req.Dir,
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		// The command must not outlive the file system it uses.
		SysProcAttr: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	}
	if err := cmd.Start(); err != nil {
		return fail("start %s: %v", req.Path, err)
	}
	send(report{Event: evReady, PID: cmd.Process.Pid})

	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	var killAt <-chan time.Time
	for running := true; running; {
		select {
		case s := <-sigs:
			if !fromKeyboard(s) {
				_ = cmd.Process.Signal(s)
			}
			// SIGTERM means "stop": if the command ignores it, kill it
			// and everything it started once the grace period is over.
			if s == syscall.SIGTERM && killAt == nil {
				killAt = time.After(req.KillGrace)
			}
		case <-killAt:
			_ = cmd.Process.Kill()
			signalTree(os.Getpid(), syscall.SIGKILL)
		case <-done:
			running = false
		}
	}
	stopLeftovers(time.Second)
	code := exitCode(cmd.ProcessState)
	if err := srv.Unmount(); err != nil {
		fmt.Fprintf(os.Stderr, "nsrun: %v (the mount lives only in the private namespace and goes with it)\n", err)
	}
	send(report{Event: evExit, Code: code})
	return code
}

var (
	exitMu    sync.Mutex
	exitHooks []func()
)

// AtExit registers fn to run when the namespace helper ends by itself:
// after the command exited (however it was stopped: a signal to Run is
// passed on to the command, which then exits) and the file system is
// unmounted, or when setup failed after the Builder ran. A Builder uses it
// to release what it started, such as a control socket. Hooks run in
// reverse order of registration. (Nothing runs when the helper is killed
// outright, SIGKILL included.)
func AtExit(fn func()) {
	exitMu.Lock()
	exitHooks = append(exitHooks, fn)
	exitMu.Unlock()
}

func runExitHooks() {
	exitMu.Lock()
	hs := exitHooks
	exitHooks = nil
	exitMu.Unlock()
	for i := len(hs) - 1; i >= 0; i-- {
		hs[i]()
	}
}

// isolateLocks gives this run its own, empty mstflint lock directory: a
// tmpfs over /tmp/mstflint_lockfiles in this namespace. The emulated
// functions are seen by nothing outside the namespace, so sharing lock files
// with the host (whose real function may have the same address) or with
// other emulator runs only makes tools fail: mstflint retries a busy lock
// for a few milliseconds only, and every config access holds it for a FUSE
// round trip. Tools inside still share it with each other. If it cannot be
// done the host's directory is used, with a note.
func isolateLocks() {
	const dir = pci.LockDir
	err := os.Mkdir(dir, 0o777)
	if err == nil || errors.Is(err, fs.ErrExist) {
		err = unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0777,size=1m")
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "nsrun: note: sharing the host's %s (a private one failed: %v)\n", dir, err)
	}
}

// mountDevices serves the devices. Over the default /sys/bus/pci/devices
// the whole emulated sysfs is served: the FUSE tree (fusefs.ServeTree) is
// mounted on a staging directory, its parts are bound over
// /sys/bus/pci/devices, /sys/class/net and /sys/class/infiniband, and the
// staging mount is detached and its directory removed, so nothing of it
// shows outside. Names (mlx5_0, the interfaces) then resolve as on a
// host. Any other mount point gets the devices directory alone.
func mountDevices(req request, entries []sysfs.DeviceEntry, mount sysfs.Mounter) (sysfs.Mounted, error) {
	opts := &sysfs.Options{Debug: req.Debug, HostNamespace: req.HostNS}
	if filepath.Clean(req.Mountpoint) != sysfs.DefaultMountpoint {
		if err := ensureMountpoint(req.Mountpoint, true); err != nil {
			return nil, err
		}
		return mount(req.Mountpoint, entries, opts, false)
	}
	// Every target first: making a missing one may cover its parent,
	// which would hide a bind made before.
	parts := map[string]string{}
	for _, part := range sysfs.TreeParts {
		parts[part] = "/sys/" + part
	}
	if sysfs.HasFwctl(entries) {
		// The command interface, as a host with mlx5_fwctl has it
		// (Linux 6.15+): /sys/class/fwctl and /dev/fwctl.
		parts["class/fwctl"], parts["dev/fwctl"] = "/sys/class/fwctl", "/dev/fwctl"
	}
	for _, part := range sortedKeys(parts) {
		// No PCI bus is worth a note; no RDMA class (no ib_core) or fwctl
		// (an older kernel) is usual.
		if err := ensureMountpoint(parts[part], part == "bus/pci/devices"); err != nil {
			return nil, err
		}
	}
	staging, err := os.MkdirTemp("", "cxray-emu-sys-")
	if err != nil {
		return nil, err
	}
	defer os.Remove(staging)
	srv, err := mount(staging, entries, opts, true)
	if err != nil {
		return nil, err
	}
	for _, part := range sortedKeys(parts) {
		if err := srv.Bind(part, parts[part]); err != nil {
			srv.Unmount()
			return nil, err
		}
	}
	if err := srv.Detach(); err != nil {
		srv.Unmount()
		return nil, err
	}
	return srv, nil
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ensureMountpoint makes a missing mount point under /sys (a VM or
// container without PCI has no /sys/bus/pci; a host without RDMA has no
// /sys/class/infiniband) or /dev (a kernel without fwctl has no
// /dev/fwctl) by covering its deepest existing ancestor below /sys, or
// /dev itself, with a tmpfs, in this private namespace only, on which the
// ancestor's own entries are bound back (so /sys/class keeps its other
// classes, /dev its devices and the file systems mounted in it) before the
// missing directories are made.
func ensureMountpoint(mp string, note bool) error {
	mp = filepath.Clean(mp)
	if _, err := os.Stat(mp); err == nil {
		return nil
	}
	anc := mp
	for anc != "/" {
		anc = filepath.Dir(anc)
		if _, err := os.Stat(anc); err == nil {
			break
		}
	}
	if !strings.HasPrefix(anc, "/sys/") && anc != "/dev" {
		return fmt.Errorf("mount point %s does not exist; create it, or pick an existing directory", mp)
	}
	kept, err := coverKeeping(anc)
	if err != nil {
		return fmt.Errorf("mount point %s does not exist, and a tmpfs over %s to make it failed: %v", mp, anc, err)
	}
	if err := os.MkdirAll(mp, 0o755); err != nil {
		return fmt.Errorf("make mount point %s: %v", mp, err)
	}
	if note {
		fmt.Fprintf(os.Stderr, "nsrun: note: %s did not exist; made it on a tmpfs over %s (its %d entries bound back)\n", mp, anc, kept)
	}
	return nil
}

// coverKeeping mounts a tmpfs over dir and puts dir's entries back on it:
// directories and files bound from the original (with what is mounted on
// and under them: /dev/pts, /dev/shm), links copied. It returns how many
// entries it kept.
func coverKeeping(dir string) (int, error) {
	hold, err := os.MkdirTemp("", "cxray-emu-hold-")
	if err != nil {
		return 0, err
	}
	defer os.Remove(hold)
	if err := unix.Mount(dir, hold, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return 0, err
	}
	defer unix.Unmount(hold, unix.MNT_DETACH)
	ents, err := os.ReadDir(hold)
	if err != nil {
		return 0, err
	}
	// Device files are bound back (each keeps its own mount's flags),
	// so the tmpfs itself needs no device access in either case.
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0755,size=64k"); err != nil {
		return 0, err
	}
	kept := 0
	for _, e := range ents {
		src, dst := filepath.Join(hold, e.Name()), filepath.Join(dir, e.Name())
		var err error
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			var t string
			if t, err = os.Readlink(src); err == nil {
				err = os.Symlink(t, dst)
			}
		case e.IsDir():
			if err = os.Mkdir(dst, 0o755); err == nil {
				err = unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, "")
			}
		default:
			var f *os.File
			if f, err = os.Create(dst); err == nil {
				f.Close()
				err = unix.Mount(src, dst, "", unix.MS_BIND, "")
			}
		}
		if err != nil {
			return kept, fmt.Errorf("put %s back: %v", dst, err)
		}
		kept++
	}
	return kept, nil
}

func closeDevices(entries []sysfs.DeviceEntry) {
	for _, e := range entries {
		if c, ok := e.Dev.(io.Closer); ok {
			_ = c.Close()
		}
	}
}

// warnKernelModule warns when mstflint's kernel module has a node for an
// emulated address: tools would then talk to that module, not to the
// emulator.
func warnKernelModule(entries []sysfs.DeviceEntry) {
	for _, e := range entries {
		bdf, err := sysfs.CanonicalBDF(e.BDF)
		if err != nil {
			continue
		}
		for _, suffix := range []string{"_mstconf", "_mstcr"} {
			p := filepath.Join("/dev", bdf+suffix)
			if _, err := os.Stat(p); err == nil {
				fmt.Fprintf(os.Stderr, "nsrun: warning: %s exists (mstflint_access module): mstflint tools will use it instead of the emulated %s; "+
					"unload the module (rmmod mstflint_access) or emulate another address\n", p, bdf)
			}
		}
	}
}

// fromKeyboard tells whether sig most likely came from the terminal: a
// SIGINT or SIGQUIT while this process group is the terminal's foreground
// group. The terminal sent it to the command too, so passing it on would
// deliver it twice.
func fromKeyboard(sig os.Signal) bool {
	if sig != syscall.SIGINT && sig != syscall.SIGQUIT {
		return false
	}
	fd, err := unix.Open("/dev/tty", unix.O_RDONLY|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false // no controlling terminal
	}
	defer unix.Close(fd)
	fg, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	return err == nil && fg == unix.Getpgrp()
}
