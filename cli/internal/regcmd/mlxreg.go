package regcmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/cli/internal/cmdutil"
)

// mlxregFlags are mlxreg's (and mstreg's) flags, accepted on `cxray reg`
// so that a command line typed from habit runs: each is translated into
// the cxray command it means, which is printed on standard error so the
// user learns it. mlxreg's usage: mstreg --help (mstflint 4.21).
type mlxregFlags struct {
	device   string
	regName  string
	regID    string
	regLen   string
	get      bool
	set      string
	indexes  string
	ops      string
	showReg  string
	showRegs bool
	yes      bool
}

func (f *mlxregFlags) add(c *cobra.Command) {
	fl := c.Flags()
	fl.StringVarP(&f.device, "device", "d", "", "device (as for the reg subcommands)")
	fl.StringVar(&f.regName, "reg_name", "", "mlxreg: register name (cxray reg get NAME)")
	fl.StringVar(&f.regID, "reg_id", "", "mlxreg: register ID (cxray reg get --id ID --len N)")
	fl.StringVar(&f.regLen, "reg_len", "", "mlxreg: register length in bytes, with --reg_id")
	fl.BoolVar(&f.get, "get", false, "mlxreg: read the register (cxray reg get)")
	fl.StringVar(&f.set, "set", "", "mlxreg: write FIELD=VALUE,... (cxray reg set NAME FIELD=VALUE...)")
	fl.StringVar(&f.indexes, "indexes", "", "mlxreg: index fields \"a=1,b=2\" (cxray --index a=1,b=2)")
	fl.StringVar(&f.ops, "op", "", "mlxreg: operation fields \"clr=1\" (cxray --op clr=1)")
	fl.StringVar(&f.showReg, "show_reg", "", "mlxreg: show a register's fields (cxray prm show NAME)")
	fl.BoolVar(&f.showRegs, "show_regs", false, "mlxreg: list the registers (cxray reg list)")
	fl.BoolVar(&f.yes, "yes", false, "mlxreg: do not ask before writing")
}

func (f *mlxregFlags) used() bool {
	return f.regName != "" || f.regID != "" || f.regLen != "" || f.get || f.set != "" || f.indexes != "" || f.ops != "" ||
		f.showReg != "" || f.showRegs || f.yes
}

// translate returns the cxray arguments an mlxreg command line means, or
// a usage error that says what to type.
func (f *mlxregFlags) translate() ([]string, error) {
	var args []string
	withDevice := func() {
		if f.device != "" {
			args = append(args, "-d", f.device)
		}
	}
	split := func(s string) []string {
		var out []string
		for _, p := range strings.Split(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
		return out
	}
	index := func() {
		if f.indexes != "" {
			args = append(args, "--index", f.indexes)
		}
		if f.ops != "" {
			args = append(args, "--op", f.ops)
		}
	}
	switch {
	case f.showRegs:
		args = []string{"reg", "list"}
		withDevice()
		return args, nil
	case f.showReg != "":
		return []string{"prm", "show", f.showReg}, nil
	case f.get && f.set != "":
		return nil, cmdutil.UsageErr("--get and --set together: give one (cxray reg get NAME, or cxray reg set NAME FIELD=VALUE...)")
	case f.regName != "" && f.regID != "":
		return nil, cmdutil.UsageErr("--reg_name and --reg_id together: give one")
	case f.regName == "" && f.regID == "":
		return nil, cmdutil.UsageErr("mlxreg flags need --reg_name NAME or --reg_id ID (cxray reg get NAME -d DEV)")
	case f.get && f.regName != "":
		args = []string{"reg", "get", f.regName}
		withDevice()
		index()
		return args, nil
	case f.get:
		if f.regLen == "" {
			return nil, cmdutil.UsageErr("--reg_id needs --reg_len (cxray reg get --id %s --len N -d DEV)", f.regID)
		}
		args = []string{"reg", "get", "--id", f.regID, "--len", f.regLen}
		withDevice()
		return args, nil
	case f.set != "" && f.regName != "":
		args = append([]string{"reg", "set", f.regName}, split(f.set)...)
		withDevice()
		index()
		if f.yes {
			args = append(args, "--yes")
		}
		return args, nil
	case f.set != "":
		return nil, cmdutil.UsageErr("--set with --reg_id writes raw bytes in cxray: cxray reg set --id %s --len N --data HEX -d DEV (the whole register, read back after)", f.regID)
	}
	name := f.regName
	if name == "" {
		name = "--id " + f.regID
	}
	return nil, cmdutil.UsageErr("say what to do with %s: --get (cxray reg get %s), or --set FIELD=VALUE (cxray reg set %s FIELD=VALUE)", name, name, name)
}

// runMlxreg runs the cxray command an mlxreg command line means.
func (a *app) runMlxreg(f *mlxregFlags) error {
	args, err := f.translate()
	if err != nil {
		return err
	}
	if a.Output != "table" {
		args = append(args, "-o", a.Output)
	}
	fmt.Fprintf(a.Stderr, "cxray: mlxreg flags: running 'cxray %s'\n", strings.Join(quoteArgs(args), " "))
	return a.Rerun(args)
}

func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, s := range args {
		if s == "" || strings.ContainsAny(s, " \t\"'$*?[]") {
			s = "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
		out[i] = s
	}
	return out
}
