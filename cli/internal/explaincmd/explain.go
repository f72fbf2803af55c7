package explaincmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/feature/explain"
	"github.com/cxray/cxray/nvconf/builtin"
	"github.com/cxray/cxray/prm/cmdb"
)

type explainOptions struct {
	input   string
	follow  bool
	kmsg    string
	verbose bool
	count   int
}

func (a *app) explainCmd() *cobra.Command { return a.newExplainCmd(nil) }

// newExplainCmd wires the flags to explainOptions; runF (tests) replaces runFollow.
func (a *app) newExplainCmd(runF func(*explainOptions, []string) error) *cobra.Command {
	o := &explainOptions{}
	c := &cobra.Command{
		Use:   "explain [FILE|-]",
		Short: "Say what a kernel log, a pasted tool output or a dump is, decode it, and give verdicts",
		Long: `Read what you have in front of you and explain it: mlx5 kernel log lines
(command failures, error CQEs, health reports, probe failures, module and
port events, PCIe AER), ethtool -m (decoded, hex or raw), mlxlink/mstlink
(text or --json), lspci -vv, SONiC sfputil show eeprom, devlink health,
rdma resource show qp, mlxconfig/mstconfig query, NV backups, flint/mstflint
q, mlxup/mlxfwmanager, register dumps (mstreg, xxd, hexdump -C, od),
ipconfig/Get-NetAdapter/ip link, and cxray's own snapshots and monitor files.

A whole dmesg, a support bundle's text or a ticket with several pastes is
split into parts (at shell prompts, code fences and where each kind starts)
and each part is explained: what it is, what it says, and findings with a
category (software use, configuration, firmware, hardware, input) and a
next step. A part that is cut short is said to be so, and gets no verdict on
the hardware.

--follow reads the live kernel log (/dev/kmsg) and prints each decoded mlx5,
PCIe and AER event as it comes, until interrupted (or --count events).

Exit 0 nothing wrong, 1 a problem found, 2 nothing in the input could be read.`,
		Example: `  dmesg | cxray explain -
  cxray explain ticket.txt -o json
  cxray explain --follow`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(o, args)
			}
			if len(args) == 1 {
				o.input = args[0]
			}
			if o.follow {
				return a.runFollow(a.Ctx, o)
			}
			return a.runExplain(a.Ctx, o)
		},
	}
	c.Flags().BoolVarP(&o.follow, "follow", "f", false, "decode the live kernel log (/dev/kmsg) as it comes")
	c.Flags().StringVar(&o.kmsg, "kmsg", "/dev/kmsg", "with --follow, the kernel log device to read")
	c.Flags().IntVar(&o.count, "count", 0, "with --follow, stop after this many decoded events (0: until interrupted)")
	c.Flags().BoolVarP(&o.verbose, "verbose", "v", false, "also list informational events and every decoded field")
	return c
}

func (a *app) databases() explain.Databases {
	var d explain.Databases
	if db, err := a.DB(); err == nil {
		d.Registers = db
	}
	if c, err := cmdb.Load(); err == nil {
		d.Commands = c
	}
	if nv, err := builtin.Load(); err == nil {
		d.NV = nv
	}
	return d
}

func (a *app) runExplain(ctx context.Context, o *explainOptions) error {
	if o.input == "" {
		return cmdutil.UsageErr("give a file to explain, or '-' for standard input (dmesg | cxray explain -); --follow reads the live kernel log")
	}
	b, err := cmdutil.ReadInput(o.input, a.Stdin, explain.MaxText, "a text to explain")
	if err != nil {
		return err
	}
	r, err := explain.Explain(string(b), a.databases())
	if err != nil {
		return cmdutil.UsageErr("%s: %v", o.input, err)
	}
	if a.JSON() {
		if err := a.WriteJSON(r.Document(o.input)); err != nil {
			return err
		}
	} else {
		a.writeText(r, o.verbose)
	}
	switch {
	case r.Unreadable():
		if len(r.Parts) == 0 {
			if a.JSON() {
				return &cmdutil.ExitError{Code: cmdutil.ExitUsage, Err: cmdutil.ErrQuiet}
			}
			return cmdutil.UsageErr("%s: nothing in it is a kind explain reads (%d lines); cxray explain --help lists the kinds", o.input, r.Unrecognised)
		}
		return &cmdutil.ExitError{Code: cmdutil.ExitUsage, Err: cmdutil.ErrQuiet}
	case r.Problem():
		return cmdutil.ErrProblem
	}
	return nil
}

func (a *app) writeText(r *explain.Report, verbose bool) {
	w := a.Stdout
	for i, p := range r.Parts {
		if i > 0 {
			fmt.Fprintln(w)
		}
		lines := fmt.Sprintf("line %d", p.From)
		if p.To != p.From {
			lines = fmt.Sprintf("lines %d-%d", p.From, p.To)
		}
		head := fmt.Sprintf("== %s (%s)", p.Title, lines)
		if p.Partial {
			head += ", partial"
		}
		fmt.Fprintln(w, head)
		if p.Command != "" {
			fmt.Fprintf(w, "   command: %s\n", p.Command)
		}
		if p.Error != "" {
			fmt.Fprintf(w, "   could not read it: %s\n", p.Error)
		}
		for _, f := range p.Facts {
			fmt.Fprintf(w, "   %-28s %s\n", f.Name+":", f.Value)
		}
		for _, e := range p.Events {
			if e.Severity == explain.SevInfo && !verbose {
				continue
			}
			where := cmdutil.Dash(e.Device)
			fmt.Fprintf(w, "   line %d  %s  %s  %s\n", e.Line, e.Class, where, e.Message)
			for _, f := range e.Fields {
				fmt.Fprintf(w, "      %-24s %s\n", f.Name+":", f.Value)
			}
		}
		for _, f := range p.Findings {
			if f.Severity == explain.SevInfo && !verbose {
				continue
			}
			n := ""
			if f.Count > 1 {
				n = fmt.Sprintf(" (x%d)", f.Count)
			}
			fmt.Fprintf(w, "   %s [%s] %s%s\n", strings.ToUpper(f.Severity), f.Category, f.What, n)
			if f.Next != "" {
				fmt.Fprintf(w, "      next: %s\n", f.Next)
			}
		}
		for _, n := range p.Notes {
			fmt.Fprintf(w, "   note: %s\n", n)
		}
	}
	if len(r.Parts) == 0 {
		fmt.Fprintln(w, "nothing in the input is a kind explain reads")
	}
	if r.Unrecognised > 0 {
		fmt.Fprintf(w, "\n%d line(s) were not part of anything explain reads (prose, other output)\n", r.Unrecognised)
	}
	problems := 0
	for _, p := range r.Parts {
		for _, f := range p.Findings {
			if f.Severity != explain.SevInfo {
				problems++
			}
		}
	}
	fmt.Fprintf(w, "\n%d part(s), %d finding(s) to act on\n", len(r.Parts), problems)
}
