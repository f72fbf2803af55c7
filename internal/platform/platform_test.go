package platform

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

func TestNeedsLinuxError(t *testing.T) {
	err := fmt.Errorf("open: %w", NeedsLinux("direct PCI access", "sysfs config files"))
	if !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("errors.Is(%v, ErrUnsupported) = false", err)
	}
	var ne *NeedsLinuxError
	if !errors.As(err, &ne) || ne.What != "direct PCI access" {
		t.Fatalf("errors.As: %+v", ne)
	}
	msg := err.Error()
	for _, want := range []string{"direct PCI access needs Linux (sysfs config files)", runtime.GOOS + "/" + runtime.GOARCH, "-d emu", "prm show"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	custom := (&NeedsLinuxError{What: "emu serve", Instead: "use -d emu"}).Error()
	if !strings.HasSuffix(custom, ": use -d emu") || strings.Contains(custom, "prm show") {
		t.Errorf("Instead not used: %q", custom)
	}
}
