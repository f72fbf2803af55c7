// Package scaletest runs the commands that take --all through the real
// binary in real time, at the scale of a GPU node: under `cxray emu run`
// (the direct path, the emulated functions served over FUSE as this
// machine's PCI functions) on examples/fleet-16.yaml, with a held
// semaphore among healthy functions, and with a wedged device against
// --timeout. It is its own package so that these minutes of real time get
// their own test deadline. It has tests only.
package scaletest
