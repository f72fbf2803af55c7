package prmcmd

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/cli/internal/cmdutil/cmdutiltest"
)

// Each verb's flags land in its options and its arguments reach the run
// function.
func TestVerbWiring(t *testing.T) {
	a := &app{cmdutiltest.New(t, "table").App}
	opt := cmp.AllowUnexported(prmInfoOptions{}, prmListOptions{}, prmSearchOptions{}, prmDecodeOptions{}, prmEncodeOptions{}, prmCrosscheckOptions{}, prmDiffOptions{})
	check := func(name string, want, got any, wantArgs, gotArgs []string) {
		t.Helper()
		if d := cmp.Diff(want, got, opt); d != "" {
			t.Errorf("%s options (-want +got):\n%s", name, d)
		}
		if d := cmp.Diff(wantArgs, gotArgs); d != "" {
			t.Errorf("%s args (-want +got):\n%s", name, d)
		}
	}
	i, args := cmdutiltest.Wire(t, a.newPrmInfoCmd)
	check("info", &prmInfoOptions{}, i, []string{}, args)
	l, args := cmdutiltest.Wire(t, a.newPrmListCmd, "--filter", "^PP")
	check("list", &prmListOptions{filter: "^PP"}, l, []string{}, args)
	s, args := cmdutiltest.Wire(t, a.newPrmShowCmd, "PDDR", "--path", "page_data.pddr_module_info_ext", "--brief", "--no-diagram")
	check("show", &PrmShowOptions{Path: "page_data.pddr_module_info_ext", Brief: true, NoDiagram: true}, s, []string{"PDDR"}, args)
	se, args := cmdutiltest.Wire(t, a.newPrmSearchCmd, "temperature", "--no-history", "--history", "/h")
	check("search", &prmSearchOptions{noHistory: true, historyDir: "/h"}, se, []string{"temperature"}, args)
	d, args := cmdutiltest.Wire(t, a.newPrmDecodeCmd, "PAOS", "--file", "-", "--field", "oper_status", "--raw", "--pad", "--in")
	check("decode", &prmDecodeOptions{file: "-", field: "oper_status", raw: true, pad: true, inBox: true}, d, []string{"PAOS"}, args)
	e, args := cmdutiltest.Wire(t, a.newPrmEncodeCmd, "PAOS", "admin_status=1", "--base", "00", "--size", "16", "--raw")
	check("encode", &prmEncodeOptions{base: "00", size: 16, raw: true}, e, []string{"PAOS", "admin_status=1"}, args)
	c, args := cmdutiltest.Wire(t, a.newPrmCrosscheckCmd, "--header", "/x/mlx5_ifc.h", "-v")
	check("crosscheck", &prmCrosscheckOptions{header: "/x/mlx5_ifc.h", verbose: true}, c, []string{}, args)
	df, args := cmdutiltest.Wire(t, a.newPrmDiffCmd, "builtin", "new.adb", "PAOS")
	check("diff", &prmDiffOptions{}, df, []string{"builtin", "new.adb", "PAOS"}, args)
}
