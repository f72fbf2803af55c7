package statuscmd

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/dev/devname"
	"github.com/cxray/cxray/feature/health"
	"github.com/cxray/cxray/feature/pcielink"
	"github.com/cxray/cxray/prm"
)

// Entry is one function in `cxray status`.
type Entry struct {
	BDF    string `json:"bdf"`
	Device string `json:"device"` // the -d name that reaches it
	// MST is mst's name of the function (mt4129_pciconf0), which -d takes.
	MST             string      `json:"mst,omitempty"`
	Model           string      `json:"model"`
	DeviceID        uint16      `json:"device_id"`
	Backend         dev.Backend `json:"backend"`
	Via             dev.Backend `json:"via,omitempty"`
	PSID            string      `json:"psid,omitempty"`
	Firmware        string      `json:"firmware,omitempty"`
	FirmwarePending string      `json:"firmware_pending,omitempty"`
	// Ports is how many ports this function owns; LinkLayers what each
	// runs (Ethernet, InfiniBand), in port order.
	Ports      int      `json:"ports,omitempty"`
	LinkLayers []string `json:"link_layers,omitempty"`
	// PCIe is the link to the host: "Gen5 x16", or "Gen4 x8 (capable
	// Gen5 x16)" when it runs below what the card can train.
	PCIe         string   `json:"pcie,omitempty"`
	Netdevs      []string `json:"netdevs"`
	RDMA         []string `json:"rdma"`
	NUMANode     int      `json:"numa_node"`
	PermanentMAC string   `json:"permanent_mac,omitempty"`
	NodeGUID     string   `json:"node_guid,omitempty"`
	// SysImageGUID is shared by the functions of one adapter; NodeGUID
	// is this function's own.
	SysImageGUID string `json:"sys_image_guid,omitempty"`
	// OSMACs are the interfaces' current addresses; MACDrift is set when
	// one differs from the permanent MAC.
	OSMACs   map[string]string `json:"os_macs,omitempty"`
	MACDrift bool              `json:"mac_drift"`
	Drift    []health.MACDrift `json:"drift,omitempty"`
	// PRMMismatch says the register database is much older than the
	// firmware (health's identity check warns of it too).
	PRMMismatch string `json:"prm_mismatch,omitempty"`
	Error       string `json:"error,omitempty"`
	// Notes say how the device was reached (a fallback, the path taken).
	Notes []string `json:"notes,omitempty"`
	// unread says a read of the device failed (Error says which), as
	// opposed to a part the backend cannot serve or a virtual function's
	// note: the command then exits 3.
	unread bool
}

type statusOptions struct {
	df cmdutil.DeviceFlags
}

func (a *app) statusCmd() *cobra.Command { return a.newStatusCmd(nil) }

// newStatusCmd wires the flags to statusOptions; runF (tests) replaces runStatus.
func (a *app) newStatusCmd(runF func(*statusOptions, []string) error) *cobra.Command {
	var o statusOptions
	c := &cobra.Command{
		Use:   "status",
		Short: "List ConnectX adapters: PCI address, names, firmware, PSID, MAC, GUID",
		Long: `List every ConnectX function of this machine (or the one given with -d, or
the emulated ones with -d emu / emu:FILE.yaml) with its PCI address, the names
that reach it (-d accepts all of them), firmware version (and one waiting for
a reset), PSID, the ports it owns, its PCIe link ("Gen4 x8 (capable Gen5
x16)" when it trained below the card's; 'cxray link --pcie' says why), NUMA
node, the permanent MAC and node GUID, and the current MAC the OS uses. A
difference is flagged as MAC drift (exit 1), and so is a register database
much older than the firmware (fields may have been renamed since; health's
identity check says the same).
Firmware details need root on real adapters; without it they come from the
kernel driver where it has them.`,
		Args: cobra.NoArgs,
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(&o, args)
			}
			return a.runStatus(a.Ctx, &o)
		},
	}
	o.df.Add(c)
	return c
}

func (a *app) runStatus(ctx context.Context, o *statusOptions) error {
	db, err := a.DB()
	if err != nil {
		return err
	}
	entries, err := a.gatherStatus(ctx, o.df, db)
	if err != nil {
		return err
	}
	drift := false
	var unread []string
	for _, e := range entries {
		drift = drift || e.MACDrift || e.PRMMismatch != ""
		if e.unread {
			unread = append(unread, e.BDF)
		}
	}
	if a.JSON() {
		if err := a.WriteJSON(Document{Devices: entries, SourceRevision: db.Revision}); err != nil {
			return err
		}
	} else {
		a.printStatus(entries)
	}
	for _, e := range entries {
		if e.unread {
			fmt.Fprintf(a.Stderr, "cxray: %s: %s\n", e.BDF, e.Error)
		}
	}
	switch {
	case len(unread) > 0:
		// The exit-code rule of every command over many functions: 3 when
		// one could not be read, after the report shows every function.
		return cmdutil.Unread(len(entries), unread)
	case drift:
		return cmdutil.ErrProblem
	}
	return nil
}

