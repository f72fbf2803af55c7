// Package exporterd is the cxray-exporter daemon (cmd/cxray-exporter): the
// exporter command of cli/internal/exportercmd as a program of its own, so
// the Prometheus stack is linked into it and not into the cxray CLI, which
// runs this binary for `cxray exporter`. Flags follow node_exporter's
// (--web.listen-address, --web.config.file, --log.level); docs/exporter.md
// lists them.
package exporterd

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
	"github.com/spf13/pflag"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/cli/internal/exportercmd"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/dev/devname"
	"github.com/cxray/cxray/emu/emuadapter"
	"github.com/cxray/cxray/internal/buildinfo"
	"github.com/cxray/cxray/kernel"
)

// Main runs cxray-exporter on the process's arguments and returns its exit
// code; SIGINT or SIGTERM stop it cleanly.
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, exportercmd.Hooks{})
	// Devices give back the ICMD semaphore they keep between reads.
	dev.ReleaseAll(2 * time.Second)
	stop()
	return code
}

// Run runs cxray-exporter with args until ctx ends (or, with --once, until
// one collection is written); h lets tests see the listening address.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, h exportercmd.Hooks) int {
	a := &cmdutil.App{Ctx: ctx, Stdout: stdout, Stderr: stderr, Stdin: stdin, Version: buildinfo.Version,
		Sys: devname.Default, Kernel: kernel.Options{Root: devname.Default.Root}, Emulator: &emuadapter.Emulator{}, Output: "table"}
	root := Command(a, h)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	if err == nil {
		return cmdutil.ExitOK
	}
	var ee *cmdutil.ExitError
	if errors.As(err, &ee) && ee == cmdutil.ErrProblem {
		return cmdutil.ExitProblem
	}
	code := cmdutil.ExitUsage // cobra's own errors: unknown flag
	if errors.As(err, &ee) {
		code = ee.Code
	}
	fmt.Fprintf(stderr, "cxray-exporter: %s\n", err)
	return code
}

// Command is the cxray-exporter root command on a.
func Command(a *cmdutil.App, h exportercmd.Hooks) *cobra.Command {
	root := exportercmd.NewWithHooks(a, h)
	root.Use = "cxray-exporter [--web.listen-address ADDR] [-d DEV ... | --all]"
	root.Version = buildinfo.Version
	root.SetVersionTemplate("cxray-exporter {{.Version}}\n")
	root.SilenceUsage, root.SilenceErrors = true, true
	root.PersistentFlags().StringVar(&a.ADBPath, "adb", "", "register database (ADB file, or 'builtin'); default $CXRAY_ADB, the installed one, or the built-in")
	// -o is accepted for the sake of `cxray -o json exporter`; the
	// exporter's own output is metrics.
	root.PersistentFlags().StringVarP(&a.Output, "output", "o", "table", "ignored (cxray's global flag)")
	root.PersistentFlags().MarkHidden("output")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return cmdutil.UsageWrap(err) })
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		a.Cmd = cmd
		if fl := cmd.Flags().Lookup("via"); fl != nil {
			if _, err := adapter.ParseVia(fl.Value.String()); err != nil {
				return cmdutil.UsageWrap(err)
			}
		}
		return nil
	}
	return root
}

// ParseArgs parses args as cxray-exporter's flags without running
// anything (deployment files are checked with it) and returns the flags'
// values by name.
func ParseArgs(args []string) (map[string]string, error) {
	a := &cmdutil.App{Stdout: io.Discard, Stderr: io.Discard, Output: "table"}
	c := Command(a, exportercmd.Hooks{})
	if err := c.ParseFlags(args); err != nil {
		return nil, err
	}
	if n := c.Flags().NArg(); n > 0 {
		return nil, fmt.Errorf("cxray-exporter takes no arguments besides flags; got %q", c.Flags().Args())
	}
	out := map[string]string{}
	c.Flags().VisitAll(func(f *pflag.Flag) { out[f.Name] = f.Value.String() })
	return out, nil
}
