package configcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/cxray/cxray/internal/atomicfile"
	"github.com/cxray/cxray/internal/cli/cmdutil"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/nvconf"
	"github.com/cxray/cxray/prm"
)

// `cxray config`: NV configuration, what mlxconfig/mstconfig do, with
// validation before any write, backups, read-back verification and JSON.

// configCtx is what the config subcommands share.
type configCtx struct {
	a    *app
	nvdb string
}

func (a *app) configCmd() *cobra.Command {
	cc := &configCtx{a: a}
	c := &cobra.Command{
		Use:   "config",
		Short: "NV configuration (mlxconfig): query, set, apply, reset, backup, restore, recover, diff",
		Long: `Read and change the adapter's non-volatile configuration (the TLVs mlxconfig
and mstconfig work with), by parameter name: SRIOV_EN, NUM_OF_VFS, LINK_TYPE_P1,
LOG_TX_PSN_WINDOW ...

mlxconfig's short commands work: q (query), s (set), r (reset), i
(show-params), and -y for --yes.

A value set goes to Next Boot: the running firmware keeps its Current value
until a firmware reset ('cxray config apply', mstfwreset) or a reboot; some
parameters need a power cycle. 'query -e' shows Default, Current and Next Boot.

Writes are validated first (type, enum values, the limits the device's
capability TLVs give, the database's rules), write a backup, rewrite whole TLVs
with their valid bits, and read back to verify.

The parameter database is mstflint's mlxconfig_host.db when installed, else
the one built into cxray; --nvdb FILE or $CXRAY_NVDB picks another ('builtin'
for the built-in one).`,
	}
	// mlxconfig puts -y and -e before the command (mlxconfig -d DEV -y s
	// X=1): known here as booleans, they do not swallow the command
	// name; the subcommands' own --yes and --extended take the values.
	var mlxYes, mlxExtended bool
	c.PersistentFlags().BoolVarP(&mlxYes, "yes", "y", false, "do not ask for confirmation")
	c.PersistentFlags().BoolVarP(&mlxExtended, "extended", "e", false, "also show Default and Current values (query)")
	c.PersistentFlags().MarkHidden("yes")
	c.PersistentFlags().MarkHidden("extended")
	c.PersistentFlags().StringVar(&cc.nvdb, "nvdb", "", "NV parameter database: mstflint's mlxconfig_host.db (SQLite) or 'builtin'; default $CXRAY_NVDB, the installed one, or the built-in")
	c.AddCommand(cc.queryCmd(), cc.setCmd(), cc.applyCmd(), cc.resetCmd(), cc.backupCmd(), cc.restoreCmd(), cc.recoverCmd(), cc.diffCmd(), cc.showParamsCmd())
	return c
}

// db loads the parameter database --nvdb names.
func (cc *configCtx) db() (*nvconf.DB, error) { return cmdutil.NVDB(cc.nvdb) }

// nvTarget is an opened device with its NV session.
type nvTarget struct {
	ad *adapter.Adapter
	s  *nvconf.Session
	nv *nvconf.DB
}

func (t *nvTarget) Close() { t.ad.Close() }

// open opens -d and starts the NV session. An interrupted earlier write
// on the adapter is said on standard error.
func (cc *configCtx) open(ctx context.Context, df cmdutil.DeviceFlags) (*nvTarget, error) {
	t, err := cc.openSession(ctx, df)
	if err != nil {
		return nil, err
	}
	if ie := t.interrupted(ctx, false); ie != nil {
		fmt.Fprintf(cc.a.Stderr, "cxray: warning: %v\n", ie)
	}
	return t, nil
}

// openWrite is open for the commands that write: they refuse to build on
// an interrupted write until it is finished or rolled back.
func (cc *configCtx) openWrite(ctx context.Context, df cmdutil.DeviceFlags) (*nvTarget, error) {
	t, err := cc.openSession(ctx, df)
	if err != nil {
		return nil, err
	}
	if ie := t.interrupted(ctx, true); ie != nil {
		t.Close()
		return nil, cmdutil.DeviceErr(ie)
	}
	return t, nil
}

func (cc *configCtx) openSession(ctx context.Context, df cmdutil.DeviceFlags) (*nvTarget, error) {
	nv, err := cc.db()
	if err != nil {
		return nil, err
	}
	db, err := cc.a.DB()
	if err != nil {
		return nil, err
	}
	if df.Name == "" {
		return nil, cmdutil.UsageErr("no device given; add -d DEV (a PCI address, mlx5_0, an interface name, or emu for the emulator)")
	}
	ad, err := cc.a.Open(ctx, df.Name, db)
	if err != nil {
		return nil, err
	}
	d, err := cmdutil.Registers(ctx, ad)
	if err != nil {
		ad.Close()
		return nil, err
	}
	s, err := nvconf.Open(ctx, d, nv)
	if err != nil {
		ad.Close()
		return nil, cmdutil.Classify(err)
	}
	return &nvTarget{ad: ad, s: s, nv: nv}, nil
}

// key names the adapter's NV lock and journal.
func (t *nvTarget) key() string { return nvconf.KeyFor(t.ad.Backend(), t.ad.Name(), t.ad.BDF()) }

// interrupted is the adapter's interrupted write, if the journal has one.
// A journal entry is a write in progress while its writer holds the NV
// lock, and interrupted only once the lock is free: so the lock is taken
// (waited for when wait, else tried briefly) around the look.
func (t *nvTarget) interrupted(ctx context.Context, wait bool) *nvconf.InterruptedError {
	j, err := nvconf.DefaultJournal()
	if err != nil {
		return nil
	}
	lctx := ctx
	if !wait {
		var cancel context.CancelFunc
		lctx, cancel = context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
	}
	unlock, err := nvconf.Lock(lctx, t.key())
	if err != nil {
		return nil // held: another write is under way (Commit waits for it)
	}
	defer unlock()
	e, err := j.Pending(t.key())
	if err != nil || e == nil {
		return nil
	}
	return nvconf.Interrupted(e, t.nv)
}

func (t *nvTarget) deviceLine(ctx context.Context) string {
	s := cmdutil.Describe(t.ad)
	if id, err := t.ad.Identity(ctx); err == nil && id.Firmware != "" {
		s += ", firmware " + id.Firmware
	}
	return s
}

// ---- query

