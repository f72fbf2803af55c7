//go:build !linux

package pci

import (
	"errors"
	"strings"
	"testing"
)

// Off Linux every entry to real PCI access says it needs Linux, and a bad
// address is still a usage error first.
func TestNeedsLinux(t *testing.T) {
	if _, err := OpenConfig("/sys/bus/pci/devices/0000:03:00.0/config"); !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), "needs Linux") {
		t.Errorf("OpenConfig: %v", err)
	}
	if _, err := OpenLock(t.TempDir(), "03:00.0"); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("OpenLock: %v", err)
	}
	if _, err := OpenWitness(t.TempDir(), "03:00.0"); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("OpenWitness: %v", err)
	}
	if _, err := OpenLock(t.TempDir(), "nonsense"); errors.Is(err, errors.ErrUnsupported) || err == nil {
		t.Errorf("OpenLock of a bad address: %v, want the address error", err)
	}
}