func (a *app) printStatus(entries []Entry) {
	if len(entries) == 0 {
		fmt.Fprintln(a.Stdout, "no ConnectX adapters found on this machine; try the emulator: cxray status -d emu")
		return
	}
	// mst's names exist for this machine's functions only (not emulated
	// scenarios outside emu run): the column shows when one has a name.
	withMST := false
	for _, e := range entries {
		withMST = withMST || e.MST != ""
	}
	head := []string{"BDF", "MODEL", "FIRMWARE", "PSID", "PORTS", "PCIE", "NETDEV", "RDMA", "NUMA", "PERMANENT MAC", "NODE GUID"}
	if withMST {
		head = append([]string{"BDF", "MST"}, head[1:]...)
	}
	t := a.NewTable(head...)
	var notes []string
	for _, e := range entries {
		fwv := cmdutil.Dash(e.Firmware)
		if e.FirmwarePending != "" {
			fwv += " (" + e.FirmwarePending + " pending)"
		}
		row := []string{e.BDF, e.Model, fwv, cmdutil.Dash(e.PSID), portsText(e), cmdutil.Dash(e.PCIe), cmdutil.Dash(strings.Join(e.Netdevs, ",")),
			cmdutil.Dash(strings.Join(e.RDMA, ",")), numa(e.NUMANode), cmdutil.Dash(e.PermanentMAC), cmdutil.Dash(e.NodeGUID)}
		if withMST {
			row = append([]string{e.BDF, cmdutil.Dash(e.MST)}, row[1:]...)
		}
		t.Row(row...)
		for _, d := range e.Drift {
			notes = append(notes, fmt.Sprintf("%s: MAC drift: %s uses %s, the permanent MAC is %s", e.BDF, d.Netdev, d.Address, d.Permanent))
		}
		if e.FirmwarePending != "" {
			notes = append(notes, fmt.Sprintf("%s: firmware %s is written and runs after the next firmware reset", e.BDF, e.FirmwarePending))
		}
		if e.PRMMismatch != "" {
			notes = append(notes, fmt.Sprintf("%s: %s: fields may have been renamed, moved or added since; use the newest ADB you have (--adb), 'cxray health' lists what changed", e.BDF, e.PRMMismatch))
		}
		for _, n := range e.Notes {
			notes = append(notes, fmt.Sprintf("%s: %s", e.BDF, n))
		}
		if e.Error != "" {
			notes = append(notes, fmt.Sprintf("%s: %s", e.BDF, e.Error))
		}
	}
	t.Flush()
	for _, n := range notes {
		fmt.Fprintln(a.Stdout, n)
	}
}

func numa(n int) string {
	if n < 0 {
		return "-"
	}
	return fmt.Sprint(n)
}

// gatherStatus opens what -d names (every function of the machine
// without -d, the whole scenario for emu names without @) with the one
// opener, and reads each function side by side within its own --timeout.
func (a *app) gatherStatus(ctx context.Context, df cmdutil.DeviceFlags, db *prm.DB) ([]Entry, error) {
	opts := a.AdapterOptions(db)
	opts.Fallback = true
	given := df.Name
	all := given == ""
	if given != "" {
		n, err := opts.Parse(given)
		if err != nil {
			return nil, cmdutil.Classify(err)
		}
		all = n.Kind == devname.Emu && !strings.Contains(n.Emu, "@")
	}
	// The machine's functions give mst's names, and the rows of the
	// functions that are not read (virtual functions, and those another
	// driver holds).
	var fs []devname.Function
	if given == "" || !strings.HasPrefix(strings.TrimSpace(given), "emu") {
		fs, _ = a.Sys.List()
	}
	entries := []Entry{}
	octx, cancel := context.WithTimeout(ctx, df.Timeout)
	ads, err := a.OpenTargetsWith(octx, given, all, opts)
	cancel()
	if err != nil {
		var nf *adapter.NotFoundError
		if given != "" || !errors.As(err, &nf) {
			return nil, err
		}
	}
	defer adapter.CloseAll(ads)
	read := make([]Entry, len(ads))
	cmdutil.EachTarget(ctx, ads, df.Timeout, func(ctx context.Context, i int, ad *adapter.Adapter) {
		read[i] = adapterStatus(ctx, ad)
	})
	if err := ctx.Err(); err != nil {
		return nil, cmdutil.Stopped(ctx, err)
	}
	byBDF := map[string]devname.Function{}
	for _, f := range fs {
		byBDF[f.BDF] = f
	}
	for _, e := range read {
		if f, ok := byBDF[e.BDF]; ok {
			e.MST = devname.MSTName(fs, f.BDF)
			if !strings.HasPrefix(e.Device, "kernel:") && len(f.RDMA) > 0 {
				e.Device = f.RDMA[0]
			}
			if e.Model == "" {
				e.Model = f.DeviceName
			}
			delete(byBDF, e.BDF)
		}
		entries = append(entries, e)
	}
	if given == "" {
		for _, f := range fs {
			if _, left := byBDF[f.BDF]; left {
				entries = append(entries, unreadStatus(a.Sys, f))
			}
		}
		sort.SliceStable(entries, func(i, j int) bool { return entries[i].BDF < entries[j].BDF })
	}
	return entries, nil
}

