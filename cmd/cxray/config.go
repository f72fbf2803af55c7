package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/cxray/cxray/internal/atomicfile"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/nvconf"
	"github.com/cxray/cxray/nvconf/builtin"
	"github.com/cxray/cxray/prm"
)

// `cxray config`: NV configuration, what mlxconfig/mstconfig do, with
// validation before any write, backups, read-back verification and JSON.

// Environment variables of the config commands.
const (
	// EnvNVDB names the NV parameter database (an SQLite file, or "builtin").
	EnvNVDB = "CXRAY_NVDB"
	// EnvBackupDir is where set, reset and restore write their backups.
	EnvBackupDir = "CXRAY_BACKUP_DIR"
)

// configCtx is what the config subcommands share.
type configCtx struct {
	a    *app
	nvdb string
}

func (a *app) configCmd() *cobra.Command {
	cc := &configCtx{a: a}
	c := &cobra.Command{
		Use:   "config",
		Short: "NV configuration (mlxconfig): query, set, apply, reset, backup, restore, diff",
		Long: `Read and change the adapter's non-volatile configuration (the TLVs mlxconfig
and mstconfig work with), by parameter name: SRIOV_EN, NUM_OF_VFS, LINK_TYPE_P1,
LOG_TX_PSN_WINDOW ...

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
	c.PersistentFlags().StringVar(&cc.nvdb, "nvdb", "", "NV parameter database: mstflint's mlxconfig_host.db (SQLite) or 'builtin'; default $CXRAY_NVDB, the installed one, or the built-in")
	c.AddCommand(cc.queryCmd(), cc.setCmd(), cc.applyCmd(), cc.resetCmd(), cc.backupCmd(), cc.restoreCmd(), cc.diffCmd(), cc.showParamsCmd())
	return c
}

// db loads the parameter database.
func (cc *configCtx) db() (*nvconf.DB, error) {
	path := cc.nvdb
	if path == "" {
		path = os.Getenv(EnvNVDB)
	}
	switch {
	case strings.EqualFold(path, "builtin"):
		return builtin.Load()
	case path != "":
		db, err := nvconf.LoadSQLite(path)
		if err != nil {
			return nil, usageWrap(fmt.Errorf("--nvdb: %w", err))
		}
		return db, nil
	}
	if _, err := os.Stat(nvconf.MstflintPath); err == nil {
		if db, err := nvconf.LoadSQLite(nvconf.MstflintPath); err == nil {
			return db, nil
		}
	}
	return builtin.Load()
}

// nvTarget is an opened device with its NV session.
type nvTarget struct {
	ad *adapter.Adapter
	s  *nvconf.Session
	nv *nvconf.DB
}

func (t *nvTarget) Close() { t.ad.Close() }

// open opens -d and starts the NV session.
func (cc *configCtx) open(ctx context.Context, df deviceFlags) (*nvTarget, error) {
	nv, err := cc.db()
	if err != nil {
		return nil, err
	}
	db, err := cc.a.db()
	if err != nil {
		return nil, err
	}
	if df.name == "" {
		return nil, usageErr("no device given; add -d DEV (a PCI address, mlx5_0, an interface name, or emu for the emulator)")
	}
	ad, err := cc.a.open(ctx, df.name, db)
	if err != nil {
		return nil, err
	}
	d, err := registers(ctx, ad)
	if err != nil {
		ad.Close()
		return nil, err
	}
	s, err := nvconf.Open(ctx, d, nv)
	if err != nil {
		ad.Close()
		return nil, cfgErr(err)
	}
	return &nvTarget{ad: ad, s: s, nv: nv}, nil
}

// cfgErr maps nvconf errors to exit codes: refused names and values are
// usage errors (2), the rest device errors (3).
func cfgErr(err error) error {
	if err == nil {
		return nil
	}
	var (
		ve *nvconf.ValidationError
		ne *nvconf.NameError
		va *nvconf.ValueError
		fe *nvconf.FileError
		ee *exitError
	)
	switch {
	case errors.As(err, &ee):
		return err
	case errors.As(err, &ve), errors.As(err, &ne), errors.As(err, &va), errors.As(err, &fe):
		return usageWrap(err)
	}
	return classify(err)
}

func (t *nvTarget) deviceLine(ctx context.Context) string {
	s := describe(t.ad)
	if id, err := t.ad.Identity(ctx); err == nil && id.Firmware != "" {
		s += ", firmware " + id.Firmware
	}
	return s
}

// ---- query

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
	var df deviceFlags
	var extended, all bool
	var filter string
	c := &cobra.Command{
		Use:   "query [PARAM...]",
		Short: "Show the NV configuration: Next Boot, and with -e Default and Current",
		Long: `Show every parameter the device supports (or the ones named): its Next Boot
value, and with -e its Default (factory) and Current (running) values. A *
marks a parameter whose Next Boot value differs from Current: it takes effect
at the next firmware reset. A + marks one that differs from the default.

Per-port parameters are NAME_P1, NAME_P2 ...; enum values show as NAME(n).
Parameters the firmware's TLV version is too old for, or whose dependency on
the device's capabilities does not hold, are not listed (--all lists them with
the reason), as mstconfig does.`,
		RunE: func(_ *cobra.Command, args []string) error {
			re, err := compileFilter(filter)
			if err != nil {
				return err
			}
			ctx, cancel := df.context(cc.a)
			defer cancel()
			t, err := cc.open(ctx, df)
			if err != nil {
				return err
			}
			defer t.Close()
			// Current is read even without -e, so pending changes can be named.
			res, err := t.s.Query(ctx, nvconf.QueryOptions{Names: args, Filter: re, Extended: true, All: all})
			if err != nil {
				return cfgErr(err)
			}
			return cc.printQuery(t, res, extended)
		},
	}
	df.add(c)
	c.Flags().BoolVarP(&extended, "extended", "e", false, "also show Default and Current values")
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
	if a.json() {
		out := struct {
			Device      string        `json:"device"`
			NVDB        string        `json:"nvdb"`
			ReadDefault bool          `json:"read_default"`
			ReadCurrent bool          `json:"read_current"`
			Parameters  []settingJSON `json:"parameters"`
			Pending     []string      `json:"pending"`
			Unsupported []string      `json:"unsupported,omitempty"`
			Notes       []string      `json:"notes,omitempty"`
		}{Device: t.ad.Name(), NVDB: t.nv.Source, ReadDefault: res.ReadDefault, ReadCurrent: res.ReadCurrent,
			Parameters: []settingJSON{}, Pending: []string{}, Unsupported: res.Unsupported, Notes: t.s.Notes}
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
		return a.writeJSON(out)
	}
	w := a.stdout
	fmt.Fprintf(w, "Device:      %s\n", t.deviceLine(a.ctx))
	fmt.Fprintf(w, "Parameters:  %s (%d TLVs)\n", t.nv.Source, len(t.nv.TLVs))
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
		tb := a.newTable(hdr...)
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
			tb.row(row...)
		}
		tb.flush()
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

func (cc *configCtx) setCmd() *cobra.Command {
	var df deviceFlags
	var yes, dryRun bool
	var backup string
	c := &cobra.Command{
		Use:   "set PARAM=VALUE...",
		Short: "Change parameters (validated, backed up, whole-TLV write, verified; Next Boot)",
		Long: `Change parameters for the next boot: cxray reads each TLV, checks every value
(type, enum values, the device's limits and rules) before touching the device,
writes a backup of the NV configuration, writes whole TLVs with the valid bits
of the changed parameters set, and reads them back.

Values: True/False or 1/0 for booleans, enum names or numbers (ETH or 2),
numbers in decimal or 0x... Per-port parameters are NAME_P1, NAME_P2; array
elements NAME[i].

The change takes effect at the next firmware reset: 'cxray config apply' where
the firmware allows it, a reboot after 'cxray config apply --at-reboot', or a
power cycle.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			as, err := nvconf.ParseAssignments(args)
			if err != nil {
				return usageWrap(err)
			}
			ctx, cancel := df.context(cc.a)
			defer cancel()
			t, err := cc.open(ctx, df)
			if err != nil {
				return err
			}
			defer t.Close()
			plan, err := t.s.PlanSet(ctx, as)
			if err != nil {
				return cfgErr(err)
			}
			return cc.runSet(ctx, t, plan, yes, dryRun, backup)
		},
	}
	df.add(c)
	c.Flags().BoolVar(&yes, "yes", false, "do not ask for confirmation")
	c.Flags().BoolVar(&dryRun, "dry-run", false, "validate and print the TLVs that would be written; write nothing")
	c.Flags().StringVar(&backup, "backup", "", "write the backup to this file (default: a new file in $CXRAY_BACKUP_DIR or ~/.local/state/cxray/backups)")
	return c
}

