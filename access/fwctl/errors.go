package fwctl

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"github.com/cxray/cxray/access/regaccess"
	"github.com/cxray/cxray/internal/errfmt"
	"github.com/cxray/cxray/prm/cmdb"
)

// Error kinds, for errors.Is. A failure to reach the firmware is an *Error
// whose Kind is one of these; a command the firmware ran and failed is a
// *CommandError.
var (
	ErrNoFwctl     = errors.New("no fwctl")
	ErrNotFound    = errors.New("no fwctl device for this function")
	ErrNotMLX5     = errors.New("fwctl device is not mlx5")
	ErrPermission  = errors.New("permission denied")
	ErrNotAllowed  = errors.New("command not allowed at this scope")
	ErrRefused     = errors.New("command refused by cxray")
	ErrBadRequest  = errors.New("bad request")
	ErrDeviceGone  = errors.New("device gone")
	ErrIO          = errors.New("fwctl I/O error")
	ErrBadResponse = errors.New("bad response")
)

// Error is a fwctl operation that did not get a firmware answer.
type Error struct {
	Op     string // "find", "open", "info", "rpc"
	Kind   error
	Detail string
	Hint   string
	Err    error // the errno or other cause, may be nil
}

func (e *Error) Error() string { return errfmt.Message("fwctl", e.Op, e.Detail, e.Err, e.Hint) }

// Is reports whether target is this error's kind.
func (e *Error) Is(target error) bool { return target == e.Kind }

// Unwrap returns the cause (a syscall.Errno for ioctl failures).
func (e *Error) Unwrap() error { return e.Err }

func openError(path string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &Error{Op: "open", Kind: ErrNotFound, Err: err, Detail: path + " does not exist",
			Hint: "load the mlx5_fwctl module (modprobe mlx5_fwctl; Linux 6.15 or newer) and check /sys/class/fwctl"}
	case errors.Is(err, fs.ErrPermission):
		return &Error{Op: "open", Kind: ErrPermission, Err: err, Detail: "cannot open " + path,
			Hint: "run as root, or give your user read-write access to the fwctl device"}
	}
	return &Error{Op: "open", Kind: ErrIO, Err: err, Detail: "cannot open " + path}
}

// rpcErrnoError explains an ioctl errno (include/uapi/fwctl/fwctl.h and
// drivers/fwctl/mlx5/main.c).
func rpcErrnoError(op, path string, errno syscall.Errno) error {
	e := &Error{Op: op, Kind: ErrIO, Err: errno}
	switch errno {
	case syscall.EBADMSG:
		e.Kind, e.Detail = ErrNotAllowed, "the fwctl driver does not allow this command at the requested scope"
		e.Hint = "only queries and a few settings are allowed; see `cxray prm show COMMAND` for the scope each needs"
	case syscall.EMSGSIZE:
		e.Kind, e.Detail = ErrBadRequest, "a mailbox is shorter than the 16-byte command header"
	case syscall.ENODEV:
		e.Kind, e.Detail = ErrDeviceGone, path+": the device was removed or its driver unbound"
		e.Hint = "reopen the device once it is back (check dmesg)"
	case syscall.EPERM, syscall.EACCES:
		e.Kind, e.Detail = ErrPermission, "the kernel refused the scope"
		e.Hint = "the debug-write scopes need CAP_SYS_RAWIO; read-only commands need only the device file"
	case syscall.ENOTTY:
		e.Kind, e.Detail = ErrNotMLX5, path+" does not answer fwctl ioctls"
		e.Hint = "is it a /dev/fwctl/fwctlN node? the kernel needs fwctl (Linux 6.15+)"
	case syscall.E2BIG, syscall.EOPNOTSUPP, syscall.EINVAL:
		e.Kind, e.Detail = ErrBadRequest, "the kernel did not accept the request's layout"
		e.Hint = "this kernel's fwctl uAPI differs from the one cxray speaks; report it with `uname -r`"
	default:
		e.Detail = "the ioctl failed"
	}
	return e
}

// Status codes (the kernel's MLX5_CMD_STAT_*, generated into prm/cmdb; the
// meanings and advice are cxray's).
const (
	StatusOK          = 0x00
	StatusInternal    = 0x01
	StatusBadOp       = 0x02
	StatusBadParam    = 0x03
	StatusBadSysState = 0x04
	StatusBadResource = 0x05
	StatusBusy        = 0x06
	StatusIndex       = 0x0a
)

