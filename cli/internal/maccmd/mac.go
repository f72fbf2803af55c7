package maccmd

// cxray mac: the MAC drift check of status, on evidence people bring from
// hosts cxray does not run on (WinMFT on Windows, locked-down machines):
// the OS's interface listing, and the adapter's permanent MACs from a
// device, a flint/mstflint query output or the command line.

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/feature/explain"
	"github.com/cxray/cxray/feature/osmac"
)

// macDoc is `mac -o json`. Problem and Found are there only when no
// interface of the listing belongs to the adapter.
type macDoc struct {
	Found         *[]Row   `json:"found,omitempty"`
	Interfaces    []Row    `json:"interfaces"`
	Listing       string   `json:"listing"`
	MACDrift      bool     `json:"mac_drift"`
	Notes         []string `json:"notes"`
	PermanentMACs []string `json:"permanent_macs"`
	Problem       string   `json:"problem,omitempty"`
}

type macOptions struct {
	df        cmdutil.DeviceFlags
	listing   string
	from      string
	permanent []string
}

func (a *app) macCmd() *cobra.Command { return a.newMacCmd(nil) }

// newMacCmd wires the flags to macOptions; runF (tests) replaces runMAC.
func (a *app) newMacCmd(runF func(*macOptions, []string) error) *cobra.Command {
	o := &macOptions{}
	c := &cobra.Command{
		Use:   "mac --os LISTING (-d DEV | --from QUERY | --permanent MAC)",
		Short: "Check the OS's MAC addresses against the adapter's permanent ones (MAC drift), from files",
		Long: `Compare the MAC addresses an operating system uses with the adapter's burnt-in
(permanent) ones, as status does on this machine, from text people bring:

  --os LISTING   ipconfig /all, Get-NetAdapter (table or | Format-List *),
                 ip link (text, -br or -j); '-' reads standard input;
                 'system' reads this machine's own (Linux, Windows)
  --from QUERY   the permanent MACs from an mstflint/flint query output
                 ("Base MAC: b83fd2a1b2c0 4": the base and how many), or an
                 mlxup/mlxfwmanager listing (every device's Base MAC; the
                 count, which they do not print, from the ports named)
  --permanent M  the permanent MACs given (repeat, or comma-separate)
  -d DEV         the permanent MACs from the adapter itself

An interface is the adapter's when its current or permanent MAC is one of
the adapter's, or its description names a ConnectX (Mellanox/NVIDIA)
adapter (on Linux: its driver is mlx5_core). One that uses another address drifts: a locally administered one
(set by software, a VM, teaming, a randomised address) is named as such.
Exit 1 on drift, and when no interface of the listing is the adapter's (then
nothing could be checked: the interfaces found are listed).`,
		Example: `  cxray mac --os ipconfig.txt --from flint-q.txt
  cxray mac --os getnetadapter.txt --permanent b8:3f:d2:a1:b2:c0,b8:3f:d2:a1:b2:c1
  cxray.exe mac --os system --from flint-q.txt          # on Windows, with WinMFT's flint q
  ip link | cxray mac --os - -d 0000:03:00.0`,
		Args: cobra.NoArgs,
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(o, args)
			}
			return a.runMAC(a.Ctx, o)
		},
	}
	o.df.Add(c)
	c.Flags().StringVar(&o.listing, "os", "", "the OS's interface listing (ipconfig /all, Get-NetAdapter, ip link; '-': standard input; 'system': this machine's)")
	c.Flags().StringVar(&o.from, "from", "", "an mstflint/flint query output holding the adapter's Base MAC")
	c.Flags().StringSliceVar(&o.permanent, "permanent", nil, "the adapter's permanent MACs")
	return c
}

// macsFromQuery reads the permanent MACs from a flint/mstflint q output or
// an mlxup/mlxfwmanager listing, with the reader explain uses: indented
// lines, ConnectX-3's "Base MAC1:"/"Base MAC2:", several devices, a MAC of
// 16 hex digits; notes say what was assumed (a Base MAC without a count).
func macsFromQuery(text string) ([]string, []string, error) {
	q, err := explain.ReadFirmwareQuery(text)
	if err != nil {
		return nil, nil, err
	}
	return q.PermanentMACs()
}

// macRange is n consecutive MACs from base (one per function: the
// driver gives function f the base MAC plus f).
func macRange(base string, n int) ([]string, error) { return explain.MACRange(base, n) }

// Row is one OS interface in `cxray mac` (-o json: "interfaces").
type Row struct {
	Interface   string `json:"interface"`
	Description string `json:"description,omitempty"`
	MAC         string `json:"mac"`
	Permanent   string `json:"permanent,omitempty"`
	Drift       bool   `json:"drift"`
	Why         string `json:"why"`
}