// unreadStatus is the line of a function the opener leaves out: a
// virtual function, or one another driver (vfio-pci) holds.
func unreadStatus(sys devname.Sys, f devname.Function) Entry {
	e := Entry{BDF: f.BDF, Device: f.BDF, Model: f.DeviceName, DeviceID: f.DeviceID, Backend: dev.BackendDirect,
		Netdevs: f.Netdevs, RDMA: f.RDMA, NUMANode: f.NUMANode, OSMACs: map[string]string{}}
	if len(f.RDMA) > 0 {
		e.Device = f.RDMA[0]
	}
	for _, nd := range f.Netdevs {
		if m := sys.MAC(nd); m != "" {
			e.OSMACs[nd] = m
		}
	}
	if f.VF {
		e.Notes = append(e.Notes, "virtual function: firmware details come from its physical function")
	} else {
		e.Notes = append(e.Notes, fmt.Sprintf("bound to %s, not mlx5_core: not this host's to read (passed through to a guest?)", f.Driver))
	}
	return e
}

// adapterStatus is one status line read through an adapter.
func adapterStatus(ctx context.Context, ad *adapter.Adapter) Entry {
	e := Entry{BDF: ad.BDF(), Device: ad.Name(), Backend: ad.Backend(), Netdevs: []string{}, RDMA: []string{},
		NUMANode: -1, OSMACs: map[string]string{}}
	ictx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var notes []string
	// A part the backend cannot serve is a note; any other failure is a
	// read that failed.
	unread := func(err error) bool { return err != nil && !errors.Is(err, errors.ErrUnsupported) }
	id, err := ad.Identity(ictx)
	if err != nil {
		notes = append(notes, err.Error())
		e.unread = e.unread || unread(err) || id == nil
	}
	if id != nil {
		e.Model, e.DeviceID, e.PSID, e.Firmware, e.FirmwarePending = id.Model, id.DeviceID, id.PSID, id.Firmware, id.FirmwarePending
		e.PermanentMAC, e.NodeGUID, e.SysImageGUID = id.PermanentMAC, id.NodeGUID, id.SysImageGUID
		if e.Model == "" && id.DeviceID != 0 {
			e.Model, _ = devname.Model(id.DeviceID)
		}
		if ad.HasRegisters() {
			e.PRMMismatch = health.DatabaseLag(id.FirmwareBuilt, ad.DB().Revision)
		}
	}
	if p := ad.Path(); p != "" && p != ad.Backend() {
		e.Via = p
	}
	if p, err := ad.PCIe(ictx); err == nil {
		// One reading: the link, not a rate (health and link --pcie judge).
		e.PCIe = pcielink.Build(pcielink.Info{}, p, nil, 0, pcielink.Thresholds{}).Text
	}
	if ps, err := ad.Ports(ictx); err == nil {
		e.Ports = len(ps)
		for _, p := range ps {
			e.LinkLayers = append(e.LinkLayers, p.LinkLayer)
		}
	} else if id != nil {
		notes = append(notes, "ports: "+err.Error())
		e.unread = e.unread || unread(err)
	}
	if os, err := ad.OS(ictx); err == nil {
		e.NUMANode, e.RDMA = os.NUMANode, os.RDMA
		for _, n := range os.Netdevs {
			e.Netdevs = append(e.Netdevs, n.Name)
			if n.Address != "" {
				e.OSMACs[n.Name] = n.Address
			}
		}
		perm := ""
		if id != nil {
			perm = id.PermanentMAC
		}
		e.Drift = health.Drift(perm, os.Netdevs)
		e.MACDrift = len(e.Drift) > 0
	}
	e.Notes = append(e.Notes, ad.Notes()...)
	sort.Strings(e.Netdevs)
	e.Error = strings.Join(notes, "; ")
	return e
}

// portsText is the PORTS column: the count, with IB when the function's
// ports run InfiniBand (Ethernet is what a reader assumes).
func portsText(e Entry) string {
	if e.Ports == 0 {
		return cmdutil.Dash("")
	}
	s := fmt.Sprint(e.Ports)
	for _, l := range e.LinkLayers {
		if l == "InfiniBand" {
			return s + " IB"
		}
	}
	return s
}

// Document is `cxray status -o json`: an entry per function and the
// revision of the register database. The fields are in key order, as the
// map it replaced was written, so the output is unchanged
// (cli/testdata/golden).
type Document struct {
	Devices        []Entry `json:"devices"`
	SourceRevision string  `json:"source_revision"`
}
