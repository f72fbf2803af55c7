package linkcmd

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/feature/link"
	"github.com/cxray/cxray/feature/linkctl"
	"github.com/cxray/cxray/feature/linkflap"
)

// linkOptions are the flags of `cxray link`.
type linkOptions struct {
	df        cmdutil.DeviceFlags
	port      int
	all       bool
	counters  bool
	interval  time.Duration
	clear     bool
	yes       bool
	pcie      bool
	change    changeOptions
	cableOpts cableOptions
	hist      histOptions
	eye       eyeOptions
	prbs      prbsOptions
}

func (a *app) linkCmd() *cobra.Command { return a.newLinkCmd(nil) }

// newLinkCmd wires the flags to linkOptions; runF (tests) replaces runVerb.
func (a *app) newLinkCmd(runF func(*linkOptions, []string) error) *cobra.Command {
	var o linkOptions
	c := &cobra.Command{
		Use:   "link",
		Short: "Link diagnostics: state, speed, FEC, bit error ratios per lane, the firmware's troubleshooting verdict",
		Long: `Read a port's link the way mlxlink does, from the same registers: the PHY
manager's state and the auto-negotiation state, speed and width, enabled and
cable speeds, auto-negotiation and loopback (PAOS, PTYS, PDDR page 0); the FEC
active and, per speed, supported and configured (PDDR, PPLM); errors since the
last clear: raw (corrected by FEC) and effective (not correctable) errors, per
lane, FEC blocks and symbols, and the raw, effective and symbol bit error
ratios, from the firmware's own ratio fields where PPCNT has them, else from the
counters (PPCNT physical-layer groups 0x12 and 0x16); the firmware's
troubleshooting status opcode and message (PDDR page 1); and each lane's eye
(SLRG). A ratio with no time since the last clear is "n/a", not a number.

Every reading is judged: a verdict names its category (link partner, cable or
module, configuration such as a FEC or speed mismatch, signal quality), the
evidence and what to do next; the command then exits 1.

--interval reads the counters twice and adds rates over the interval.
--counters (mlxlink's --show_counters) adds the FEC detail per speed and
per lane, and the link-flap evidence: the last link-down event from PDDR's
link-down page (who is blamed, the local, remote and end-to-end reasons),
the link-down count since the clear and its rate per hour; a link that went
down for a reason other than a command is a verdict. --clear resets the
physical-layer counters first (a guarded register write: PPCNT clr, asked for
unless --yes).

With -d kernel:NAME only what sysfs and ethtool give is shown (state, speed,
port counters); the rest is listed as not available. Exit 3 means the device
could not be read.

--pcie shows the function's link to the host instead, as 'mlxlink --port_type
PCIE' does, from three sources: config space (the PCI Express capability's
Link Capabilities, Link Status, Link Control 2 and Device Status, and AER),
sysfs (current and max link speed and width of the function and of the slot's
port, the kernel's AER counters) and the MPEIN and MPCNT registers. It judges
the link: narrower or slower than the card can train, and whether the slot or
the card is the limit; too slow for the port (400G needs Gen5 x16); fatal and
non-fatal errors; correctable errors as a rate over --interval (1s unless
given). docs/pcie.md explains each verdict.

Changes, under mlxlink's flag names, one port at a time (--port):
--port_state UP, DN or TG (down, 2 s, up) writes PAOS; --speeds (with
--link_mode_force: one speed, auto-negotiation off) writes PTYS, after
checking the speeds against the port's and the cable's capabilities; --fec
(at --fec_speed, else the link's speed) writes PPLM, after checking that the
port supports that FEC at that speed (Ethernet ports); --loopback NO, RM,
PH, EX or LL writes PPLR. --cable --dump prints every page of the port's
module in hex; --cable --read --page P [--bank B] --offset O --length N reads
those bytes (MCIA), in hex and ASCII; --cable --write B1,B2 --page P
--offset O writes bytes the module's standard defines as host-writable
(SFF-8636 Tx disable, power control, masks; CMIS module controls) and
refuses any other byte (exit 2, nothing written). --rx_fec_histogram
--show_histogram (or --fec_histogram) shows the RS-FEC histogram: codewords
per number of symbol errors (PPHCR, PPCNT group 0x23); --clear_histogram
clears it (asks unless --yes). --show_eye (-e) shows each lane's eye
(SLRG) and names a lane well below the others; --margin runs mlxlink's
margin scan (SLRED) for --measure_time per lane and eye (--eye_select,
--lane or --lanes), asking unless --yes. --test_mode EN starts a PRBS
test (PPTT generator, PPRT checker; --tx_prbs, --rx_prbs, --tx_rate,
--rx_rate, --invert_tx_polarity, --invert_rx_polarity), a change like
the others; --test_mode MEAS counts each lane's errors for --duration and
names a lane that does not lock or whose BER is over 1e-6; --test_mode DS
stops it. Each change shows its
register writes (each field before and after) and side effects first;
--dry-run stops there. It asks unless --yes, writes through the guarded
writer and reads back, then reads the link until it reaches the new state
(--wait). The previous values are saved first: --undo writes them back.
Nothing is changed on an adapter whose port carries an interface the host
is managed through (a default route, the SSH session's) unless --force.
docs/link.md, "Changing a link", has the details.`,
		Example: `  cxray link -d emu
  cxray link --pcie -d emu:examples/pcie-degraded.yaml
  cxray link -d 0000:03:00.0 --all --counters -o json
  cxray link -d mlx5_0 --interval 10s
  cxray link -d emu --clear --yes
  cxray link -d 0000:5e:00.0 --port_state TG --dry-run
  cxray link -d 0000:5e:00.0 --port_state DN --yes
  cxray link -d 0000:5e:00.0 --undo --yes
  cxray link -d 0000:5e:00.0 --test_mode EN --tx_prbs PRBS31 --yes
  cxray link -d 0000:5e:00.0 --test_mode EN --tx_prbs PRBS13 --tx_rate HDR --yes
  cxray link -d 0000:5e:00.0 --test_mode MEAS --duration 30s
  cxray link -d 0000:5e:00.0 --show_eye
  cxray link -d 0000:5e:00.0 --margin --lane 2 --measure_time 10 --yes`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(&o, args)
			}
			return a.runVerb(a.Ctx, cmd, &o)
		},
	}
	o.df.Add(c)
	c.Flags().IntVar(&o.port, "port", 1, "local port to read (1 is the function's own port)")
	c.Flags().BoolVar(&o.all, "all", false, "read every port this function reaches")
	c.Flags().BoolVar(&o.counters, "counters", false, "add FEC per speed, per-lane counter detail and the last link-down event (PDDR link-down page)")
	c.Flags().BoolVar(&o.counters, "show_counters", false, "mlxlink's name for --counters")
	c.Flags().DurationVar(&o.interval, "interval", 0, "read the counters twice, this far apart, and show rates")
	c.Flags().BoolVar(&o.clear, "clear", false, "reset the physical-layer counters (PPCNT clr) before reading")
	c.Flags().BoolVar(&o.yes, "yes", false, "with --clear or a change: do not ask for confirmation")
	c.Flags().BoolVar(&o.pcie, "pcie", false, "the function's PCIe link to the host instead of its port (mlxlink --port_type PCIE)")
	addCableFlags(c, &o.cableOpts)
	addHistFlags(c, &o.hist)
	cf := &o.change
	c.Flags().StringVar(&cf.portState, "port_state", "", "UP, DN (down) or TG (toggle): set the port's administrative state (PAOS)")
	c.Flags().StringVar(&cf.speeds, "speeds", "", "comma-separated speeds to enable (PTYS): 400G_4X,200G_2X,... on Ethernet, NDR,HDR,... on InfiniBand")
	c.Flags().BoolVar(&cf.forceMode, "link_mode_force", false, "with --speeds: run that one speed with auto-negotiation off")
	c.Flags().StringVar(&cf.fec, "fec", "", "FEC to run (PPLM): AU (auto), NF (none), FC (Firecode), RS, LL, ... at --fec_speed or the link's speed")
	c.Flags().StringVar(&cf.fecSpeed, "fec_speed", "", "with --fec: the speed it is for (25g, 50g, 100g, 100g_2x, 200g_4x, 400g_4x, ...)")
	c.Flags().StringVar(&cf.loopback, "loopback", "", "loopback (PPLR): NO, RM (PHY remote), PH (PHY local), EX (external), LL (link layer)")
	c.Flags().BoolVar(&cf.undo, "undo", false, "restore what the last change of this port (by cxray link) changed")
	c.Flags().BoolVar(&cf.dryRun, "dry-run", false, "with a change or --clear: show the register writes (and side effects); write nothing")
	c.Flags().BoolVar(&cf.force, "force", false, "change a port even when the adapter carries an interface this host is managed through")
	c.Flags().DurationVar(&cf.wait, "wait", 10*time.Second, "with a change: how long to wait for the link to reach its new state")
	addPRBSFlags(c, &o.prbs)
	addEyeFlags(c, &o.eye) // last: it registers --lanes only if no other mode did
	return c
}

