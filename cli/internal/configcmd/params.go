package configcmd

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/cxray/cxray/cli/internal/cmdutil"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/nvconf"
)

type showParamsOptions struct {
	filter   string
	internal bool
}

func (cc *configCtx) showParamsCmd() *cobra.Command { return cc.newShowParamsCmd(nil) }

// newShowParamsCmd wires the flags to showParamsOptions; runF (tests)
// replaces runShowParams.
func (cc *configCtx) newShowParamsCmd(runF func(*showParamsOptions, []string) error) *cobra.Command {
	var o showParamsOptions
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
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(&o, args)
			}
			return cc.runShowParams(cc.a.Ctx, &o)
		},
	}
	c.Flags().StringVar(&o.filter, "filter", "", "only parameters whose name, TLV or description matches (case-insensitive)")
	c.Flags().BoolVar(&o.internal, "internal", false, "also list fields without a user-visible name (valid bits, capability fields)")
	return c
}

// runShowParams lists the database's parameters; it reads no device, so
// the context is unused.
func (cc *configCtx) runShowParams(_ context.Context, o *showParamsOptions) error {
	re, err := cmdutil.CompileFilter(o.filter)
	if err != nil {
		return err
	}
	nv, err := cc.db()
	if err != nil {
		return err
	}
	return cc.printParams(nv, re, o.internal)
}

// paramsDoc is `config show-params -o json`.
type paramsDoc struct {
	Descriptions bool               `json:"descriptions"`
	NVDB         string             `json:"nvdb"`
	Parameters   []nvconf.ParamInfo `json:"parameters"`
}

func (cc *configCtx) printParams(nv *nvconf.DB, re *regexp.Regexp, internal bool) error {
	a := cc.a
	list := nv.Params(re, internal)
	if a.JSON() {
		return a.WriteJSON(paramsDoc{NVDB: nv.Source, Descriptions: nv.HasDescriptions, Parameters: list})
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