// printDeviceHeader prints the lines mlxconfig users look for first
// (Device type, Name, Description, Device), then the firmware.
func (cc *configCtx) printDeviceHeader(t *nvTarget) {
	w := cc.a.Stdout
	ctx := cc.a.Ctx
	id, _ := t.ad.Identity(ctx)
	if id == nil {
		id = &adapter.Identity{}
	}
	desc, _ := t.ad.Description(ctx)
	// mlxconfig writes the type without the dash: ConnectX7.
	fmt.Fprintf(w, "Device type:  %s\n", cmdutil.Dash(strings.ReplaceAll(id.Model, "-", "")))
	fmt.Fprintf(w, "Name:         %s\n", cmdutil.Dash(id.PartNumber))
	fmt.Fprintf(w, "Description:  %s\n", cmdutil.Dash(desc))
	fmt.Fprintf(w, "Device:       %s\n", cmdutil.Describe(t.ad))
	fmt.Fprintf(w, "Firmware:     %s\n", cmdutil.Dash(id.Firmware))
}

type valueJSON struct {
	Text      string  `json:"text"`
	Raw       *uint64 `json:"raw,omitempty"`
	Defaulted bool    `json:"defaulted,omitempty"`
}

func toValueJSON(v *nvconf.Value) *valueJSON {
	if v == nil {
		return nil
	}
	out := &valueJSON{Text: v.Text, Defaulted: v.Defaulted}
	if v.Numeric {
		r := v.Raw
		out.Raw = &r
	}
	return out
}

type settingJSON struct {
	Name     string     `json:"name"`
	TLV      string     `json:"tlv"`
	Instance string     `json:"instance"`
	Type     string     `json:"type"`
	Next     *valueJSON `json:"next"`
	Default  *valueJSON `json:"default,omitempty"`
	Current  *valueJSON `json:"current,omitempty"`
	Modified bool       `json:"modified"`
	Pending  bool       `json:"pending"`
	Hidden   string     `json:"hidden,omitempty"`
}

func (cc *configCtx) queryCmd() *cobra.Command {
	var df cmdutil.DeviceFlags
	var extended, all bool
	var filter, from string
	c := &cobra.Command{
		Use:     "query [PARAM...]",
		Aliases: []string{"q"},
		Short:   "Show the NV configuration: Next Boot, and with -e Default and Current",
		Long: `Show every parameter the device supports (or the ones named): its Next Boot
value, and with -e its Default (factory) and Current (running) values. A *
marks a parameter whose Next Boot value differs from Current: it takes effect
at the next firmware reset. A + marks one that differs from the default.

Per-port parameters are NAME_P1, NAME_P2 ...; enum values show as NAME(n).
Parameters the firmware's TLV version is too old for, or whose dependency on
the device's capabilities does not hold, are not listed (--all lists them with
the reason), as mstconfig does.`,
		RunE: func(_ *cobra.Command, args []string) error {
			re, err := cmdutil.CompileFilter(filter)
			if err != nil {
				return err
			}
			if from != "" {
				if df.Name != "" || len(args) > 0 || filter != "" {
					return cmdutil.UsageErr("--from reads the whole file; leave out -d, parameter names and --filter")
				}
				return cc.queryFromFile(from, extended)
			}
			ctx, cancel := df.Context(cc.a.Ctx)
			defer cancel()
			t, err := cc.open(ctx, df)
			if err != nil {
				return err
			}
			defer t.Close()
			// Current is read even without -e, so pending changes can be named.
			res, err := t.s.Query(ctx, nvconf.QueryOptions{Names: args, Filter: re, Extended: true, All: all})
			if err != nil {
				return cmdutil.Classify(err)
			}
			return cc.printQuery(t, res, extended)
		},
	}
	df.Add(c)
	c.Flags().BoolVarP(&extended, "extended", "e", false, "also show Default and Current values")
	c.Flags().StringVar(&from, "from", "", "read the configuration from a file instead of a device: an mlxconfig/mstconfig query output (WinMFT's too), an mstconfig or cxray backup ('-': standard input)")
	c.Flags().BoolVar(&all, "all", false, "also list parameters mstconfig hides (unmet dependency, old TLV version), with the reason")
	c.Flags().StringVar(&filter, "filter", "", "only parameters (or TLVs) matching this regular expression (case-insensitive)")
	return c
}

func (cc *configCtx) printQuery(t *nvTarget, res *nvconf.QueryResult, extended bool) error {
	a := cc.a
	var pending []nvconf.Setting
	for _, s := range res.Settings {
		if s.Pending {
			pending = append(pending, s)
		}
	}
	if a.JSON() {
		out := struct {
			Device      string        `json:"device"`
			DeviceType  string        `json:"device_type,omitempty"`
			Name        string        `json:"name,omitempty"`
			Description string        `json:"description,omitempty"`
			NVDB        string        `json:"nvdb"`
			ReadDefault bool          `json:"read_default"`
			ReadCurrent bool          `json:"read_current"`
			Parameters  []settingJSON `json:"parameters"`
			Pending     []string      `json:"pending"`
			Unsupported []string      `json:"unsupported,omitempty"`
			Notes       []string      `json:"notes,omitempty"`
		}{Device: t.ad.Name(), NVDB: t.nv.Source, ReadDefault: res.ReadDefault, ReadCurrent: res.ReadCurrent,
			Parameters: []settingJSON{}, Pending: []string{}, Unsupported: res.Unsupported, Notes: t.s.Notes}
		if id, _ := t.ad.Identity(a.Ctx); id != nil {
			out.DeviceType, out.Name = strings.ReplaceAll(id.Model, "-", ""), id.PartNumber
		}
		out.Description, _ = t.ad.Description(a.Ctx)
		for _, s := range res.Settings {
			j := settingJSON{Name: s.Name, TLV: s.TLV, Instance: s.Instance, Type: s.Ref.Param.Type.String(), Next: toValueJSON(s.Next),
				Modified: s.Modified, Pending: s.Pending, Hidden: s.Hidden}
			if extended {
				j.Default, j.Current = toValueJSON(s.Default), toValueJSON(s.Current)
			}
			out.Parameters = append(out.Parameters, j)
		}
		for _, s := range pending {
			out.Pending = append(out.Pending, s.Name)
		}
		return a.WriteJSON(out)
	}
	w := a.Stdout
	cc.printDeviceHeader(t)
	fmt.Fprintf(w, "Parameters:   %s (%d TLVs)\n", t.nv.Source, len(t.nv.TLVs))
	for _, n := range t.s.Notes {
		fmt.Fprintf(w, "Note:        %s\n", n)
	}
	if len(res.Settings) == 0 {
		fmt.Fprintln(w, "No parameters to show.")
	} else {
		hdr := []string{"", "PARAMETER"}
		if extended {
			hdr = append(hdr, "DEFAULT", "CURRENT")
		}
		hdr = append(hdr, "NEXT BOOT")
		tb := a.NewTable(hdr...)
		for _, s := range res.Settings {
			mark := ""
			if s.Pending {
				mark += "*"
			}
			if s.Modified {
				mark += "+"
			}
			row := []string{mark, s.Name}
			if extended {
				row = append(row, valText(s.Default), valText(s.Current))
			}
			row = append(row, valText(s.Next))
			if s.Hidden != "" {
				row = append(row, "(hidden: "+s.Hidden+")")
			}
			tb.Row(row...)
		}
		tb.Flush()
	}
	for _, u := range res.Unsupported {
		fmt.Fprintf(w, "Not supported by this firmware: %s\n", u)
	}
	if extended && !res.ReadDefault {
		fmt.Fprintln(w, "The firmware cannot read default values (MNVGC): DEFAULT shows N/A.")
	}
	if !res.ReadCurrent {
		fmt.Fprintln(w, "The firmware cannot read current values (MNVGC): what is pending cannot be told.")
		return nil
	}
	if len(pending) == 0 {
		fmt.Fprintln(w, "Nothing pending: the running firmware uses the Next Boot values.")
		return nil
	}
	var parts []string
	for _, s := range pending {
		parts = append(parts, fmt.Sprintf("%s %s -> %s", s.Name, valText(s.Current), valText(s.Next)))
	}
	fmt.Fprintf(w, "* %d pending until the next firmware reset: %s.\n", len(pending), strings.Join(parts, ", "))
	fmt.Fprintf(w, "  Apply now with 'cxray config apply -d %s' (MFRL) where the firmware allows it, or reboot (some parameters need a power cycle).\n", t.ad.Name())
	return nil
}

