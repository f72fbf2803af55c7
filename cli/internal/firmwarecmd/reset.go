package firmwarecmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/dev/fwreset"
	"github.com/cxray/cxray/feature/firmware"
	"github.com/cxray/cxray/prm"
)

type resetOptions struct {
	df          cmdutil.DeviceFlags
	level, typ  string
	sync        string
	yes, dryRun bool
	query       bool
}

func (a *app) resetCmd() *cobra.Command { return a.newResetCmd(nil) }

// newResetCmd wires the flags to resetOptions; runF (tests) replaces runReset.
func (a *app) newResetCmd(runF func(*resetOptions, []string) error) *cobra.Command {
	var o resetOptions
	c := &cobra.Command{
		Use:   "reset -d DEV",
		Short: "Show the firmware reset levels the adapter offers (MROQ/MFRL) and request one",
		Long: `Ask the adapter which firmware resets it offers: MFRL lists the levels and
reset types; MROQ (register databases Rev 0.61 and later) lists, per type, the
levels, the sync flows and the PCI reset methods. Then request one (MFRL) so
a stored firmware image runs, as mstfwreset does:

  --level 3 (pcie_link_toggle)  reset when the PCIe link toggles (default when
                                offered): the driver must let go of the adapter
  --level 4 (perst_reboot)      arm it for the host's next reboot
  --level 0 (live_patch)        patch in place; nothing resets
  --level 1 (immediate)         newer firmware's immediate reset

--query only lists; --dry-run says what the reset would do to the driver, the
links and the host, and sends nothing. 'cxray config apply' sends its resets
through the same code.

--via devlink asks the mlx5 driver instead ('devlink dev reload action
fw_activate'): it unloads, has the firmware reset at link toggle in the
driver-synced flow, and comes back; auto (the default) takes it where the
driver is bound and the level is pcie_link_toggle, mcc sends MFRL itself.`,
		Args: cobra.NoArgs,
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(&o, args)
			}
			return a.runReset(a.Ctx, &o)
		},
	}
	o.df.Add(c)
	c.Flags().StringVarP(&o.level, "level", "l", "", "reset level: 0 live_patch, 1 immediate, 3 pcie_link_toggle, 4 perst_reboot (default: 3 when offered, else 4)")
	c.Flags().StringVarP(&o.typ, "type", "t", "full_chip", "reset type: full_chip, phy_less (links stay up), nic_only, arm_only, arm_os_shutdown, network_reset")
	c.Flags().StringVar(&o.sync, "sync", "legacy", "sync flow: legacy (this tool sends the reset) or driver (the driver acknowledges, Rev 0.64)")
	c.Flags().BoolVarP(&o.yes, "yes", "y", false, "do not ask for confirmation")
	c.Flags().BoolVar(&o.dryRun, "dry-run", false, "say which reset would be sent and what it does; send nothing")
	c.Flags().BoolVar(&o.query, "query", false, "only list the resets the adapter offers")
	cmdutil.ExtendVia(c, "reset path: devlink (the driver's 'devlink dev reload action fw_activate'), mcc (MFRL), auto (devlink where the mlx5 driver is bound, else the registers), or the register path: vsec, fwctl")
	return c
}

type resetReport struct {
	Device string       `json:"device"`
	Levels []string     `json:"levels"`
	Types  []string     `json:"types"`
	ByType []typeReport `json:"by_type,omitempty"`
	NoMROQ string       `json:"mroq_unavailable,omitempty"`
	// NoMROQCategory is "database" when the register database lacks MROQ
	// (a finding about the database, not the adapter), "firmware" when the
	// adapter does not offer it.
	NoMROQCategory string `json:"mroq_unavailable_category,omitempty"`
	// Request is what was (or, in a dry run, would be) sent.
	Request *requestReport `json:"request,omitempty"`
	DryRun  bool           `json:"dry_run"`
	// Via is the path the reset takes: mcc (MFRL) or devlink (the
	// driver's reload fw_activate).
	Via string `json:"via,omitempty"`
	// RunningBefore and RunningAfter are the running firmware versions
	// around the reset.
	RunningBefore string `json:"running_before,omitempty"`
	RunningAfter  string `json:"running_after,omitempty"`
}

