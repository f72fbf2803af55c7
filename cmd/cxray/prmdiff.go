package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/revdiff"
	"github.com/cxray/cxray/prm/source"
)

func (a *app) prmDiffCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "diff OLD NEW [NAME...]",
		Short: "What changed between two PRM revisions (registers and fields)",
		Long: `Compare two register databases: OLD and NEW are ADB files or 'builtin'.
Reports registers added and removed, and for each changed register the fields
added, removed, moved, resized, renamed (same place and width, new name),
merged or split, and changed access kinds and enum values. NAME limits the
diff to registers or layout nodes (config_item).

Exit status, as diff(1): 0 when nothing changed, 1 when something did.`,
		Example: `  cxray prm diff hca-ext-rev0.57.adb hca-ext-rev0.64.adb config_item
  cxray prm diff builtin /usr/share/mft/prm_dbs/hca/ext/register_access_table.adb -o json`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(_ *cobra.Command, args []string) error {
			old, err := source.Load(args[0])
			if err != nil {
				return usageWrap(err)
			}
			new, err := source.Load(args[1])
			if err != nil {
				return usageWrap(err)
			}
			rep, err := revdiff.Diff(old, new, revdiff.Options{Names: args[2:]})
			if err != nil {
				var nf *prm.NotFoundError
				if errors.As(err, &nf) {
					return usageWrap(err)
				}
				return err
			}
			if a.json() {
				if err := a.writeJSON(rep); err != nil {
					return err
				}
			} else if err := rep.WriteText(a.stdout); err != nil {
				return err
			}
			if len(rep.AddedRegisters)+len(rep.RemovedRegisters)+len(rep.Changed) > 0 {
				return errProblem
			}
			return nil
		},
	}
}
