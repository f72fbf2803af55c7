// Package adapter is the one type every cxray feature talks to: one
// ConnectX (mlx5) PCI function, whatever reaches it.
//
// An Adapter is opened by Open (one device name, any -d form) or OpenAll
// (every function of the machine or of an emulated scenario), or built by
// New from its parts. It answers the questions the features ask (identity,
// the port topology, links, temperatures, modules, counters, RDMA counters,
// the OS's view of the function) from whichever backend it has: the
// config-space gateway (access/vsec through dev), the kernel's fwctl
// device, the read-only kernel backend (package kernel), or the emulator
// (injected by emu/emuadapter, so this package never imports it). A
// question the backend cannot answer returns an error matching
// errors.ErrUnsupported that says why.
//
// Features never import access/*: registers are reached through
// Adapter.Registers, a dev.Device. ARCHITECTURE.md ("The adapter layer")
// lists the methods and the registers or kernel files behind each.
package adapter
