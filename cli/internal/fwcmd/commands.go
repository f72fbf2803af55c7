package fwcmd

// The command interface's commands: cmd (any read-only command), caps,
// esw, nvmf, qp and mkey. They reach the firmware through fwctl on a host
// (Linux 6.15+ with mlx5_fwctl) and through the emulated command
// interface on -d emu; the libraries are caps/, esw/, nvmf/, objects/ and
// dev/command.go.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/feature/caps"
	"github.com/cxray/cxray/feature/esw"
	"github.com/cxray/cxray/feature/nvmf"
	"github.com/cxray/cxray/feature/objects"
	"github.com/cxray/cxray/internal/atomicfile"
	"github.com/cxray/cxray/kernel"
	"github.com/cxray/cxray/prm"
)

// commandDevice opens the function -d names and its command interface.
func (a *app) commandDevice(ctx context.Context, df cmdutil.DeviceFlags) (*adapter.Adapter, *dev.Device, error) {
	db, err := a.DB()
	if err != nil {
		return nil, nil, err
	}
	ad, err := a.Open(ctx, df.Name, db)
	if err != nil {
		return nil, nil, err
	}
	d, err := cmdutil.Registers(ctx, ad)
	if err != nil {
		ad.Close()
		if errors.Is(err, errors.ErrUnsupported) {
			return nil, nil, cmdutil.DeviceErr(fmt.Errorf("%s: firmware commands need the command interface (fwctl, Linux 6.15+ with mlx5_fwctl), which the kernel backend does not reach: %w", cmdutil.Describe(ad), err))
		}
		return nil, nil, err
	}
	if d.Commander() == nil {
		ad.Close()
		return nil, nil, cmdutil.DeviceErr(fmt.Errorf("%s has no command interface: commands go through fwctl (Linux 6.15+ with the mlx5_fwctl module: modprobe mlx5_fwctl), which this function does not offer; registers still work (cxray reg get); -d emu has one", cmdutil.Describe(ad)))
	}
	return ad, d, nil
}

// commandErr maps a command's failure to an exit code: a refused command
// is the user's to change (2); a firmware status or transport failure is
// the device's answer (3).
func commandErr(err error) error {
	if err == nil {
		return nil
	}
	if dev.IsRefused(err) {
		return cmdutil.UsageWrap(err)
	}
	return cmdutil.Classify(err)
}

// printRows prints rows whose first row is the header.
func (a *app) printRows(rows [][]string) {
	if len(rows) == 0 {
		return
	}
	t := a.NewTable(rows[0]...)
	for _, r := range rows[1:] {
		t.Row(r...)
	}
	t.Flush()
}

// ---- cmd

// cmdDoc is `cmd -o json`: the command sent and its decoded output.
type cmdDoc struct {
	Backend dev.Backend     `json:"backend"`
	BDF     string          `json:"bdf"`
	Command string          `json:"command"`
	Device  string          `json:"device"`
	Fields  json.RawMessage `json:"fields"`
	Opcode  uint16          `json:"opcode"`
	Request string          `json:"request"`
	Via     dev.Backend     `json:"via"`
}

// capsDiffDoc is `caps --diff -o json`.
type capsDiffDoc struct {
	Changes []caps.Change `json:"changes"`
	New     string        `json:"new"`
	Old     string        `json:"old"`
}

type cmdOptions struct {
	df  cmdutil.DeviceFlags
	raw bool
}

func (a *app) cmdCmd() *cobra.Command { return a.newCmdCmd(nil) }