func (cc *configCtx) runSet(ctx context.Context, t *nvTarget, plan *nvconf.SetPlan, yes, dryRun bool, backupPath string) error {
	a := cc.a
	hc := t.s.HeaderCodec()
	var changes []changeOut
	var writes []writeOut
	for _, w := range plan.Writes {
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
	}{Device: t.ad.Name(), Changes: nonNilChanges(changes), Unchanged: plan.Unchanged, Writes: nonNilWrites(writes), DryRun: dryRun}
	if !a.json() {
		if len(changes) > 0 {
			hdr := []string{"PARAMETER", "CURRENT", "NEXT BOOT", "NEW"}
			tb := a.newTable(hdr...)
			for _, c := range changes {
				tb.row(c.Name, dashIfEmpty(c.Current), c.Before, c.After)
			}
			tb.flush()
		}
		for _, u := range plan.Unchanged {
			fmt.Fprintf(a.stdout, "%s already has that value for the next boot; nothing to write for it.\n", u)
		}
	}
	if len(plan.Writes) == 0 {
		if a.json() {
			return a.writeJSON(result)
		}
		fmt.Fprintln(a.stdout, "Nothing to write.")
		return nil
	}
	if dryRun {
		if a.json() {
			return a.writeJSON(result)
		}
		fmt.Fprintln(a.stdout, "Dry run: the values are valid; these TLVs (MNVDA header + data) would be written:")
		for _, w := range writes {
			fmt.Fprintf(a.stdout, "  %s  %s\n", w.TLV, strings.Join(w.Data, " "))
		}
		return nil
	}
	var names []string
	for _, w := range plan.Writes {
		names = append(names, w.Inst.String())
	}
	path, err := cc.confirmAndBackup(ctx, t, yes, fmt.Sprintf("Write %s (Next Boot) on %s?", strings.Join(names, ", "), t.ad.Name()), backupPath, plan)
	if err != nil {
		return err
	}
	result.Backup = path
	if err := t.s.ApplySet(ctx, plan); err != nil {
		return cfgErr(fmt.Errorf("%w (backup: %s; 'cxray config restore %s' puts it back)", err, path, path))
	}
	result.Written = true
	result.TakesEffect = "next firmware reset"
	if a.json() {
		return a.writeJSON(result)
	}
	fmt.Fprintf(a.stdout, "Backup: %s\n", path)
	fmt.Fprintf(a.stdout, "Written and verified: %d TLV(s) hold the new values for the next boot.\n", len(plan.Writes))
	cc.printTakesEffect(t)
	return nil
}

func (cc *configCtx) printTakesEffect(t *nvTarget) {
	fmt.Fprintf(cc.a.stdout, "Takes effect at the next firmware reset; until then the adapter runs with its Current values.\n"+
		"  Now: 'cxray config apply -d %s' (MFRL firmware reset; interrupts traffic; where the firmware allows it).\n"+
		"  Or:  reboot after 'cxray config apply --at-reboot -d %s', or power-cycle the host.\n", t.ad.Name(), t.ad.Name())
}

func nonNilChanges(c []changeOut) []changeOut {
	if c == nil {
		return []changeOut{}
	}
	return c
}

func nonNilWrites(w []writeOut) []writeOut {
	if w == nil {
		return []writeOut{}
	}
	return w
}