func (a *app) runMAC(ctx context.Context, o *macOptions) error {
	if o.listing == "" {
		return cmdutil.UsageErr("give the OS's listing with --os FILE (ipconfig /all, Get-NetAdapter, ip link), '-' for standard input")
	}
	sources := 0
	for _, set := range []bool{o.df.Name != "", o.from != "", len(o.permanent) > 0} {
		if set {
			sources++
		}
	}
	if sources != 1 {
		return cmdutil.UsageErr("give the adapter's permanent MACs one way: -d DEV, --from QUERY-OUTPUT or --permanent MAC")
	}
	var l *osmac.Listing
	if o.listing == "system" {
		// This machine's own interfaces: sysfs and rtnetlink on Linux,
		// IP Helper and the registry on Windows (osmac.System).
		var err error
		if l, err = osmac.System(ctx); err != nil {
			return cmdutil.DeviceErr(err)
		}
	} else {
		text, err := cmdutil.ReadInput(o.listing, a.Stdin, osmac.MaxText, "an interface listing")
		if err != nil {
			return err
		}
		if l, err = osmac.Parse(string(text)); err != nil {
			return cmdutil.UsageErr("--os %s: %v", o.listing, err)
		}
	}
	var perms, notes []string
	switch {
	case o.from != "":
		qt, err := cmdutil.ReadInput(o.from, a.Stdin, osmac.MaxText, "a query output")
		if err != nil {
			return err
		}
		if perms, notes, err = macsFromQuery(string(qt)); err != nil {
			return cmdutil.UsageErr("--from %s: %v", o.from, err)
		}
	case len(o.permanent) > 0:
		for _, p := range o.permanent {
			m, ok := osmac.NormalizeMAC(p)
			if !ok {
				return cmdutil.UsageErr("--permanent %q is no MAC address (b8:3f:d2:a1:b2:c0)", p)
			}
			perms = append(perms, m)
		}
	default:
		var err error
		if perms, err = a.devicePermanentMACs(o.df); err != nil {
			return err
		}
	}
	rows := checkMACs(l, perms)
	drift := false
	for _, r := range rows {
		drift = drift || r.Drift
	}
	// No interface of the adapter: nothing could be checked. That is a
	// finding (exit 1), shown with what the listing has, never a pass.
	var found []Row
	none := ""
	if len(rows) == 0 {
		for _, in := range l.Interfaces {
			found = append(found, Row{Interface: in.Name, Description: in.Description, MAC: in.MAC})
		}
		none = "no interface of the listing belongs to this adapter (by MAC or description), so no MAC could be checked; "
		if o.listing == "system" {
			none += "this machine shows none of the adapter's interfaces: is mlx5_core loaded, and is the adapter in this machine ('ip link', 'cxray status')?"
		} else {
			none += "is the listing from the host the adapter is in, and complete?"
		}
	}
	if a.JSON() {
		doc := macDoc{Listing: l.Format, PermanentMACs: perms, Interfaces: rows, MACDrift: drift, Notes: notes}
		if none != "" {
			doc.Problem, doc.Found = none, &found
		}
		if err := a.WriteJSON(doc); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(a.Stdout, "%s, %d interfaces; the adapter's permanent MACs: %s\n", l.Format, len(l.Interfaces), strings.Join(perms, ", "))
		for _, n := range notes {
			fmt.Fprintf(a.Stdout, "note: %s\n", n)
		}
		if len(rows) == 0 {
			fmt.Fprintln(a.Stdout, none)
			if len(found) > 0 {
				t := a.NewTable("FOUND", "MAC", "DESCRIPTION")
				for _, r := range found {
					t.Row(r.Interface, cmdutil.Dash(r.MAC), cmdutil.Dash(r.Description))
				}
				t.Flush()
			}
		} else {
			t := a.NewTable("INTERFACE", "MAC", "PERMANENT", "VERDICT")
			for _, r := range rows {
				t.Row(r.Interface, r.MAC, cmdutil.Dash(r.Permanent), r.Why)
			}
			t.Flush()
		}
	}
	if drift || none != "" {
		return cmdutil.ErrProblem
	}
	return nil
}

// checkMACs decides, for each interface of the adapter, whether its MAC is
// a permanent one.
func checkMACs(l *osmac.Listing, perms []string) []Row {
	own := map[string]bool{}
	for _, p := range perms {
		own[p] = true
	}
	rows := []Row{}
	for _, in := range l.Interfaces {
		connectx := false
		for _, w := range []string{"mellanox", "connectx", "nvidia", "mlx5_core"} {
			connectx = connectx || strings.Contains(strings.ToLower(in.Description), w)
		}
		mine := own[in.MAC] || own[in.PermanentMAC] || connectx
		if !mine || in.MAC == "" {
			continue
		}
		r := Row{Interface: in.Name, Description: in.Description, MAC: in.MAC}
		switch {
		case own[in.MAC] && (in.PermanentMAC == "" || in.PermanentMAC == in.MAC):
			r.Permanent, r.Why = in.MAC, "ok: the permanent MAC"
		case own[in.MAC]:
			// Another port's address: swapped or cloned between ports.
			r.Permanent, r.Drift = in.PermanentMAC, true
			r.Why = fmt.Sprintf("drift: uses %s, the permanent MAC of another port of this adapter", in.MAC)
		default:
			r.Permanent, r.Drift = in.PermanentMAC, true
			r.Why = "drift: uses an address that is none of the adapter's permanent MACs"
			if b, err := strconv.ParseUint(in.MAC[:2], 16, 8); err == nil && b&0x02 != 0 {
				r.Why = "drift: a locally administered address (set by software: a VM, teaming, a randomised or configured MAC)"
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// devicePermanentMACs reads the permanent MACs of every function of the
// adapter -d names (each function's burnt-in MAC).
func (a *app) devicePermanentMACs(df cmdutil.DeviceFlags) ([]string, error) {
	db, err := a.DB()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(a.Ctx, df.Timeout)
	defer cancel()
	ad, err := a.Open(ctx, df.Name, db)
	if err != nil {
		return nil, err
	}
	defer ad.Close()
	id, err := ad.Identity(ctx)
	if err != nil {
		return nil, cmdutil.Classify(err)
	}
	if id.BaseMAC == "" {
		return nil, cmdutil.DeviceErr(fmt.Errorf("%s gives no base MAC", cmdutil.Describe(ad)))
	}
	out, err := macRange(id.BaseMAC, max(id.Ports, 1))
	if err != nil {
		return nil, cmdutil.DeviceErr(err)
	}
	return out, nil
}
