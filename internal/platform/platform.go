// Package platform says, in one error type, that a part of cxray needs
// Linux. Device access (sysfs config files, mstflint's lock files), the
// kernel backend (netlink, sysfs), fwctl, and the emulator's FUSE and
// namespace plumbing exist only there; on other systems their packages
// keep the same API and return a *NeedsLinuxError from the _others.go
// half of each split (access/pci/config_others.go, kernel/netlink_others.go, ...),
// so the command layer can say what does work instead.
package platform

import (
	"errors"
	"fmt"
	"runtime"
)

// Works is what every platform can do, for the "what works instead" part
// of a NeedsLinuxError.
const Works = "on this system cxray works with the PRM (prm show/search/decode/encode/diff/crosscheck), " +
	"mlxconfig outputs (config diff, config query --from, config show-params), snapshot diffs, plot, " +
	"module dumps (module --file), the MAC check from listings (mac --os FILE), " +
	"emu profiles, and the in-process emulator (-d emu)"

// NeedsLinuxError is returned where a feature needs Linux. It matches
// errors.ErrUnsupported.
type NeedsLinuxError struct {
	// What needs Linux ("direct PCI access to 0000:03:00.0").
	What string
	// Why it does (the kernel interface it uses), optional.
	Why string
	// Instead says what to do on this system; empty means Works.
	Instead string
}

func (e *NeedsLinuxError) Error() string {
	s := e.What + " needs Linux"
	if e.Why != "" {
		s += " (" + e.Why + ")"
	}
	instead := e.Instead
	if instead == "" {
		instead = Works
	}
	return fmt.Sprintf("%s; this is %s/%s: %s", s, runtime.GOOS, runtime.GOARCH, instead)
}

// Unwrap makes errors.Is(err, errors.ErrUnsupported) true.
func (e *NeedsLinuxError) Unwrap() error { return errors.ErrUnsupported }

// NeedsLinux returns a *NeedsLinuxError for what, which uses why.
func NeedsLinux(what, why string) error { return &NeedsLinuxError{What: what, Why: why} }