func dashIfEmpty(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// backupDir is where automatic backups go.
func backupDir() (string, error) {
	if d := os.Getenv(EnvBackupDir); d != "" {
		return d, nil
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "cxray", "backups"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no place for the NV backup (%v); give one with --backup FILE or $%s", err, EnvBackupDir)
	}
	return filepath.Join(home, ".local", "state", "cxray", "backups"), nil
}

// confirmAndBackup asks before an NV write (unless yes) and writes the
// backup every NV write is preceded by; it returns the backup's path.
func (cc *configCtx) confirmAndBackup(ctx context.Context, t *nvTarget, yes bool, question, backupPath string, plan *nvconf.SetPlan) (string, error) {
	if !yes {
		ok, err := cc.a.confirm(question)
		if err != nil {
			return "", err
		}
		if !ok {
			return "", usageErr("not confirmed; nothing was written")
		}
	}
	return cc.writeBackup(ctx, t, backupPath, plan)
}

// writeBackup saves the NV configuration before a write: the whole NV area
// (MNVGN), or, when the firmware cannot list it, the TLVs about to change.
func (cc *configCtx) writeBackup(ctx context.Context, t *nvTarget, path string, plan *nvconf.SetPlan) (string, error) {
	tlvs, err := t.s.Walk(ctx)
	partial := false
	if err != nil {
		var nv *nvconf.NVError
		if !errors.As(err, &nv) {
			return "", cfgErr(err)
		}
		partial = true
		tlvs = nil
		if plan != nil {
			for _, w := range plan.Writes {
				it, err := t.s.Read(ctx, w.Inst, nvconf.ModeNext)
				if err != nil {
					return "", cfgErr(fmt.Errorf("backup before writing: %w; nothing was written", err))
				}
				tlvs = append(tlvs, nvconf.RawTLV{Header: nvconf.Header{Type: w.Inst.Type(), Version: it.Header.Version, WriterID: it.Header.WriterID}, Data: it.Data})
			}
		}
	}
	if path == "" {
		dir, err := backupDir()
		if err != nil {
			return "", usageWrap(err)
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", usageErr("cannot create the backup directory %s (%v); give a writable --backup FILE or $%s; nothing was written", dir, err, EnvBackupDir)
		}
		name := strings.NewReplacer("/", "_", ":", "_", "@", "_").Replace(t.ad.Name())
		path = filepath.Join(dir, fmt.Sprintf("%s-%s.nvbackup", name, time.Now().UTC().Format("20060102T150405.000000000Z")))
	}
	info := cc.backupInfo(ctx, t)
	if partial {
		info.Lines = append(info.Lines, "partial: the firmware cannot list its NV area (MNVGN); this holds the TLVs the write changed")
	}
	b := nvconf.WriteBackup(tlvs, t.nv, t.s.HeaderCodec(), info)
	if err := writeFileAtomic(path, b); err != nil {
		return "", usageErr("cannot write the backup %s (%v); give a writable --backup FILE; nothing was written", path, err)
	}
	return path, nil
}

func (cc *configCtx) backupInfo(ctx context.Context, t *nvTarget) nvconf.BackupInfo {
	return nvconf.BackupInfo{Lines: []string{
		"device: " + t.deviceLine(ctx),
		"taken: " + time.Now().UTC().Format(time.RFC3339),
		"parameter database: " + t.nv.Source,
	}}
}

// writeFileAtomic writes via a temporary file and a rename, so a crash never
// leaves half a backup under the final name.
func writeFileAtomic(path string, b []byte) error {
	if path == "-" {
		return errors.New("'-' is not a file")
	}
	return atomicfile.Write(path, b)
}

// ---- apply

func (cc *configCtx) applyCmd() *cobra.Command {
	var df deviceFlags
	var yes, dryRun, atReboot bool
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
		RunE: func(_ *cobra.Command, _ []string) error {
			ctx, cancel := df.context(cc.a)
			defer cancel()
			t, err := cc.open(ctx, df)
			if err != nil {
				return err
			}
			defer t.Close()
			return cc.runApply(ctx, t, yes, dryRun, atReboot)
		},
	}
	df.add(c)
	c.Flags().BoolVar(&yes, "yes", false, "do not ask for confirmation")
	c.Flags().BoolVar(&dryRun, "dry-run", false, "say what would be applied and which reset would be sent; send nothing")
	c.Flags().BoolVar(&atReboot, "at-reboot", false, "arm the reset for the next host reboot (PERST) instead of now")
	return c
}

var triggerNames = map[uint8]string{
	nvconf.TriggerLivePatch: "live_patch", nvconf.TriggerImmediate: "immediate",
	nvconf.TriggerLinkToggle: "pcie_link_toggle", nvconf.TriggerPERST: "perst_reboot",
}

