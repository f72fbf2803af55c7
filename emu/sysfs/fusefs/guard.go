package fusefs

import (
	"fmt"
	"os"
	"strings"
)

// guardHostSys refuses to cover any part of /sys or /dev in a namespace
// that is not private: that would hide the host's devices from every
// process on it. The namespace must differ from PID 1's (when that can be read; in
// some sandboxes it cannot) and from hostNS (when given).
func guardHostSys(mp, hostNS string) error {
	under := func(root string) bool { return mp == root || strings.HasPrefix(mp, root+"/") }
	if !under("/sys") && !under("/dev") {
		return nil
	}
	self, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		return fmt.Errorf("sysfs: refusing to mount on %s: cannot read this process's mount namespace: %w", mp, err)
	}
	refuse := fmt.Errorf("sysfs: refusing to mount on %s in the host's mount namespace (it would hide the real PCI devices from everyone); run it in a private one, e.g. `cxray emu run -- CMD` (package nsrun)", mp)
	checked := false
	if init, err := os.Readlink("/proc/1/ns/mnt"); err == nil {
		if init == self {
			return refuse
		}
		checked = true
	}
	if hostNS != "" {
		if hostNS == self {
			return refuse
		}
		checked = true
	}
	if !checked {
		return fmt.Errorf("sysfs: refusing to mount on %s: cannot tell whether this mount namespace is private "+
			"(/proc/1/ns/mnt is unreadable and Options.HostNamespace is empty); run it through nsrun", mp)
	}
	return nil
}
