package kernel

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"

	"github.com/cxray/cxray/internal/linuxabi"
)

// dialGeneric opens a generic netlink socket with extended acks, so the
// kernel's own explanation of a refused request ("reading from lower half
// page is allowed for page 0 only") reaches the user.
func dialGeneric() (*genetlink.Conn, error) {
	c, err := genetlink.Dial(&netlink.Config{Strict: true})
	if err == nil {
		return c, nil
	}
	// Kernels before 4.20 lack strict checking; extended acks (4.12) may
	// still be there, and plain errors are better than none.
	c, err = genetlink.Dial(nil)
	if err != nil {
		return nil, err
	}
	_ = c.SetOption(netlink.ExtendedAcknowledge, true)
	return c, nil
}

func dialRoute() (*netlink.Conn, error) {
	c, err := netlink.Dial(linuxabi.NETLINK_ROUTE, &netlink.Config{Strict: true})
	if err == nil {
		return c, nil
	}
	c, err = netlink.Dial(linuxabi.NETLINK_ROUTE, nil)
	if err != nil {
		return nil, err
	}
	_ = c.SetOption(netlink.ExtendedAcknowledge, true)
	return c, nil
}

// bindContext makes a socket honour ctx: its deadline becomes the socket's,
// and cancelling ctx moves the deadline to the past, which wakes a blocked
// receive. The returned stop must be called before the socket is reused or
// closed; once it returns, the cancellation can no longer touch the socket
// (so a connection kept across calls never inherits a stale deadline).
// Fake sockets that take no deadline need none (they never block).
func bindContext(ctx context.Context, setDeadline func(time.Time) error) (stop func()) {
	if dl, ok := ctx.Deadline(); ok {
		_ = setDeadline(dl)
	}
	var mu sync.Mutex
	stopped := false
	stopFn := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if !stopped {
			_ = setDeadline(time.Unix(1, 0))
		}
	})
	return func() {
		stopFn()
		mu.Lock()
		stopped = true
		mu.Unlock()
	}
}

// genl opens a generic netlink connection bound to ctx and resolves family.
// The caller calls unbind (which ends the binding to ctx) and then closes
// the connection.
func (d *Device) genl(ctx context.Context, family string) (c *genetlink.Conn, f genetlink.Family, unbind func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, genetlink.Family{}, nil, fmt.Errorf("kernel: %w", err)
	}
	dial := d.opts.DialGeneric
	if dial == nil {
		dial = dialGeneric
	}
	c, err = dial()
	if err != nil {
		return nil, genetlink.Family{}, nil, fmt.Errorf("kernel: opening a generic netlink socket: %v", err)
	}
	stop := bindContext(ctx, c.SetDeadline)
	f, err = c.GetFamily(family)
	if err != nil {
		stop()
		c.Close()
		if cerr := ctx.Err(); cerr != nil {
			return nil, genetlink.Family{}, nil, fmt.Errorf("kernel: looking up the %s netlink family: %w", family, cerr)
		}
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, linuxabi.ENOENT) {
			return nil, genetlink.Family{}, nil, &UnsupportedError{What: family, Msg: familyAdvice[family]}
		}
		return nil, genetlink.Family{}, nil, fmt.Errorf("kernel: looking up the %s netlink family: %v", family, err)
	}
	return c, f, stop, nil
}

var familyAdvice = map[string]string{
	"ethtool": "this kernel has no ethtool netlink interface (it needs Linux 5.6 or later built with CONFIG_ETHTOOL_NETLINK; module EEPROM pages need 5.13)",
	"devlink": "this kernel has no devlink netlink interface (CONFIG_NET_DEVLINK); firmware details come from sysfs only",
}

// errENOTSUPP is the kernel-internal "not supported" (524) that some
// drivers leak to user space; x/sys does not name it.
const errENOTSUPP = syscall.Errno(524)

// UnsupportedError is something this kernel or driver cannot give.
type UnsupportedError struct {
	What string
	Msg  string
}

func (e *UnsupportedError) Error() string { return "kernel: " + e.Msg }

// Is makes it match errors.ErrUnsupported, the one name of the kind: a
// part this kernel cannot give is a note, not a failed read.
func (e *UnsupportedError) Is(target error) bool { return target == errors.ErrUnsupported }

// PermissionError is a netlink request the kernel refused for lack of a
// capability.
type PermissionError struct {
	What string // "module EEPROM of ens1f0np0"
	Cap  string // CAP_NET_ADMIN
	Err  error
}

func (e *PermissionError) Error() string {
	return fmt.Sprintf("kernel: reading the %s needs %s (the kernel refused the request: %v); run as root, or give cxray the capability: sudo setcap cap_net_admin+ep \"$(command -v cxray)\" (for a systemd service: AmbientCapabilities=CAP_NET_ADMIN)", e.What, e.Cap, errnoOf(e.Err))
}

func (e *PermissionError) Unwrap() error { return e.Err }

// netlinkErr turns a failed request into an error that says what to do.
// what names the object ("module EEPROM of ens1f0np0"); detail (which page,
// say) helps with the errors that depend on it, and is left out of the
// ones that do not.
func netlinkErr(ctx context.Context, what string, err error, detail string) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("kernel: reading the %s: %w (the kernel did not answer in time)", what, cerr)
	}
	var oe *netlink.OpError
	msg := ""
	if errors.As(err, &oe) && oe.Message != "" {
		msg = ": the kernel says " + fmt.Sprintf("%q", oe.Message)
	}
	if errors.Is(err, linuxabi.EPERM) || errors.Is(err, linuxabi.EACCES) {
		return &PermissionError{What: what, Cap: "CAP_NET_ADMIN", Err: err}
	}
	what += detail
	switch {
	case errors.Is(err, linuxabi.EOPNOTSUPP), errors.Is(err, errENOTSUPP):
		return &UnsupportedError{What: what, Msg: fmt.Sprintf("the driver does not give the %s (operation not supported)%s", what, msg)}
	case errors.Is(err, linuxabi.ENODEV):
		return &NotFoundError{fmt.Sprintf("kernel: reading the %s: no such device in the kernel now (removed, renamed, or in another network namespace)%s", what, msg)}
	case errors.Is(err, linuxabi.EIO), errors.Is(err, linuxabi.EREMOTEIO), errors.Is(err, linuxabi.ETIMEDOUT):
		return fmt.Errorf("kernel: reading the %s: the adapter did not answer (%v)%s; is a module plugged in? a retry may help", what, errnoOf(err), msg)
	}
	return fmt.Errorf("kernel: reading the %s: %v%s", what, errnoOf(err), msg)
}

// errnoOf is the errno inside a netlink error, or the error itself.
func errnoOf(err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return err
}
