// Package emud is the cxray-emu program (cmd/cxray-emu): the helper that
// `cxray emu run` and `cxray emu serve` start inside their private mount
// namespace to serve the emulated adapters over FUSE. It is a binary of its
// own so that the FUSE library is linked there and not into the cxray CLI
// (docs/performance.md, "The CLI's size and start-up").
package emud

import (
	"fmt"
	"io"
	"os"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/cli/internal/emucmd"
	"github.com/cxray/cxray/emu/nsrun"
	"github.com/cxray/cxray/emu/sysfs/fusefs"
	"github.com/cxray/cxray/internal/buildinfo"
)

// Child serves the emulated devices when this process is the namespace
// helper that `cxray emu run` started, and never returns then; main (and a
// test binary's TestMain) calls it first.
func Child() { nsrun.Child(emucmd.NamespaceDevices, fusefs.Mount) }

// Main runs cxray-emu and returns its exit code when it was not started as
// the namespace helper.
func Main() int {
	Child()
	return Run(os.Args[1:], os.Stdout, os.Stderr)
}

// usage says what cxray-emu is for.
const usage = "cxray-emu serves the emulated adapters inside 'cxray emu run' and 'cxray emu serve'; " +
	"run those (cxray emu run -- CMD), with cxray-emu beside cxray or on PATH, or set $CXRAY_EMU"

// Run is cxray-emu run by hand: it says its version, or what it is for
// (asked with --help, exit 0; otherwise a usage error, exit 2).
func Run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 {
		switch args[0] {
		case "version", "--version":
			fmt.Fprintln(stdout, "cxray-emu", buildinfo.Version)
			return cmdutil.ExitOK
		case "help", "--help", "-h":
			fmt.Fprintln(stdout, usage)
			return cmdutil.ExitOK
		}
	}
	fmt.Fprintln(stderr, usage)
	return cmdutil.ExitUsage
}
