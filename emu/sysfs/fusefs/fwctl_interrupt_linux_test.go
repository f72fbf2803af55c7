package fusefs

import (
	"context"
	"encoding/binary"
	"os"
	"testing"
	"unsafe"

	"github.com/cxray/cxray/emu/sysfs"
	"golang.org/x/sys/unix"
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
	// The buffers are handed over by address, so they live in mapped
	// memory: a Go stack may move while rpc runs (stack growth), and a
	// small make() may be on the stack; the reply then went to the old
	// address (this test failed once in CI that way).
	page, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(page)
	in := page[0:4:4]
	copy(in, []byte{0xaa, 0xbb, 0xcc, 0xdd})
	out := page[64:80:80]
	arg := page[128 : 128+fwctlRPCSize : 128+fwctlRPCSize]
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
