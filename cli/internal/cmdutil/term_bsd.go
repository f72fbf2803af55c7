//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package cmdutil

import (
	"os"

	"golang.org/x/sys/unix"
)

// IsTerminal says f is a terminal (confirmation prompts need one).
func IsTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TIOCGETA)
	return err == nil
}