func changed(cmd *cobra.Command, names ...string) bool {
	for _, n := range names {
		if f := cmd.Flags().Lookup(n); f != nil && f.Changed {
			return true
		}
	}
	return false
}

// checkChangeFlags refuses combinations of a change with flags that read,
// and more than one change at once.
func checkChangeFlags(cmd *cobra.Command, o *linkOptions) error {
	for _, f := range []string{"all", "counters", "interval", "clear", "pcie"} {
		if changed(cmd, f) {
			return cmdutil.UsageErr("--%s reads; a change (--port_state, --undo, ...) is made to one port: run them apart", f)
		}
	}
	var which []string
	for _, f := range []string{"port_state", "speeds", "fec", "loopback", "undo", "test_mode"} {
		if changed(cmd, f) {
			which = append(which, "--"+f)
		}
	}
	switch {
	case changed(cmd, "link_mode_force") && !changed(cmd, "speeds"):
		return cmdutil.UsageErr("--link_mode_force goes with --speeds (the one speed to force)")
	case changed(cmd, "fec_speed") && !changed(cmd, "fec"):
		return cmdutil.UsageErr("--fec_speed goes with --fec (the FEC to run at that speed)")
	case changed(cmd, "tx_prbs", "rx_prbs", "tx_rate", "rx_rate", "invert_tx_polarity", "invert_rx_polarity") && !changed(cmd, "test_mode"):
		return cmdutil.UsageErr("--tx_prbs, --rx_prbs, --tx_rate, --rx_rate and the polarity flags go with --test_mode EN")
	case changed(cmd, "lanes"):
		return cmdutil.UsageErr("--lanes goes with --test_mode MEAS: cxray starts and stops PRBS on all the port's lanes at once")
	case len(which) == 0:
		return cmdutil.UsageErr("--dry-run, --force and --wait go with a change: give --port_state, --speeds, --fec, --loopback or --undo")
	case len(which) > 1:
		return cmdutil.UsageErr("%s: make one change at a time", strings.Join(which, " and "))
	case o.change.wait <= 0 || o.change.wait > 10*time.Minute:
		return cmdutil.UsageErr("--wait %v: give a duration between 1ms and 10m", o.change.wait)
	}
	return nil
}

