package cmdutil

import (
	"os"

	"golang.org/x/sys/unix"
)

// IsTerminal says f is a terminal (confirmation prompts need one).
func IsTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
