//go:build !linux

package devname

import "github.com/cxray/cxray/internal/platform"

// hostErr refuses the machine's own sysfs off Linux, where there is none
// (under Wine, /sys would even be the Linux host's). A test tree (any
// other Root) is still read.
func (s Sys) hostErr() error {
	if s.Root != Default.Root && s.Root != "" {
		return nil
	}
	return &platform.NeedsLinuxError{What: "finding this machine's ConnectX adapters",
		Why:     "cxray finds them in Linux's sysfs, /sys/bus/pci/devices",
		Instead: "try cxray on the emulator with -d emu; " + platform.Works}
}
