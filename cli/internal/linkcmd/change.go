package linkcmd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/feature/link"
	"github.com/cxray/cxray/feature/linkctl"
	"github.com/cxray/cxray/nvconf"
	"github.com/cxray/cxray/optics"
)

// changeOptions are the flags of the link's active side (mlxlink's names).
type changeOptions struct {
	portState string
	speeds    string
	forceMode bool
	fec       string
	fecSpeed  string
	loopback  string
	undo      bool
	dryRun    bool
	force     bool
	wait      time.Duration
}

// changeFlags are the flags that change a link; any of them makes the
// command a change of one port.
var changeFlags = []string{"port_state", "speeds", "link_mode_force", "fec", "fec_speed", "loopback", "undo", "test_mode", "tx_prbs", "rx_prbs", "tx_rate", "rx_rate", "invert_tx_polarity", "invert_rx_polarity"}

// routeFiles are where the management interfaces are found (tests point
// them at their own files).
var routeFiles = linkctl.RouteFiles

// managementInterfaces are the host's default-route interfaces and the
// one an SSH session reaches it through ($SSH_CONNECTION's server
// address).
func managementInterfaces() []string {
	out := linkctl.DefaultRouteInterfaces(routeFiles)
	f := strings.Fields(os.Getenv("SSH_CONNECTION"))
	if len(f) != 4 {
		return out
	}
	ip := net.ParseIP(f[2])
	ifs, _ := net.Interfaces()
	for _, i := range ifs {
		addrs, _ := i.Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && ip != nil && n.IP.Equal(ip) {
				out = append(out, i.Name)
			}
		}
	}
	return out
}

func undoStore() (linkctl.Store, error) {
	d, err := nvconf.StateDir()
	if err != nil {
		return linkctl.Store{}, err
	}
	return linkctl.Store{Dir: filepath.Join(d, "link")}, nil
}

func (a *app) runChange(o *linkOptions) error {
	co := &o.change
	db, err := a.DB()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(a.Ctx, o.df.Timeout+linkctl.ToggleSettle+co.wait)
	defer cancel()
	ad, err := a.Open(ctx, o.df.Name, db)
	if err != nil {
		return err
	}
	defer ad.Close()
	if !co.force {
		p, iface, err := linkctl.ManagementPort(ctx, ad, managementInterfaces())
		if err != nil {
			return cmdutil.Classify(err)
		}
		if iface != "" {
			return cmdutil.UsageErr("%s port %d carries %s, an interface this host is managed through (a default route or your SSH session): a change could cut you off; nothing was written; give --force if you have another way in", ad.Name(), p, iface)
		}
	}
	store, err := undoStore()
	if err != nil {
		return cmdutil.UsageWrap(err)
	}
	if co.dryRun {
		// A dry run writes nothing, not even the recovery.
		if c, err := store.Load(ad.Name(), o.port); err == nil && c.Pending {
			fmt.Fprintf(a.Stderr, "cxray: port %d: the change '%s' was interrupted between its writes; the next change of this port (without --dry-run) puts the configuration before it back first\n", o.port, c.What)
		}
	}
	var rec *linkctl.Change
	if !co.dryRun {
		if rec, err = linkctl.Recover(ctx, ad, store, o.port); err != nil {
			return cmdutil.Classify(err)
		}
	}
	if rec != nil {
		fmt.Fprintf(a.Stderr, "cxray: port %d: the change '%s' was interrupted between its writes (the command was killed); the configuration before it was put back\n", o.port, rec.What)
		if co.undo {
			return nil
		}
	}
	var c *linkctl.Change
	switch {
	case co.undo:
		saved, err := store.Load(ad.Name(), o.port)
		if errors.Is(err, linkctl.ErrNothingToUndo) {
			return cmdutil.UsageWrap(err)
		}
		if err != nil {
			return err
		}
		c, err = linkctl.Undo(ctx, ad, saved)
		if err != nil {
			return cmdutil.Classify(err)
		}
	case o.cableOpts.data != nil:
		cw := &o.cableOpts
		addr := optics.PageAddr{I2C: 0x50, Page: uint8(cw.page), Bank: uint8(cw.bank), Offset: uint8(cw.offset)}
		c, err = linkctl.PlanModuleWrite(ctx, ad, o.port, addr, cw.data)
	case co.portState != "":
		c, err = linkctl.PortState(ctx, ad, o.port, co.portState)
	case co.loopback != "":
		c, err = linkctl.Loopback(ctx, ad, o.port, co.loopback)
	case o.prbs.testMode != "":
		c, err = linkctl.TestMode(ctx, ad, o.port, o.prbs.testMode, linkctl.PRBSSettings{TxPRBS: o.prbs.tx, RxPRBS: o.prbs.rx, TxRate: o.prbs.txRate, RxRate: o.prbs.rxRate,
			InvertTx: o.prbs.invTx, InvertRx: o.prbs.invRx})
	case co.fec != "":
		c, err = linkctl.FEC(ctx, ad, o.port, co.fec, co.fecSpeed)
	case co.speeds != "":
		c, err = linkctl.Speeds(ctx, ad, o.port, strings.Split(co.speeds, ","), co.forceMode)
	}
	if err != nil {
		return cmdutil.Classify(err)
	}
	undoCmd := a.undoCommand(o, c)
	if c.Empty() {
		return a.writeChange(c, nil, undoCmd, "nothing to change: the port already has this configuration")
	}
	if co.dryRun {
		return a.writeChange(c, nil, undoCmd, "dry run: nothing written")
	}
	if !a.JSON() {
		a.writePlan(c, undoCmd)
	}
	if err := a.Ask(o.yes, fmt.Sprintf("Change port %d on %s (%s)?", c.Port, ad.Name(), c.What), "nothing written"); err != nil {
		return err
	}
	save := store.Save
	if co.undo {
		save = nil
	}
	res, err := linkctl.Apply(ctx, ad, c, linkctl.Options{Wait: co.wait}, save)
	if err != nil {
		if res != nil && len(res.Verified) > 0 {
			fmt.Fprintf(a.Stderr, "cxray: written and verified before the failure: %s\n", strings.Join(res.Verified, "; "))
		}
		if !co.undo {
			fmt.Fprintf(a.Stderr, "cxray: to restore the port: %s\n", undoCmd)
		}
		return cmdutil.Classify(err)
	}
	if co.undo {
		if err := store.Remove(ad.Name(), o.port); err != nil {
			return err
		}
	}
	if err := a.writeChange(c, res, undoCmd, ""); err != nil {
		return err
	}
	if res.Problem != "" {
		return cmdutil.ErrProblem
	}
	return nil
}

