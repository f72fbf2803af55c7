package cli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/cli/internal/cmdutil"
)

// exporterBinary is the exporter daemon's file name (cmd/cxray-exporter).
// The Prometheus stack lives only in that binary, so that every other cxray
// command starts without loading it (docs/performance.md).
func exporterBinary() string {
	if runtime.GOOS == "windows" {
		return "cxray-exporter.exe"
	}
	return "cxray-exporter"
}

// EnvExporter names the cxray-exporter binary `cxray exporter` runs, when it
// is neither beside cxray nor on PATH.
const EnvExporter = "CXRAY_EXPORTER"

// findExporter finds cxray-exporter: $CXRAY_EXPORTER, then beside this
// binary (a release unpacks both in one folder), then on PATH.
func findExporter() (string, error) {
	if p := os.Getenv(EnvExporter); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", cmdutil.UsageErr("$%s=%s: %v; point it at a cxray-exporter binary", EnvExporter, p, err)
		}
		return p, nil
	}
	var looked []string
	if self, err := os.Executable(); err == nil {
		if r, err := filepath.EvalSymlinks(self); err == nil {
			self = r
		}
		p := filepath.Join(filepath.Dir(self), exporterBinary())
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
		looked = append(looked, filepath.Dir(self))
	}
	if p, err := exec.LookPath(exporterBinary()); err == nil {
		return p, nil
	}
	looked = append(looked, "PATH")
	return "", cmdutil.UsageErr("the exporter is a binary of its own, %s, and it is not installed (looked in %v); build it with 'go build ./cmd/cxray-exporter' (or scripts/release.sh), put it beside cxray or on PATH, or set $%s",
		exporterBinary(), looked, EnvExporter)
}

// exporterShim is `cxray exporter`: it runs cxray-exporter with the same
// arguments (and its help), so the command keeps working while the CLI
// links nothing of Prometheus. Its exit status is the exporter's.
func exporterShim(a *cmdutil.App) *cobra.Command {
	return &cobra.Command{
		Use:                "exporter [flags]",
		Short:              "Serve adapter telemetry to Prometheus (runs cxray-exporter; see cxray-exporter --help)",
		DisableFlagParsing: true,
		RunE: func(_ *cobra.Command, args []string) error {
			return runExporterShim(a, args)
		},
	}
}

func runExporterShim(a *cmdutil.App, args []string) error {
	bin, err := findExporter()
	if err != nil {
		return err
	}
	// -o and --adb are the root's flags; cobra leaves them in args when
	// flag parsing is off, and cxray-exporter takes both.
	c := exec.CommandContext(a.Ctx, bin, args...)
	c.Stdin, c.Stdout, c.Stderr = a.Stdin, a.Stdout, a.Stderr
	// A signal to cxray reaches the exporter as an interrupt (it then
	// closes its devices); past a grace period it is killed.
	c.Cancel = func() error { return c.Process.Signal(os.Interrupt) }
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
