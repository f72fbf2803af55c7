package fusefs

import (
	"os"
	"strings"
	"testing"
)

func TestGuardHostSys(t *testing.T) {
	if err := guardHostSys("/tmp/x", ""); err != nil {
		t.Errorf("paths outside /sys need no namespace: %v", err)
	}
	if err := guardHostSys("/sysroot/x", ""); err != nil {
		t.Errorf("/sysroot is not /sys: %v", err)
	}
	self, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		t.Skip(err)
	}
	// Told that the host namespace is this one: refused whatever PID 1 says.
	err = guardHostSys("/sys/bus/pci/devices", self)
	if err == nil || !strings.Contains(err.Error(), "private one") {
		t.Errorf("mounting over the host's /sys must be refused with advice, got %v", err)
	}
	if init, ierr := os.Readlink("/proc/1/ns/mnt"); ierr == nil && init == self {
		if err := guardHostSys("/sys/bus/pci/devices", "mnt:[1]"); err == nil {
			t.Error("in PID 1's namespace the mount must be refused")
		}
	}
}
