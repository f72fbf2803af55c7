package prmcmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/prm/ifc"
)

// prmCrosscheckOptions holds the flags of the "crosscheck" command.
type prmCrosscheckOptions struct {
	header  string
	verbose bool
}

func (a *app) prmCrosscheckCmd() *cobra.Command { return a.newPrmCrosscheckCmd(nil) }

// newPrmCrosscheckCmd wires the flags to prmCrosscheckOptions; runF (tests) replaces runPrmCrosscheck.
func (a *app) newPrmCrosscheckCmd(runF func(*prmCrosscheckOptions, []string) error) *cobra.Command {
	o := &prmCrosscheckOptions{}
	c := &cobra.Command{
		Use:   "crosscheck",
		Short: "Compare the register database with the kernel's mlx5_ifc.h, field by field",
		Long: `Compare every register that both the register database and the kernel's
mlx5_ifc.h (Debian linux-headers-*-common) describe, field by field: fields
that match, are renamed, split or merged, only in one source, and mismatches
(same field, different place or width). Known differences between PRM
revisions and the kernel are listed as explained. Exit 1 on an unexplained
mismatch.`,
		Args: cobra.NoArgs,
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(o, args)
			}
			return a.runPrmCrosscheck(a.Ctx, o)
		},
	}
	c.Flags().StringVar(&o.header, "header", "", "mlx5_ifc.h to read (default: the newest under /usr/src)")
	c.Flags().BoolVarP(&o.verbose, "verbose", "v", false, "list every register's fields")
	return c
}

// runPrmCrosscheck is the work of the "crosscheck" command, apart from its cobra wiring.
func (a *app) runPrmCrosscheck(ctx context.Context, o *prmCrosscheckOptions) error {
	db, err := a.DB()
	if err != nil {
		return err
	}
	if o.header == "" {
		if o.header, err = ifc.Find(); err != nil {
			return cmdutil.UsageWrap(err)
		}
	}
	h, err := ifc.LoadFile(o.header)
	if err != nil {
		return cmdutil.UsageWrap(err)
	}
	rep := ifc.Compare(db, h)
	if a.JSON() {
		reg, other := rep.Counts(true), rep.Counts(false)
		err := a.WriteJSON(map[string]any{
			"adb": rep.ADBSource, "adb_revision": rep.ADBRevision, "kernel": rep.KernelSource,
			"registers": reg.Layouts, "matched": reg.Matched, "renamed": reg.Renamed, "split_merged": reg.Splits,
			"only_adb": reg.OnlyADB, "only_kernel": reg.OnlyKernel, "mismatches": reg.Mismatches, "explained": reg.Explained,
			"other_layouts": other.Layouts, "registers_only_adb": rep.OnlyADB, "registers_only_kernel": rep.OnlyKernel,
			"failed": rep.Failed(),
		})
		if err != nil {
			return err
		}
	} else {
		fmt.Fprint(a.Stdout, rep.Summary())
		if o.verbose {
			for _, l := range rep.Registers {
				fmt.Fprint(a.Stdout, l.Detail())
			}
		}
	}
	if rep.Failed() {
		return cmdutil.ErrProblem
	}
	return nil
}