type typeReport struct {
	Type    string   `json:"type"`
	Levels  []string `json:"levels"`
	Sync    []string `json:"sync"`
	Methods []string `json:"pci_reset_methods"`
}

type requestReport struct {
	Level  string `json:"level"`
	Type   string `json:"type"`
	Sync   string `json:"sync"`
	Effect string `json:"effect"`
}

func typeNames(mask uint8) []string {
	out := []string{}
	for _, t := range fwreset.Types {
		if mask&(1<<t.Bit) != 0 {
			out = append(out, t.Name)
		}
	}
	return out
}

func parseType(s string) (uint8, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	for _, t := range fwreset.Types {
		if s == t.Name || s == fmt.Sprint(t.Bit) {
			return t.Bit, nil
		}
	}
	var names []string
	for _, t := range fwreset.Types {
		names = append(names, t.Name)
	}
	return 0, fmt.Errorf("reset type %q: use %s", s, strings.Join(names, ", "))
}

func effectLinks(typ uint8) string {
	if typ == 1 {
		return "the network links stay up (phy-less reset)"
	}
	return "the network links go down while the firmware restarts (seconds)"
}

// effect says what a reset does to the driver, the links and the host.
func effect(level, typ uint8) string {
	links := effectLinks(typ)
	switch level {
	case fwreset.LevelLivePatch:
		return "the firmware is patched in place: the driver, the links and the host are not disturbed; only a live-patchable change takes effect"
	case fwreset.LevelImmediate:
		return "the firmware resets now: the driver loses the adapter until it recovers; " + links + "; the host keeps running"
	case fwreset.LevelLinkToggle:
		return "the firmware resets at the next PCIe link toggle: the mlx5 driver must be unbound or reloaded around it (devlink dev reload action fw_activate does this); " + links + "; the host keeps running; the stored image and Next Boot settings take effect"
	case fwreset.LevelPERST:
		return "nothing happens now; the firmware resets at the host's next reboot (PERST), and the stored image and Next Boot settings take effect then"
	}
	return ""
}