func (cc *configCtx) runApply(ctx context.Context, t *nvTarget, yes, dryRun, atReboot bool) error {
	a := cc.a
	before, err := t.s.Query(ctx, nvconf.QueryOptions{Extended: true})
	if err != nil {
		return cfgErr(err)
	}
	var pending []string
	for _, s := range before.Settings {
		if s.Pending {
			pending = append(pending, fmt.Sprintf("%s %s -> %s", s.Name, valText(s.Current), valText(s.Next)))
		}
	}
	caps, err := t.s.FirmwareResetCaps(ctx)
	if err != nil {
		return cfgErr(err)
	}
	// The PCIe link-toggle trigger where offered: the reset happens when
	// the link toggles (at once on the emulator; mstfwreset toggles it on
	// hardware). The immediate trigger of newer firmware must be chosen by
	// a person (the PRM says so), so cxray never picks it.
	trig := nvconf.TriggerPERST
	if !atReboot && caps.Triggers&nvconf.TriggerLinkToggle != 0 {
		trig = nvconf.TriggerLinkToggle
	}
	if caps.Triggers != 0 && caps.Triggers&trig == 0 {
		return deviceErr(fmt.Errorf("the firmware does not offer the %s reset (MFRL triggers 0x%02x); reboot or power-cycle the host to apply Next Boot", triggerNames[trig], caps.Triggers))
	}
	out := struct {
		Device        string   `json:"device"`
		Trigger       string   `json:"trigger"`
		Pending       []string `json:"pending_before"`
		Applied       []string `json:"applied"`
		StillPending  []string `json:"still_pending"`
		ArmedAtReboot bool     `json:"armed_for_reboot"`
		DryRun        bool     `json:"dry_run"`
	}{Device: t.ad.Name(), Trigger: triggerNames[trig], Pending: nonNilStr(pending), Applied: []string{}, StillPending: []string{}, DryRun: dryRun}
	if !before.ReadCurrent {
		pending = nil
	}
	if before.ReadCurrent && len(pending) == 0 && !atReboot {
		if a.json() {
			return a.writeJSON(out)
		}
		fmt.Fprintln(a.stdout, "Nothing pending: Current already equals Next Boot; no reset sent.")
		return nil
	}
	if !a.json() {
		if len(pending) > 0 {
			fmt.Fprintf(a.stdout, "Pending: %s\n", strings.Join(pending, ", "))
		}
		fmt.Fprintf(a.stdout, "Firmware reset: %s (MFRL reset_trigger 0x%02x)\n", triggerNames[trig], trig)
	}
	if dryRun {
		if a.json() {
			return a.writeJSON(out)
		}
		fmt.Fprintln(a.stdout, "Dry run: no reset sent.")
		return nil
	}
	if !yes {
		q := fmt.Sprintf("Reset the firmware of %s now (traffic stops for a moment)?", t.ad.Name())
		if trig == nvconf.TriggerPERST {
			q = fmt.Sprintf("Arm a firmware reset of %s for the next reboot?", t.ad.Name())
		}
		ok, err := a.confirm(q)
		if err != nil {
			return err
		}
		if !ok {
			return usageErr("not confirmed; no reset sent")
		}
	}
	if err := t.s.FirmwareReset(ctx, trig); err != nil {
		return cfgErr(err)
	}
	after, err := t.s.Query(ctx, nvconf.QueryOptions{Extended: true})
	if err != nil {
		return cfgErr(fmt.Errorf("the reset was requested, but reading the configuration back failed: %w", err))
	}
	still := map[string]bool{}
	for _, s := range after.Settings {
		if s.Pending {
			still[s.Name] = true
			out.StillPending = append(out.StillPending, s.Name)
		}
	}
	for _, s := range before.Settings {
		if s.Pending && !still[s.Name] {
			out.Applied = append(out.Applied, s.Name)
		}
	}
	out.ArmedAtReboot = trig == nvconf.TriggerPERST
	if a.json() {
		return a.writeJSON(out)
	}
	switch {
	case trig == nvconf.TriggerPERST:
		fmt.Fprintln(a.stdout, "Armed: the firmware resets at the next reboot (PERST) and then uses the Next Boot values.")
	case !after.ReadCurrent:
		fmt.Fprintln(a.stdout, "Reset requested. This firmware cannot report Current values (MNVGC), so cxray cannot tell whether it has happened; a reboot makes sure.")
	case len(out.StillPending) == 0:
		fmt.Fprintf(a.stdout, "Applied: Current now equals Next Boot (%d parameter(s) took effect).\n", len(out.Applied))
	default:
		fmt.Fprintf(a.stdout, "The reset is armed but has not happened: still pending %s. It happens at the next PCIe link toggle (mstfwreset -d %s reset) or reboot.\n",
			strings.Join(out.StillPending, ", "), t.ad.Name())
	}
	return nil
}