func (a *app) runLink(o *linkOptions) error {
	db, err := a.DB()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(a.Ctx, o.df.Timeout+o.interval)
	defer cancel()
	ad, err := a.Open(ctx, o.df.Name, db)
	if err != nil {
		return err
	}
	defer ad.Close()
	lo := link.Options{Interval: o.interval}
	if !o.all {
		lo.Ports = []int{o.port}
	}
	cleared := []string{}
	if o.clear && o.change.dryRun {
		return a.clearDryRun(ctx, ad, lo.Ports)
	}
	if o.clear {
		if cleared, err = a.clearLinkCounters(ctx, ad, lo.Ports, o.yes); err != nil {
			return err
		}
	}
	reports, err := link.Read(ctx, ad, lo)
	if err != nil {
		return cmdutil.Classify(err)
	}
	var downs []*linkflap.Evidence
	if o.counters {
		if downs, err = readLinkDowns(ctx, ad, reports); err != nil {
			return cmdutil.Classify(err)
		}
	}
	n := link.Problems(reports)
	if a.JSON() {
		out := Document{Device: o.df.Name, Backend: string(ad.Backend()), SourceRevision: db.Revision,
			Thresholds: link.DefaultThresholds, Cleared: cleared, Links: reports, Verdicts: n}
		if o.counters {
			out.LinkDown = downs
		}
		if err := a.WriteJSON(out); err != nil {
			return err
		}
	} else {
		for _, c := range cleared {
			fmt.Fprintf(a.Stdout, "cleared %s\n", c)
		}
		for i, r := range reports {
			if i > 0 {
				fmt.Fprintln(a.Stdout)
			}
			link.WriteText(a.Stdout, r, o.counters)
			if o.counters {
				linkflap.WriteText(a.Stdout, downs[i])
			}
		}
	}
	if n > 0 {
		return cmdutil.ErrProblem
	}
	return nil
}

