package cmdutil

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair: what the test writes to the
// controller side, the terminal side reads as typed input.
func openPTY(t *testing.T) (controller, term *os.File) {
	t.Helper()
	c, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(c.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		c.Close()
		t.Skipf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(int(c.Fd()), unix.TIOCGPTN)
	if err != nil {
		c.Close()
		t.Skipf("ptsname: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		c.Close()
		t.Skipf("open the terminal side: %v", err)
	}
	t.Cleanup(func() { s.Close(); c.Close() })
	return c, s
}

// On a terminal: yes goes on, anything else is a refusal that wrote
// nothing (exit 1, and stderr says so); --yes never asks.
func TestAskOnATerminal(t *testing.T) {
	for _, c := range []struct {
		typed string
		ok    bool
	}{{"y\n", true}, {"YES\n", true}, {"n\n", false}, {"\n", false}, {"yess\n", false}} {
		ctl, term := openPTY(t)
		if !IsTerminal(term) {
			t.Fatal("the terminal side of a pty is not a terminal")
		}
		if _, err := ctl.WriteString(c.typed); err != nil {
			t.Fatal(err)
		}
		var errb bytes.Buffer
		a := &App{Stdin: term, Stderr: &errb}
		err := a.Ask(false, "Write PAOS on emu?", "nothing written")
		if !strings.Contains(errb.String(), "Write PAOS on emu? [y/N]") {
			t.Errorf("%q: the question was not asked: %q", c.typed, errb.String())
		}
		switch {
		case c.ok && err != nil:
			t.Errorf("%q: %v", c.typed, err)
		case !c.ok && (!errors.Is(err, ErrProblem) || !strings.Contains(errb.String(), "not confirmed; nothing written")):
			t.Errorf("%q: %v, stderr %q; want exit 1 saying nothing was written", c.typed, err, errb.String())
		}
	}
	var errb bytes.Buffer
	if err := (&App{Stderr: &errb}).Ask(true, "Write?", "nothing written"); err != nil || errb.Len() != 0 {
		t.Errorf("--yes: %v, asked %q", err, errb.String())
	}
}
