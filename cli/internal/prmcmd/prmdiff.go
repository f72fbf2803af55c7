package prmcmd

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/cmdb"
	"github.com/cxray/cxray/prm/revdiff"
	"github.com/cxray/cxray/prm/source"
)

// BuiltinIfc names the command layouts built into cxray in prm diff.
const BuiltinIfc = "builtin-ifc"

// loadDiffSide loads one side of prm diff: an ADB or 'builtin' (registers),
// or a kernel header or 'builtin-ifc' (command layouts, ifc true).
func loadDiffSide(arg string) (db *prm.DB, isIfc bool, err error) {
	switch {
	case strings.EqualFold(arg, BuiltinIfc):
		db, err := cmdb.KernelLayouts()
		return db, true, err
	case strings.HasSuffix(arg, ".h"):
		db, err := cmdb.HeaderLayouts(arg)
		return db, true, err
	}
	db, err = source.Load(arg)
	return db, false, err
}

// layoutNames turns the NAME arguments of a layout diff into layout names
// (a command stands for its in and out layouts); none means every
// definition on either side (every is then true).
func layoutNames(old, new *prm.DB, args []string) ([]string, bool, error) {
	if len(args) == 0 {
		seen := map[string]bool{}
		for _, db := range []*prm.DB{old, new} {
			for n := range db.Nodes {
				if !strings.Contains(n, ".") {
					seen[n] = true
				}
			}
		}
		var out []string
		for n := range seen {
			out = append(out, n)
		}
		sort.Strings(out)
		return out, true, nil
	}
	cdb, err := cmdb.Load()
	if err != nil {
		return nil, false, err
	}
	var out []string
	for _, a := range args {
		if c, err := cdb.Command(a); err == nil && !isNumber(a) {
			if c.In == "" && c.Out == "" {
				return nil, false, fmt.Errorf("%s (0x%x): no layouts are known for it", c.Name, c.Opcode)
			}
			for _, n := range []string{c.In, c.Out} {
				if n != "" {
					out = append(out, n)
				}
			}
			continue
		}
		out = append(out, a)
	}
	return out, false, nil
}

// prmDiffOptions are the options of the verb: it has no flags of its own
// (the output mode is global).
type prmDiffOptions struct{}

func (a *app) prmDiffCmd() *cobra.Command { return a.newPrmDiffCmd(nil) }

// newPrmDiffCmd wires the command; runF (tests) replaces runPrmDiff.
func (a *app) newPrmDiffCmd(runF func(*prmDiffOptions, []string) error) *cobra.Command {
	var o prmDiffOptions
	c := &cobra.Command{
		Use:   "diff OLD NEW [NAME...]",
		Short: "What changed between two PRM revisions or kernel headers (registers, commands, fields)",
		Long: `Compare two register databases: OLD and NEW are ADB files or 'builtin'.
Reports registers added and removed, and for each changed register the fields
added, removed, moved, resized, renamed (same place and width, new name),
merged or split, and changed access kinds and enum values. NAME limits the
diff to registers or layout nodes (config_item).

The command interface's layouts compare the same way: OLD and NEW are then
kernel headers (a path to mlx5_ifc.h) or 'builtin-ifc' (the layouts built
into cxray), and NAME a layout (qpc, cmd_hca_cap) or a command, whose in and
out mailboxes are compared. Without NAME every layout is.

Exit status, as diff(1): 0 when nothing changed, 1 when something did.`,
		Example: `  cxray prm diff hca-ext-rev0.57.adb hca-ext-rev0.64.adb config_item
  cxray prm diff builtin /usr/share/mft/prm_dbs/hca/ext/register_access_table.adb -o json
  cxray prm diff builtin-ifc /usr/src/linux-headers-6.12.0-1-common/include/linux/mlx5/mlx5_ifc.h QUERY_HCA_CAP`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(&o, args)
			}
			return a.runPrmDiff(a.Ctx, &o, args)
		},
	}
	return c
}

// runPrmDiff is the work of the "diff" command, apart from its cobra wiring.
func (a *app) runPrmDiff(ctx context.Context, _ *prmDiffOptions, args []string) error {
	old, oldIfc, err := loadDiffSide(args[0])
	if err != nil {
		return cmdutil.UsageWrap(err)
	}
	new, newIfc, err := loadDiffSide(args[1])
	if err != nil {
		return cmdutil.UsageWrap(err)
	}
	if oldIfc != newIfc {
		return cmdutil.UsageErr("%s and %s are not the same kind of database: compare an ADB with an ADB ('builtin') or a kernel header with a kernel header ('builtin-ifc')", args[0], args[1])
	}
	names, every := args[2:], false
	if oldIfc {
		if names, every, err = layoutNames(old, new, names); err != nil {
			return cmdutil.UsageWrap(err)
		}
	}
	rep, err := revdiff.Diff(old, new, revdiff.Options{Names: names})
	if err == nil && every {
		rep.Names, rep.UnchangedNames = []string{"(every layout)"}, nil
	}
	if err != nil {
		var nf *prm.NotFoundError
		if errors.As(err, &nf) {
			return cmdutil.UsageWrap(err)
		}
		return err
	}
	if a.JSON() {
		if err := a.WriteJSON(rep); err != nil {
			return err
		}
	} else if err := rep.WriteText(a.Stdout); err != nil {
		return err
	}
	if len(rep.AddedRegisters)+len(rep.RemovedRegisters)+len(rep.Changed) > 0 {
		return cmdutil.ErrProblem
	}
	return nil
}