func (a *app) runReset(ctx context.Context, o *resetOptions) error {
	if o.df.Name == "" {
		return cmdutil.UsageErr("add -d DEV: the adapter to reset ('cxray status' lists them)")
	}
	typ, err := parseType(o.typ)
	if err != nil {
		return cmdutil.UsageWrap(err)
	}
	var sync uint8
	switch strings.ToLower(o.sync) {
	case "legacy":
	case "driver":
		sync = 1
	default:
		return cmdutil.UsageErr("--sync %q: use legacy or driver", o.sync)
	}
	var level uint8
	if o.level != "" {
		if level, err = fwreset.ParseLevel(o.level); err != nil {
			return cmdutil.UsageWrap(err)
		}
	}
	path, err := fwPath(o.df.Via)
	if err != nil {
		return err
	}
	if path == firmware.ViaDevlink && ((level != 0 && level != fwreset.LevelLinkToggle) || typ != 0 || sync != 0) {
		return cmdutil.UsageErr("--via devlink is the driver's fw_activate: a full-chip pcie_link_toggle reset in the driver's flow; leave out --level, --type and --sync, or use --via mcc")
	}
	ctx, cancel := o.df.Context(ctx)
	defer cancel()
	db, err := a.DB()
	if err != nil {
		return err
	}
	if path != firmware.ViaMCC && !o.query {
		done, err := a.resetDevlink(ctx, o, db, path, level, typ, sync)
		if done || err != nil {
			return err
		}
	}
	ad, d, err := a.OpenRegisters(ctx, o.df.Name, db)
	if err != nil {
		return err
	}
	defer ad.Close()
	caps, err := fwreset.Query(ctx, d)
	if err != nil {
		if ctx.Err() != nil {
			return cmdutil.Stopped(ctx, err)
		}
		return cmdutil.Classify(err)
	}
	rep := &resetReport{Via: firmware.ViaMCC, Device: ad.Name(), Levels: firmware.LevelNames(caps.Levels), Types: typeNames(caps.Types), NoMROQ: caps.NoMROQ, NoMROQCategory: caps.NoMROQCategory, DryRun: o.dryRun}
	for _, t := range caps.ByType {
		tr := typeReport{Type: fwreset.TypeName(t.Type), Levels: firmware.LevelNames(t.Levels), Sync: []string{}, Methods: []string{}}
		for _, bit := range []uint8{fwreset.SyncLegacy, fwreset.SyncDriver, fwreset.SyncTool} {
			if t.Sync&bit != 0 {
				tr.Sync = append(tr.Sync, fwreset.SyncNames[bit])
			}
		}
		if t.Methods&1 != 0 {
			tr.Methods = append(tr.Methods, "link_disable")
		}
		if t.Methods&2 != 0 {
			tr.Methods = append(tr.Methods, "hot_reset")
		}
		rep.ByType = append(rep.ByType, tr)
	}
	if !o.query {
		if level == 0 {
			for _, l := range []uint8{fwreset.LevelLinkToggle, fwreset.LevelPERST} {
				if caps.Supports(l, typ) {
					level = l
					break
				}
			}
			if level == 0 {
				return cmdutil.DeviceErr(&fwreset.UnsupportedError{Level: fwreset.LevelLinkToggle, Levels: caps.LevelsFor(typ), Type: typ})
			}
		}
		if !caps.Supports(level, typ) {
			return cmdutil.DeviceErr(&fwreset.UnsupportedError{Level: level, Levels: caps.LevelsFor(typ), Type: typ})
		}
		if sync == 1 && caps.ByType != nil && caps.SyncFor(typ)&fwreset.SyncDriver == 0 {
			return cmdutil.DeviceErr(fmt.Errorf("the adapter does not offer the driver-synced flow for a %s reset (MROQ); use --sync legacy", fwreset.TypeName(typ)))
		}
		syncName := "legacy"
		if sync == 1 {
			syncName = "driver"
		}
		rep.Request = &requestReport{Level: fwreset.LevelName(level), Type: fwreset.TypeName(typ), Sync: syncName, Effect: effect(level, typ)}
	}
	if id, err := d.Identity(ctx); err == nil {
		rep.RunningBefore = id.Firmware
	}
	if o.query || o.dryRun {
		return a.printReset(rep, o)
	}
	if !a.JSON() {
		a.printCaps(rep)
		fmt.Fprintf(a.Stdout, "Reset:    %s, type %s, %s flow\nEffect:   %s\n", rep.Request.Level, rep.Request.Type, rep.Request.Sync, rep.Request.Effect)
	}
	if err := a.Ask(o.yes, fmt.Sprintf("Send a %s firmware reset to %s?", rep.Request.Level, ad.Name()), "no reset sent"); err != nil {
		return err
	}
	if err := fwreset.Send(ctx, d, fwreset.Request{Level: level, Type: typ, Sync: sync}); err != nil {
		if ctx.Err() != nil {
			return cmdutil.Stopped(ctx, err)
		}
		return cmdutil.Classify(err)
	}
	if id, err := d.Identity(ctx); err == nil {
		rep.RunningAfter = id.Firmware
	}
	if a.JSON() {
		return a.WriteJSON(rep)
	}
	switch {
	case level == fwreset.LevelPERST:
		fmt.Fprintln(a.Stdout, "Armed: the firmware resets at the next reboot.")
	case rep.RunningAfter != "" && rep.RunningAfter != rep.RunningBefore:
		fmt.Fprintf(a.Stdout, "Reset done: running %s (was %s).\n", rep.RunningAfter, rep.RunningBefore)
	case rep.RunningAfter != "":
		fmt.Fprintf(a.Stdout, "Reset requested; running %s. A link-toggle reset happens when the PCIe link toggles (driver reload or hot reset).\n", rep.RunningAfter)
	default:
		fmt.Fprintln(a.Stdout, "Reset requested.")
	}
	return nil
}

func (a *app) printCaps(rep *resetReport) {
	fmt.Fprintf(a.Stdout, "Device:   %s (running %s)\n", rep.Device, cmdutil.Dash(rep.RunningBefore))
	fmt.Fprintf(a.Stdout, "Levels:   %s (MFRL)\n", cmdutil.Dash(strings.Join(rep.Levels, ", ")))
	fmt.Fprintf(a.Stdout, "Types:    %s\n", cmdutil.Dash(strings.Join(rep.Types, ", ")))
	if len(rep.ByType) > 0 {
		t := a.NewTable("TYPE", "LEVELS", "SYNC", "PCI RESET")
		for _, x := range rep.ByType {
			t.Row(x.Type, cmdutil.Dash(strings.Join(x.Levels, ", ")), cmdutil.Dash(strings.Join(x.Sync, ", ")), cmdutil.Dash(strings.Join(x.Methods, ", ")))
		}
		t.Flush()
	} else if rep.NoMROQ != "" {
		fmt.Fprintf(a.Stdout, "Per type: unknown (%s finding): %s; the levels are MFRL's\n", rep.NoMROQCategory, rep.NoMROQ)
	}
}

