// Package nsrun runs a command in a private mount namespace in which
// emulated PCI functions are served (package emu/sysfs) over
// /sys/bus/pci/devices, so unmodified tools — mstflint's mstreg, mstflint,
// mstlink, mstconfig, and cxray itself — see the emulator as hardware.
//
// A Go process is multi-threaded and cannot unshare its mount namespace
// safely, so Run re-executes the current binary (/proc/self/exe) with
// CLONE_NEWNS unshared before exec; Go also marks / recursively private
// there, so nothing mounted inside propagates back to the host. The
// re-executed process must call Child early in main: it builds the devices
// with the Builder it is given, mounts them, runs the command with the
// caller's stdio, forwards signals, stops whatever the command left
// running, unmounts, and exits with the command's status. The namespace,
// and with it every mount, disappears when its last process exits: nothing
// is left behind in the host namespace, whatever happens.
//
// Inside, /tmp/mstflint_lockfiles is a fresh tmpfs shared by the tools of
// that run only, so other runs, or a real function at the same address,
// cannot hold up their lock files; the rest of /tmp is the host's.
//
// Only Linux has mount namespaces and FUSE; elsewhere Check and Run say
// so (nsrun_others.go) and Child returns at once.
package nsrun

import (
	"errors"
	"time"

	"github.com/cxray/cxray/emu/sysfs"
)

// Causes of failures before the command runs, for errors.Is.
var (
	ErrNotRoot         = errors.New("needs root for mount namespaces")
	ErrNoFUSE          = errors.New("FUSE is not available")
	ErrNoNamespace     = errors.New("cannot create a mount namespace")
	ErrCommandNotFound = errors.New("command not found")
	// ErrCommandNotExecutable is a command named by its path that is
	// there but cannot be run (a directory, no execute bit).
	ErrCommandNotExecutable = errors.New("command not executable")
	ErrSetup                = errors.New("emulated sysfs setup failed")
)

// Spec says what to emulate and how to run the command.
type Spec struct {
	// Payload is handed unchanged to the Builder that the re-executed
	// binary passes to Child; its format is the builder's business (a
	// profile name, a scenario file, JSON, ...).
	Payload []byte
	// Mountpoint is where the devices appear; "" means
	// /sys/bus/pci/devices, the directory PCI tools read.
	Mountpoint string
	// Env is the command's environment; nil means this process's.
	Env []string
	// Dir is the command's working directory; "" means this process's.
	Dir string
	// Exe is the binary to re-execute; "" means /proc/self/exe. It must
	// call Child early in main.
	Exe string
	// Debug logs every FUSE request to standard error.
	Debug bool
	// StartTimeout bounds building the devices, mounting them and starting
	// the command (0: 30 s).
	StartTimeout time.Duration
	// KillGrace is how long the command may take to exit after SIGTERM
	// (when ctx ends, or sent to this process) before it and whatever it
	// started are killed (0: 5 s).
	KillGrace time.Duration
}

// EnvChild marks a process started by Run as the namespace helper. Its
// value is a one-time token that must match the request Run sends, so a
// stray copy of the variable in someone's environment does nothing harmful.
const EnvChild = "CXRAY_NSRUN_CHILD"

// Builder makes the devices to serve from Spec.Payload. It runs in the
// helper, inside the new namespace, before anything is mounted. Entries
// whose Dev is an io.Closer are closed after the command exits.
type Builder func(payload []byte) ([]sysfs.DeviceEntry, error)