func valText(v *nvconf.Value) string {
	if v == nil {
		return "N/A"
	}
	return v.Text
}

// ---- the guarded write every NV change goes through

// commit asks (unless yes), then has nvconf commit the change: lock,
// replan, backup, journal, write, verify.
func (cc *configCtx) commit(ctx context.Context, t *nvTarget, question string, c nvconf.Change, yes bool, backupPath string) (string, error) {
	if !yes {
		ok, err := cc.a.Confirm(question)
		if err != nil {
			return "", err
		}
		if !ok {
			return "", cmdutil.UsageErr("not confirmed; nothing was written")
		}
	}
	c.Key, c.Device, c.Confirmed = t.key(), t.ad.Name(), !yes
	path, err := t.s.Commit(ctx, c, nvconf.BackupOptions{Path: backupPath, Info: cc.backupInfo(ctx, t), Tool: cc.a.Version})
	var be *nvconf.BackupError
	if errors.As(err, &be) {
		return "", cmdutil.UsageWrap(err)
	}
	return path, cmdutil.Classify(err)
}

func (cc *configCtx) backupInfo(ctx context.Context, t *nvTarget) nvconf.BackupInfo {
	return nvconf.BackupInfo{Lines: []string{
		"device: " + t.deviceLine(ctx),
		"taken: " + time.Now().UTC().Format(time.RFC3339),
		"parameter database: " + t.nv.Source,
	}}
}

// writeFileAtomic writes via a temporary file and a rename, so a crash never
// leaves half a file under the final name.
func writeFileAtomic(path string, b []byte) error {
	if path == "-" {
		return errors.New("'-' is not a file")
	}
	return atomicfile.Write(path, b)
}

func (cc *configCtx) printTakesEffect(t *nvTarget) {
	fmt.Fprintf(cc.a.Stdout, "Takes effect at the next firmware reset; until then the adapter runs with its Current values.\n"+
		"  Now: 'cxray config apply -d %s' (MFRL firmware reset; interrupts traffic; where the firmware allows it).\n"+
		"  Or:  reboot after 'cxray config apply --at-reboot -d %s', or power-cycle the host.\n", t.ad.Name(), t.ad.Name())
}

