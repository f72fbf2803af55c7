// Command cxray is a toolkit for NVIDIA/Mellanox ConnectX (mlx5) adapters:
// the PRM register database, register access, optics, NV configuration,
// baselines and monitoring. See the README.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

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
	stdout, stderr io.Writer
	stdin          io.Reader
	output         string // table or json
	adbPath        string
	// ctx ends at the first SIGINT, SIGTERM or SIGHUP (its cause names
	// the signal); device work under it finishes or abandons the current
	// transaction and gives back the semaphores it holds. A second signal
	// exits at once, after releasing what can be released in a second.
	ctx context.Context
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

// signalContext returns a context cancelled by the first SIGINT, SIGTERM or
// SIGHUP; the second makes the process exit at once (status 128+signal),
// after giving devices a second to release what they hold.
func signalContext() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		sig, ok := <-ch
		if !ok {
			return
		}
		cancel(fmt.Errorf("interrupted by %v", sig))
		if sig, ok = <-ch; !ok {
			return
		}
		dev.ReleaseAll(time.Second)
		code := 1
		if s, isSys := sig.(syscall.Signal); isSys {
			code = 128 + int(s)
		}
		os.Exit(code)
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(ch)
		cancel(nil)
	}
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runContext(context.Background(), args, stdin, stdout, stderr)
}

func runContext(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &app{stdout: stdout, stderr: stderr, stdin: stdin, ctx: ctx}
	root := a.rootCmd()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
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
	fmt.Fprintf(stderr, "cxray: %v\n", err)
	if errors.As(err, &ee) {
		return ee.code
	}
	return exitUsage // cobra's own errors: unknown command or flag
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
			return nil
		},
	}
	root.PersistentFlags().StringVarP(&a.output, "output", "o", "table", "output format: table or json")
	root.PersistentFlags().StringVar(&a.adbPath, "adb", "", "register database (ADB file, or 'builtin'); default $CXRAY_ADB, the installed one, or the built-in")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageWrap(err) })
	root.AddCommand(a.prmCmd(), a.statusCmd(), a.regCmd(), a.healthCmd(), a.roceCmd(), a.moduleCmd(), a.configCmd(), a.snapshotCmd(), a.diffCmd(), a.monitorCmd(), a.plotCmd(), a.exporterCmd(), a.emuCmd(), a.versionCmd())
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
