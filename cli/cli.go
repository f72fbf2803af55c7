// Package cli is cxray's command line: the root command that wires every
// verb (each a package of its own under cli/internal, on the App of
// cli/internal/cmdutil), the signals that stop a run cleanly, and the exit
// codes and JSON errors of ARCHITECTURE.md's output contract. Its tests run
// the whole CLI end to end against the emulator and the kernel fixtures.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/cli/internal/configcmd"
	"github.com/cxray/cxray/cli/internal/emucmd"
	"github.com/cxray/cxray/cli/internal/explaincmd"
	"github.com/cxray/cxray/cli/internal/firmwarecmd"
	"github.com/cxray/cxray/cli/internal/fwcmd"
	"github.com/cxray/cxray/cli/internal/healthcmd"
	"github.com/cxray/cxray/cli/internal/linkcmd"
	"github.com/cxray/cxray/cli/internal/maccmd"
	"github.com/cxray/cxray/cli/internal/modulecmd"
	"github.com/cxray/cxray/cli/internal/monitorcmd"
	"github.com/cxray/cxray/cli/internal/prmcmd"
	"github.com/cxray/cxray/cli/internal/regcmd"
	"github.com/cxray/cxray/cli/internal/rocecmd"
	"github.com/cxray/cxray/cli/internal/snapshotcmd"
	"github.com/cxray/cxray/cli/internal/statuscmd"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/dev/devname"
	"github.com/cxray/cxray/emu/emuadapter"
	"github.com/cxray/cxray/internal/buildinfo"
	"github.com/cxray/cxray/kernel"
)

// sys is the sysfs tree device names resolve in; tests replace it.
var sys = devname.Default

// kernelOptions says where the kernel backend reads: the sysfs tree device
// names resolve in, and the machine's netlink. Tests replace it to add fake
// netlink connections.
var kernelOptions = func() kernel.Options { return kernel.Options{Root: sys.Root} }

// emulator opens -d emu names: the only place the command layer hands the
// emulator to the adapter layer. Tests tune it.
var emulator = &emuadapter.Emulator{}

// namespaceHelper finds cxray-emu for `emu run` and `emu serve`; tests
// make their own binary the helper.
var namespaceHelper = emuHelper.find

// newApp is the App of one run, with this package's (test-tunable)
// sysfs, kernel and emulator.
func newApp(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) *cmdutil.App {
	return &cmdutil.App{Ctx: ctx, Stdout: stdout, Stderr: stderr, Stdin: stdin, Version: buildinfo.Version,
		Sys: sys, Kernel: kernelOptions(), Emulator: emulator, NamespaceHelper: namespaceHelper}
}

// Main runs cxray on the process's arguments and streams and returns its
// exit code; a signal stops the command cleanly.
func Main() int {
	ctx, stop := signalContext()
	code := runContext(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	// A device a command left open gives back the ICMD semaphore it keeps
	// between commands; an exiting process must not take it along. This
	// runs before the signal handler is removed, so a signal now cannot
	// kill the process mid-release.
	dev.ReleaseAll(2 * time.Second)
	stop()
	return code
}

// stoppedBy is the cause of a context a signal cancelled.
type stoppedBy struct{ sig syscall.Signal }

func (s *stoppedBy) Error() string { return "stopped by " + signalName(s.sig) }

// signalName is how a user knows the signal.
func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT (Ctrl-C)"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return s.String()
}