// newCmdCmd wires the flags to cmdOptions; runF (tests) replaces runCmd.
func (a *app) newCmdCmd(runF func(*cmdOptions, []string) error) *cobra.Command {
	o := &cmdOptions{}
	c := &cobra.Command{
		Use:   "cmd NAME [FIELD=VALUE]... -d DEV",
		Short: "Run a read-only firmware command and decode its answer",
		Long: `Run one firmware command of the command interface (the PRM's *_in/*_out
mailboxes, mlx5_ifc.h names) and decode its out mailbox. The in mailbox is
built from FIELD=VALUE like 'prm encode' (the opcode is set from NAME). Only
what the fwctl driver lets through at its read-only scope runs; commands that
create, change or destroy objects are refused with the reason, before
anything is sent. 'cxray prm search ^QUERY_' lists the commands; 'cxray prm
show NAME' shows a command's layouts.

Commands go through fwctl (Linux 6.15+, module mlx5_fwctl) on a host, and
through the emulator's command interface on -d emu.`,
		Example: `  cxray cmd QUERY_HCA_CAP op_mod=0x1 -d emu
  cxray cmd QUERY_ADAPTER -d 0000:03:00.0 -o json
  cxray cmd QUERY_VPORT_STATE -d emu --via fwctl`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(o, args)
			}
			return a.runCmd(a.Ctx, o, args[0], args[1:])
		},
	}
	o.df.Add(c)
	c.Flags().BoolVar(&o.raw, "raw", false, "print enum fields as numbers")
	return c
}

func (a *app) runCmd(ctx context.Context, o *cmdOptions, name string, assigns []string) error {
	fields, err := prm.ParseAssignments(assigns)
	if err != nil {
		return cmdutil.UsageWrap(err)
	}
	ctx, cancel := o.df.Context(ctx)
	defer cancel()
	ad, d, err := a.commandDevice(ctx, o.df)
	if err != nil {
		return err
	}
	defer ad.Close()
	r, err := d.RunCommand(ctx, name, fields)
	if err != nil {
		return commandErr(err)
	}
	if a.JSON() {
		return a.WriteJSON(cmdDoc{Device: ad.Name(), BDF: ad.BDF(), Backend: ad.Backend(), Via: ad.Path(),
			Command: r.Command.Name, Opcode: r.Command.Opcode, Request: fmt.Sprintf("%x", r.Request),
			Fields: json.RawMessage(r.Decoded.AppendJSON(nil, prm.JSONOptions{Raw: o.raw}))})
	}
	fmt.Fprintf(a.Stdout, "%s (0x%x) on %s\n", r.Command.Name, r.Command.Opcode, cmdutil.Describe(ad))
	t := a.NewTable("FIELD", "VALUE")
	for _, row := range r.Decoded.Rows() {
		v := row.Text
		if o.raw {
			v = prm.FormatValue(row.Value)
		}
		t.Row(row.Path, v)
	}
	t.Flush()
	return nil
}

// ---- caps

type capsOptions struct {
	df    cmdutil.DeviceFlags
	types []string
	max   bool
	all   bool
	diff  string
	save  string
}

func (a *app) capsCmd() *cobra.Command { return a.newCapsCmd(nil) }

// newCapsCmd wires the flags to capsOptions; runF (tests) replaces runCaps.
func (a *app) newCapsCmd(runF func(*capsOptions, []string) error) *cobra.Command {
	o := &capsOptions{}
	c := &cobra.Command{
		Use:   "caps -d DEV",
		Short: "Show the function's capability pages (QUERY_HCA_CAP), current and maximum",
		Long: `Show the capability pages of a function (QUERY_HCA_CAP), each field with its
current value and the maximum the device supports, by the kernel's names
(cmd_hca_cap, e_switch_cap, roce_cap, ...). Fields zero in both are left out
unless --all-fields. --diff compares with another device (-d name) or a file saved
with --save, and exits 1 when they differ.`,
		Example: `  cxray caps -d emu
  cxray caps -d emu --type eswitch,roce -o json
  cxray caps -d 0000:03:00.0 --save caps.json
  cxray caps -d 0000:04:00.0 --diff caps.json`,
		Args: cobra.NoArgs,
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(o, args)
			}
			return a.runCaps(a.Ctx, o)
		},
	}
	o.df.Add(c)
	c.Flags().StringSliceVar(&o.types, "type", nil, "capability types (general, eswitch, roce, nvmf, ... or all); default the common ones")
	c.Flags().BoolVar(&o.max, "max", false, "show only the maximum values")
	c.Flags().BoolVar(&o.all, "all-fields", false, "keep fields that are zero in both the current and the maximum page")
	c.Flags().StringVar(&o.diff, "diff", "", "compare with a saved caps file (--save) or another device name")
	c.Flags().StringVar(&o.save, "save", "", "also write the report to this file (JSON), for a later --diff")
	return c
}

