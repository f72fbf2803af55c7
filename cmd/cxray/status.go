package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/dev/devname"
	"github.com/cxray/cxray/prm"
)

// statusEntry is one function in `cxray status`.
type statusEntry struct {
	BDF          string   `json:"bdf"`
	Device       string   `json:"device"` // the -d name that reaches it
	Model        string   `json:"model"`
	DeviceID     uint16   `json:"device_id"`
	Backend      string   `json:"backend"`
	PSID         string   `json:"psid,omitempty"`
	Firmware     string   `json:"firmware,omitempty"`
	Ports        int      `json:"ports,omitempty"`
	Netdevs      []string `json:"netdevs"`
	RDMA         []string `json:"rdma"`
	NUMANode     int      `json:"numa_node"`
	PermanentMAC string   `json:"permanent_mac,omitempty"`
	NodeGUID     string   `json:"node_guid,omitempty"`
	// OSMACs are the interfaces' current addresses; MACDrift is set when
	// the first differs from the permanent (firmware) MAC.
	OSMACs   map[string]string `json:"os_macs,omitempty"`
	MACDrift bool              `json:"mac_drift"`
	Error    string            `json:"error,omitempty"`
}

func (a *app) statusCmd() *cobra.Command {
	var df deviceFlags
	c := &cobra.Command{
		Use:   "status",
		Short: "List ConnectX adapters: PCI address, names, firmware, PSID, MAC, GUID",
		Long: `List every ConnectX function of this machine (or the one given with -d, or
the emulated ones with -d emu / emu:FILE.yaml) with its PCI address, the names
that reach it (-d accepts all of them), firmware version, PSID, ports, NUMA
node, the permanent MAC and node GUID from the firmware, and the current MAC
the OS uses (a difference is flagged: MAC drift). Reading firmware details
needs root on real adapters.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			db, err := a.db()
			if err != nil {
				return err
			}
			ctx, cancel := df.context()
			defer cancel()
			entries, err := a.gatherStatus(ctx, df.name, db)
			if err != nil {
				return err
			}
			// A device named with -d that could not be read is a device
			// error (exit 3), after the report says why.
			failed := df.name != "" && len(entries) > 0
			for _, e := range entries {
				if e.Error == "" || e.Firmware != "" {
					failed = false
				}
			}
			if a.json() {
				if err := a.writeJSON(map[string]any{"source_revision": db.Revision, "devices": entries}); err != nil {
					return err
				}
				if failed {
					return &exitError{exitDevice, errQuiet}
				}
				return nil
			}
			if len(entries) == 0 {
				fmt.Fprintln(a.stdout, "no ConnectX adapters found on this machine; try the emulator: cxray status -d emu")
				return nil
			}
			t := a.newTable("BDF", "MODEL", "FIRMWARE", "PSID", "PORTS", "NETDEV", "RDMA", "NUMA", "PERMANENT MAC", "NODE GUID")
			var notes []string
			for _, e := range entries {
				t.row(e.BDF, e.Model, dash(e.Firmware), dash(e.PSID), dash(fmt.Sprint(e.Ports)), dash(strings.Join(e.Netdevs, ",")),
					dash(strings.Join(e.RDMA, ",")), numa(e.NUMANode), dash(e.PermanentMAC), dash(e.NodeGUID))
				if e.MACDrift {
					for nd, mac := range e.OSMACs {
						notes = append(notes, fmt.Sprintf("%s: MAC drift: %s uses %s, the firmware's permanent MAC is %s", e.BDF, nd, mac, e.PermanentMAC))
					}
				}
				if e.Error != "" {
					notes = append(notes, fmt.Sprintf("%s: %s", e.BDF, e.Error))
				}
			}
			t.flush()
			for _, n := range notes {
				fmt.Fprintln(a.stdout, n)
			}
			if failed {
				return &exitError{exitDevice, errQuiet}
			}
			return nil
		},
	}
	df.add(c)
	return c
}

func numa(n int) string {
	if n < 0 {
		return "-"
	}
	return fmt.Sprint(n)
}

func dash(s string) string {
	if s == "" || s == "0" {
		return "-"
	}
	return s
}

// gatherStatus lists the functions to report and reads each.
func (a *app) gatherStatus(ctx context.Context, given string, db *prm.DB) ([]statusEntry, error) {
	entries := []statusEntry{}
	if given != "" {
		n, err := sys.Parse(given)
		if err != nil {
			return nil, deviceErr(err)
		}
		if n.Kind == devname.Emu {
			return a.emuStatus(ctx, n, db)
		}
		if n.Kind == devname.PCI {
			f, err := sys.Function(n.BDF)
			if err != nil {
				return nil, deviceErr(err)
			}
			return append(entries, a.pciStatus(ctx, f, db)), nil
		}
		return a.kernelStatus(ctx, n)
	}
	fs, err := sys.List()
	if err != nil {
		return nil, deviceErr(err)
	}
	for _, f := range fs {
		entries = append(entries, a.pciStatus(ctx, f, db))
	}
	return entries, nil
}

func (a *app) pciStatus(ctx context.Context, f devname.Function, db *prm.DB) statusEntry {
	e := statusEntry{BDF: f.BDF, Device: f.BDF, Model: f.DeviceName, DeviceID: f.DeviceID, Backend: "direct",
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
		e.Error = "virtual function: firmware details come from its physical function"
		return e
	}
	if !dev.IsRoot() {
		e.Error = "run as root to read firmware details"
		return e
	}
	d, _, err := dev.OpenPCI(ctx, sys, f.BDF, f.BDF, db)
	if err != nil {
		e.Error = err.Error()
		return e
	}
	defer d.Close()
	fillFromFirmware(ctx, d, &e)
	return e
}

// fillFromFirmware reads the firmware's identity and flags MAC drift.
func fillFromFirmware(ctx context.Context, d *dev.Device, e *statusEntry) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	id, err := d.Identity(ctx)
	if err != nil {
		e.Error = err.Error()
		return
	}
	e.PSID, e.Firmware, e.Ports, e.NodeGUID, e.PermanentMAC = id.PSID, id.Firmware, id.Ports, id.NodeGUID, id.PermanentMAC
	for _, nd := range e.Netdevs {
		if m, ok := e.OSMACs[nd]; ok && e.PermanentMAC != "" && !strings.EqualFold(m, e.PermanentMAC) {
			e.MACDrift = true
		}
	}
}
