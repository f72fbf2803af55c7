package fusefs_test

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/cxray/cxray/access/fwctl"
	"github.com/cxray/cxray/emu/sysfs"
	"github.com/cxray/cxray/emu/sysfs/fusefs"
	"github.com/cxray/cxray/prm/cmdb"
)

// rpcLog records what the fwctl device file delivered.
type rpcLog struct {
	mu    sync.Mutex
	calls []rpcCall
}

type rpcCall struct {
	Scope  uint32
	In     []byte
	OutLen int
}

// TestFwctlDeviceFile: a function's fwctl device, served in the tree
// (class/fwctl/fwctl0 linked to the function, dev/fwctl/fwctl0), answers
// the fwctl ioctls as the kernel's character device does: the access/fwctl
// client opens it (FWCTL_INFO: type and device data), sends mailboxes
// (FWCTL_RPC: scope, in mailbox, room for the out one; the out mailbox and
// its length back) and gets the driver's errno; an unknown ioctl is
// ENOTTY, a short argument EINVAL, a bad pointer EFAULT.
func TestFwctlDeviceFile(t *testing.T) {
	if !inPrivateNS(t) {
		return
	}
	dev, _ := newDevice()
	var log rpcLog
	data := []byte{7, 0, 0, 0, 0, 0, 0, 0}
	entry := sysfs.DeviceEntry{BDF: bdf, Dev: dev, NUMANode: -1, Fwctl: &sysfs.Fwctl{DeviceType: fwctl.DeviceTypeMLX5, DeviceData: data,
		RPC: func(ctx context.Context, scope uint32, in []byte, outLen int) ([]byte, error) {
			log.mu.Lock()
			log.calls = append(log.calls, rpcCall{scope, append([]byte(nil), in...), outLen})
			log.mu.Unlock()
			if in[0] == 0xEE {
				return nil, syscall.EBADMSG // the driver refuses the command at this scope
			}
			out := make([]byte, 24) // a longer answer than asked for is cut to the room
			out[0], out[8] = in[0], 0x42
			return out, nil
		}}}
	staging := t.TempDir()
	srv, err := fusefs.ServeTree(staging, []sysfs.DeviceEntry{entry}, &sysfs.Options{HostNamespace: os.Getenv(envHostNS)})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Unmount()
	if n, err := fwctl.Find(staging, bdf); err != nil || n.Name != "fwctl0" {
		t.Fatalf("fwctl.Find in the tree: %+v, %v", n, err)
	}
	path := filepath.Join(staging, "dev/fwctl/fwctl0")
	d, err := fwctl.OpenDevice(path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.Info() != (fwctl.Info{DeviceType: fwctl.DeviceTypeMLX5, UID: 7}) {
		t.Errorf("FWCTL_INFO: %+v", d.Info())
	}
	in := make([]byte, 16)
	in[0] = 0x12
	out, err := d.RPC(context.Background(), cmdb.ScopeDebugReadOnly, in, 16)
	if err != nil || len(out) != 16 || out[0] != 0x12 || out[8] != 0x42 {
		t.Errorf("FWCTL_RPC: %x, %v", out, err)
	}
	in[0] = 0xEE
	if _, err := d.RPC(context.Background(), cmdb.ScopeConfiguration, in, 16); !errors.Is(err, syscall.EBADMSG) {
		t.Errorf("a refused command: %v, want EBADMSG", err)
	}
	want := []rpcCall{{uint32(cmdb.ScopeDebugReadOnly), append([]byte{0x12}, make([]byte, 15)...), 16}, {uint32(cmdb.ScopeConfiguration), append([]byte{0xEE}, make([]byte, 15)...), 16}}
	if d := cmp.Diff(want, log.calls); d != "" {
		t.Errorf("delivered (-want +got):\n%s", d)
	}

	// The raw ioctl: what the kernel's fwctl core refuses.
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ioctl := func(req uintptr, arg unsafe.Pointer) syscall.Errno {
		_, _, e := unix.Syscall(unix.SYS_IOCTL, f.Fd(), req, uintptr(arg))
		return e
	}
	if e := ioctl(0x9A05, nil); e != syscall.ENOTTY {
		t.Errorf("unknown ioctl: %v, want ENOTTY", e)
	}
	short := make([]byte, 24)
	binary.NativeEndian.PutUint32(short, 8)
	if e := ioctl(0x9A00, unsafe.Pointer(&short[0])); e != syscall.EINVAL {
		t.Errorf("FWCTL_INFO with a size of 8: %v, want EINVAL", e)
	}
	rpc := make([]byte, 32)
	binary.NativeEndian.PutUint32(rpc, 32)
	binary.NativeEndian.PutUint32(rpc[8:], 16)
	binary.NativeEndian.PutUint32(rpc[12:], 16)
	binary.NativeEndian.PutUint64(rpc[16:], 8) // not an address of the caller's
	if e := ioctl(0x9A01, unsafe.Pointer(&rpc[0])); e != syscall.EFAULT {
		t.Errorf("FWCTL_RPC with a bad in pointer: %v, want EFAULT", e)
	}
}
