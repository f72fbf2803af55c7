package cmdutil

import (
	"os"

	"golang.org/x/term"
)

// IsTerminal says f is a terminal (confirmation prompts need one): a
// console on Windows, a tty elsewhere.
func IsTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }
