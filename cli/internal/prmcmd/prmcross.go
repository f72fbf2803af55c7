package prmcmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/prm/ifc"
)

// prmCrosscheckOptions holds the flags of the "crosscheck" command.
// crosscheckDoc is `prm crosscheck -o json`: the register counts of the
// comparison of the ADB with the kernel's mlx5_ifc.h.
type crosscheckDoc struct {
	ADB                 string   `json:"adb"`
	ADBRevision         string   `json:"adb_revision"`
	Explained           int      `json:"explained"`
	Failed              bool     `json:"failed"`
	Kernel              string   `json:"kernel"`
	Matched             int      `json:"matched"`
	Mismatches          int      `json:"mismatches"`
	OnlyADB             int      `json:"only_adb"`
	OnlyKernel          int      `json:"only_kernel"`
	OtherLayouts        int      `json:"other_layouts"`
	Registers           int      `json:"registers"`
	RegistersOnlyADB    []string `json:"registers_only_adb"`
	RegistersOnlyKernel []string `json:"registers_only_kernel"`
	Renamed             int      `json:"renamed"`
	SplitMerged         int      `json:"split_merged"`
}

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
		err := a.WriteJSON(crosscheckDoc{
			ADB: rep.ADBSource, ADBRevision: rep.ADBRevision, Kernel: rep.KernelSource,
			Registers: reg.Layouts, Matched: reg.Matched, Renamed: reg.Renamed, SplitMerged: reg.Splits,
			OnlyADB: reg.OnlyADB, OnlyKernel: reg.OnlyKernel, Mismatches: reg.Mismatches, Explained: reg.Explained,
			OtherLayouts: other.Layouts, RegistersOnlyADB: rep.OnlyADB, RegistersOnlyKernel: rep.OnlyKernel,
			Failed: rep.Failed(),
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