// undoCommand is the command that restores what c changes.
func (a *app) undoCommand(o *linkOptions, c *linkctl.Change) string {
	if o.change.undo {
		return ""
	}
	base := fmt.Sprintf("cxray link -d %s --port %d", o.df.Name, c.Port)
	if c.UndoFlags != "" {
		return base + " " + c.UndoFlags + " --yes   (or: " + base + " --undo --yes)"
	}
	return base + " --undo --yes"
}

func describe(op link.Operational) string {
	var parts []string
	if op.State != "" {
		parts = append(parts, op.State)
	}
	if op.Speed != "" {
		s := op.Speed
		if op.WidthLanes != nil {
			s += fmt.Sprintf(" over %d lanes", *op.WidthLanes)
		}
		parts = append(parts, s)
	}
	if op.AdminStatus != "" || op.OperStatus != "" {
		parts = append(parts, fmt.Sprintf("admin %s, oper %s", op.AdminStatus, op.OperStatus))
	}
	if op.IB != nil && op.IB.LogicalState != "" {
		parts = append(parts, "IB "+op.IB.LogicalState)
	}
	if len(parts) == 0 {
		return "n/a"
	}
	return strings.Join(parts, "; ")
}

func (a *app) writePlan(c *linkctl.Change, undoCmd string) {
	w := a.Stdout
	who := fmt.Sprintf("Port %d", c.Port)
	if c.Netdev != "" {
		who += " (" + c.Netdev + ")"
	}
	fmt.Fprintf(w, "%s on %s: %s\n", who, c.Device, c.What)
	fmt.Fprintf(w, "  Now           %s\n", describe(c.Before))
	fmt.Fprintf(w, "  Writes\n")
	for i, s := range c.Steps {
		fmt.Fprintf(w, "    %d. %s\n", i+1, s.Write)
		for _, d := range s.Changes {
			fmt.Fprintf(w, "         %-28s %s -> %s\n", d.Path, d.Before, d.After)
		}
		if s.Settle > 0 && i < len(c.Steps)-1 {
			fmt.Fprintf(w, "       then wait %v\n", s.Settle)
		}
	}
	for _, e := range c.Effects {
		fmt.Fprintf(w, "  Side effect   %s\n", e)
	}
	if undoCmd != "" {
		fmt.Fprintf(w, "  Undo          %s\n", undoCmd)
	}
}

func (a *app) writeChange(c *linkctl.Change, res *linkctl.Result, undoCmd, note string) error {
	if a.JSON() {
		doc := changeDoc{Change: c, Written: res != nil, UndoCommand: undoCmd, Note: note}
		if res != nil {
			doc.Verified, doc.After, doc.Problem = &res.Verified, &res.After, &res.Problem
		}
		return a.WriteJSON(doc)
	}
	w := a.Stdout
	if res == nil {
		a.writePlan(c, undoCmd)
		fmt.Fprintln(w, note)
		return nil
	}
	for _, v := range res.Verified {
		fmt.Fprintf(w, "  Written       %s (read back: verified)\n", v)
	}
	fmt.Fprintf(w, "  After         %s\n", describe(res.After))
	if res.Problem != "" {
		fmt.Fprintf(w, "  Problem       %s\n", res.Problem)
	}
	return nil
}
