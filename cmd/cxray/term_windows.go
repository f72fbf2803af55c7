package main

import (
	"os"

	"golang.org/x/sys/windows"
)

// isTerminal: a console handle has a console mode; a pipe or file has none.
func isTerminal(f *os.File) bool {
	var mode uint32
	return windows.GetConsoleMode(windows.Handle(f.Fd()), &mode) == nil
}
