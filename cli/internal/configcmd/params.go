package configcmd

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/cxray/cxray/cli/internal/cmdutil"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/nvconf"
)

func (cc *configCtx) showParamsCmd() *cobra.Command {
	var filter string
	var internal bool
	c := &cobra.Command{
		Use:     "show-params [--filter RE]",
		Aliases: []string{"i", "show_confs"},
		Short:   "List the parameters the database knows: names, TLV, type, values, limits, meaning",
		Long: `List every user-visible parameter of the NV database (no device needed): its
name (NAME_P<n> for per-port ones), the TLV it lives in, its type, the values
it takes and its limits (the expressions refer to the device's capability
TLVs), and its description when the database has one (mstflint's file does,
the built-in set does not). --filter searches names, TLVs and descriptions.`,
		Args: cobra.NoArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			re, err := cmdutil.CompileFilter(filter)
			if err != nil {
				return err
			}
			nv, err := cc.db()
			if err != nil {
				return err
			}
			return cc.printParams(nv, re, internal)
		},
	}
	c.Flags().StringVar(&filter, "filter", "", "only parameters whose name, TLV or description matches (case-insensitive)")
	c.Flags().BoolVar(&internal, "internal", false, "also list fields without a user-visible name (valid bits, capability fields)")
	return c
}

func (cc *configCtx) printParams(nv *nvconf.DB, re *regexp.Regexp, internal bool) error {
	a := cc.a
	list := nv.Params(re, internal)
	if a.JSON() {
		return a.WriteJSON(map[string]any{"nvdb": nv.Source, "descriptions": nv.HasDescriptions, "parameters": list})
	}
	rows := [][]string{{"PARAMETER", "TLV", "TYPE", "VALUES"}}
	var details []string
	for _, j := range list {
		vals := j.Allowed
		var lim []string
		if j.Min != "" {
			lim = append(lim, "min "+j.Min)
		}
		if j.Max != "" {
			lim = append(lim, "max "+j.Max)
		}
		if len(lim) > 0 {
			vals += " (" + strings.Join(lim, ", ") + ")"
		}
		rows = append(rows, []string{j.Name, j.TLV, j.Type, vals})
		var d []string
		if j.Description != "" {
			d = append(d, j.Description)
		}
		if j.Dependency != "" {
			d = append(d, "available when: "+j.Dependency)
		}
		if j.FromVersion > 0 {
			d = append(d, fmt.Sprintf("needs TLV version %d", j.FromVersion))
		}
		details = append(details, strings.Join(d, "\n"))
	}
	cmdutil.WriteRows(a.Stdout, rows, details)
	note := ""
	if !nv.HasDescriptions {
		note = " (no descriptions in the built-in set; install mstflint or give --nvdb for them)"
	}
	fmt.Fprintf(a.Stdout, "%d parameter(s) from %s%s\n", len(list), nv.Source, note)
	return nil
}
