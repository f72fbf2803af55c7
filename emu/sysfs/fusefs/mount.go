// Package fusefs serves emulated PCI functions (package emu/sysfs) as a
// FUSE file system: the devices directory alone (Serve) or a sysfs tree
// with bus/, class/ and dev/ (ServeTree). It is the one package that links
// the FUSE library (go-fuse, whose splice package opens a pipe and starts
// the runtime's poller when the program starts), so only the binaries that
// serve it link it: cxray-emu (cmd/cxray-emu), not the cxray CLI.
package fusefs

import "github.com/cxray/cxray/emu/sysfs"

// Mount is Serve, or ServeTree when tree is set, as the sysfs.Mounter
// that nsrun.Child takes.
func Mount(mountpoint string, entries []sysfs.DeviceEntry, opts *sysfs.Options, tree bool) (sysfs.Mounted, error) {
	serve := Serve
	if tree {
		serve = ServeTree
	}
	s, err := serve(mountpoint, entries, opts)
	if err != nil {
		return nil, err // not a nil *Server in an interface
	}
	return s, nil
}
