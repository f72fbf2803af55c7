package main

import (
	"os"
	"testing"

	"github.com/cxray/cxray/emu/nsrun"
)

// TestMain lets the test binary serve as the namespace helper of
// `cxray emu run`, as the real binary's main does.
func TestMain(m *testing.M) {
	nsrun.Child(emuRunDevices)
	os.Exit(m.Run())
}
