// Command cxray is a toolkit for NVIDIA/Mellanox ConnectX (mlx5) adapters:
// the PRM register database, register access, optics, NV configuration,
// baselines and monitoring. See the README.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/emu/nsrun"
)

// Exit codes (ARCHITECTURE.md §4).
const (
	exitOK      = 0
	exitProblem = 1 // the command worked and found a problem
	exitUsage   = 2
	exitDevice  = 3
)

// exitError carries an exit code with an error.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, args ...any) error {
	return &exitError{exitUsage, fmt.Errorf(format, args...)}
}

func usageWrap(err error) error {
	if err == nil {
		return nil
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return err
	}
	return &exitError{exitUsage, err}
}

// errQuiet carries an exit status that needs no message (a command run by
// `cxray emu run` exited with it and said what it had to say).
var errQuiet = errors.New("exit status")

// problem is returned by commands that ran fine and found something wrong;
// their output has said what.
var errProblem = &exitError{exitProblem, errors.New("problem found")}

// app holds what every command shares.
type app struct {
	// ctx is cancelled by SIGINT, SIGTERM and SIGHUP: every device
	// operation runs under it, so a stopped cxray finishes or abandons its
	// transaction and releases the adapter's semaphores on the way out.
	ctx            context.Context
	stdout, stderr io.Writer
	stdin          io.Reader
	output         string // table or json
	adbPath        string
	// cmd is the command running (its flags: --via).
	cmd *cobra.Command
}

func (a *app) json() bool { return a.output == "json" }

func main() {
	// In the helper process that `cxray emu run` re-executes inside its
	// mount namespace this serves the emulated devices and never returns.
	nsrun.Child(emuRunDevices)
	ctx, stop := signalContext()
	code := runContext(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	// A device a command left open gives back the ICMD semaphore it keeps
	// between commands; an exiting process must not take it along.
	dev.ReleaseAll(2 * time.Second)
	os.Exit(code)
}

// signalContext is cancelled by the first SIGINT, SIGTERM or SIGHUP; the
// command then unwinds, closing its devices (which releases their
// semaphores). A second signal gives the unwinding a moment, then exits.
func signalContext() (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	var once sync.Once
	stop := func() { once.Do(func() { signal.Stop(ch); cancel() }) }
	go func() {
		first, ok := <-ch
		if !ok {
			return
		}
		cancel()
		select {
		case <-ch:
			// Give in-flight releases a moment: the access layer bounds
			// them, so this is short.
			dev.ReleaseAll(time.Second)
			fmt.Fprintln(os.Stderr, "cxray: stopped by a second signal")
			os.Exit(128 + int(first.(syscall.Signal)))
		case <-time.After(30 * time.Second):
			os.Exit(128 + int(first.(syscall.Signal)))
		}
	}()
	return ctx, stop
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runContext(context.Background(), args, stdin, stdout, stderr)
}

func runContext(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &app{ctx: ctx, stdout: stdout, stderr: stderr, stdin: stdin}
	root := a.rootCmd()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) && ee == errProblem {
		return exitProblem
	}
	if errors.As(err, &ee) && ee.err == errQuiet {
		return ee.code
	}
	code := exitUsage // cobra's own errors: unknown command or flag
	if errors.As(err, &ee) {
		code = ee.code
	}
	msg := err.Error()
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		msg, code = "stopped by a signal; the device was released", exitDevice
	}
	fmt.Fprintf(stderr, "cxray: %s\n", msg)
	// In JSON mode the error is a JSON document on standard output too, so
	// scripts that parse it always get one.
	if a.output == "json" || wantsJSON(args) {
		b, _ := json.Marshal(map[string]any{"error": msg, "exit_code": code})
		fmt.Fprintf(stdout, "%s\n", b)
	}
	return code
}

// wantsJSON says the arguments ask for -o json, for errors that come
// before the flags are parsed.
func wantsJSON(args []string) bool {
	for i, a := range args {
		switch {
		case a == "-ojson", a == "--output=json", a == "-o=json":
			return true
		case (a == "-o" || a == "--output") && i+1 < len(args) && args[i+1] == "json":
			return true
		}
	}
	return false
}

func (a *app) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "cxray",
		Short: "Registers, optics and configuration of NVIDIA ConnectX adapters",
		Long: `cxray turns the ConnectX Programmer's Reference Manual into tools: find and
decode any register, read and write registers on an adapter or on the built-in
emulator, and more. Every command prints a table, or JSON with -o json.

Exit codes: 0 ok, 1 a problem was found, 2 usage error, 3 device or access error.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if a.output != "table" && a.output != "json" {
				return usageErr("-o %s: the output format is table or json", a.output)
			}
			a.cmd = cmd
			if fl := cmd.Flags().Lookup("via"); fl != nil {
				if _, err := adapter.ParseVia(fl.Value.String()); err != nil {
					return usageWrap(err)
				}
			}
			return nil
		},
	}
	root.PersistentFlags().StringVarP(&a.output, "output", "o", "table", "output format: table or json")
	root.PersistentFlags().StringVar(&a.adbPath, "adb", "", "register database (ADB file, or 'builtin'); default $CXRAY_ADB, the installed one, or the built-in")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageWrap(err) })
	root.AddCommand(a.prmCmd(), a.statusCmd(), a.regCmd(), a.healthCmd(), a.roceCmd(), a.moduleCmd(), a.configCmd(), a.snapshotCmd(), a.diffCmd(), a.monitorCmd(), a.plotCmd(), a.exporterCmd(), a.emuCmd(), a.versionCmd(),
		a.cmdCmd(), a.capsCmd(), a.eswCmd(), a.nvmfCmd(), a.qpCmd(), a.mkeyCmd(), a.macCmd())
	root.AddCommand(a.linkCmd())
	return root
}

// version is set by the linker for releases.
var version = "dev"

func (a *app) versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print cxray's version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if a.json() {
				return a.writeJSON(map[string]string{"version": version})
			}
			fmt.Fprintln(a.stdout, "cxray", version)
			return nil
		},
	}
}