// Sentinels a CommandError matches by status.
var (
	ErrBadOp    = errors.New("bad operation")
	ErrBadParam = errors.New("bad parameter")
	ErrBusy     = errors.New("resource busy")
)

var statusInfo = map[uint8][2]string{
	0x01: {"internal error", "the firmware failed internally; retry, and if it persists check dmesg and the firmware health (`cxray health`)"},
	0x02: {"bad operation", "the firmware does not support this opcode or op_mod; check the capability bits (`cxray caps`) or update the firmware"},
	0x03: {"bad parameter", "a field of the in mailbox is out of range or names nothing; check it against `cxray prm show COMMAND`"},
	0x04: {"bad system state", "the device is not in a state that allows the command (for registers: not supported by this firmware)"},
	0x05: {"bad resource", "the object named (QP, MKEY, vport, namespace ...) does not exist or belongs to another function"},
	0x06: {"resource busy", "the object or firmware is busy; retry shortly"},
	0x07: {"firmware not ready", "the firmware is still starting; retry in a few seconds"},
	0x08: {"limits exceeded", "a size or count is above what the capabilities allow"},
	0x09: {"bad resource state", "the object is in a state that does not allow the command"},
	0x0a: {"bad index", "an index is out of range"},
	0x0f: {"no resources", "the firmware has no room for the request"},
	0x10: {"bad QP state", "the QP is in a state that does not allow the command"},
	0x30: {"bad packet", "the firmware discarded the request as malformed"},
	0x40: {"bad size: too many outstanding CQEs", "drain the CQ before resizing it"},
	0x50: {"bad input length", "the in mailbox is shorter than the firmware expects: the layout cxray knows may be older than the firmware's"},
	0x51: {"bad output length", "the out mailbox is shorter than the firmware's answer: the layout cxray knows may be older than the firmware's"},
}

// CommandError is a command the firmware ran and answered with a non-zero
// status. The syndrome is a firmware-internal code with no public meaning:
// it is printed for support cases, never interpreted.
type CommandError struct {
	Command  string // name from the command database, "" when unknown
	Opcode   uint16
	OpMod    uint16
	Status   uint8
	Syndrome uint32
	// Register is the register ID for ACCESS_REG, 0 otherwise.
	Register uint16
}

// StatusName is the kernel's name of the status (BAD_PARAM_ERR), or "".
func (e *CommandError) StatusName() string {
	if db, err := cmdb.Load(); err == nil {
		return db.StatusName(e.Status)
	}
	return ""
}

func (e *CommandError) Error() string {
	cmd := e.Command
	if cmd == "" {
		cmd = "command"
	}
	info, ok := statusInfo[e.Status]
	if !ok {
		info = [2]string{"unknown status", "the firmware returned a status cxray does not know; report it with the syndrome"}
	}
	name := e.StatusName()
	if name != "" {
		name += ": "
	}
	what := fmt.Sprintf("%s (0x%x) op_mod 0x%x", cmd, e.Opcode, e.OpMod)
	if e.Register != 0 {
		what += fmt.Sprintf(" register 0x%04x", e.Register)
	}
	// No "fwctl:" here: the status is the firmware's answer, whichever
	// path carried the command (fwctl, the emulator's command interface).
	return fmt.Sprintf("%s failed with status 0x%x (%s%s), syndrome 0x%08x; %s", what, e.Status, name, info[0], e.Syndrome, info[1])
}

// Is matches ErrBadOp, ErrBadParam and ErrBusy by status, and, for
// ACCESS_REG, regaccess.ErrRegisterNotSupported on status 0x4 (bad system
// state), which is how the firmware answers a register it lacks (mstflint
// maps it the same way), so dev.IsNotSupported works over fwctl too.
func (e *CommandError) Is(target error) bool {
	switch target {
	case ErrBadOp:
		return e.Status == StatusBadOp
	case ErrBadParam:
		return e.Status == StatusBadParam
	case ErrBusy:
		return e.Status == StatusBusy
	case regaccess.ErrRegisterNotSupported:
		return e.Register != 0 && e.Status == StatusBadSysState
	}
	return false
}
