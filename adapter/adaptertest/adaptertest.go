// Package adaptertest opens adapters over the kernel backend's fixture
// (kernel/kerneltest: a two-port ConnectX-7's sysfs tree and netlink
// fakes), for the tests of the features above the adapter layer.
package adaptertest

import (
	"context"
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
		Kernel: kernel.Options{Root: tree, DialGeneric: k.DialGeneric, DialRoute: k.DialRoute, Log: k.Log}}
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
