package cmdutil

import (
	"os"

	"golang.org/x/sys/windows"
)

// IsTerminal: a console handle has a console mode; a pipe or file has none.
func IsTerminal(f *os.File) bool {
	var mode uint32
	return windows.GetConsoleMode(windows.Handle(f.Fd()), &mode) == nil
}