func nonNilStr(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// ---- reset

func (cc *configCtx) resetCmd() *cobra.Command {
	var df deviceFlags
	var yes, dryRun, all bool
	var backup string
	c := &cobra.Command{
		Use:   "reset [TLV|PARAM...] [--all]",
		Short: "Return TLVs (MNVDI) or the whole NV configuration (MNVIA) to the defaults, for the next boot",
		Long: `Erase what is written for the named TLVs, so their Next Boot values are the
firmware defaults again (MNVDI), or everything with --all (MNVIA, what
'mstconfig reset' does). Name a TLV (nv_global_pci_conf) or a parameter in it
(SRIOV_EN, LINK_TYPE_P1): the whole TLV is reset, and cxray lists every
parameter that changes. A backup is written first. Takes effect at the next
firmware reset, like set.`,
		RunE: func(_ *cobra.Command, args []string) error {
			if all == (len(args) > 0) {
				return usageErr("name the TLVs or parameters to reset, or give --all (not both)")
			}
			ctx, cancel := df.context(cc.a)
			defer cancel()
			t, err := cc.open(ctx, df)
			if err != nil {
				return err
			}
			defer t.Close()
			return cc.runReset(ctx, t, args, all, yes, dryRun, backup)
		},
	}
	df.add(c)
	c.Flags().BoolVar(&all, "all", false, "reset the whole NV configuration (MNVIA)")
	c.Flags().BoolVar(&yes, "yes", false, "do not ask for confirmation")
	c.Flags().BoolVar(&dryRun, "dry-run", false, "list what would return to its default; write nothing")
	c.Flags().StringVar(&backup, "backup", "", "write the backup to this file")
	return c
}

// resetTargets resolves TLV or parameter names to instances.
func resetTargets(t *nvTarget, names []string) ([]nvconf.Instance, error) {
	var out []nvconf.Instance
	seen := map[uint32]bool{}
	add := func(in nvconf.Instance) {
		if !seen[in.Type()] {
			seen[in.Type()] = true
			out = append(out, in)
		}
	}
	for _, n := range names {
		if tl := t.nv.TLV(n); tl != nil {
			for _, in := range t.s.Layout.Instances(tl) {
				add(in)
			}
			continue
		}
		if p := t.nv.ParamByMlxName(n); p != nil && (p.TLV.Class == nvconf.ClassPort || p.TLV.Class == nvconf.ClassModule) {
			for _, in := range t.s.Layout.Instances(p.TLV) {
				add(in)
			}
			continue
		}
		r, err := t.nv.Resolve(n, t.s.Layout)
		if err != nil {
			return nil, err
		}
		add(r.Inst)
	}
	return out, nil
}

func (cc *configCtx) runReset(ctx context.Context, t *nvTarget, names []string, all, yes, dryRun bool, backupPath string) error {
	a := cc.a
	var ins []nvconf.Instance
	if all {
		for _, tl := range t.nv.TLVs {
			if tl.Cap || !tl.HasUserParams() {
				continue
			}
			ins = append(ins, t.s.Layout.Instances(tl)...)
		}
	} else {
		var err error
		if ins, err = resetTargets(t, names); err != nil {
			return cfgErr(err)
		}
	}
	type changeJ struct {
		Name   string `json:"name"`
		Before string `json:"next_boot_before"`
		After  string `json:"next_boot_after"`
	}
	var changes []changeJ
	var targets []nvconf.Instance
	for _, in := range ins {
		sp, err := t.s.Support(ctx, in)
		if err != nil {
			return cfgErr(err)
		}
		if !sp.Read {
			if !all {
				return usageErr("the firmware does not support %s; nothing to reset", in)
			}
			continue
		}
		targets = append(targets, in)
		if !t.s.ReadDefault {
			continue
		}
		next, err := t.s.Read(ctx, in, nvconf.ModeNext)
		if err != nil {
			return cfgErr(err)
		}
		def, err := t.s.Read(ctx, in, nvconf.ModeFactory)
		if err != nil {
			return cfgErr(err)
		}
		for _, p := range in.TLV.Params {
			if p.MlxName == "" {
				continue
			}
			for i := 0; i < p.Elems(); i++ {
				b := displayValue(p, next.Data, def.Data, i)
				d := p.FormatData(def.Data, i)
				if b != d {
					name := p.MlxName + in.Suffix()
					if p.IsArray() {
						name += fmt.Sprintf("[%d]", i)
					}
					changes = append(changes, changeJ{Name: name, Before: b, After: d})
				}
			}
		}
	}
	var tnames []string
	for _, in := range targets {
		tnames = append(tnames, in.String())
	}
	out := struct {
		Device  string    `json:"device"`
		All     bool      `json:"all"`
		TLVs    []string  `json:"tlvs"`
		Changes []changeJ `json:"changes"`
		DryRun  bool      `json:"dry_run"`
		Backup  string    `json:"backup,omitempty"`
		Written bool      `json:"written"`
	}{Device: t.ad.Name(), All: all, TLVs: nonNilStr(tnames), Changes: changes, DryRun: dryRun}
	if out.Changes == nil {
		out.Changes = []changeJ{}
	}
	if !a.json() {
		if len(changes) > 0 {
			tb := a.newTable("PARAMETER", "NEXT BOOT", "DEFAULT")
			for _, c := range changes {
				tb.row(c.Name, c.Before, c.After)
			}
			tb.flush()
		} else if t.s.ReadDefault {
			fmt.Fprintln(a.stdout, "Every parameter of these TLVs already has its default for the next boot.")
		}
	}
	if dryRun {
		if a.json() {
			return a.writeJSON(out)
		}
		fmt.Fprintf(a.stdout, "Dry run: would reset %s; nothing written.\n", describeReset(all, tnames))
		return nil
	}
	path, err := cc.confirmAndBackup(ctx, t, yes, fmt.Sprintf("Reset %s to the defaults (Next Boot) on %s?", describeReset(all, tnames), t.ad.Name()), backupPath, nil)
	if err != nil {
		return err
	}
	out.Backup = path
	if all {
		if err := t.s.InvalidateAll(ctx); err != nil {
			return cfgErr(fmt.Errorf("%w (backup: %s)", err, path))
		}
	} else {
		for _, in := range targets {
			if err := t.s.Invalidate(ctx, in); err != nil {
				return cfgErr(fmt.Errorf("%w (backup: %s)", err, path))
			}
		}
	}
	// Verify: nothing of the reset TLVs is stored any more.
	if stored, err := t.s.Walk(ctx); err == nil {
		reset := map[uint32]bool{}
		for _, in := range targets {
			reset[in.Type()] = true
		}
		for _, r := range stored {
			if all || reset[r.Header.Type] {
				return deviceErr(fmt.Errorf("the reset was sent but %s is still stored; the firmware may refuse to erase it (backup: %s)", t.nv.DescribeType(r.Header.Type), path))
			}
		}
	}
	out.Written = true
	if a.json() {
		return a.writeJSON(out)
	}
	fmt.Fprintf(a.stdout, "Backup: %s\n", path)
	fmt.Fprintf(a.stdout, "Reset %s: the defaults apply from the next boot.\n", describeReset(all, tnames))
	cc.printTakesEffect(t)
	return nil
}

// displayValue is what query shows for element i: the stored value, or the
// default when the field's valid bit is clear.
func displayValue(p *nvconf.Param, data, def []byte, i int) string {
	if !p.ValidBitSet(data) && def != nil {
		return p.FormatData(def, i)
	}
	return p.FormatData(data, i)
}

func describeReset(all bool, names []string) string {
	if all {
		return "the whole NV configuration"
	}
	return strings.Join(names, ", ")
}

// ---- backup

func (cc *configCtx) backupCmd() *cobra.Command {
	var df deviceFlags
	var format string
	c := &cobra.Command{
		Use:   "backup FILE",
		Short: "Save the stored NV configuration (MNVGN walk) to FILE ('-' for stdout)",
		Long: `Save every TLV stored in the adapter's NV configuration area, as 'mstconfig
backup' does. --format cxray (default) writes cxray's readable format (each
TLV's bytes plus its parameters decoded as comments); --format raw writes
mstflint's MLNX_RAW_TLV_FILE format, which 'mstconfig set_raw' reads. Both
restore with 'cxray config restore'.`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if format != "cxray" && format != "raw" {
				return usageErr("--format %s: the formats are cxray and raw", format)
			}
			ctx, cancel := df.context(cc.a)
			defer cancel()
			t, err := cc.open(ctx, df)
			if err != nil {
				return err
			}
			defer t.Close()
			tlvs, err := t.s.Walk(ctx)
			if err != nil {
				return cfgErr(err)
			}
			var b []byte
			if format == "raw" {
				if b, err = nvconf.WriteRawFile(tlvs, t.s.HeaderCodec()); err != nil {
					return cfgErr(err)
				}
			} else {
				b = nvconf.WriteBackup(tlvs, t.nv, t.s.HeaderCodec(), cc.backupInfo(ctx, t))
			}
			if args[0] == "-" {
				_, err := cc.a.stdout.Write(b)
				return err
			}
			if err := writeFileAtomic(args[0], b); err != nil {
				return usageErr("cannot write %s: %v", args[0], err)
			}
			if cc.a.json() {
				var names []string
				for _, r := range tlvs {
					names = append(names, t.nv.DescribeType(r.Header.Type))
				}
				return cc.a.writeJSON(map[string]any{"device": t.ad.Name(), "file": args[0], "format": format, "tlvs": nonNilStr(names)})
			}
			if len(tlvs) == 0 {
				fmt.Fprintf(cc.a.stdout, "The NV configuration area is empty (everything has its default); wrote an empty backup to %s.\n", args[0])
				return nil
			}
			fmt.Fprintf(cc.a.stdout, "Saved %d TLV(s) to %s (%s format).\n", len(tlvs), args[0], format)
			return nil
		},
	}
	df.add(c)
	c.Flags().StringVar(&format, "format", "cxray", "file format: cxray (readable) or raw (mstflint's MLNX_RAW_TLV_FILE)")
	return c
}

