package fwctl

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"unsafe"

	"github.com/cxray/cxray/prm/cmdb"
)

// The fwctl character device (include/uapi/fwctl/fwctl.h, Linux 6.15+).
// Every ioctl argument starts with its own size; the kernel refuses
// non-zero bytes past what it knows (E2BIG), so the structs are exactly
// the sizes the uAPI defines (the tests check sizes and offsets).
const (
	ioctlType = 0x9A
	cmdInfo   = 0
	cmdRPC    = 1

	// DeviceTypeMLX5 is fwctl_info.out_device_type for the mlx5 driver.
	DeviceTypeMLX5 = 1
)

// ioNone is _IO(type, nr): no direction and no size bits.
func ioNone(typ, nr uintptr) uintptr { return typ<<8 | nr }

var (
	ioctlInfo = ioNone(ioctlType, cmdInfo) // FWCTL_INFO = 0x9a00
	ioctlRPC  = ioNone(ioctlType, cmdRPC)  // FWCTL_RPC  = 0x9a01
)

// infoArg is struct fwctl_info (24 bytes).
type infoArg struct {
	Size          uint32
	Flags         uint32
	OutDeviceType uint32
	DeviceDataLen uint32
	OutDeviceData uint64 // user pointer to DeviceDataLen bytes
}

// rpcArg is struct fwctl_rpc (32 bytes).
type rpcArg struct {
	Size   uint32
	Scope  uint32
	InLen  uint32
	OutLen uint32 // in: the room at Out; back: the length the device wrote
	In     uint64 // user pointers
	Out    uint64
}

// infoMLX5 is struct fwctl_info_mlx5 (include/uapi/fwctl/mlx5.h).
type infoMLX5 struct {
	UID      uint32
	UctxCaps uint32
}

// Info is what FWCTL_INFO reports for an mlx5 function.
type Info struct {
	DeviceType uint32
	// UID is the firmware user context the driver runs this file's
	// commands under; UctxCaps its capabilities.
	UID, UctxCaps uint32
}

// The two ioctls, as variables so that tests see the exact arguments (and
// the buffers their pointers must name) without a device.
var (
	doInfo = func(fd uintptr, arg *infoArg, data *infoMLX5) syscall.Errno {
		return ioctl(fd, ioctlInfo, unsafe.Pointer(arg))
	}
	doRPC = func(fd uintptr, arg *rpcArg, in, out []byte) syscall.Errno {
		return ioctl(fd, ioctlRPC, unsafe.Pointer(arg))
	}
)

// Device is an open /dev/fwctl/fwctlN. It implements RPC.
type Device struct {
	f    *os.File
	path string
	info Info
}

// Info returns what FWCTL_INFO said when the device was opened.
func (d *Device) Info() Info { return d.info }

// Path is the character device's path.
func (d *Device) Path() string { return d.path }

// Close closes the file; the driver frees its user context.
func (d *Device) Close() error { return d.f.Close() }

func (d *Device) query() (Info, error) {
	var data infoMLX5
	arg := infoArg{Size: uint32(unsafe.Sizeof(infoArg{})), DeviceDataLen: uint32(unsafe.Sizeof(data)),
		OutDeviceData: uint64(uintptr(unsafe.Pointer(&data)))}
	var errno syscall.Errno
	err := d.control(func(fd uintptr) { errno = doInfo(fd, &arg, &data) })
	runtime.KeepAlive(&data)
	if err != nil {
		return Info{}, &Error{Op: "info", Kind: ErrIO, Detail: "could not use " + d.path, Err: err}
	}
	if errno != 0 {
		return Info{}, rpcErrnoError("info", d.path, errno)
	}
	return Info{DeviceType: arg.OutDeviceType, UID: data.UID, UctxCaps: data.UctxCaps}, nil
}

func (d *Device) control(fn func(fd uintptr)) error {
	rc, err := d.f.SyscallConn()
	if err != nil {
		return err
	}
	return rc.Control(fn)
}

// RPC sends one command mailbox at scope and returns the out mailbox (as
// many bytes as the device wrote, at most outLen). An error means the
// command did not reach the firmware; the firmware's own status is in the
// out mailbox. The ioctl cannot be interrupted once issued: the kernel's
// command timeout bounds it.
func (d *Device) RPC(ctx context.Context, scope cmdb.Scope, in []byte, outLen int) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(in) == 0 || outLen <= 0 {
		return nil, &Error{Op: "rpc", Kind: ErrBadRequest, Detail: fmt.Sprintf("in %d bytes, out %d bytes: both mailboxes need at least their %d-byte header", len(in), outLen, cmdb.HeaderBytes)}
	}
	inBuf := append([]byte(nil), in...) // the driver writes the uid into it
	out := make([]byte, outLen)
	arg := rpcArg{Size: uint32(unsafe.Sizeof(rpcArg{})), Scope: uint32(scope), InLen: uint32(len(inBuf)), OutLen: uint32(outLen),
		In: uint64(uintptr(unsafe.Pointer(&inBuf[0]))), Out: uint64(uintptr(unsafe.Pointer(&out[0])))}
	var errno syscall.Errno
	err := d.control(func(fd uintptr) { errno = doRPC(fd, &arg, inBuf, out) })
	runtime.KeepAlive(inBuf)
	runtime.KeepAlive(out)
	if err != nil {
		return nil, &Error{Op: "rpc", Kind: ErrIO, Detail: "could not use " + d.path, Err: err}
	}
	if errno != 0 {
		return nil, rpcErrnoError("rpc", d.path, errno)
	}
	n := min(int(arg.OutLen), outLen)
	return out[:n], nil
}
