// Package pcie decodes what a host knows about a PCI Express link, from
// every place it is kept: a function's configuration space (the capability
// lists, the PCI Express capability's link and device registers, the
// Advanced Error Reporting extended capability), the kernel's sysfs
// attributes (current_link_speed and friends, aer_dev_* counters), and the
// link speed and width encodings of the PRM's MPEIN register. It also knows
// what a link carries: the per-lane rate after line encoding, as the
// kernel computes the "available PCIe bandwidth" it logs at probe.
//
// It is pure: it reads bytes and text given to it, never a device. The
// register layouts are the PCI Express Base Specification's, as Linux
// names them in include/uapi/linux/pci_regs.h; docs/pcie.md lists them.
package pcie
