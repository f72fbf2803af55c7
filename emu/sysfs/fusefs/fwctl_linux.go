package fusefs

import (
	"context"
	"encoding/binary"
	"errors"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/cxray/cxray/emu/sysfs"
)

// fwctlNode is a fwctl device file (/dev/fwctl/fwctlN). A FUSE file is
// not a character device, but its ioctls reach the server: the fwctl
// ioctls are _IO (no size bits), so the kernel passes their argument, a
// pointer into the caller, as it is, and the node reads and writes the
// caller's memory itself (process_vm_readv/writev), as the fwctl core
// copies from and to user space (drivers/fwctl/main.c): the argument
// struct sized by its first field, the in mailbox, the out mailbox.
type fwctlNode struct {
	fs.Inode
	dev   *sysfs.Fwctl
	mtime time.Time
}

var (
	_ = (fs.NodeOpener)((*fwctlNode)(nil))
	_ = (fs.NodeIoctler)((*fwctlNode)(nil))
	_ = (fs.NodeGetattrer)((*fwctlNode)(nil))
)

// The fwctl ioctls (include/uapi/fwctl/fwctl.h): _IO(0x9A, nr).
const (
	ioctlFwctlInfo = 0x9A00
	ioctlFwctlRPC  = 0x9A01

	fwctlInfoSize = 24 // struct fwctl_info
	fwctlRPCSize  = 32 // struct fwctl_rpc
	// fwctlMaxRPC is the core's limit on a mailbox (MAX_RPC_LEN, 2 MiB).
	fwctlMaxRPC = 2 << 20
)

func (n *fwctlNode) Getattr(ctx context.Context, f fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	setTimes(&out.Attr, n.mtime)
	out.Mode = syscall.S_IFREG | 0o600
	return 0
}

func (n *fwctlNode) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	return nil, fuse.FOPEN_DIRECT_IO, 0
}

func (n *fwctlNode) Ioctl(ctx context.Context, f fs.FileHandle, cmd uint32, arg uint64, input, output []byte) (int32, syscall.Errno) {
	fc, ok := ctx.(*fuse.Context)
	if !ok || fc.Caller.Pid == 0 {
		return 0, syscall.EIO
	}
	m := callerMemory{pid: int(fc.Caller.Pid)}
	switch cmd {
	case ioctlFwctlInfo:
		return 0, n.info(m, arg)
	case ioctlFwctlRPC:
		return 0, n.rpc(ctx, m, arg)
	}
	return 0, syscall.ENOTTY
}

// readArg reads an ioctl argument struct of size bytes whose first u32
// is the caller's size of it, as copy_struct_from_user does: shorter
// than the struct is EINVAL, longer is E2BIG unless the rest is zero.
func readArg(m callerMemory, addr uint64, size int) ([]byte, syscall.Errno) {
	var head [4]byte
	if e := m.read(addr, head[:]); e != 0 {
		return nil, e
	}
	usize := int(binary.NativeEndian.Uint32(head[:]))
	if usize < size {
		return nil, syscall.EINVAL
	}
	if usize > 4096 {
		return nil, syscall.E2BIG
	}
	buf := make([]byte, usize)
	if e := m.read(addr, buf); e != 0 {
		return nil, e
	}
	for _, b := range buf[size:] {
		if b != 0 {
			return nil, syscall.E2BIG
		}
	}
	return buf[:size], 0
}

// info answers FWCTL_INFO: flags must be 0; the device data is copied up
// to the caller's room and its full length reported.
func (n *fwctlNode) info(m callerMemory, arg uint64) syscall.Errno {
	a, e := readArg(m, arg, fwctlInfoSize)
	if e != 0 {
		return e
	}
	ne := binary.NativeEndian
	if ne.Uint32(a[4:]) != 0 {
		return syscall.EOPNOTSUPP
	}
	room, dst := int(ne.Uint32(a[12:])), ne.Uint64(a[16:])
	if k := min(room, len(n.dev.DeviceData)); k > 0 {
		if e := m.write(dst, n.dev.DeviceData[:k]); e != 0 {
			return e
		}
	}
	ne.PutUint32(a[8:], n.dev.DeviceType)
	ne.PutUint32(a[12:], uint32(len(n.dev.DeviceData)))
	return m.write(arg, a)
}

// rpc answers FWCTL_RPC: the in mailbox is read, delivered, and the out
// mailbox copied back up to the caller's room, with its length.
func (n *fwctlNode) rpc(ctx context.Context, m callerMemory, arg uint64) syscall.Errno {
	a, e := readArg(m, arg, fwctlRPCSize)
	if e != 0 {
		return e
	}
	ne := binary.NativeEndian
	scope, inLen, outLen := ne.Uint32(a[4:]), int(ne.Uint32(a[8:])), int(ne.Uint32(a[12:]))
	inAddr, outAddr := ne.Uint64(a[16:]), ne.Uint64(a[24:])
	if inLen > fwctlMaxRPC || outLen > fwctlMaxRPC {
		return syscall.EMSGSIZE
	}
	in := make([]byte, inLen)
	if e := m.read(inAddr, in); e != 0 {
		return e
	}
	// The command runs to its end whatever signal the caller takes: the
	// driver waits for the firmware without giving up on a signal
	// (drivers/net/ethernet/mellanox/mlx5/core/cmd.c waits for completion
	// uninterruptibly), while FUSE turns any signal the caller gets, Go's
	// preemption signal included, into an interrupt that cancels ctx. An
	// RPC cancelled here failed with EIO at random under load.
	out, err := n.dev.RPC(context.WithoutCancel(ctx), scope, in, outLen)
	if err != nil {
		var no syscall.Errno
		if errors.As(err, &no) {
			return no
		}
		return syscall.EIO
	}
	if k := min(outLen, len(out)); k > 0 {
		if e := m.write(outAddr, out[:k]); e != 0 {
			return e
		}
	}
	ne.PutUint32(a[12:], uint32(len(out)))
	return m.write(arg, a)
}

// callerMemory is the memory of the process whose ioctl is being
// answered; a bad address is EFAULT, as in the kernel.
type callerMemory struct{ pid int }

func (c callerMemory) read(addr uint64, p []byte) syscall.Errno {
	if len(p) == 0 {
		return 0
	}
	n, err := unix.ProcessVMReadv(c.pid, []unix.Iovec{local(p)}, []unix.RemoteIovec{{Base: uintptr(addr), Len: len(p)}}, 0)
	if err != nil || n != len(p) {
		return syscall.EFAULT
	}
	return 0
}

func (c callerMemory) write(addr uint64, p []byte) syscall.Errno {
	if len(p) == 0 {
		return 0
	}
	n, err := unix.ProcessVMWritev(c.pid, []unix.Iovec{local(p)}, []unix.RemoteIovec{{Base: uintptr(addr), Len: len(p)}}, 0)
	if err != nil || n != len(p) {
		return syscall.EFAULT
	}
	return 0
}

func local(p []byte) unix.Iovec {
	iov := unix.Iovec{Base: &p[0]}
	iov.SetLen(len(p))
	return iov
}
