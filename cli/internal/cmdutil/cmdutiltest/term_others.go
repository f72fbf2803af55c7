//go:build !linux

package cmdutiltest

import (
	"os"
	"testing"
)

// Terminal skips the test: pseudo-terminals are opened here only on Linux
// (term_linux.go); the prompt's other paths are tested everywhere.
func Terminal(t testing.TB, typed string) *os.File {
	t.Helper()
	t.Skip("pseudo-terminals for the prompt tests are opened on Linux only")
	return nil
}
