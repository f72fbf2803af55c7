package configcmd

import (
	"context"
	"fmt"
	"time"

	"github.com/cxray/cxray/cli/internal/cmdutil"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/nvconf"
	"github.com/cxray/cxray/nvconf/rawfile"
	"github.com/cxray/cxray/nvconf/tlv"
	"github.com/cxray/cxray/prm"
)

// diffOptions are config diff's flags.
// diffDoc is `config diff -o json` of two TLV files (backups, raw files).
type diffDoc struct {
	A           string              `json:"a"`
	B           string              `json:"b"`
	Differences []nvconf.Difference `json:"differences"`
	Same        int                 `json:"same"` // TLVs equal on both sides
}

type diffOptions struct {
	timeout time.Duration
	all     bool
}

func (cc *configCtx) diffCmd() *cobra.Command { return cc.newDiffCmd(nil) }

// newDiffCmd wires the flags to diffOptions; runF (tests) replaces runDiff.
func (cc *configCtx) newDiffCmd(runF func(*diffOptions, []string) error) *cobra.Command {
	var o diffOptions
	c := &cobra.Command{
		Use:   "diff A B",
		Short: "Compare two NV configurations: backups, mlxconfig query outputs or devices",
		Long: `Compare stored NV configurations TLV by TLV and parameter by parameter. A and
B are backup files (cxray or MLNX_RAW_TLV_FILE format), mlxconfig/mstconfig
query outputs (q or -e q, from WinMFT too: compared parameter by parameter)
or device names (an existing file wins; emu, 0000:03:00.0, mlx5_0 ...). Exit
status 1 when they differ.

With a query output, the parameters both sides hold are compared, and those
only one side holds are named in a footer (--all lists them as rows, "-"
for the side that lacks one); only a difference in what both hold is exit 1.`,
		Args: cobra.ExactArgs(2),
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(&o, args)
			}
			return cc.runDiff(cc.a.Ctx, args, o)
		},
	}
	c.Flags().DurationVar(&o.timeout, "timeout", 10*time.Second, "give up on a device after this long")
	c.Flags().BoolVar(&o.all, "all", false, "with a query output, also list the parameters only one side holds")
	c.Flags().StringVar(&cc.fileDevice, "file-device", "", "in a query output of several devices, compare this one (its number from 1, or its Device name); without it such a file is refused with its list")
	return c
}

// loadSide reads one operand of diff: a file, or a device's stored TLVs.
func (cc *configCtx) loadSide(ctx context.Context, op operand, nv *nvconf.DB, db *prm.DB, hc *nvconf.HeaderCodec) ([]nvconf.RawTLV, error) {
	if op.file {
		b, err := parseBackup(op.arg, op.text, hc, nv)
		if err != nil {
			return nil, err
		}
		return b.TLVs, nil
	}
	arg := op.arg
	ad, err := cc.a.Open(ctx, arg, db)
	if err != nil {
		return nil, fmt.Errorf("%s is neither a file nor a device: %w", arg, err)
	}
	defer ad.Close()
	d, err := cmdutil.Registers(ctx, ad)
	if err != nil {
		return nil, err
	}
	s, err := nvconf.Open(ctx, d, nv)
	if err != nil {
		return nil, cmdutil.Classify(err)
	}
	tlvs, err := s.Walk(ctx)
	if err != nil {
		return nil, cmdutil.Classify(err)
	}
	return tlvs, nil
}

func (cc *configCtx) printDiff(args []string, sides [2][]nvconf.RawTLV, nv *nvconf.DB) error {
	a := cc.a
	d := rawfile.Compare(sides[0], sides[1])
	entries := nv.Differences(d)
	if a.JSON() {
		if err := a.WriteJSON(diffDoc{A: args[0], B: args[1], Same: d.Same, Differences: entries}); err != nil {
			return err
		}
	} else {
		for _, e := range entries {
			switch e.In {
			case "a":
				fmt.Fprintf(a.Stdout, "only in %s: %s\n", args[0], e.TLV)
			case "b":
				fmt.Fprintf(a.Stdout, "only in %s: %s\n", args[1], e.TLV)
			default:
				fmt.Fprintf(a.Stdout, "differs: %s\n", e.TLV)
			}
			for _, c := range e.Changes {
				fmt.Fprintf(a.Stdout, "    %s\n", c)
			}
		}
		if d.Empty() {
			fmt.Fprintf(a.Stdout, "Same NV configuration (%d TLV(s)).\n", d.Same)
		} else {
			fmt.Fprintf(a.Stdout, "%d TLV(s) differ, %d the same.\n", len(entries), d.Same)
		}
	}
	if !d.Empty() {
		return cmdutil.ErrProblem
	}
	return nil
}

// runDiff compares the two operands A and B, TLV by TLV, or parameter by
// parameter when one is a query output.
func (cc *configCtx) runDiff(ctx context.Context, args []string, o diffOptions) error {
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	nv, err := cc.db()
	if err != nil {
		return err
	}
	db, err := cc.a.DB()
	if err != nil {
		return err
	}
	hc, err := tlv.NewHeaderCodec(db, "MNVDA")
	if err != nil {
		return cmdutil.UsageWrap(err)
	}
	ops, err := cc.readOperands(args)
	if err != nil {
		return err
	}
	// A query output holds values, not TLVs: compare by parameter.
	if ops[0].holdsQuery() || ops[1].holdsQuery() {
		return cc.diffSettings(ctx, ops, db, o.all)
	}
	var sides [2][]nvconf.RawTLV
	for i, op := range ops {
		if sides[i], err = cc.loadSide(ctx, op, nv, db, hc); err != nil {
			return err
		}
	}
	return cc.printDiff(args, sides, nv)
}
