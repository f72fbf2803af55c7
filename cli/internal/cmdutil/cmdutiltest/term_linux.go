package cmdutiltest

import (
	"fmt"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// Terminal is the terminal side of a new pseudo-terminal that has typed
// waiting as input: a Stdin cmdutil.Ask asks on. It skips the test where
// there are no pseudo-terminals.
func Terminal(t testing.TB, typed string) *os.File {
	t.Helper()
	c, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	if err := unix.IoctlSetPointerInt(int(c.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(int(c.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Skipf("ptsname: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("open the terminal side: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := c.WriteString(typed); err != nil {
		t.Fatal(err)
	}
	return s
}
