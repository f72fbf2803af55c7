//go:build !linux

package kernel

import "github.com/cxray/cxray/internal/platform"

// hostCheck refuses the machine's own devices off Linux: there is no
// mlx5 driver sysfs or netlink to read (under Wine, /sys would even be
// the Linux host's). A tree given in Options.Root (a
// copy of a Linux host's /sys, or a test tree) is still read; its netlink
// parts then fail per call and are reported as problems.
func hostCheck(o Options) error {
	if o.Root != "" && o.Root != "/sys" {
		return nil
	}
	return &platform.NeedsLinuxError{What: "the kernel backend (-d kernel:NAME)",
		Why: "it reads the mlx5 drivers' sysfs and netlink"}
}