// signalContext is cancelled by the first SIGINT, SIGTERM or SIGHUP, with
// a *stoppedBy cause; the command then unwinds, closing its devices
// (which releases their semaphores), and runContext exits 128 + the
// signal's number, as shells report a process the signal killed. A second
// signal gives the unwinding a moment, then exits.
func signalContext() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	var once sync.Once
	stop := func() { once.Do(func() { signal.Stop(ch); cancel(nil) }) }
	go func() {
		first, ok := <-ch
		if !ok {
			return
		}
		cancel(&stoppedBy{first.(syscall.Signal)})
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

func runContext(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := newApp(ctx, stdin, stdout, stderr)
	root := rootFor(a, args)
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
	if errors.As(err, &ee) && ee.Err == cmdutil.ErrQuiet {
		return ee.Code
	}
	code := cmdutil.ExitUsage // cobra's own errors: unknown command or flag
	if errors.As(err, &ee) {
		code = ee.Code
	}
	msg := err.Error()
	// A command a signal stopped failed because of the signal, whatever
	// its error says (a closed device, an interrupted access): say so,
	// and exit as shells report it (SIGINT 130, SIGTERM 143, SIGHUP 129).
	// A command that took the signal as its normal end (exporter, monitor)
	// returned nil above.
	var sb *stoppedBy
	if errors.As(context.Cause(ctx), &sb) {
		msg, code = sb.Error()+"; the devices were released", 128+int(sb.sig)
	}
	fmt.Fprintf(stderr, "cxray: %s\n", msg)
	var re *cmdutil.ReportedError
	if errors.As(err, &re) {
		return code // the report on standard output says it already
	}
	// In JSON mode the error is a JSON document on standard output too, so
	// scripts that parse it always get one.
	if a.Output == "json" || wantsJSON(args) {
		b, _ := json.Marshal(cmdutil.ErrorDoc{Error: msg, ExitCode: code})
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

// newRoot is the cxray command without its verbs.
func newRoot(a *cmdutil.App) *cobra.Command {
	root := &cobra.Command{
		Use:   "cxray",
		Short: "Registers, optics and configuration of NVIDIA ConnectX adapters",
		Long: `cxray turns the ConnectX Programmer's Reference Manual into tools: find and
decode any register, read and write registers on an adapter or on the built-in
emulator, and more. Every command prints a table, or JSON with -o json.

Exit codes: 0 ok, 1 a problem was found, 2 usage error, 3 device or access error;
128 + the signal's number when a signal stopped it (Ctrl-C 130, SIGTERM 143).`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if a.Output != "table" && a.Output != "json" {
				return cmdutil.UsageErr("-o %s: the output format is table or json", a.Output)
			}
			a.Cmd = cmd
			if fl := cmd.Flags().Lookup("via"); fl != nil && fl.Annotations[cmdutil.ViaExtended] == nil {
				if _, err := adapter.ParseVia(fl.Value.String()); err != nil {
					return cmdutil.UsageWrap(err)
				}
			}
			return nil
		},
	}
	root.PersistentFlags().StringVarP(&a.Output, "output", "o", "table", "output format: table or json")
	root.PersistentFlags().StringVar(&a.ADBPath, "adb", "", "register database (ADB file, or 'builtin'); default $CXRAY_ADB, the installed one, or the built-in")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return cmdutil.UsageWrap(err) })
	return root
}

// A verb is one of the root's commands: its name, and how to build it.
type verb struct {
	name  string
	build func(*cmdutil.App) *cobra.Command
}

// verbs are every command of the root, by name (TestVerbNames checks each
// builds the command it is named after).
var verbs = []verb{
	{"prm", prmcmd.New}, {"status", statuscmd.New}, {"reg", regcmd.New}, {"health", healthcmd.New},
	{"roce", rocecmd.New}, {"module", modulecmd.New}, {"config", configcmd.New}, {"snapshot", snapshotcmd.New},
	{"diff", snapshotcmd.NewDiff}, {"monitor", monitorcmd.New}, {"plot", plotHelper.command},
	{"exporter", exporterHelper.command}, {"emu", emucmd.New}, {"version", versionCmd},
	{"cmd", fwcmd.NewCmd}, {"caps", fwcmd.NewCaps}, {"esw", fwcmd.NewEsw}, {"nvmf", fwcmd.NewNvmf},
	{"qp", fwcmd.NewQP}, {"mkey", fwcmd.NewMkey}, {"mac", maccmd.New}, {"explain", explaincmd.New},
	{"fw", firmwarecmd.New}, {"link", linkcmd.New},
}

// rootCmd is the cxray command with every verb: the one place they are
// wired together.
func rootCmd(a *cmdutil.App) *cobra.Command {
	root := newRoot(a)
	for _, v := range verbs {
		root.AddCommand(v.build(a))
	}
	return root
}

// rootFor is the root for one run: with only the verb args name when
// nothing else can be asked of the others, so a command does not build the
// whole tree (docs/performance.md, "The CLI's size and start-up"). Help,
// completion, an unknown verb and anything it cannot tell get every verb,
// so their listings and suggestions stay whole.
func rootFor(a *cmdutil.App, args []string) *cobra.Command {
	name := namedVerb(args)
	for _, v := range verbs {
		if v.name == name {
			root := newRoot(a)
			root.AddCommand(v.build(a))
			return root
		}
	}
	return rootCmd(a)
}

// namedVerb is the verb args run, past the root's own flags (-o, --adb),
// or "" when it is not plain: help, a flag the root does not take there,
// or "--".
func namedVerb(args []string) string {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-o", a == "--output", a == "--adb":
			i++ // the flag's value
		case strings.HasPrefix(a, "--output="), strings.HasPrefix(a, "--adb="),
			strings.HasPrefix(a, "-o") && len(a) > 2:
		case strings.HasPrefix(a, "-"):
			return ""
		default:
			return a
		}
	}
	return ""
}

func versionCmd(a *cmdutil.App) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print cxray's version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if a.JSON() {
				return a.WriteJSON(map[string]string{"version": buildinfo.Version})
			}
			fmt.Fprintln(a.Stdout, "cxray", buildinfo.Version)
			return nil
		},
	}
}
