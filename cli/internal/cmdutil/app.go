// Package cmdutil holds what every cxray command shares: the streams and
// output mode, the one opener of -d names, the register and NV-parameter
// databases, confirmation, bounded input files, and the mapping from
// errors to exit codes (ARCHITECTURE.md, "Output and exit codes").
//
// Each command lives in a package of its own under cli/internal (cli/cli's
// pkg/cmd/<verb> layout) and takes an *App; package cli wires them together.
package cmdutil

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev/devname"
	"github.com/cxray/cxray/kernel"
	"github.com/cxray/cxray/nvconf"
	"github.com/cxray/cxray/nvconf/builtin"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/adb"
	"github.com/cxray/cxray/prm/source"
)

// App is one run of cxray: what its commands share.
type App struct {
	// Ctx is cancelled by SIGINT, SIGTERM and SIGHUP: every device
	// operation runs under it, so a stopped cxray finishes or abandons its
	// transaction and releases the adapter's semaphores on the way out.
	Ctx            context.Context
	Stdout, Stderr io.Writer
	Stdin          io.Reader
	Output         string // table or json
	ADBPath        string
	Version        string
	// Cmd is the command running (its flags: --via).
	Cmd *cobra.Command

	// Sys is the sysfs tree device names resolve in, Kernel where the
	// kernel backend reads, Emulator what opens -d emu names: the command
	// layer hands the emulator to the adapter layer here, so nothing below
	// imports it. Tests replace all three.
	Sys      devname.Sys
	Kernel   kernel.Options
	Emulator adapter.Emulator

	// NamespaceHelper finds the binary that serves the emulator inside
	// `emu run` and `emu serve` (cxray-emu, so the CLI links no FUSE);
	// "" means this one (tests, whose binary serves it itself).
	NamespaceHelper func() (string, error)
}

// JSON says the output is JSON.
func (a *App) JSON() bool { return a.Output == "json" }

// DB loads the register database --adb names.
func (a *App) DB() (*prm.DB, error) {
	db, err := source.Open(a.ADBPath)
	if err != nil {
		var ae *adb.Error
		if errors.As(err, &ae) {
			return nil, UsageWrap(fmt.Errorf("register database: %w", err))
		}
		return nil, UsageWrap(err)
	}
	return db, nil
}

// EnvNVDB names the NV parameter database (an SQLite file, or "builtin").
const EnvNVDB = "CXRAY_NVDB"

// AddNVDBFlag adds --nvdb to a command that reads NV parameters.
func AddNVDBFlag(c *cobra.Command, p *string) {
	c.Flags().StringVar(p, "nvdb", "", "NV parameter database (as for 'cxray config')")
}

// NVDB loads the NV parameter database: path, else $CXRAY_NVDB, else
// mstflint's when installed, else the built-in one.
func NVDB(path string) (*nvconf.DB, error) {
	if path == "" {
		path = os.Getenv(EnvNVDB)
	}
	switch {
	case strings.EqualFold(path, "builtin"):
		return builtin.Load()
	case path != "":
		db, err := nvconf.LoadSQLite(path)
		if err != nil {
			return nil, UsageWrap(fmt.Errorf("--nvdb: %w", err))
		}
		return db, nil
	}
	if _, err := os.Stat(nvconf.MstflintPath); err == nil {
		if db, err := nvconf.LoadSQLite(nvconf.MstflintPath); err == nil {
			return db, nil
		}
	}
	return builtin.Load()
}

// Confirm asks on the terminal; without one it refuses, so scripts must
// say --yes.
func (a *App) Confirm(question string) (bool, error) {
	f, ok := a.Stdin.(*os.File)
	if !ok || !IsTerminal(f) {
		// Suggest --dry-run only to a command that has it (link --clear
		// does not).
		hint := "add --yes"
		if a.Cmd != nil && a.Cmd.Flags().Lookup("dry-run") != nil {
			hint += " (or --dry-run to see the bytes)"
		}
		return false, UsageErr("refusing to write without confirmation: standard input is not a terminal; %s", hint)
	}
	fmt.Fprintf(a.Stderr, "%s [y/N] ", question)
	line, _ := bufio.NewReader(f).ReadString('\n')
	line = strings.ToLower(strings.TrimSpace(line))
	return line == "y" || line == "yes", nil
}

// Ask is the confirmation before a change: nil when yes was given or the
// user agrees. A refusal says on standard error that nothing was done
// (nothing: "nothing written") and is exit 1, as a declined mlxreg or
// mlxconfig write is not a usage error; without a terminal to ask on it
// is exit 2 (add --yes).
func (a *App) Ask(yes bool, question, nothing string) error {
	if yes {
		return nil
	}
	ok, err := a.Confirm(question)
	if err != nil {
		return err
	}
	if !ok {
		fmt.Fprintf(a.Stderr, "cxray: not confirmed; %s\n", nothing)
		return ErrProblem
	}
	return nil
}