// readTLVFile reads a backup in either format.
func readTLVFile(path string, hc *nvconf.HeaderCodec, nv *nvconf.DB, stdin io.Reader) ([]nvconf.RawTLV, error) {
	var b []byte
	var err error
	if path == "-" {
		b, err = io.ReadAll(io.LimitReader(stdin, nvconf.MaxFileSize+1))
	} else {
		var fi os.FileInfo
		if fi, err = os.Stat(path); err == nil && fi.Size() > nvconf.MaxFileSize {
			return nil, usageErr("%s is %d bytes; a backup is at most %d", path, fi.Size(), nvconf.MaxFileSize)
		}
		if err == nil {
			b, err = os.ReadFile(path)
		}
	}
	if err != nil {
		return nil, usageErr("%v", err)
	}
	tlvs, err := nvconf.ParseFile(string(b), hc, nv)
	if err != nil {
		return nil, usageErr("%s: %v", path, err)
	}
	return tlvs, nil
}

// ---- restore

func (cc *configCtx) restoreCmd() *cobra.Command {
	var df deviceFlags
	var yes, dryRun, merge bool
	var backup string
	c := &cobra.Command{
		Use:   "restore FILE",
		Short: "Write a backup back (cxray or MLNX_RAW_TLV_FILE format), for the next boot",
		Long: `Make the adapter's stored NV configuration equal to a backup: TLVs that differ
are written, TLVs stored on the adapter but not in the file are reset to their
defaults (unless --merge, which only writes the file's TLVs). The file is
cxray's backup format or mstflint's MLNX_RAW_TLV_FILE (from 'mstconfig backup'
or get_raw). Every TLV is checked against the parameter database first; a
backup of the current configuration is written before anything changes, and
the result is read back (MNVGN) and compared with the file.`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			ctx, cancel := df.context(cc.a)
			defer cancel()
			t, err := cc.open(ctx, df)
			if err != nil {
				return err
			}
			defer t.Close()
			want, err := readTLVFile(args[0], t.s.HeaderCodec(), t.nv, cc.a.stdin)
			if err != nil {
				return err
			}
			return cc.runRestore(ctx, t, args[0], want, merge, yes, dryRun, backup)
		},
	}
	df.add(c)
	c.Flags().BoolVar(&merge, "merge", false, "only write the file's TLVs; leave other stored TLVs as they are")
	c.Flags().BoolVar(&yes, "yes", false, "do not ask for confirmation")
	c.Flags().BoolVar(&dryRun, "dry-run", false, "say what would be written and reset; write nothing")
	c.Flags().StringVar(&backup, "backup", "", "write the backup of the current configuration to this file")
	return c
}

func (cc *configCtx) runRestore(ctx context.Context, t *nvTarget, file string, want []nvconf.RawTLV, merge, yes, dryRun bool, backupPath string) error {
	a := cc.a
	// Check every TLV before writing any.
	var problems []string
	seen := map[uint32]bool{}
	for _, r := range want {
		name := t.nv.DescribeType(r.Header.Type)
		if seen[r.Header.Type] {
			problems = append(problems, fmt.Sprintf("%s appears twice in the file", name))
		}
		seen[r.Header.Type] = true
		in, ok := t.nv.InstanceOf(r.Header.Type)
		if !ok {
			problems = append(problems, fmt.Sprintf("type 0x%08x is not in the parameter database (%s); use a newer one with --nvdb", r.Header.Type, t.nv.Source))
			continue
		}
		if len(r.Data) != in.TLV.Size {
			problems = append(problems, fmt.Sprintf("%s holds %d bytes; the file has %d", name, in.TLV.Size, len(r.Data)))
			continue
		}
		if nvconf.SplitType(r.Header.Type).Class == in.TLV.Class {
			sp, err := t.s.Support(ctx, in)
			if err != nil {
				return cfgErr(err)
			}
			if !sp.Write {
				problems = append(problems, fmt.Sprintf("the firmware does not allow writing %s", name))
			}
		}
	}
	if len(problems) > 0 {
		return cfgErr(&nvconf.ValidationError{Problems: problems})
	}
	have, err := t.s.Walk(ctx)
	if err != nil {
		return cfgErr(err)
	}
	d := nvconf.Compare(have, want)
	var writes []nvconf.RawTLV
	for _, r := range want {
		for _, c := range d.Changed {
			if c[1].Header.Type == r.Header.Type {
				writes = append(writes, r)
			}
		}
		for _, o := range d.OnlyB {
			if o.Header.Type == r.Header.Type {
				writes = append(writes, r)
			}
		}
	}
	var resets []nvconf.RawTLV
	if !merge {
		resets = d.OnlyA
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
		Write     []string `json:"write"`
		Reset     []string `json:"reset"`
		Unchanged int      `json:"unchanged"`
		DryRun    bool     `json:"dry_run"`
		Backup    string   `json:"backup,omitempty"`
		Written   bool     `json:"written"`
	}{Device: t.ad.Name(), File: file, Write: names(writes), Reset: names(resets), Unchanged: d.Same, DryRun: dryRun}
	if !a.json() {
		for _, r := range writes {
			fmt.Fprintf(a.stdout, "write  %s\n", t.nv.DescribeType(r.Header.Type))
			cc.printTLVDelta(have, r, t.nv)
		}
		for _, r := range resets {
			fmt.Fprintf(a.stdout, "reset  %s (stored now, not in the file)\n", t.nv.DescribeType(r.Header.Type))
		}
		fmt.Fprintf(a.stdout, "%d TLV(s) already as in the file.\n", d.Same)
	}
	if len(writes) == 0 && len(resets) == 0 {
		if a.json() {
			return a.writeJSON(out)
		}
		fmt.Fprintln(a.stdout, "Nothing to do: the stored configuration equals the file.")
		return nil
	}
	if dryRun {
		if a.json() {
			return a.writeJSON(out)
		}
		fmt.Fprintln(a.stdout, "Dry run: nothing written.")
		return nil
	}
	path, err := cc.confirmAndBackup(ctx, t, yes, fmt.Sprintf("Write %d and reset %d TLV(s) (Next Boot) on %s?", len(writes), len(resets), t.ad.Name()), backupPath, nil)
	if err != nil {
		return err
	}
	out.Backup = path
	for _, r := range resets {
		if err := t.s.InvalidateType(ctx, r.Header.Type); err != nil {
			return cfgErr(fmt.Errorf("%w (backup of the configuration before: %s)", err, path))
		}
	}
	for _, r := range writes {
		if err := t.s.WriteRaw(ctx, r); err != nil {
			return cfgErr(fmt.Errorf("%w (backup of the configuration before: %s)", err, path))
		}
	}
	now, err := t.s.Walk(ctx)
	if err != nil {
		return cfgErr(fmt.Errorf("restored, but reading the configuration back failed: %w", err))
	}
	check := nvconf.Compare(now, want)
	if len(check.Changed) > 0 || len(check.OnlyB) > 0 || (!merge && len(check.OnlyA) > 0) {
		return deviceErr(fmt.Errorf("restored, but the stored configuration differs from %s (%d changed, %d missing, %d extra); the firmware may have adjusted values (backup of the configuration before: %s)",
			file, len(check.Changed), len(check.OnlyB), len(check.OnlyA), path))
	}
	out.Written = true
	if a.json() {
		return a.writeJSON(out)
	}
	fmt.Fprintf(a.stdout, "Backup of the configuration before: %s\n", path)
	fmt.Fprintf(a.stdout, "Restored and verified: the stored configuration equals %s.\n", file)
	cc.printTakesEffect(t)
	return nil
}

