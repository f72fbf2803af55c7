package fwctl

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Node is a fwctl device of a PCI function.
type Node struct {
	Name string // fwctl0
	Path string // /dev/fwctl/fwctl0
	BDF  string // 0000:03:00.0
}

// DevDir is where the character devices are (udev names them fwctl/fwctlN).
const DevDir = "/dev/fwctl"

// Find returns the fwctl node of a PCI function: the entry of
// <sysRoot>/class/fwctl whose device link resolves to the function (the
// fwctl device's parent is the PCI device; mstflint finds it the same
// way). sysRoot is "/sys" on a host; tests give a fake tree.
func Find(sysRoot, bdf string) (Node, error) {
	if sysRoot == "" {
		sysRoot = "/sys"
	}
	class := filepath.Join(sysRoot, "class", "fwctl")
	ents, err := os.ReadDir(class)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Node{}, &Error{Op: "find", Kind: ErrNoFwctl, Err: err,
				Detail: class + " does not exist: this kernel has no fwctl, or no fwctl driver is loaded",
				Hint:   "fwctl needs Linux 6.15 or newer with the mlx5_fwctl module (modprobe mlx5_fwctl)"}
		}
		return Node{}, &Error{Op: "find", Kind: ErrIO, Err: err, Detail: "cannot list " + class}
	}
	var seen []string
	for _, e := range ents {
		link := filepath.Join(class, e.Name(), "device")
		target, err := filepath.EvalSymlinks(link)
		if err != nil {
			continue // an entry without a device (being removed)
		}
		dev := filepath.Base(target)
		seen = append(seen, e.Name()+" → "+dev)
		if strings.EqualFold(dev, bdf) {
			return Node{Name: e.Name(), Path: filepath.Join(DevDir, e.Name()), BDF: dev}, nil
		}
	}
	sort.Strings(seen)
	detail := fmt.Sprintf("no fwctl device belongs to %s", bdf)
	if len(seen) > 0 {
		detail += " (" + strings.Join(seen, ", ") + ")"
	}
	return Node{}, &Error{Op: "find", Kind: ErrNotFound, Detail: detail,
		Hint: "is mlx5_fwctl loaded for this function (ls /sys/bus/auxiliary/devices/mlx5_core.fwctl.*)? a VF or SF may have none"}
}

// Open finds a function's fwctl node and opens it: the Client for
// commands, its Registers for access registers, and a close function.
func Open(sysRoot, bdf string, o Options) (*Client, *Device, error) {
	n, err := Find(sysRoot, bdf)
	if err != nil {
		return nil, nil, err
	}
	d, err := OpenDevice(n.Path)
	if err != nil {
		return nil, nil, err
	}
	c, err := NewClient(d, o)
	if err != nil {
		d.Close()
		return nil, nil, err
	}
	return c, d, nil
}