func (a *app) readCaps(ctx context.Context, df cmdutil.DeviceFlags, o *capsOptions) (*caps.Report, error) {
	ad, d, err := a.commandDevice(ctx, df)
	if err != nil {
		return nil, err
	}
	defer ad.Close()
	r, err := caps.Read(ctx, d, caps.Options{Types: o.types, All: o.all})
	if err != nil {
		return nil, commandErr(err)
	}
	return r, nil
}

func (a *app) runCaps(ctx context.Context, o *capsOptions) error {
	ctx, cancel := o.df.Context(ctx)
	defer cancel()
	r, err := a.readCaps(ctx, o.df, o)
	if err != nil {
		return err
	}
	if o.save != "" {
		var b strings.Builder
		if err := r.Save(&b); err != nil {
			return err
		}
		if err := atomicfile.Write(o.save, []byte(b.String())); err != nil {
			return cmdutil.DeviceErr(fmt.Errorf("--save: %w", err))
		}
	}
	if o.diff != "" {
		other, err := a.capsOther(ctx, o)
		if err != nil {
			return err
		}
		changes := caps.Diff(other, r)
		if a.JSON() {
			if err := a.WriteJSON(capsDiffDoc{Old: other.Device, New: r.Device, Changes: changes}); err != nil {
				return err
			}
		} else if len(changes) == 0 {
			fmt.Fprintf(a.Stdout, "no capability differs between %s and %s\n", other.Device, r.Device)
		} else {
			fmt.Fprintf(a.Stdout, "%d capabilities differ (old: %s, new: %s)\n", len(changes), other.Device, r.Device)
			a.printRows(caps.DiffRows(changes))
		}
		if len(changes) > 0 {
			return cmdutil.ErrProblem
		}
		return nil
	}
	if a.JSON() {
		return a.WriteJSON(r)
	}
	rows := r.Rows()
	if o.max {
		for i, row := range rows {
			if i > 0 && row[3] == "=" {
				row[3] = row[2]
			}
			rows[i] = []string{row[0], row[1], row[3]}
		}
	}
	a.printRows(rows)
	return nil
}

// capsOther reads the other side of --diff: a saved file, or a device.
func (a *app) capsOther(ctx context.Context, o *capsOptions) (*caps.Report, error) {
	if f, err := os.Open(o.diff); err == nil {
		defer f.Close()
		r, err := caps.Load(f)
		if err != nil {
			return nil, cmdutil.UsageErr("--diff %s: %v; give a file written by 'cxray caps --save', or a device name", o.diff, err)
		}
		return r, nil
	}
	df := o.df
	df.Name = o.diff
	r, err := a.readCaps(ctx, df, o)
	if err != nil {
		return nil, fmt.Errorf("--diff %s (no such file; read as a device): %w", o.diff, err)
	}
	return r, nil
}

// ---- esw

// eswOptions are the flags of 'cxray esw'.
type eswOptions struct {
	df     cmdutil.DeviceFlags
	maxVFs int
}

func (a *app) eswCmd() *cobra.Command { return a.newEswCmd(nil) }

// newEswCmd wires the flags to eswOptions; runF (tests) replaces runESW.
func (a *app) newEswCmd(runF func(*eswOptions, []string) error) *cobra.Command {
	var o eswOptions
	c := &cobra.Command{
		Use:   "esw -d DEV",
		Short: "Show the function's e-switch role, host functions and vport states",
		Long: `Show whether this function is the e-switch manager (and whether the e-switch
has an embedded CPU function's vport), whether it can ask for the
ESW_FUNCTIONS_CHANGED event, the host functions the e-switch serves
(QUERY_ESW_FUNCTIONS: the PF, its VFs, sub-functions) and the state of
each vport (QUERY_VPORT_STATE).`,
		Example: `  cxray esw -d emu
  cxray esw -d emu:examples/two-adapters.yaml@0000:03:00.1 -o json`,
		Args: cobra.NoArgs,
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(&o, args)
			}
			return a.runESW(a.Ctx, o, args)
		},
	}
	o.df.Add(c)
	c.Flags().IntVar(&o.maxVFs, "max-vfs", 0, "query at most this many VF vports (default 64)")
	return c
}