func (a *app) printReset(rep *resetReport, o *resetOptions) error {
	if a.JSON() {
		return a.WriteJSON(rep)
	}
	a.printCaps(rep)
	if rep.Request != nil {
		fmt.Fprintf(a.Stdout, "Reset:    %s, type %s, %s flow\nEffect:   %s\n", rep.Request.Level, rep.Request.Type, rep.Request.Sync, rep.Request.Effect)
		fmt.Fprintln(a.Stdout, "Dry run: no reset sent.")
	}
	return nil
}

// resetDevlink takes the devlink path when --via says so, or when auto
// finds the mlx5 driver bound and the reset asked for is the one
// fw_activate does (a full-chip link-toggle reset, any flow). It reports
// whether it handled the command.
func (a *app) resetDevlink(ctx context.Context, o *resetOptions, db *prm.DB, path string, level, typ, sync uint8) (bool, error) {
	if path == firmware.ViaAuto && ((level != 0 && level != fwreset.LevelLinkToggle) || typ != 0 || sync != 0) {
		return false, nil
	}
	ad, err := a.Open(ctx, o.df.Name, db)
	if err != nil {
		return true, err
	}
	defer ad.Close()
	via, err := firmware.ChooseVia(ctx, ad, path)
	switch {
	case err != nil && ctx.Err() != nil:
		return true, cmdutil.Stopped(ctx, err)
	case err != nil:
		return true, cmdutil.DeviceErr(err)
	case via != firmware.ViaDevlink:
		return false, nil
	}
	kd := ad.Kernel()
	info, err := kd.DevlinkInfo(ctx)
	if err != nil {
		return true, cmdutil.Classify(err)
	}
	rep := &resetReport{Via: firmware.ViaDevlink, Device: ad.Name(), Levels: []string{}, Types: []string{}, DryRun: o.dryRun, RunningBefore: info.FirmwareRunning(),
		Request: &requestReport{Level: fwreset.LevelName(fwreset.LevelLinkToggle), Type: fwreset.TypeName(0), Sync: "driver",
			Effect: "the mlx5 driver unloads, the firmware resets at the PCIe link toggle it makes (devlink dev reload action fw_activate), and the driver comes back; " + effectLinks(0) + "; the host keeps running; the stored image and Next Boot settings take effect"}}
	if !a.JSON() {
		fmt.Fprintf(a.Stdout, "Device:   %s (running %s; stored %s)\nReset:    %s, type %s, %s flow, via devlink\nEffect:   %s\n", rep.Device, cmdutil.Dash(rep.RunningBefore), cmdutil.Dash(info.FirmwareStored()),
			rep.Request.Level, rep.Request.Type, rep.Request.Sync, rep.Request.Effect)
	}
	if o.dryRun {
		if a.JSON() {
			return true, a.WriteJSON(rep)
		}
		fmt.Fprintln(a.Stdout, "Dry run: no reset sent.")
		return true, nil
	}
	if err := a.Ask(o.yes, fmt.Sprintf("Reload the driver of %s and activate its stored firmware?", ad.Name()), "no reset sent"); err != nil {
		return true, err
	}
	if _, err := kd.ReloadFWActivate(ctx); err != nil {
		if ctx.Err() != nil {
			return true, cmdutil.Stopped(ctx, err)
		}
		return true, cmdutil.DeviceErr(fmt.Errorf("the driver refused fw_activate: %w", err))
	}
	if info, err := kd.DevlinkInfo(ctx); err == nil {
		rep.RunningAfter = info.FirmwareRunning()
	}
	if a.JSON() {
		return true, a.WriteJSON(rep)
	}
	fmt.Fprintf(a.Stdout, "Reset done: running %s (was %s).\n", cmdutil.Dash(rep.RunningAfter), cmdutil.Dash(rep.RunningBefore))
	return true, nil
}