func nonNilStr(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func dashIfEmpty(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// ---- set

type changeOut struct {
	Name    string `json:"name"`
	TLV     string `json:"tlv"`
	Current string `json:"current,omitempty"`
	Before  string `json:"next_boot_before"`
	After   string `json:"next_boot_after"`
}

type writeOut struct {
	TLV     string   `json:"tlv"`
	Type    string   `json:"type"`
	Version int      `json:"version"`
	Data    []string `json:"data"`
}

type configSetOptions struct {
	df          cmdutil.DeviceFlags
	yes, dryRun bool
	backup      string
}

func (cc *configCtx) setCmd() *cobra.Command {
	var o configSetOptions
	c := &cobra.Command{
		Use:     "set PARAM=VALUE...",
		Aliases: []string{"s"},
		Short:   "Change parameters (validated, backed up, whole-TLV write, verified; Next Boot)",
		Long: `Change parameters for the next boot: cxray reads each TLV, checks every value
(type, enum values, the device's limits and rules) before touching the device,
writes a backup of the NV configuration, writes whole TLVs with the valid bits
of the changed parameters set, and reads them back. A lock per adapter keeps
two cxray runs from interleaving their writes, and a journal lets the next run
find a write that was cut short ('cxray config recover').

Values: True/False or 1/0 for booleans, enum names or numbers (ETH or 2),
numbers in decimal or 0x... Per-port parameters are NAME_P1, NAME_P2; array
elements NAME[i].

The change takes effect at the next firmware reset: 'cxray config apply' where
the firmware allows it, a reboot after 'cxray config apply --at-reboot', or a
power cycle.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error { return cc.runSetCmd(&o, args) },
	}
	o.df.Add(c)
	c.Flags().BoolVarP(&o.yes, "yes", "y", false, "do not ask for confirmation (mlxconfig's -y)")
	c.Flags().BoolVar(&o.dryRun, "dry-run", false, "validate and print the TLVs that would be written; write nothing")
	c.Flags().StringVar(&o.backup, "backup", "", "write the backup to this file (default: a new file in $CXRAY_BACKUP_DIR or ~/.local/state/cxray/backups)")
	return c
}

func (cc *configCtx) runSetCmd(o *configSetOptions, args []string) error {
	as, err := nvconf.ParseAssignments(args)
	if err != nil {
		return cmdutil.UsageWrap(err)
	}
	ctx, cancel := o.df.Context(cc.a.Ctx)
	defer cancel()
	t, err := cc.openWrite(ctx, o.df)
	if err != nil {
		return err
	}
	defer t.Close()
	return cc.runSet(ctx, t, as, o.yes, o.dryRun, o.backup)
}

// setWords is a set plan in words, as the user confirms it.
func setWords(plan *nvconf.SetPlan) []string {
	var out []string
	for _, w := range plan.Writes {
		for _, c := range w.Changes {
			out = append(out, fmt.Sprintf("%s %s: %s -> %s", w.Inst, c.Name, c.Before, c.After))
		}
	}
	return out
}

func setEntry(t *nvTarget, plan *nvconf.SetPlan) *nvconf.JournalEntry {
	e := &nvconf.JournalEntry{}
	for _, w := range plan.Writes {
		e.Writes = append(e.Writes, nvconf.RawTLV{Header: nvconf.Header{Type: w.Inst.Type(), Version: w.Version, WriterID: t.s.Writer, Length: len(w.After)}, Data: w.After})
	}
	return e
}

// runSet plans, shows and performs a set (roce set shares it).
func (cc *configCtx) runSet(ctx context.Context, t *nvTarget, as []nvconf.Assignment, yes, dryRun bool, backupPath string) error {
	a := cc.a
	plan, err := t.s.PlanSet(ctx, as)
	if err != nil {
		return cmdutil.Classify(err)
	}
	hc := t.s.HeaderCodec()
	changes := []changeOut{}
	writes := []writeOut{}
	var names []string
	for _, w := range plan.Writes {
		names = append(names, w.Inst.String())
		for _, c := range w.Changes {
			changes = append(changes, changeOut{Name: c.Name, TLV: w.Inst.String(), Current: c.Current, Before: c.Before, After: c.After})
		}
		img, _ := nvconf.RawTLV{Header: nvconf.Header{Type: w.Inst.Type(), Version: w.Version, WriterID: t.s.Writer}, Data: w.After}.Image(hc)
		writes = append(writes, writeOut{TLV: w.Inst.String(), Type: fmt.Sprintf("0x%08x", w.Inst.Type()), Version: w.Version, Data: strings.Fields(nvconf.Dwords(img))})
	}
	result := struct {
		Device      string      `json:"device"`
		Changes     []changeOut `json:"changes"`
		Unchanged   []string    `json:"unchanged,omitempty"`
		Writes      []writeOut  `json:"writes"`
		DryRun      bool        `json:"dry_run"`
		Backup      string      `json:"backup,omitempty"`
		Written     bool        `json:"written"`
		TakesEffect string      `json:"takes_effect,omitempty"`
	}{Device: t.ad.Name(), Changes: changes, Unchanged: plan.Unchanged, Writes: writes, DryRun: dryRun}
	if !a.JSON() {
		if len(changes) > 0 {
			tb := a.NewTable("PARAMETER", "CURRENT", "NEXT BOOT", "NEW")
			for _, c := range changes {
				tb.Row(c.Name, dashIfEmpty(c.Current), c.Before, c.After)
			}
			tb.Flush()
		}
		for _, u := range plan.Unchanged {
			fmt.Fprintf(a.Stdout, "%s already has that value for the next boot; nothing to write for it.\n", u)
		}
	}
	if len(plan.Writes) == 0 || dryRun {
		if a.JSON() {
			return a.WriteJSON(result)
		}
		if len(plan.Writes) == 0 {
			fmt.Fprintln(a.Stdout, "Nothing to write.")
			return nil
		}
		fmt.Fprintln(a.Stdout, "Dry run: the values are valid; these TLVs (MNVDA header + data) would be written:")
		for _, w := range writes {
			fmt.Fprintf(a.Stdout, "  %s  %s\n", w.TLV, strings.Join(w.Data, " "))
		}
		return nil
	}
	final := plan
	path, err := cc.commit(ctx, t, fmt.Sprintf("Write %s (Next Boot) on %s?", strings.Join(names, ", "), t.ad.Name()), nvconf.Change{
		Op: "set", Shown: setWords(plan),
		Replan: func(ctx context.Context) ([]string, []nvconf.Instance, *nvconf.JournalEntry, error) {
			p, err := t.s.PlanSet(ctx, as)
			if err != nil {
				return nil, nil, nil, err
			}
			final = p
			var insts []nvconf.Instance
			for _, w := range p.Writes {
				insts = append(insts, w.Inst)
			}
			return setWords(p), insts, setEntry(t, p), nil
		},
		Apply: func(ctx context.Context) error { return t.s.ApplySet(ctx, final) },
	}, yes, backupPath)
	if err != nil {
		return err
	}
	result.Backup, result.Written, result.TakesEffect = path, true, "next firmware reset"
	if a.JSON() {
		return a.WriteJSON(result)
	}
	fmt.Fprintf(a.Stdout, "Backup: %s\n", path)
	fmt.Fprintf(a.Stdout, "Written and verified: %d TLV(s) hold the new values for the next boot.\n", len(final.Writes))
	cc.printTakesEffect(t)
	return nil
}

// ---- apply

type configApplyOptions struct {
	df                    cmdutil.DeviceFlags
	yes, dryRun, atReboot bool
}

func (cc *configCtx) applyCmd() *cobra.Command {
	var o configApplyOptions
	c := &cobra.Command{
		Use:   "apply",
		Short: "Apply Next Boot now with a firmware reset (MFRL), or arm it for the next reboot",
		Long: `Ask the firmware to reset (MFRL) so the Next Boot values become Current without
rebooting the host, where the firmware allows it. The reset interrupts the
adapter's traffic; the driver must tolerate it. With --at-reboot the reset is
armed for the next PERST (host reboot) instead, as mstconfig does after set.

Afterwards cxray reads Current back and says what took effect and what is still
pending (on hardware a link-toggle reset happens when the PCIe link toggles:
mstfwreset or a reboot).`,
		Args: cobra.NoArgs,
		RunE: func(_ *cobra.Command, _ []string) error { return cc.runApply(&o) },
	}
	o.df.Add(c)
	c.Flags().BoolVarP(&o.yes, "yes", "y", false, "do not ask for confirmation (mlxconfig's -y)")
	c.Flags().BoolVar(&o.dryRun, "dry-run", false, "say what would be applied and which reset would be sent; send nothing")
	c.Flags().BoolVar(&o.atReboot, "at-reboot", false, "arm the reset for the next host reboot (PERST) instead of now")
	return c
}

func (cc *configCtx) runApply(o *configApplyOptions) error {
	a := cc.a
	ctx, cancel := o.df.Context(a.Ctx)
	defer cancel()
	t, err := cc.openWrite(ctx, o.df)
	if err != nil {
		return err
	}
	defer t.Close()
	plan, err := t.s.PlanApply(ctx, o.atReboot)
	if err != nil {
		return cmdutil.Classify(err)
	}
	out := struct {
		Device        string   `json:"device"`
		Trigger       string   `json:"trigger"`
		Pending       []string `json:"pending_before"`
		Applied       []string `json:"applied"`
		StillPending  []string `json:"still_pending"`
		ArmedAtReboot bool     `json:"armed_for_reboot"`
		DryRun        bool     `json:"dry_run"`
	}{Device: t.ad.Name(), Trigger: plan.TriggerName(), Pending: nonNilStr(plan.Pending), Applied: []string{}, StillPending: []string{}, DryRun: o.dryRun}
	if plan.Nothing() {
		if a.JSON() {
			return a.WriteJSON(out)
		}
		fmt.Fprintln(a.Stdout, "Nothing pending: Current already equals Next Boot; no reset sent.")
		return nil
	}
	if !a.JSON() {
		if len(plan.Pending) > 0 {
			fmt.Fprintf(a.Stdout, "Pending: %s\n", strings.Join(plan.Pending, ", "))
		}
		fmt.Fprintf(a.Stdout, "Firmware reset: %s (MFRL reset_trigger 0x%02x)\n", plan.TriggerName(), plan.Trigger)
	}
	if o.dryRun {
		if a.JSON() {
			return a.WriteJSON(out)
		}
		fmt.Fprintln(a.Stdout, "Dry run: no reset sent.")
		return nil
	}
	if !o.yes {
		q := fmt.Sprintf("Reset the firmware of %s now (traffic stops for a moment)?", t.ad.Name())
		if plan.Trigger == nvconf.TriggerPERST {
			q = fmt.Sprintf("Arm a firmware reset of %s for the next reboot?", t.ad.Name())
		}
		ok, err := a.Confirm(q)
		if err != nil {
			return err
		}
		if !ok {
			return cmdutil.UsageErr("not confirmed; no reset sent")
		}
	}
	res, err := t.s.Apply(ctx, plan)
	if err != nil {
		return cmdutil.Classify(err)
	}
	out.Applied, out.StillPending, out.ArmedAtReboot = res.Applied, res.StillPending, res.ArmedAtReboot
	if a.JSON() {
		return a.WriteJSON(out)
	}
	switch {
	case res.ArmedAtReboot:
		fmt.Fprintln(a.Stdout, "Armed: the firmware resets at the next reboot (PERST) and then uses the Next Boot values.")
	case !res.ReadCurrent:
		fmt.Fprintln(a.Stdout, "Reset requested. This firmware cannot report Current values (MNVGC), so cxray cannot tell whether it has happened; a reboot makes sure.")
	case len(res.StillPending) == 0:
		fmt.Fprintf(a.Stdout, "Applied: Current now equals Next Boot (%d parameter(s) took effect).\n", len(res.Applied))
	default:
		fmt.Fprintf(a.Stdout, "The reset is armed but has not happened: still pending %s. It happens at the next PCIe link toggle (mstfwreset -d %s reset) or reboot.\n",
			strings.Join(res.StillPending, ", "), t.ad.Name())
	}
	return nil
}

// ---- reset

type configResetOptions struct {
	df               cmdutil.DeviceFlags
	yes, dryRun, all bool
	backup           string
}

func (cc *configCtx) resetCmd() *cobra.Command {
	var o configResetOptions
	c := &cobra.Command{
		Use:     "reset [TLV|PARAM...] [--all]",
		Aliases: []string{"r"},
		Short:   "Return TLVs (MNVDI) or the whole NV configuration (MNVIA) to the defaults, for the next boot",
		Long: `Erase what is written for the named TLVs, so their Next Boot values are the
firmware defaults again (MNVDI), or everything with --all (MNVIA, what
'mstconfig reset' does). Name a TLV (nv_global_pci_conf) or a parameter in it
(SRIOV_EN, LINK_TYPE_P1): the whole TLV is reset, and cxray lists every
parameter that changes. A backup is written first. Takes effect at the next
firmware reset, like set.`,
		RunE: func(_ *cobra.Command, args []string) error { return cc.runReset(&o, args) },
	}
	o.df.Add(c)
	c.Flags().BoolVar(&o.all, "all", false, "reset the whole NV configuration (MNVIA)")
	c.Flags().BoolVarP(&o.yes, "yes", "y", false, "do not ask for confirmation (mlxconfig's -y)")
	c.Flags().BoolVar(&o.dryRun, "dry-run", false, "list what would return to its default; write nothing")
	c.Flags().StringVar(&o.backup, "backup", "", "write the backup to this file")
	return c
}

func resetWords(p *nvconf.ResetPlan) []string {
	out := p.Names()
	for _, c := range p.Changes {
		out = append(out, fmt.Sprintf("%s: %s -> %s", c.Name, c.Before, c.After))
	}
	return out
}

func (cc *configCtx) runReset(o *configResetOptions, names []string) error {
	a := cc.a
	if o.all == (len(names) > 0) {
		return cmdutil.UsageErr("name the TLVs or parameters to reset, or give --all (not both)")
	}
	ctx, cancel := o.df.Context(a.Ctx)
	defer cancel()
	t, err := cc.openWrite(ctx, o.df)
	if err != nil {
		return err
	}
	defer t.Close()
	plan, err := t.s.PlanReset(ctx, names, o.all)
	if err != nil {
		return cmdutil.Classify(err)
	}
	type changeJ struct {
		Name   string `json:"name"`
		Before string `json:"next_boot_before"`
		After  string `json:"next_boot_after"`
	}
	out := struct {
		Device  string    `json:"device"`
		All     bool      `json:"all"`
		TLVs    []string  `json:"tlvs"`
		Changes []changeJ `json:"changes"`
		DryRun  bool      `json:"dry_run"`
		Backup  string    `json:"backup,omitempty"`
		Written bool      `json:"written"`
	}{Device: t.ad.Name(), All: o.all, TLVs: plan.Names(), Changes: []changeJ{}, DryRun: o.dryRun}
	for _, c := range plan.Changes {
		out.Changes = append(out.Changes, changeJ{Name: c.Name, Before: c.Before, After: c.After})
	}
	if !a.JSON() {
		if len(out.Changes) > 0 {
			tb := a.NewTable("PARAMETER", "NEXT BOOT", "DEFAULT")
			for _, c := range out.Changes {
				tb.Row(c.Name, c.Before, c.After)
			}
			tb.Flush()
		} else if plan.KnownDefaults {
			fmt.Fprintln(a.Stdout, "Every parameter of these TLVs already has its default for the next boot.")
		}
	}
	if o.dryRun {
		if a.JSON() {
			return a.WriteJSON(out)
		}
		fmt.Fprintf(a.Stdout, "Dry run: would reset %s; nothing written.\n", plan.Describe())
		return nil
	}
	final := plan
	path, err := cc.commit(ctx, t, fmt.Sprintf("Reset %s to the defaults (Next Boot) on %s?", plan.Describe(), t.ad.Name()), nvconf.Change{
		Op: "reset", Shown: resetWords(plan),
		Replan: func(ctx context.Context) ([]string, []nvconf.Instance, *nvconf.JournalEntry, error) {
			p, err := t.s.PlanReset(ctx, names, o.all)
			if err != nil {
				return nil, nil, nil, err
			}
			final = p
			e := &nvconf.JournalEntry{All: p.All}
			for _, in := range p.Targets {
				e.Resets = append(e.Resets, in.Type())
			}
			return resetWords(p), p.Targets, e, nil
		},
		Apply: func(ctx context.Context) error { return t.s.Reset(ctx, final) },
	}, o.yes, o.backup)
	if err != nil {
		return err
	}
	out.Backup, out.Written = path, true
	if a.JSON() {
		return a.WriteJSON(out)
	}
	fmt.Fprintf(a.Stdout, "Backup: %s\n", path)
	fmt.Fprintf(a.Stdout, "Reset %s: the defaults apply from the next boot.\n", final.Describe())
	cc.printTakesEffect(t)
	return nil
}

// ---- backup

type configBackupOptions struct {
	df     cmdutil.DeviceFlags
	format string
}

func (cc *configCtx) backupCmd() *cobra.Command {
	var o configBackupOptions
	c := &cobra.Command{
		Use:   "backup FILE",
		Short: "Save the stored NV configuration (MNVGN walk) to FILE ('-' for stdout)",
		Long: `Save every TLV stored in the adapter's NV configuration area, as 'mstconfig
backup' does. --format cxray (default) writes cxray's readable format (each
TLV's bytes plus its parameters decoded as comments); --format raw writes
mstflint's MLNX_RAW_TLV_FILE format, which 'mstconfig set_raw' reads. Both
restore with 'cxray config restore'.`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error { return cc.runBackup(&o, args[0]) },
	}
	o.df.Add(c)
	c.Flags().StringVar(&o.format, "format", "cxray", "file format: cxray (readable) or raw (mstflint's MLNX_RAW_TLV_FILE)")
	return c
}

func (cc *configCtx) runBackup(o *configBackupOptions, file string) error {
	if o.format != "cxray" && o.format != "raw" {
		return cmdutil.UsageErr("--format %s: the formats are cxray and raw", o.format)
	}
	ctx, cancel := o.df.Context(cc.a.Ctx)
	defer cancel()
	t, err := cc.open(ctx, o.df)
	if err != nil {
		return err
	}
	defer t.Close()
	tlvs, err := t.s.Walk(ctx)
	if err != nil {
		return cmdutil.Classify(err)
	}
	var b []byte
	if o.format == "raw" {
		if b, err = nvconf.WriteRawFile(tlvs, t.s.HeaderCodec()); err != nil {
			return cmdutil.Classify(err)
		}
	} else {
		b = nvconf.WriteBackup(tlvs, t.nv, t.s.HeaderCodec(), cc.backupInfo(ctx, t))
	}
	if file == "-" {
		_, err := cc.a.Stdout.Write(b)
		return err
	}
	if err := writeFileAtomic(file, b); err != nil {
		return cmdutil.UsageErr("cannot write %s: %v", file, err)
	}
	if cc.a.JSON() {
		var names []string
		for _, r := range tlvs {
			names = append(names, t.nv.DescribeType(r.Header.Type))
		}
		return cc.a.WriteJSON(map[string]any{"device": t.ad.Name(), "file": file, "format": o.format, "tlvs": nonNilStr(names)})
	}
	if len(tlvs) == 0 {
		fmt.Fprintf(cc.a.Stdout, "The NV configuration area is empty (everything has its default); wrote an empty backup to %s.\n", file)
		return nil
	}
	fmt.Fprintf(cc.a.Stdout, "Saved %d TLV(s) to %s (%s format).\n", len(tlvs), file, o.format)
	return nil
}

// readTLVFile reads a backup in either format.
func readTLVFile(path string, hc *nvconf.HeaderCodec, nv *nvconf.DB, stdin io.Reader) ([]nvconf.RawTLV, error) {
	b, err := readBackup(path, hc, nv, stdin)
	if err != nil {
		return nil, err
	}
	return b.TLVs, nil
}

// ---- restore

type configRestoreOptions struct {
	df                 cmdutil.DeviceFlags
	yes, dryRun, merge bool
	resetMissing       bool
	acceptUnchecked    bool
	backup             string
}

func (cc *configCtx) restoreCmd() *cobra.Command {
	var o configRestoreOptions
	c := &cobra.Command{
		Use:   "restore FILE",
		Short: "Write a backup back (cxray or MLNX_RAW_TLV_FILE format), for the next boot",
		Long: `Write the TLVs of a backup that differ from what the adapter stores. The file
is cxray's backup format or mstflint's MLNX_RAW_TLV_FILE (from 'mstconfig
backup' or get_raw). Every TLV is checked against the parameter database first;
a backup of the current configuration is written before anything changes, and
the result is read back (MNVGN) and compared with the file.

TLVs the adapter stores but the file does not hold are left as they are: a
file says nothing about what it does not hold (and a file cut short must not
reset what it lost). --reset-missing returns them to their defaults as well;
they are listed first.`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error { return cc.runRestoreCmd(&o, args[0]) },
	}
	o.df.Add(c)
	c.Flags().BoolVar(&o.resetMissing, "reset-missing", false, "also reset the TLVs stored on the adapter but not in the file")
	c.Flags().BoolVar(&o.acceptUnchecked, "accept-unchecked", false, "with --reset-missing: trust a file without count or checksum (mstflint's format) to be complete")
	c.Flags().BoolVar(&o.merge, "merge", false, "only write the file's TLVs (the default; kept for older scripts)")
	c.Flags().BoolVarP(&o.yes, "yes", "y", false, "do not ask for confirmation (mlxconfig's -y)")
	c.Flags().BoolVar(&o.dryRun, "dry-run", false, "say what would be written and reset; write nothing")
	c.Flags().StringVar(&o.backup, "backup", "", "write the backup of the current configuration to this file")
	return c
}

func restoreWords(p *nvconf.RestorePlan, nv *nvconf.DB) []string {
	var out []string
	for _, r := range p.Resets {
		out = append(out, "reset "+nv.DescribeType(r.Header.Type))
	}
	for _, r := range p.Writes {
		out = append(out, "write "+nv.DescribeType(r.Header.Type))
		out = append(out, p.Deltas[r.Header.Type]...)
	}
	return out
}

func (cc *configCtx) runRestoreCmd(o *configRestoreOptions, file string) error {
	a := cc.a
	if o.merge && o.resetMissing {
		return cmdutil.UsageErr("--merge and --reset-missing exclude each other; --merge is the default")
	}
	ctx, cancel := o.df.Context(a.Ctx)
	defer cancel()
	t, err := cc.openWrite(ctx, o.df)
	if err != nil {
		return err
	}
	defer t.Close()
	bf, err := readBackup(file, t.s.HeaderCodec(), t.nv, a.Stdin)
	if err != nil {
		return err
	}
	want := bf.TLVs
	// A file without a count or checksum (mstflint's format) that was cut
	// at a line boundary reads as a smaller backup: resetting what it
	// lacks would reset what the cut removed.
	if bf.Unchecked && o.resetMissing && !o.acceptUnchecked {
		return cmdutil.UsageErr("%s (%s) carries no count or checksum, so nothing proves it is whole, and --reset-missing would reset every TLV a cut removed; restore without --reset-missing (the file's TLVs only), or add --accept-unchecked if you know the file is complete", file, bf.Format)
	}
	ro := nvconf.RestoreOptions{ResetMissing: o.resetMissing}
	plan, err := t.s.PlanRestore(ctx, want, ro)
	if err != nil {
		return cmdutil.Classify(err)
	}
	names := func(rs []nvconf.RawTLV) []string {
		out := []string{}
		for _, r := range rs {
			out = append(out, t.nv.DescribeType(r.Header.Type))
		}
		return out
	}
	out := struct {
		Device    string   `json:"device"`
		File      string   `json:"file"`
		Reset     []string `json:"reset"`
		Write     []string `json:"write"`
		Kept      []string `json:"kept"`
		Unchanged int      `json:"unchanged"`
		DryRun    bool     `json:"dry_run"`
		Backup    string   `json:"backup,omitempty"`
		Written   bool     `json:"written"`
	}{Device: t.ad.Name(), File: file, Reset: names(plan.Resets), Write: names(plan.Writes), Kept: names(plan.Kept), Unchanged: plan.Unchanged, DryRun: o.dryRun}
	if !a.JSON() {
		for _, r := range plan.Resets {
			fmt.Fprintf(a.Stdout, "reset  %s (stored now, not in the file)\n", t.nv.DescribeType(r.Header.Type))
		}
		for _, r := range plan.Writes {
			fmt.Fprintf(a.Stdout, "write  %s\n", t.nv.DescribeType(r.Header.Type))
			for _, l := range plan.Deltas[r.Header.Type] {
				fmt.Fprintf(a.Stdout, "         %s\n", l)
			}
		}
		for _, r := range plan.Kept {
			fmt.Fprintf(a.Stdout, "keep   %s (stored now, not in the file; --reset-missing resets it)\n", t.nv.DescribeType(r.Header.Type))
		}
		fmt.Fprintf(a.Stdout, "%d TLV(s) already as in the file.\n", plan.Unchanged)
		if bf.Unchecked {
			fmt.Fprintf(a.Stdout, "note: %s (%s) carries no count or checksum: check it holds every TLV you expect\n", file, bf.Format)
		}
	}
	if plan.Empty() || o.dryRun {
		if a.JSON() {
			return a.WriteJSON(out)
		}
		if plan.Empty() {
			fmt.Fprintln(a.Stdout, "Nothing to do: the stored configuration holds the file's TLVs.")
		} else {
			fmt.Fprintln(a.Stdout, "Dry run: nothing written.")
		}
		return nil
	}
	final := plan
	path, err := cc.commit(ctx, t, fmt.Sprintf("Write %d and reset %d TLV(s) (Next Boot) on %s?", len(plan.Writes), len(plan.Resets), t.ad.Name()), nvconf.Change{
		Op: "restore", Shown: restoreWords(plan, t.nv),
		Replan: func(ctx context.Context) ([]string, []nvconf.Instance, *nvconf.JournalEntry, error) {
			p, err := t.s.PlanRestore(ctx, want, ro)
			if err != nil {
				return nil, nil, nil, err
			}
			final = p
			e := &nvconf.JournalEntry{Writes: p.Writes}
			var insts []nvconf.Instance
			for _, r := range append(append([]nvconf.RawTLV{}, p.Resets...), p.Writes...) {
				if in, ok := t.nv.InstanceOf(r.Header.Type); ok {
					insts = append(insts, in)
				}
			}
			for _, r := range p.Resets {
				e.Resets = append(e.Resets, r.Header.Type)
			}
			return restoreWords(p, t.nv), insts, e, nil
		},
		Apply: func(ctx context.Context) error { return t.s.Restore(ctx, final) },
	}, o.yes, o.backup)
	if err != nil {
		return err
	}
	out.Backup, out.Written = path, true
	if a.JSON() {
		return a.WriteJSON(out)
	}
	fmt.Fprintf(a.Stdout, "Backup of the configuration before: %s\n", path)
	fmt.Fprintf(a.Stdout, "Restored and verified: the stored configuration holds the TLVs of %s.\n", file)
	cc.printTakesEffect(t)
	return nil
}

// ---- recover

type configRecoverOptions struct {
	df                            cmdutil.DeviceFlags
	finish, rollback, yes, dryRun bool
}

func (cc *configCtx) recoverCmd() *cobra.Command {
	var o configRecoverOptions
	c := &cobra.Command{
		Use:   "recover -d DEV [--finish|--rollback]",
		Short: "Find an NV write that was cut short, and finish it or roll it back from its backup",
		Long: `Every NV write (set, reset, restore) records what it is about to do in a journal
before its first TLV and clears it after the last is verified. A write cut short
(cxray killed, a crash, power lost) leaves its entry, and the adapter may hold
some TLVs new and some old. Without a flag, recover says whether such a write is
pending (exit 1 when one is). --finish writes what the interrupted write meant
to; --rollback puts the TLVs it touched back as the backup taken before it
holds them.`,
		Args: cobra.NoArgs,
		RunE: func(_ *cobra.Command, _ []string) error { return cc.runRecover(&o) },
	}
	o.df.Add(c)
	c.Flags().BoolVar(&o.finish, "finish", false, "complete the interrupted write")
	c.Flags().BoolVar(&o.rollback, "rollback", false, "undo it from the backup taken before it")
	c.Flags().BoolVarP(&o.yes, "yes", "y", false, "do not ask for confirmation (mlxconfig's -y)")
	c.Flags().BoolVar(&o.dryRun, "dry-run", false, "say what would be written; write nothing")
	return c
}

func (cc *configCtx) runRecover(o *configRecoverOptions) error {
	a := cc.a
	if o.finish && o.rollback {
		return cmdutil.UsageErr("--finish and --rollback exclude each other")
	}
	ctx, cancel := o.df.Context(a.Ctx)
	defer cancel()
	t, err := cc.open(ctx, o.df)
	if err != nil {
		return err
	}
	defer t.Close()
	j, err := nvconf.DefaultJournal()
	if err != nil {
		return cmdutil.UsageWrap(err)
	}
	e, err := j.Pending(t.key())
	if err != nil {
		return cmdutil.UsageWrap(err)
	}
	if e == nil {
		if a.JSON() {
			return a.WriteJSON(map[string]any{"device": t.ad.Name(), "pending": false})
		}
		fmt.Fprintf(a.Stdout, "No interrupted NV write on %s.\n", t.ad.Name())
		return nil
	}
	ie := nvconf.Interrupted(e, t.nv)
	if !o.finish && !o.rollback {
		if a.JSON() {
			if err := a.WriteJSON(map[string]any{"device": t.ad.Name(), "pending": true, "op": e.Op, "started": e.Started, "backup": e.Backup, "tlvs": ie.Names}); err != nil {
				return err
			}
		} else {
			fmt.Fprintln(a.Stdout, ie.Error())
		}
		return cmdutil.ErrProblem
	}
	var backup []nvconf.RawTLV
	if o.rollback {
		if backup, err = readTLVFile(e.Backup, t.s.HeaderCodec(), t.nv, a.Stdin); err != nil {
			return fmt.Errorf("the backup of the interrupted write cannot be read: %w", err)
		}
	}
	rec := nvconf.PlanRecover(e, o.rollback, backup)
	verb := map[bool]string{true: "roll back", false: "finish"}[o.rollback]
	if !a.JSON() {
		fmt.Fprintf(a.Stdout, "%s\nTo %s: reset %d TLV(s), write %d.\n", ie.Error(), verb, len(rec.Resets), len(rec.Writes))
	}
	if o.dryRun {
		return nil
	}
	_, err = cc.commit(ctx, t, fmt.Sprintf("%s the interrupted %s on %s?", verb, e.Op, t.ad.Name()), nvconf.Change{
		Op: "recover",
		Replan: func(ctx context.Context) ([]string, []nvconf.Instance, *nvconf.JournalEntry, error) {
			var insts []nvconf.Instance
			for _, r := range rec.Writes {
				if in, ok := t.nv.InstanceOf(r.Header.Type); ok {
					insts = append(insts, in)
				}
			}
			return nil, insts, &nvconf.JournalEntry{Writes: rec.Writes, Resets: rec.Resets, All: rec.All}, nil
		},
		Apply: func(ctx context.Context) error { return t.s.Recover(ctx, rec) },
	}, o.yes, "")
	if err != nil {
		return err
	}
	if a.JSON() {
		return a.WriteJSON(map[string]any{"device": t.ad.Name(), "pending": false, "recovered": verb})
	}
	fmt.Fprintf(a.Stdout, "Done: the interrupted %s is %s.\n", e.Op, map[bool]string{true: "rolled back", false: "finished"}[o.rollback])
	return nil
}

// ---- diff

func (cc *configCtx) diffCmd() *cobra.Command {
	var timeout time.Duration
	c := &cobra.Command{
		Use:   "diff A B",
		Short: "Compare two NV configurations: backups, mlxconfig query outputs or devices",
		Long: `Compare stored NV configurations TLV by TLV and parameter by parameter. A and
B are backup files (cxray or MLNX_RAW_TLV_FILE format), mlxconfig/mstconfig
query outputs (q or -e q, from WinMFT too: compared parameter by parameter)
or device names (an existing file wins; emu, 0000:03:00.0, mlx5_0 ...). Exit
status 1 when they differ.`,
		Args: cobra.ExactArgs(2),
		RunE: func(_ *cobra.Command, args []string) error {
			ctx, cancel := context.WithTimeout(cc.a.Ctx, timeout)
			defer cancel()
			nv, err := cc.db()
			if err != nil {
				return err
			}
			db, err := cc.a.DB()
			if err != nil {
				return err
			}
			hc, err := nvconf.NewHeaderCodec(db, "MNVDA")
			if err != nil {
				return cmdutil.UsageWrap(err)
			}
			ops, err := cc.readOperands(args)
			if err != nil {
				return err
			}
			// A query output holds values, not TLVs: compare by parameter.
			if ops[0].holdsQuery() || ops[1].holdsQuery() {
				return cc.diffSettings(ctx, ops, db)
			}
			var sides [2][]nvconf.RawTLV
			for i, op := range ops {
				if sides[i], err = cc.loadSide(ctx, op, nv, db, hc); err != nil {
					return err
				}
			}
			return cc.printDiff(args, sides, nv)
		},
	}
	c.Flags().DurationVar(&timeout, "timeout", 10*time.Second, "give up on a device after this long")
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
	d := nvconf.Compare(sides[0], sides[1])
	entries := nv.Differences(d)
	if a.JSON() {
		if err := a.WriteJSON(map[string]any{"a": args[0], "b": args[1], "same": d.Same, "differences": entries}); err != nil {
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

// ---- show-params

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