// runESW reads and shows the e-switch of the function.
func (a *app) runESW(ctx context.Context, o eswOptions, args []string) error {
	ctx, cancel := o.df.Context(ctx)
	defer cancel()
	ad, d, err := a.commandDevice(ctx, o.df)
	if err != nil {
		return err
	}
	defer ad.Close()
	r, err := esw.Read(ctx, d, esw.Options{MaxVFs: o.maxVFs})
	if err != nil {
		return commandErr(err)
	}
	if a.JSON() {
		return a.WriteJSON(r)
	}
	fmt.Fprintf(a.Stdout, "e-switch of %s\n", cmdutil.Describe(ad))
	a.printRows(r.Rows())
	return nil
}

// ---- nvmf

type nvmfOptions struct {
	df       cmdutil.DeviceFlags
	xrqs     []string
	ns       []string
	interval time.Duration
}

func (a *app) nvmfCmd() *cobra.Command { return a.newNvmfCmd(nil) }

// newNvmfCmd wires the flags to nvmfOptions; runF (tests) replaces runNVMF.
func (a *app) newNvmfCmd(runF func(*nvmfOptions, []string) error) *cobra.Command {
	o := &nvmfOptions{}
	c := &cobra.Command{
		Use:   "nvmf -d DEV",
		Short: "Show NVMe-oF target-offload namespaces and their counters",
		Long: `Show the NVMe-oF target-offload front-end namespaces of a function
(QUERY_NVMF_NAMESPACE_CONTEXT on each XRQ): read and write commands and
blocks, inline writes, flushes, errors and back-end errors, as totals and,
with --interval, as rates. Without --xrq/--ns the XRQs and namespaces are
probed. A function without the offload says so (its capability) instead of
failing.`,
		Example: `  cxray nvmf -d emu
  cxray nvmf -d emu --xrq 1 --ns 1,2 --interval 2s -o json`,
		Args: cobra.NoArgs,
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(o, args)
			}
			return a.runNVMF(a.Ctx, o)
		},
	}
	o.df.Add(c)
	c.Flags().StringSliceVar(&o.xrqs, "xrq", nil, "XRQ numbers to read (default: probe)")
	c.Flags().StringSliceVar(&o.ns, "ns", nil, "namespace IDs to read (default: probe)")
	c.Flags().DurationVar(&o.interval, "interval", 0, "read twice this far apart and show rates")
	return c
}

func parseU32s(flag string, vals []string) ([]uint32, error) {
	var out []uint32
	for _, v := range vals {
		n, err := strconv.ParseUint(strings.TrimSpace(v), 0, 32)
		if err != nil {
			return nil, cmdutil.UsageErr("--%s %q: give numbers (1, 0x10), comma-separated", flag, v)
		}
		out = append(out, uint32(n))
	}
	return out, nil
}

