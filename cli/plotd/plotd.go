// Package plotd is the cxray-plot program (cmd/cxray-plot): `cxray plot`
// as a binary of its own, so the plotting stack (gonum/plot and its fonts)
// is linked there and not into the cxray CLI, which runs this binary for
// `cxray plot`.
package plotd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/cli/internal/plotcmd"
	"github.com/cxray/cxray/internal/buildinfo"
)

// Main runs cxray-plot on the process's arguments and returns its exit code.
func Main() int {
	return Run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
}

// Run runs cxray-plot with args.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &cmdutil.App{Ctx: ctx, Stdout: stdout, Stderr: stderr, Stdin: stdin, Version: buildinfo.Version, Output: "table"}
	root := plotcmd.New(a)
	root.Use = "cxray-plot FILE --out CHART.svg|.png|.pdf [--what KEY...]"
	root.Version = buildinfo.Version
	root.SetVersionTemplate("cxray-plot {{.Version}}\n")
	root.SilenceUsage, root.SilenceErrors = true, true
	root.PersistentFlags().StringVarP(&a.Output, "output", "o", "table", "output format: table or json")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return cmdutil.UsageWrap(err) })
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
	code := cmdutil.ExitUsage
	if errors.As(err, &ee) {
		code = ee.Code
	}
	fmt.Fprintf(stderr, "cxray: %s\n", err)
	if a.Output == "json" {
		b, _ := json.Marshal(cmdutil.ErrorDoc{Error: err.Error(), ExitCode: code})
		fmt.Fprintf(stdout, "%s\n", b)
	}
	return code
}
