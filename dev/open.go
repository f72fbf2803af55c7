package dev

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cxray/cxray/access/icmd"
	"github.com/cxray/cxray/access/pci"
	"github.com/cxray/cxray/access/regaccess"
	"github.com/cxray/cxray/access/vsec"
	"github.com/cxray/cxray/dev/devname"
	"github.com/cxray/cxray/internal/clock"
	"github.com/cxray/cxray/prm"
)

// Stack is the access path over one config space: gateway, ICMD, access
// registers. The same code drives hardware and the emulator. Close it
// (or the Device opened with it) to give back the ICMD semaphore it keeps
// between commands.
type Stack struct {
	Gateway *vsec.Gateway
	ICMD    *icmd.Client
	Regs    *regaccess.Client

	closeOnce sync.Once
	closeErr  error
}

// StackOptions tune OpenStack; the zero value is right for hardware.
type StackOptions struct {
	Clock clock.Clock // nil: the wall clock
	// Name is the function in messages ("0000:03:00.0").
	Name string
	// SemaphoreTimeout, when positive, caps waits for semaphores other
	// agents hold below the caller's deadline. Zero (the default): waits
	// last as long as the context's deadline.
	SemaphoreTimeout time.Duration
	// Witness records this process's semaphore holds so that a killed
	// process's can be recognised and released (OpenPCI opens one beside
	// mstflint's lock files). Nil: no recovery.
	Witness *pci.Witness
	// DeadHolder tells an ICMD semaphore left by a dead process that
	// recorded nothing (mstflint) from a live one (OpenPCI sets
	// pci.DeadPIDHolder for the function). Nil: such holders are waited for.
	DeadHolder func(v uint32) (why string, dead bool)
	// Notify receives a notice when a semaphore left by a dead holder is
	// released; nil prints it on standard error ("cxray: notice: ...").
	Notify func(vsec.Notice)
	// ICMDKeepIdle: how long the ICMD semaphore is kept between commands;
	// negative: released after every command. Zero takes the environment
	// variable CXRAY_ICMD_KEEP ("on" for icmd.DefaultKeepIdle, or a Go
	// duration), and without it the semaphore is released after every
	// command: a cxray killed between commands then leaves nothing held
	// for mstflint's tools (docs/reliability.md).
	ICMDKeepIdle time.Duration
}

// IsZero reports whether o is the zero value (StackOptions holds funcs, so
// it cannot be compared with ==).
func (o StackOptions) IsZero() bool {
	return o.Clock == nil && o.Name == "" && o.SemaphoreTimeout == 0 && o.Witness == nil &&
		o.DeadHolder == nil && o.Notify == nil && o.ICMDKeepIdle == 0
}

// DefaultNotify prints a notice on standard error. Callers that report
// otherwise set StackOptions.Notify.
func DefaultNotify(n vsec.Notice) { fmt.Fprintf(os.Stderr, "cxray: notice: %s\n", n) }

// KeepFromEnv reads CXRAY_ICMD_KEEP, the user's opt-in to keeping the ICMD
// semaphore between commands: "on" (or "1") keeps it for
// icmd.DefaultKeepIdle, a positive Go duration for that long; anything
// else (unset, "off", "0") keeps it only while a command runs (-1).
func KeepFromEnv() time.Duration {
	v := strings.TrimSpace(os.Getenv("CXRAY_ICMD_KEEP"))
	switch v {
	case "on", "1", "true":
		return icmd.DefaultKeepIdle
	}
	if d, err := time.ParseDuration(v); err == nil && d > 0 {
		return d
	}
	return -1
}

// OpenStack builds the access path over cs: it opens the gateway, and ICMD
// with its capability query in the same gateway session.
func OpenStack(ctx context.Context, cs pci.ConfigSpace, o StackOptions) (*Stack, error) {
	notify := o.Notify
	if notify == nil {
		notify = DefaultNotify
	}
	vo := &vsec.Options{Clock: o.Clock, Name: o.Name, SemaphoreTimeout: o.SemaphoreTimeout, Notify: notify}
	io := &icmd.Options{SemaphoreTimeout: o.SemaphoreTimeout, QueryCapabilities: true, KeepIdle: o.ICMDKeepIdle, DeadHolder: o.DeadHolder}
	if io.KeepIdle == 0 {
		io.KeepIdle = KeepFromEnv()
	}
	if o.Witness != nil {
		vo.Witness = o.Witness.Slot(pci.WitnessGateway)
		io.Witness = o.Witness.Slot(pci.WitnessICMD)
	}
	gw, err := vsec.Open(cs, vo)
	if err != nil {
		return nil, err
	}
	ic, err := icmd.Open(ctx, gw, io)
	if err != nil {
		return nil, err
	}
	st := &Stack{Gateway: gw, ICMD: ic, Regs: regaccess.New(ic)}
	open.add(st)
	return st, nil
}

// Close gives back what the stack still holds (the ICMD semaphore kept
// between commands), waiting up to vsec.ReleaseBudget for a command that
// is still running. Later accesses fail. Calling it again does nothing.
func (s *Stack) Close() error {
	s.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), vsec.ReleaseBudget)
		defer cancel()
		s.closeErr = s.ICMD.Close(ctx)
		open.remove(s)
	})
	return s.closeErr
}