func (a *app) runNVMF(ctx context.Context, o *nvmfOptions) error {
	xrqs, err := parseU32s("xrq", o.xrqs)
	if err != nil {
		return err
	}
	nss, err := parseU32s("ns", o.ns)
	if err != nil {
		return err
	}
	if o.interval < 0 {
		return cmdutil.UsageErr("--interval %v: give a positive duration", o.interval)
	}
	ctx, cancel := context.WithTimeout(ctx, o.df.Timeout+o.interval)
	defer cancel()
	ad, d, err := a.commandDevice(ctx, o.df)
	if err != nil {
		return err
	}
	defer ad.Close()
	r, err := nvmf.Read(ctx, d, nvmf.Options{XRQs: xrqs, Namespaces: nss, Interval: o.interval, Clock: ad.Clock()})
	var nf *nvmf.NotFoundError
	if errors.As(err, &nf) {
		return cmdutil.UsageWrap(err) // as qp and mkey: the user's numbers (2)
	}
	if err != nil {
		return commandErr(err)
	}
	if a.JSON() {
		return a.WriteJSON(r)
	}
	if !r.Offload || len(r.Namespaces) == 0 {
		why := r.Reason
		if why == "" {
			why = "no namespace answered"
		}
		fmt.Fprintf(a.Stdout, "%s: no NVMe-oF offload namespaces: %s\n", cmdutil.Describe(ad), why)
		return nil
	}
	a.printRows(r.Rows())
	if r.Probed != "" {
		fmt.Fprintf(a.Stdout, "(probed %s)\n", r.Probed)
	}
	return nil
}

// ---- qp and mkey

func parseObjectNumber(what, s string) (uint32, error) {
	n, err := strconv.ParseUint(s, 0, 32)
	if err != nil || n > 0xffffff && what == "QPN" {
		return 0, cmdutil.UsageErr("%s %q: give a number (0x1a2b or 6699; QPNs have 24 bits)", what, s)
	}
	return uint32(n), nil
}

// qpOptions are the flags of 'cxray qp'.
type qpOptions struct {
	df      cmdutil.DeviceFlags
	listAll bool
}

func (a *app) qpCmd() *cobra.Command { return a.newQpCmd(nil) }

// newQpCmd wires the flags to qpOptions; runF (tests) replaces runQP.
func (a *app) newQpCmd(runF func(*qpOptions, []string) error) *cobra.Command {
	var o qpOptions
	c := &cobra.Command{
		Use:   "qp QPN|--list -d DEV",
		Short: "Show a QP's context, or list the QPs: state, PSNs, retry counts, error state",
		Long: `Query a queue pair (QUERY_QP) and decode its context: state and type, PD,
MTU, remote QPN, send and receive PSNs, retry and RNR retry counts, the
counter set, and the error state. 'cxray prm show qpc' shows every field.

--list lists the function's QPs, those in an error state first (exit 1 when
there is one): the QPs the OS knows (the kernel's resource tracking, 'rdma
resource show qp'), each read through the command interface, or on the
kernel backend the kernel's own copies of their contexts (RDMA netlink,
CAP_NET_ADMIN, Linux 5.15+).`,
		Example: `  cxray qp --list -d emu
  cxray qp 0x108 -d emu
  cxray qp 264 -d emu -o json`,
		Args: objectArgs(&o.listAll),
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(&o, args)
			}
			return a.runQP(a.Ctx, o, args)
		},
	}
	o.df.Add(c)
	c.Flags().BoolVar(&o.listAll, "list", false, "list the function's QPs, those in an error state first")
	return c
}

// runQP shows one QP, or lists them with --list.
func (a *app) runQP(ctx context.Context, o qpOptions, args []string) error {
	if o.listAll {
		return a.runListQPs(o.df)
	}
	qpn, err := parseObjectNumber("QPN", args[0])
	if err != nil {
		return err
	}
	ctx, cancel := o.df.Context(ctx)
	defer cancel()
	var q *objects.QP
	err = a.withObject(ctx, o.df, kernel.ResQP, qpn, func(d *dev.Device) error {
		var err error
		q, err = objects.QueryQP(ctx, d, qpn)
		return err
	}, func(r kernel.RawResource) error {
		var err error
		q, err = objects.FromRawQP(r)
		return err
	})
	if err != nil {
		return objectErr(err, fmt.Sprintf("QP 0x%x", qpn), kernel.ResQP)
	}
	if a.JSON() {
		if err := a.WriteJSON(q); err != nil {
			return err
		}
	} else {
		a.printRows(q.Rows())
	}
	if q.Error {
		return cmdutil.ErrProblem
	}
	return nil
}

// mkeyOptions are the flags of 'cxray mkey'.
type mkeyOptions struct {
	df      cmdutil.DeviceFlags
	listAll bool
}