// printTLVDelta lists the parameters a restore changes in one TLV.
func (cc *configCtx) printTLVDelta(have []nvconf.RawTLV, r nvconf.RawTLV, nv *nvconf.DB) {
	in, ok := nv.InstanceOf(r.Header.Type)
	if !ok {
		return
	}
	var old []byte
	for _, h := range have {
		if h.Header.Type == r.Header.Type {
			old = h.Data
		}
	}
	for _, l := range paramDelta(in, old, r.Data) {
		fmt.Fprintf(cc.a.stdout, "         %s\n", l)
	}
}

// paramDelta lists "NAME: a -> b" for the user-visible parameters that
// differ between two images of a TLV (old may be nil: not stored).
func paramDelta(in nvconf.Instance, a, b []byte) []string {
	var out []string
	for _, p := range in.TLV.Params {
		if p.MlxName == "" {
			continue
		}
		for i := 0; i < p.Elems(); i++ {
			x := "(not stored)"
			if a != nil && len(a) >= in.TLV.Size {
				x = p.FormatData(a, i)
			}
			y := "(not stored)"
			if b != nil && len(b) >= in.TLV.Size {
				y = p.FormatData(b, i)
			}
			if x != y {
				name := p.MlxName + in.Suffix()
				if p.IsArray() {
					name += fmt.Sprintf("[%d]", i)
				}
				out = append(out, fmt.Sprintf("%s: %s -> %s", name, x, y))
			}
		}
	}
	return out
}

// ---- diff

