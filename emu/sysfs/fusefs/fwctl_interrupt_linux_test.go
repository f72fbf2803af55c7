package fusefs

import (
	"context"
	"encoding/binary"
	"os"
	"runtime"
	"testing"
	"unsafe"

	"github.com/cxray/cxray/emu/sysfs"
)

// TestFwctlRPCSurvivesInterrupt: FUSE cancels a request's context when the
// caller takes any signal (Go's preemption signal included), yet the
// command must run to its end as the driver's does; before the fix, an
// interrupted RPC came back EIO, at random under load
// (conformance.TestLockdownThroughFUSE failed one run in four).
func TestFwctlRPCSurvivesInterrupt(t *testing.T) {
	answer := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	var delivered int
	n := &fwctlNode{dev: &sysfs.Fwctl{RPC: func(ctx context.Context, scope uint32, in []byte, outLen int) ([]byte, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		delivered++
		return answer, nil
	}}}
	in := []byte{0xaa, 0xbb, 0xcc, 0xdd}
	out := make([]byte, 16)
	arg := make([]byte, fwctlRPCSize)
	ne := binary.NativeEndian
	ne.PutUint32(arg[0:], fwctlRPCSize)
	ne.PutUint32(arg[4:], 1) // scope
	ne.PutUint32(arg[8:], uint32(len(in)))
	ne.PutUint32(arg[12:], uint32(len(out)))
	ne.PutUint64(arg[16:], uint64(uintptr(unsafe.Pointer(&in[0]))))
	ne.PutUint64(arg[24:], uint64(uintptr(unsafe.Pointer(&out[0]))))

	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the caller was signalled while the request was on its way
	if e := n.rpc(ctx, callerMemory{pid: os.Getpid()}, uint64(uintptr(unsafe.Pointer(&arg[0])))); e != 0 {
		t.Fatalf("interrupted RPC: errno %v, want the command's answer", e)
	}
	runtime.KeepAlive(in)
	if delivered != 1 {
		t.Errorf("RPC delivered %d times, want 1", delivered)
	}
	if got := ne.Uint32(arg[12:]); got != uint32(len(answer)) {
		t.Errorf("out length %d, want %d", got, len(answer))
	}
	if string(out[:len(answer)]) != string(answer) {
		t.Errorf("out mailbox % x, want % x", out[:len(answer)], answer)
	}
}