func (a *app) mkeyCmd() *cobra.Command { return a.newMkeyCmd(nil) }

// newMkeyCmd wires the flags to mkeyOptions; runF (tests) replaces runMKey.
func (a *app) newMkeyCmd(runF func(*mkeyOptions, []string) error) *cobra.Command {
	var o mkeyOptions
	c := &cobra.Command{
		Use:   "mkey KEY|--list -d DEV",
		Short: "Show a memory key's entry, or list the keys: access rights, start, length, page size, PD",
		Long: `Query a memory key (QUERY_MKEY) and decode its entry (mkc): access rights,
start address, length, page size, PD and the key itself. 'cxray prm show mkc'
shows every field.

--list lists the function's memory keys as qp --list lists QPs ('rdma
resource show mr' on a host).`,
		Example: `  cxray mkey --list -d emu
  cxray mkey 0x10203 -d emu`,
		Args: objectArgs(&o.listAll),
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(&o, args)
			}
			return a.runMKey(a.Ctx, o, args)
		},
	}
	o.df.Add(c)
	c.Flags().BoolVar(&o.listAll, "list", false, "list the function's memory keys")
	return c
}

// runMKey shows one memory key, or lists them with --list.
func (a *app) runMKey(ctx context.Context, o mkeyOptions, args []string) error {
	if o.listAll {
		return a.runListMKeys(o.df)
	}
	key, err := parseObjectNumber("KEY", args[0])
	if err != nil {
		return err
	}
	ctx, cancel := o.df.Context(ctx)
	defer cancel()
	var m *objects.MKey
	err = a.withObject(ctx, o.df, kernel.ResMR, key, func(d *dev.Device) error {
		var err error
		m, err = objects.QueryMKey(ctx, d, key)
		return err
	}, func(r kernel.RawResource) error {
		var err error
		m, err = objects.FromRawMR(r)
		return err
	})
	if err != nil {
		return objectErr(err, fmt.Sprintf("MKEY 0x%x", key), kernel.ResMR)
	}
	if a.JSON() {
		return a.WriteJSON(m)
	}
	a.printRows(m.Rows())
	return nil
}

// withObject reads an object through the command interface (query), or,
// where the function has none but the kernel drives it, from the kernel's
// raw copy of its context (RDMA netlink: fromRaw).
func (a *app) withObject(ctx context.Context, df cmdutil.DeviceFlags, kind kernel.ResKind, id uint32, query func(*dev.Device) error, fromRaw func(kernel.RawResource) error) error {
	db, err := a.DB()
	if err != nil {
		return err
	}
	ad, err := a.Open(ctx, df.Name, db)
	if err != nil {
		return err
	}
	defer ad.Close()
	if d, err := ad.Registers(ctx); err == nil && d.Commander() != nil {
		return query(d)
	}
	if ad.Kernel() == nil {
		_, _, err := a.commandDevice(ctx, df) // says why there is no command interface
		return err
	}
	r, err := ad.RawObject(ctx, kind, id)
	if err != nil {
		var nf *kernel.NotFoundError
		if errors.As(err, &nf) {
			return cmdutil.UsageErr("%v; list them with 'cxray %s --list'", err, listVerb(kind))
		}
		return cmdutil.Classify(fmt.Errorf("no command interface (fwctl) on %s, and the kernel's copy: %w", cmdutil.Describe(ad), err))
	}
	return fromRaw(*r)
}

// listVerb is the command that lists objects of a kind.
func listVerb(kind kernel.ResKind) string {
	if kind == kernel.ResMR {
		return "mkey"
	}
	return "qp"
}

// objectErr: an object the firmware does not know answers bad parameter;
// that is the user's number to check (2), not a device fault.
func objectErr(err error, what string, kind kernel.ResKind) error {
	if dev.IsNoSuchObject(err) {
		return cmdutil.UsageErr("%s: the firmware knows no such object (%v); list them with 'cxray %s --list'", what, err, listVerb(kind))
	}
	return commandErr(err)
}
