// Package adaptertest opens adapters over the kernel backend's fixture
// (kernel/kerneltest: a two-port ConnectX-7's sysfs tree and netlink
// fakes), for the tests of the features above the adapter layer.
package adaptertest

import (
	"context"
	"github.com/cxray/cxray/dev"
	"testing"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev/devname"
	"github.com/cxray/cxray/dev/devtest"
	"github.com/cxray/cxray/kernel"
	"github.com/cxray/cxray/kernel/kerneltest"
)

// KernelOptions are the adapter options that open names in tree, with
// k's netlink fakes and the built-in register database.
func KernelOptions(t testing.TB, tree string, k *kerneltest.Kernel) adapter.Options {
	t.Helper()
	return adapter.Options{DB: devtest.DB(t), Sys: devname.Sys{Root: tree},
		Kernel: kernel.Options{Root: tree, DialGeneric: k.DialGeneric, DialRoute: k.DialRoute, Ethtool: k.Ethtool, Log: k.Log}}
}

// Kernel opens name (kernel:mlx5_0, kernel:ens1f0np0, ...) on a fresh
// copy of the ConnectX-7 fixture; mod, when not nil, changes the tree or
// the fakes first (a missing devlink, a module taken out). The adapter is
// closed when the test ends.
func Kernel(t testing.TB, name string, mod func(tree string, k *kerneltest.Kernel)) *adapter.Adapter {
	t.Helper()
	tree := kerneltest.Tree(t, kerneltest.CX7)
	k := kerneltest.CX7Kernel()
	if mod != nil {
		mod(tree, k)
	}
	a, err := adapter.Open(context.Background(), name, KernelOptions(t, tree, k))
	if err != nil {
		t.Fatalf("opening %s on the kernel fixture: %v", name, err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// Direct is a function of the ConnectX-7 fixture as direct access opens
// it: registers (from regs, an empty fake when nil: every register
// answers "not supported") composed with the kernel's view of the same
// function (0000:c1:00.0: interfaces, devlink, driver statistics, sysfs)
// and its sysfs PCIe view. mod, when not nil, changes the tree or the
// fakes first. The adapter is closed when the test ends.
func Direct(t testing.TB, regs *devtest.Fake, mod func(tree string, k *kerneltest.Kernel)) *adapter.Adapter {
	t.Helper()
	tree := kerneltest.Tree(t, kerneltest.CX7)
	k := kerneltest.CX7Kernel()
	if mod != nil {
		mod(tree, k)
	}
	o := KernelOptions(t, tree, k)
	kd, err := kernel.Open(context.Background(), "0000:c1:00.0", o.Kernel)
	if err != nil {
		t.Fatalf("opening the fixture's function: %v", err)
	}
	if regs == nil {
		regs = devtest.New(o.DB)
	}
	a := adapter.New(adapter.Config{Name: "0000:c1:00.0", BDF: "0000:c1:00.0", Backend: dev.BackendDirect, DB: o.DB,
		Registers: regs.Device("0000:c1:00.0", "0000:c1:00.0", dev.BackendDirect), Kernel: kd, PCIe: adapter.SysfsPCIe(tree, "0000:c1:00.0")})
	t.Cleanup(func() { a.Close() })
	return a
}
