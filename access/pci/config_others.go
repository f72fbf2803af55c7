//go:build !linux

package pci

import (
	"fmt"

	"github.com/cxray/cxray/internal/platform"
)

// OpenConfig opens a PCI config-space file; only Linux has them (sysfs).
// Elsewhere it returns an error matching errors.ErrUnsupported.
func OpenConfig(path string) (*ConfigFile, error) {
	return nil, fmt.Errorf("open %s: %w", path,
		platform.NeedsLinux("direct PCI access", "it reads and writes the function's sysfs config file"))
}

func writeError(path string, off int64, err error) error {
	return fmt.Errorf("write %s at 0x%x: %w", path, off, err)
}

func ioHint(error) string { return "" }
