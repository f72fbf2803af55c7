package cli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/cli/internal/cmdutil"
)

// A helper is a command of cxray that lives in a binary of its own, so
// that what only it needs is not linked into the CLI (docs/performance.md):
// `cxray exporter` runs cxray-exporter (the Prometheus stack), `cxray plot`
// runs cxray-plot (gonum/plot and its fonts). `cxray emu run` and `emu
// serve` stay commands of the CLI, but start cxray-emu (FUSE) inside their
// namespace.
type helper struct {
	verb, binary, env string
	short             string
}

var (
	exporterHelper = helper{"exporter", "cxray-exporter", EnvExporter, "Serve adapter telemetry to Prometheus (runs cxray-exporter; see cxray-exporter --help)"}
	plotHelper     = helper{"plot", "cxray-plot", "CXRAY_PLOT", "Draw monitored values over time, with threshold lines (runs cxray-plot; see cxray-plot --help)"}
	emuHelper      = helper{"emu run/serve", "cxray-emu", EnvEmu, ""}
)

// EnvEmu names the cxray-emu binary that `cxray emu run` and `emu serve`
// start, when it is neither beside cxray nor on PATH.
const EnvEmu = "CXRAY_EMU"

// EnvExporter names the cxray-exporter binary `cxray exporter` runs, when it
// is neither beside cxray nor on PATH.
const EnvExporter = "CXRAY_EXPORTER"

// inProcess serves a helper's command in this process instead (tests set
// it for the commands they run end to end; the binaries never do).
var inProcess = map[string]func(*cmdutil.App) *cobra.Command{}

func (h helper) file() string {
	if runtime.GOOS == "windows" {
		return h.binary + ".exe"
	}
	return h.binary
}

// find finds the helper's binary: its variable, then beside this binary (a
// release unpacks them in one folder), then on PATH.
func (h helper) find() (string, error) {
	if p := os.Getenv(h.env); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", cmdutil.UsageErr("$%s=%s: %v; point it at a %s binary", h.env, p, err, h.binary)
		}
		return p, nil
	}
	var looked []string
	if self, err := os.Executable(); err == nil {
		if r, err := filepath.EvalSymlinks(self); err == nil {
			self = r
		}
		p := filepath.Join(filepath.Dir(self), h.file())
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
		looked = append(looked, filepath.Dir(self))
	}
	if p, err := exec.LookPath(h.file()); err == nil {
		return p, nil
	}
	looked = append(looked, "PATH")
	return "", cmdutil.UsageErr("'cxray %s' needs a binary of its own, %s, and it is not installed (looked in %v); build it with 'go build ./cmd/%s' (or scripts/release.sh), put it beside cxray or on PATH, or set $%s",
		h.verb, h.binary, looked, h.binary, h.env)
}

// command is `cxray VERB`: it runs the helper with the same arguments (and
// its help), so the command keeps working while the CLI links nothing of
// what the helper needs. Its exit status is the helper's.
func (h helper) command(a *cmdutil.App) *cobra.Command {
	if f := inProcess[h.verb]; f != nil {
		return f(a)
	}
	return &cobra.Command{
		Use:                h.verb + " [flags]",
		Short:              h.short,
		DisableFlagParsing: true,
		RunE: func(_ *cobra.Command, args []string) error {
			return h.run(a, args)
		},
	}
}

func (h helper) run(a *cmdutil.App, args []string) error {
	bin, err := h.find()
	if err != nil {
		return err
	}
	// -o and --adb are the root's flags; cobra leaves them in args when
	// flag parsing is off, and cxray-exporter takes both.
	c := exec.CommandContext(a.Ctx, bin, args...)
	c.Stdin, c.Stdout, c.Stderr = a.Stdin, a.Stdout, a.Stderr
	// A signal to cxray reaches the helper as SIGTERM (it then closes its
	// devices; SIGINT may be ignored in a background job); past a grace
	// period it is killed.
	c.Cancel = func() error { return c.Process.Signal(syscall.SIGTERM) }
	c.WaitDelay = 10 * time.Second
	err = c.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ee) && ee.ExitCode() > 0:
		return &cmdutil.ExitError{Code: ee.ExitCode(), Err: cmdutil.ErrQuiet}
	}
	return cmdutil.DeviceErr(fmt.Errorf("running %s: %w", bin, err))
}