func (cc *configCtx) diffCmd() *cobra.Command {
	var timeout time.Duration
	c := &cobra.Command{
		Use:   "diff A B",
		Short: "Compare two NV configurations: backup files (either format) or devices",
		Long: `Compare stored NV configurations TLV by TLV and parameter by parameter. A and
B are backup files (cxray or MLNX_RAW_TLV_FILE format) or device names (an
existing file wins; emu, 0000:03:00.0, mlx5_0 ...). Exit status 1 when they
differ.`,
		Args: cobra.ExactArgs(2),
		RunE: func(_ *cobra.Command, args []string) error {
			ctx, cancel := context.WithTimeout(cc.a.ctx, timeout)
			defer cancel()
			nv, err := cc.db()
			if err != nil {
				return err
			}
			db, err := cc.a.db()
			if err != nil {
				return err
			}
			hc, err := nvconf.NewHeaderCodec(db, "MNVDA")
			if err != nil {
				return usageWrap(err)
			}
			var sides [2][]nvconf.RawTLV
			for i, arg := range args {
				if sides[i], err = cc.loadSide(ctx, arg, nv, db, hc); err != nil {
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
func (cc *configCtx) loadSide(ctx context.Context, arg string, nv *nvconf.DB, db *prm.DB, hc *nvconf.HeaderCodec) ([]nvconf.RawTLV, error) {
	if fi, err := os.Stat(arg); (err == nil && !fi.IsDir()) || arg == "-" {
		return readTLVFile(arg, hc, nv, cc.a.stdin)
	}
	ad, err := cc.a.open(ctx, arg, db)
	if err != nil {
		return nil, fmt.Errorf("%s is neither a file nor a device: %w", arg, err)
	}
	defer ad.Close()
	d, err := registers(ctx, ad)
	if err != nil {
		return nil, err
	}
	s, err := nvconf.Open(ctx, d, nv)
	if err != nil {
		return nil, cfgErr(err)
	}
	tlvs, err := s.Walk(ctx)
	if err != nil {
		return nil, cfgErr(err)
	}
	return tlvs, nil
}

func (cc *configCtx) printDiff(args []string, sides [2][]nvconf.RawTLV, nv *nvconf.DB) error {
	a := cc.a
	d := nvconf.Compare(sides[0], sides[1])
	type entryJ struct {
		TLV     string   `json:"tlv"`
		Type    string   `json:"type"`
		In      string   `json:"in"` // a, b or both
		Changes []string `json:"changes,omitempty"`
	}
	var entries []entryJ
	add := func(r nvconf.RawTLV, where string, other []byte) {
		e := entryJ{TLV: nv.DescribeType(r.Header.Type), Type: fmt.Sprintf("0x%08x", r.Header.Type), In: where}
		if in, ok := nv.InstanceOf(r.Header.Type); ok {
			switch where {
			case "a":
				e.Changes = paramDelta(in, r.Data, nil)
			case "b":
				e.Changes = paramDelta(in, nil, r.Data)
			default:
				e.Changes = paramDelta(in, other, r.Data)
			}
		}
		entries = append(entries, e)
	}
	for _, r := range d.OnlyA {
		add(r, "a", nil)
	}
	for _, r := range d.OnlyB {
		add(r, "b", nil)
	}
	for _, c := range d.Changed {
		add(c[1], "both", c[0].Data)
		if len(entries[len(entries)-1].Changes) == 0 {
			entries[len(entries)-1].Changes = []string{fmt.Sprintf("version %d -> %d, or bytes outside the named parameters differ", c[0].Header.Version, c[1].Header.Version)}
		}
	}
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].Type < entries[j].Type })
	if a.json() {
		if entries == nil {
			entries = []entryJ{}
		}
		if err := a.writeJSON(map[string]any{"a": args[0], "b": args[1], "same": d.Same, "differences": entries}); err != nil {
			return err
		}
	} else {
		for _, e := range entries {
			switch e.In {
			case "a":
				fmt.Fprintf(a.stdout, "only in %s: %s\n", args[0], e.TLV)
			case "b":
				fmt.Fprintf(a.stdout, "only in %s: %s\n", args[1], e.TLV)
			default:
				fmt.Fprintf(a.stdout, "differs: %s\n", e.TLV)
			}
			for _, c := range e.Changes {
				fmt.Fprintf(a.stdout, "    %s\n", c)
			}
		}
		if d.Empty() {
			fmt.Fprintf(a.stdout, "Same NV configuration (%d TLV(s)).\n", d.Same)
		} else {
			fmt.Fprintf(a.stdout, "%d TLV(s) differ, %d the same.\n", len(entries), d.Same)
		}
	}
	if !d.Empty() {
		return errProblem
	}
	return nil
}

// ---- show-params

func (cc *configCtx) showParamsCmd() *cobra.Command {
	var filter string
	var internal bool
	c := &cobra.Command{
		Use:   "show-params [--filter RE]",
		Short: "List the parameters the database knows: names, TLV, type, values, limits, meaning",
		Long: `List every user-visible parameter of the NV database (no device needed): its
name (NAME_P<n> for per-port ones), the TLV it lives in, its type, the values
it takes and its limits (the expressions refer to the device's capability
TLVs), and its description when the database has one (mstflint's file does,
the built-in set does not). --filter searches names, TLVs and descriptions.`,
		Args: cobra.NoArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			re, err := compileFilter(filter)
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

type paramJSON struct {
	Name        string            `json:"name"`
	Field       string            `json:"field"`
	TLV         string            `json:"tlv"`
	Class       string            `json:"class"`
	TypeDword   string            `json:"type_dword"`
	Type        string            `json:"type"`
	Offset      string            `json:"offset"`
	Size        string            `json:"size"`
	Values      map[string]uint64 `json:"values,omitempty"`
	Allowed     string            `json:"allowed"`
	Min         string            `json:"min,omitempty"`
	Max         string            `json:"max,omitempty"`
	Dependency  string            `json:"dependency,omitempty"`
	Rule        string            `json:"rule,omitempty"`
	ValidBit    string            `json:"valid_bit,omitempty"`
	FromVersion int               `json:"from_tlv_version,omitempty"`
	ArrayLength int               `json:"array_length,omitempty"`
	Capability  bool              `json:"capability,omitempty"`
	Description string            `json:"description,omitempty"`
}

// descrText turns the database's "\;" line separators into line breaks.
func descrText(s string) string {
	lines := strings.Split(strings.TrimSpace(s), `\;`)
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

func displayPattern(p *nvconf.Param) string {
	n := p.DisplayName()
	switch p.TLV.Class {
	case nvconf.ClassPort:
		n += "_P<n>"
	case nvconf.ClassModule:
		n += "_M<n>"
	}
	if p.IsArray() {
		n += fmt.Sprintf("[0..%d]", p.ArrayLen-1)
	}
	return n
}

func (cc *configCtx) printParams(nv *nvconf.DB, re *regexp.Regexp, internal bool) error {
	a := cc.a
	var list []paramJSON
	for _, t := range nv.TLVs {
		for _, p := range t.Params {
			if p.MlxName == "" && !internal {
				continue
			}
			name := displayPattern(p)
			if re != nil && !re.MatchString(name) && !re.MatchString(t.Name) && !re.MatchString(p.Descr) && !re.MatchString(t.Title) {
				continue
			}
			typ := nvconf.Instance{TLV: t, Port: 1}.Type()
			j := paramJSON{Name: name, Field: p.FullName(), TLV: t.Name, Class: t.Class.String(), TypeDword: fmt.Sprintf("0x%08x", typ),
				Type: p.Type.String(), Offset: p.OffsetText, Size: p.SizeText, Allowed: p.Allowed(), Min: p.MinVal, Max: p.MaxVal,
				Rule: p.Rule, ValidBit: p.ValidBit, FromVersion: p.FromVersion, ArrayLength: p.ArrayLen, Capability: t.Cap, Description: descrText(p.Descr)}
			if d := strings.TrimSpace(p.Dependency); d != "" && !strings.EqualFold(d, "ignore_dependency") {
				j.Dependency = d
			}
			if len(p.Enum) > 0 {
				j.Values = map[string]uint64{}
				for _, e := range p.Enum {
					j.Values[e.Name] = e.Value
				}
			}
			list = append(list, j)
		}
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	if a.json() {
		if list == nil {
			list = []paramJSON{}
		}
		return a.writeJSON(map[string]any{"nvdb": nv.Source, "descriptions": nv.HasDescriptions, "parameters": list})
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
			d = append(d, descrText(j.Description))
		}
		if j.Dependency != "" {
			d = append(d, "available when: "+j.Dependency)
		}
		if j.FromVersion > 0 {
			d = append(d, fmt.Sprintf("needs TLV version %d", j.FromVersion))
		}
		details = append(details, strings.Join(d, "\n"))
	}
	writeRows(a.stdout, rows, details)
	note := ""
	if !nv.HasDescriptions {
		note = " (no descriptions in the built-in set; install mstflint or give --nvdb for them)"
	}
	fmt.Fprintf(a.stdout, "%d parameter(s) from %s%s\n", len(list), nv.Source, note)
	return nil
}
