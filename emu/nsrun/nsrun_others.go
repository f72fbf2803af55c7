//go:build !linux

package nsrun

import (
	"context"
	"fmt"
	"io"

	"github.com/cxray/cxray/emu/sysfs"
	"github.com/cxray/cxray/internal/platform"
)

var errNamespaces = &platform.NeedsLinuxError{What: "running tools against the emulator (emu run, emu serve)",
	Why: "it serves the emulator as sysfs over FUSE in a private mount namespace"}

// Check reports whether Run can work here: never off Linux.
func Check() error { return fmt.Errorf("nsrun: %w: %w", ErrNoNamespace, errNamespaces) }

// Run needs Linux; it returns -1 and an error matching ErrNoNamespace and
// errors.ErrUnsupported.
func Run(ctx context.Context, spec Spec, argv []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	return -1, Check()
}

// Child returns at once: off Linux no process is a namespace helper.
func Child(build Builder, mount sysfs.Mounter) {}

// AtExit does nothing off Linux: there is no namespace helper to end.
func AtExit(fn func()) {}
