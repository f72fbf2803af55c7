package regcmd

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/cli/internal/prmcmd"
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

// mlxregCommand is the cxray command an mlxreg command line means: its
// words (printed, so the user learns them) and the run that does it.
type mlxregCommand struct {
	args []string
	run  func(*app) error
}

// translate returns the cxray command an mlxreg command line means, or a
// usage error that says what to type.
func (f *mlxregFlags) translate() (*mlxregCommand, error) {
	// The device flags as the cxray command would have them by default.
	df := cmdutil.DeviceFlags{Name: f.device, Timeout: cmdutil.DefaultTimeout, Via: "auto"}
	var args []string
	withDevice := func() {
		if f.device != "" {
			args = append(args, "-d", f.device)
		}
	}
	var index, ops []string
	withIndex := func() {
		if f.indexes != "" {
			args = append(args, "--index", f.indexes)
			index = []string{f.indexes}
		}
		if f.ops != "" {
			args = append(args, "--op", f.ops)
			ops = []string{f.ops}
		}
	}
	switch {
	case f.showRegs:
		args = []string{"reg", "list"}
		withDevice()
		return &mlxregCommand{args, func(a *app) error { return a.runRegList(a.Ctx, &regListOptions{df: df}) }}, nil
	case f.showReg != "":
		return &mlxregCommand{[]string{"prm", "show", f.showReg}, func(a *app) error {
			return prmcmd.Show(a.App, &prmcmd.PrmShowOptions{Name: f.showReg})
		}}, nil
	case f.get && f.set != "":
		return nil, cmdutil.UsageErr("--get and --set together: give one (cxray reg get NAME, or cxray reg set NAME FIELD=VALUE...)")
	case f.regName != "" && f.regID != "":
		return nil, cmdutil.UsageErr("--reg_name and --reg_id together: give one")
	case f.regName == "" && f.regID == "":
		return nil, cmdutil.UsageErr("mlxreg flags need --reg_name NAME or --reg_id ID (cxray reg get NAME -d DEV)")
	case f.get && f.regName != "":
		args = []string{"reg", "get", f.regName}
		withDevice()
		withIndex()
		o := &regGetOptions{df: df, index: index, op: ops}
		return &mlxregCommand{args, func(a *app) error { return a.runRegGet(a.Ctx, o, []string{f.regName}) }}, nil
	case f.get:
		if f.regLen == "" {
			return nil, cmdutil.UsageErr("--reg_id needs --reg_len (cxray reg get --id %s --len N -d DEV)", f.regID)
		}
		args = []string{"reg", "get", "--id", f.regID, "--len", f.regLen}
		withDevice()
		return &mlxregCommand{args, func(a *app) error {
			// Parsed here, as the flags of the command it names would be:
			// after that command is printed.
			id, err := intFlag("--id", f.regID)
			if err != nil {
				return err
			}
			n, err := intFlag("--len", f.regLen)
			if err != nil {
				return err
			}
			return a.runRegGet(a.Ctx, &regGetOptions{df: df, id: id, length: n}, nil)
		}}, nil
	case f.set != "" && f.regName != "":
		fields := splitComma(f.set)
		args = append([]string{"reg", "set", f.regName}, fields...)
		withDevice()
		withIndex()
		if f.yes {
			args = append(args, "--yes")
		}
		o := &regSetOptions{df: df, index: index, yes: f.yes}
		return &mlxregCommand{args, func(a *app) error {
			// The confirmation's hint names the flags of the command
			// that runs (reg set's --dry-run), as its line says.
			a.Cmd = a.regSetCmd()
			return a.runRegSet(a.Ctx, o, append([]string{f.regName}, fields...))
		}}, nil
	case f.set != "":
		return nil, cmdutil.UsageErr("--set with --reg_id writes raw bytes in cxray: cxray reg set --id %s --len N --data HEX -d DEV (the whole register, read back after)", f.regID)
	}
	name := f.regName
	if name == "" {
		name = "--id " + f.regID
	}
	return nil, cmdutil.UsageErr("say what to do with %s: --get (cxray reg get %s), or --set FIELD=VALUE (cxray reg set %s FIELD=VALUE)", name, name, name)
}

// splitComma splits mlxreg's "a=1,b=2" into its non-empty items.
func splitComma(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// intFlag reads a number as the cxray flag it becomes would (pflag's
// int: decimal, 0x hex, 0 octal, 0b binary), with pflag's message.
func intFlag(flag, s string) (int, error) {
	v, err := strconv.ParseInt(s, 0, 64)
	if err != nil {
		return 0, cmdutil.UsageErr("invalid argument %q for %q flag: %v", s, flag, err)
	}
	return int(v), nil
}

// runMlxreg runs the cxray command an mlxreg command line means, and says
// which on standard error.
func (a *app) runMlxreg(ctx context.Context, f *mlxregFlags) error {
	c, err := f.translate()
	if err != nil {
		return err
	}
	args := c.args
	if a.Output != "table" {
		args = append(args, "-o", a.Output)
	}
	fmt.Fprintf(a.Stderr, "cxray: mlxreg flags: running 'cxray %s'\n", strings.Join(quoteArgs(args), " "))
	return c.run(a)
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