// open is every Stack not yet closed, for ReleaseAll.
var open = &stacks{m: map[*Stack]bool{}}

type stacks struct {
	mu sync.Mutex
	m  map[*Stack]bool
}

func (s *stacks) add(st *Stack) {
	s.mu.Lock()
	s.m[st] = true
	s.mu.Unlock()
}

func (s *stacks) remove(st *Stack) {
	s.mu.Lock()
	delete(s.m, st)
	s.mu.Unlock()
}

// ReleaseAll closes every open Stack of the process, each bounded by
// vsec.ReleaseBudget, and waits at most d for all of them. A signal
// handler calls it before exiting at once (a second signal): a command
// still running gives back what it holds when it sees its context end;
// whatever cannot be released in time is left to the next cxray process,
// which recognises it through the witness.
func ReleaseAll(d time.Duration) {
	open.mu.Lock()
	all := make([]*Stack, 0, len(open.m))
	for st := range open.m {
		all = append(all, st)
	}
	open.mu.Unlock()
	done := make(chan struct{})
	go func() {
		var wg sync.WaitGroup
		for _, st := range all {
			wg.Add(1)
			go func() {
				defer wg.Done()
				st.Close()
			}()
		}
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(d):
	}
}

// OpenConfigSpace opens a device over an already-open config space (the
// emulator's, in tests and for -d emu). Closing the device closes the stack.
func OpenConfigSpace(ctx context.Context, name, bdf string, backend Backend, db *prm.DB, cs pci.ConfigSpace, o StackOptions) (*Device, *Stack, error) {
	if o.Name == "" {
		o.Name = bdf
	}
	st, err := OpenStack(ctx, cs, o)
	if err != nil {
		return nil, nil, &OpenError{Name: name, Err: err}
	}
	return New(name, bdf, backend, db, st.Regs, st.Close), st, nil
}

// OpenError wraps a failure to open a device.
type OpenError struct {
	Name string
	Err  error
}

func (e *OpenError) Error() string { return fmt.Sprintf("device %s: %v", e.Name, e.Err) }
func (e *OpenError) Unwrap() error { return e.Err }

// OpenPCI opens a PCI function for direct access: it checks that the
// function is Mellanox's, opens its sysfs config file (root only), takes
// mstflint's lock file around every config access so cxray and mstflint
// tools can share the adapter, and keeps a semaphore witness beside it so
// a semaphore a killed cxray left held is released by the next one.
// Options, when given, tune the stack (Name and Witness are set here).
func OpenPCI(ctx context.Context, sys devname.Sys, name, bdf string, db *prm.DB, opts ...StackOptions) (*Device, *Stack, error) {
	if err := checkMellanox(sys, bdf); err != nil {
		return nil, nil, &OpenError{Name: name, Err: err}
	}
	path := filepath.Join(sys.Root, "bus/pci/devices", bdf, "config")
	cfg, err := pci.OpenConfig(path)
	if err != nil {
		return nil, nil, &OpenError{Name: name, Err: err}
	}
	lock, err := pci.OpenLock(pci.LockDir, bdf)
	if err != nil {
		cfg.Close()
		return nil, nil, &OpenError{Name: name, Err: err}
	}
	var o StackOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	o.Name = bdf
	if o.DeadHolder == nil {
		o.DeadHolder = func(v uint32) (string, bool) { return pci.DeadPIDHolder(v, bdf) }
	}
	// Without a witness cxray still works; it only cannot recover what a
	// killed cxray left held.
	if w, err := pci.OpenWitness(pci.LockDir, bdf); err == nil {
		o.Witness = w
	}
	cs := pci.WithLock(cfg, lock, time.Second)
	closeAll := func() {
		if o.Witness != nil {
			o.Witness.Close()
		}
		lock.Close()
		cfg.Close()
	}
	st, err := OpenStack(ctx, cs, o)
	if err != nil {
		closeAll()
		return nil, nil, &OpenError{Name: name, Err: err}
	}
	d := New(name, bdf, BackendDirect, db, st.Regs, func() error {
		err := st.Close()
		closeAll()
		return err
	})
	return d, st, nil
}

// checkMellanox refuses a function that is absent or not Mellanox's
// before its config space is opened for writing. It reads only the vendor
// file (sys.Function also lists the netdevs, RDMA devices and NUMA node,
// which opening does not need: each is a sysfs round trip); the gateway
// checks the vendor ID in config space again before any write.
func checkMellanox(sys devname.Sys, bdf string) error {
	b, err := os.ReadFile(filepath.Join(sys.Root, "bus/pci/devices", bdf, "vendor"))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return &devname.NotFoundError{Msg: fmt.Sprintf("no PCI function %s on this machine; run 'cxray status' to list the ConnectX adapters", bdf)}
		}
		return fmt.Errorf("read the vendor ID of %s: %w", bdf, err)
	}
	v, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimSpace(string(b)), "0x"), 16, 16)
	if err != nil || v != devname.MellanoxVendor {
		return fmt.Errorf("%s is vendor %s, not a Mellanox/NVIDIA function (0x15b3); cxray only talks to ConnectX adapters", bdf, strings.TrimSpace(string(b)))
	}
	return nil
}

// IsRoot says whether direct access can work at all.
func IsRoot() bool { return os.Geteuid() == 0 }