// clearLinkCounters resets the physical-layer PPCNT groups of the ports
// through dev's guarded write (read, plan, write, read back), after asking.
func (a *app) clearLinkCounters(ctx context.Context, ad *adapter.Adapter, ports []int, yes bool) ([]string, error) {
	if _, err := cmdutil.Registers(ctx, ad); err != nil {
		return nil, err
	}
	if len(ports) == 0 {
		ps, err := ad.Ports(ctx)
		if err != nil {
			return nil, cmdutil.Classify(err)
		}
		for _, p := range ps {
			ports = append(ports, p.Local)
		}
	} else if _, err := ad.Port(ctx, ports[0]); err != nil {
		return nil, cmdutil.Classify(err)
	}
	if err := a.Ask(yes, fmt.Sprintf("Clear the physical-layer counters (PPCNT groups %v) of port %v on %s?", link.ClearGroups, ports, ad.Name()), "nothing cleared"); err != nil {
		return nil, err
	}
	done, err := linkctl.ClearCounters(ctx, ad, linkctl.Clears(ports, link.ClearGroups))
	return done, cmdutil.Classify(err)
}

// clearDryRun says what --clear would write, and writes nothing.
func (a *app) clearDryRun(ctx context.Context, ad *adapter.Adapter, ports []int) error {
	if len(ports) == 0 {
		ps, err := ad.Ports(ctx)
		if err != nil {
			return cmdutil.Classify(err)
		}
		for _, p := range ps {
			ports = append(ports, p.Local)
		}
	} else if _, err := ad.Port(ctx, ports[0]); err != nil {
		return cmdutil.Classify(err)
	}
	var writes []string
	for _, c := range linkctl.Clears(ports, link.ClearGroups) {
		writes = append(writes, c.Write())
	}
	if a.JSON() {
		return a.WriteJSON(dryRunDoc{Device: ad.Name(), DryRun: true, WouldWrite: writes})
	}
	for _, w := range writes {
		fmt.Fprintf(a.Stdout, "would write %s\n", w)
	}
	fmt.Fprintln(a.Stdout, "dry run: nothing written (the counters of these groups would restart from 0)")
	return nil
}

// runVerb checks the flags against each other and hands the options to the
// run function of the mode they choose (histogram, cable, change, PCIe or
// the port reading), so the cobra closure stays wiring.
func (a *app) runVerb(ctx context.Context, cmd *cobra.Command, o *linkOptions) error {
	if o.all && cmd.Flags().Changed("port") {
		return cmdutil.UsageErr("--port and --all exclude each other; give one")
	}
	if o.port < 1 || o.port > 255 {
		return cmdutil.UsageErr("--port %d: ports are numbered from 1 (local port of the function)", o.port)
	}
	if o.interval < 0 || o.interval > 10*time.Minute {
		return cmdutil.UsageErr("--interval %v: give a duration between 1ms and 10m (or leave it out)", o.interval)
	}
	if o.df.Name == "" {
		return cmdutil.UsageErr("add -d DEV ('cxray status' lists them; -d emu tries the emulator)")
	}
	if changed(cmd, eyeFlags...) {
		if err := checkEyeFlags(cmd, &o.eye); err != nil {
			return err
		}
		return a.runEye(o)
	}
	if changed(cmd, "lanes") && !changed(cmd, "test_mode") {
		return cmdutil.UsageErr("--lanes goes with --show_eye, --margin or --test_mode")
	}
	if changed(cmd, histFlags...) {
		if err := checkHistFlags(cmd, &o.hist); err != nil {
			return err
		}
		return a.runHist(o)
	}
	if changed(cmd, "cable", "dump", "read", "write", "page", "bank", "offset", "length") {
		if err := checkCableFlags(cmd, &o.cableOpts); err != nil {
			return err
		}
		return a.runCable(o)
	}
	if changed(cmd, "test_mode") && prbsMeasure(&o.prbs) {
		if err := checkPRBSMeasureFlags(cmd, o); err != nil {
			return err
		}
		return a.runPRBSMeasure(o)
	}
	if changed(cmd, "duration") {
		return cmdutil.UsageErr("--duration goes with --test_mode MEAS")
	}
	if changed(cmd, changeFlags...) || changed(cmd, "force", "wait") || (changed(cmd, "dry-run") && !o.clear) {
		if err := checkChangeFlags(cmd, o); err != nil {
			return err
		}
		return a.runChange(o)
	}
	if o.pcie {
		for _, f := range []string{"port", "all", "counters", "clear"} {
			if cmd.Flags().Changed(f) {
				return cmdutil.UsageErr("--%s is about the network port; --pcie reads the link to the host (leave one out)", f)
			}
		}
		return a.runPCIe(o, cmd.Flags().Changed("interval"))
	}
	return a.runLink(o)
}
